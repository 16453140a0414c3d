// A real rspamd (src/run/dev/rspamd.ts) for one test: random loopback ports, its
// own directories, no network lookups, and two test rules in local.d so every
// action can be asked for by the message text:
//   SEALPOST-TEST-JUNK   → symbol SEALPOST_TEST_JUNK, score 8 → "add header"
//   SEALPOST-TEST-SOFT   → prefilter result "soft reject"
//   SEALPOST-TEST-USER   → prefilter result "reject" naming the User header
// (the GTUBE string gives "reject" as shipped; rspamd 3.4 has no GTUBE
// variants for the other actions). Stopped after the test. With `bayes`, its
// classifier learns into a private redis-server (a learn round trip).
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { afterEach } from 'vitest';
import { type DevRspamd, startRspamd } from '../../src/run/dev/rspamd.ts';
import { tempDir } from './temp-dir.ts';

export const GTUBE = 'XJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X';
export const JUNK_MARK = 'SEALPOST-TEST-JUNK';
export const SOFT_MARK = 'SEALPOST-TEST-SOFT';
/** Rejected with the authenticated user rspamd was told (`User`) in the reply text. */
export const USER_MARK = 'SEALPOST-TEST-USER';

const TEST_RULES = `
local function has(task, mark)
  local content = task:get_content()
  return content ~= nil and tostring(content):find(mark, 1, true) ~= nil
end
rspamd_config.SEALPOST_TEST_JUNK = {
  callback = function(task) return has(task, '${JUNK_MARK}') end,
  score = 8.0,
  description = 'Sealpost test marker: add header',
  group = 'sealpost_test',
}
rspamd_config:register_symbol({
  name = 'SEALPOST_TEST_SOFT',
  type = 'prefilter',
  priority = 10,
  callback = function(task)
    if has(task, '${SOFT_MARK}') then
      task:set_pre_result('soft reject', 'Sealpost test soft reject', 'sealpost_test')
    end
  end,
})
rspamd_config:register_symbol({
  name = 'SEALPOST_TEST_USER',
  type = 'prefilter',
  priority = 10,
  callback = function(task)
    if has(task, '${USER_MARK}') then
      task:set_pre_result('reject', 'Sealpost test user ' .. tostring(task:get_user()), 'sealpost_test')
    end
  end,
})
`;

const running: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const r of running.splice(0).reverse()) await r.close().catch(() => {});
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A private redis-server for rspamd's Bayes statistics (random port, no persistence), stopped after the test. */
async function startBayesRedis(): Promise<number> {
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  running.push({
    close: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  });
  const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null });
  probe.on('error', () => {});
  try {
    for (let i = 0; i < 100; i++) {
      if (
        await probe.connect().then(
          () => true,
          () => false,
        )
      )
        return port;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('the Bayes redis-server did not start');
  } finally {
    probe.disconnect();
  }
}

/**
 * With `bayes`, rspamd's classifier keeps its statistics in a private
 * redis-server, so /learnspam and /learnham really learn (without one rspamd
 * answers 204 and learns nothing); min_learns 1 so one learned message counts.
 */
export async function startTestRspamd(
  opts: { ports?: { normal: number; controller: number }; bayes?: boolean } = {},
) {
  const localFiles: Record<string, string> = { 'rspamd.lua': TEST_RULES };
  if (opts.bayes) {
    const port = await startBayesRedis();
    localFiles['classifier-bayes.conf'] =
      `backend = "redis";\nservers = "127.0.0.1:${port}";\nmin_learns = 1;\n`;
  }
  const r = await startRspamd({ dir: tempDir(), timeoutMs: 60_000, localFiles, ports: opts.ports });
  running.push(r);
  return r;
}

/** How many messages rspamd's controller says it learned (`/stat`). */
export async function rspamdLearned(r: DevRspamd): Promise<number> {
  const res = await fetch(`${r.controllerUrl}/stat`, { headers: { Password: r.password } });
  return ((await res.json()) as { learned: number }).learned;
}
