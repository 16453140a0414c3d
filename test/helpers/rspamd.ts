// A real rspamd (src/dev/rspamd.ts) for one test: random loopback ports, its
// own directories, no network lookups, and two test rules in local.d so every
// action can be asked for by the message text:
//   SEALPOST-TEST-JUNK   → symbol SEALPOST_TEST_JUNK, score 8 → "add header"
//   SEALPOST-TEST-SOFT   → prefilter result "soft reject"
// (the GTUBE string gives "reject" as shipped; rspamd 3.4 has no GTUBE
// variants for the other actions). Stopped after the test.
import { afterEach } from 'vitest';
import { type DevRspamd, startRspamd } from '../../src/dev/rspamd.ts';
import { tempDir } from './temp-dir.ts';

export const GTUBE = 'XJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X';
export const JUNK_MARK = 'SEALPOST-TEST-JUNK';
export const SOFT_MARK = 'SEALPOST-TEST-SOFT';

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
`;

const running: DevRspamd[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) await r.close().catch(() => {});
});

export async function startTestRspamd(opts: { ports?: { normal: number; controller: number } } = {}) {
  const r = await startRspamd({
    dir: tempDir(),
    timeoutMs: 60_000,
    localFiles: { 'rspamd.lua': TEST_RULES },
    ports: opts.ports,
  });
  running.push(r);
  return r;
}
