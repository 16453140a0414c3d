// Black-box: `sealpost queue` run as a child process against the Redis of a
// running spooler (random prefix). A message to a domain whose MX answers
// 451 is deferred with a reason; the CLI lists it with that reason, shows
// it, retries it, deletes it, and with --bounce the sender's MX receives the
// failure DSN. Unknown ids, a bad --queue and an unreachable Redis fail with
// one line and a non-zero exit.
import { execFile } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { join, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { FlowProducer } from 'bullmq';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acceptMessage } from '../../delivery/intake/accept.ts';
import { domainJobId } from '../../src/contracts/outbound-jobs.ts';
import { createLogger, newMessageId } from '../../src/core/log.ts';
import { type RemoteMx, startRemoteMx } from '../support/doubles/remote-mx.ts';
import { eventually, REDIS_URL, type SpoolerRig, startSpoolerRig } from '../support/spooler-rig.ts';
import { tempDir } from '../support/temp-dir.ts';

const BIN = resolve(import.meta.dirname, '..', '..', 'bin', 'sealpost.js');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

function sealpost(args: string[], cwd: string): Promise<Run> {
  const started = Date.now();
  return new Promise((done) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd, env: { ...process.env, NO_COLOR: '1' }, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        done({ code, stdout, stderr, ms: Date.now() - started });
      },
    );
  });
}

interface Row {
  id: string;
  queue: string;
  state: string;
  attempts: number;
  recipients: string[];
  nextAttemptAt: number | null;
  reason: string | null;
}

let busy: RemoteMx;
let senderMx: RemoteMx;
let r: SpoolerRig;
let cwd: string;
const logLines: string[] = [];

// Per test: temporary directories are removed after each test (./helpers/temp-dir.ts).
beforeEach(async () => {
  logLines.length = 0;
  busy = await startRemoteMx({
    host: '127.0.0.30',
    rcpt: () => ({ code: 451, message: '4.3.0 try again later' }),
  });
  senderMx = await startRemoteMx({ host: '127.0.0.31', port: busy.port });
  const destination = { write: (s: string) => logLines.push(s) } as unknown as Writable;
  r = await startSpoolerRig({
    // One hour between attempts: a deferred job stays delayed until the CLI says otherwise.
    config: { smtp_port: busy.port, retry_schedule_secs: [3600] },
    zone: {
      'busy.test': { MX: [{ preference: 5, exchange: 'mx.busy.test' }] },
      'mx.busy.test': { A: ['127.0.0.30'] },
      'sealpost.test': { MX: [{ preference: 5, exchange: 'mx.sealpost.test' }] },
      'mx.sealpost.test': { A: ['127.0.0.31'] },
    },
    extra: { logger: createLogger({ level: 'info', destination }) as never },
  });
  // The deployment's config as the CLI reads it; its blob store is the spooler's.
  cwd = tempDir('sealpost-queue-cli-');
  mkdirSync(join(cwd, 'data'));
  symlinkSync(r.blobDir, join(cwd, 'data', 'blobs'));
  writeFileSync(
    join(cwd, 'sealpost.toml'),
    `[redis]\nurl = "${REDIS_URL}"\nprefix = "${r.prefix}"\n\n[store]\ndata_dir = "data"\n\n` +
      `[spooler]\nhostname = "out.sealpost.test"\n`,
  );
}, 60_000);

afterEach(async () => {
  await r?.close();
  await busy?.close();
  await senderMx?.close();
});

/** Queues a message to busy.test and waits until its first attempt was deferred. */
async function deferred(from: string, to: string): Promise<string> {
  const msgid = await r.send({ from, to: [to] });
  const id = domainJobId(msgid, 'busy.test');
  await r.jobWhere(msgid, 'busy.test', (d) => d.attempts >= 1);
  await eventually(async () =>
    (await (await r.deliver.getJob(id))?.getState()) === 'delayed' ? true : undefined,
  );
  return id;
}

async function list(...args: string[]): Promise<Row[]> {
  const run = await sealpost(['queue', 'list', '--json', ...args], cwd);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as Row[];
}

// Each run starts a Node process that compiles TypeScript; allow for a busy machine.
describe('sealpost queue', { timeout: 180_000 }, () => {
  it('lists a deferred message with its reason, shows it, retries it, deletes it with a DSN to the sender', async () => {
    const id = await deferred('ann@sealpost.test', 'kim@busy.test');

    const rows = await list('--queue', 'outbound');
    const row = rows.find((x) => x.id === id);
    expect(row).toMatchObject({
      queue: 'outbound',
      state: 'delayed',
      attempts: 1,
      recipients: ['kim@busy.test'],
    });
    expect(row?.reason).toContain('451 4.3.0 try again later');
    expect(row?.nextAttemptAt).toBeGreaterThan(Date.now() + 30 * 60_000);
    expect(await list('--queue', 'inbound')).toEqual([]);

    const text = await sealpost(['queue', 'list'], cwd);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^ID\s+QUEUE\s+STATE\s+AGE\s+ATTEMPTS\s+NEXT\s+RECIPIENTS\s+LAST REASON/);
    expect(text.stdout).toContain(id);
    expect(text.stdout).toMatch(/in (59m|1h)/);

    // The log line says why, the way Postfix does.
    const line = logLines
      .map((l) => JSON.parse(l))
      .find((l) => l.to === 'kim@busy.test' && l.status === 'deferred');
    expect(line).toMatchObject({ relay: 'mx.busy.test', attempt: 1, domain: 'busy.test', dsn: '4.3.0' });
    expect(line.msg).toMatch(
      /^outbound delivery to=<kim@busy\.test> status=deferred \(.*451 4\.3\.0 try again later\)$/,
    );
    expect(line.delay).toMatch(/^\d+\.\ds$/);

    const show = await sealpost(['queue', 'show', id], cwd);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain(`id:           ${id}`);
    expect(show.stdout).toContain('from:         <ann@sealpost.test>');
    expect(show.stdout).toContain('attempts:     1');
    expect(show.stdout).toMatch(
      /<kim@busy\.test> pending 4\.3\.0 relay=mx\.busy\.test \(.*451 4\.3\.0 try again later\)/,
    );

    const retried = await sealpost(['queue', 'retry', id], cwd);
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.stdout).toBe(`${id}: promoted, runs now\n`);
    const msgid = id.split('~')[0] as string;
    await r.jobWhere(msgid, 'busy.test', (d) => d.attempts >= 2);
    await eventually(async () =>
      (await (await r.deliver.getJob(id))?.getState()) === 'delayed' ? true : undefined,
    );
    expect(busy.stats.connections).toBeGreaterThanOrEqual(2);

    expect(senderMx.accepted).toHaveLength(0);
    const deleted = await sealpost(['queue', 'delete', id, '--bounce'], cwd);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toBe(`${id}: deleted; failure DSN queued to <ann@sealpost.test>\n`);
    expect(await r.deliver.getJob(id)).toBeUndefined();
    const dsn = await eventually(() => senderMx.accepted[0]);
    expect(dsn.from).toBe('');
    const dsnText = dsn.raw.toString();
    expect(dsnText).toContain('Subject: Undelivered Mail Returned to Sender');
    expect(dsnText).toMatch(/Action: failed\r\nStatus: 5\.0\.0/);
    expect(dsnText).toContain('deleted from the queue by the operator; last error:');
    expect((await list()).find((x) => x.id === id)).toBeUndefined();
  });

  it('deletes without a DSN, never bounces to the null sender, and retries --all', async () => {
    const before = senderMx.accepted.length;
    const plain = await deferred('ann@sealpost.test', 'lee@busy.test');
    const nullSender = await deferred('', 'max@busy.test');

    const all = await sealpost(['queue', 'retry', '--all', '--queue', 'outbound'], cwd);
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout).toBe('2 jobs set to run now\n');
    for (const id of [plain, nullSender]) {
      await r.jobWhere(id.split('~')[0] as string, 'busy.test', (d) => d.attempts >= 2);
      await eventually(async () =>
        (await (await r.deliver.getJob(id))?.getState()) === 'delayed' ? true : undefined,
      );
    }

    const a = await sealpost(['queue', 'delete', plain], cwd);
    expect(a.code, a.stderr).toBe(0);
    expect(a.stdout).toBe(`${plain}: deleted\n`);
    const b = await sealpost(['queue', 'delete', nullSender, '--bounce'], cwd);
    expect(b.code, b.stderr).toBe(0);
    expect(b.stdout).toBe(`${nullSender}: deleted; no DSN: null sender\n`);
    expect(await list()).toEqual([]);
    await new Promise((done) => setTimeout(done, 800));
    expect(senderMx.accepted).toHaveLength(before);
  });

  it("inbound: a message accepted by the MX path is listed, shown, and deleted with a DSN through the pipeline's bounce", async () => {
    const flow = new FlowProducer({ connection: r.redis, prefix: r.prefix });
    const msgid = newMessageId();
    const raw = `From: <ann@sealpost.test>\r\nTo: <bob@sealpost.test>\r\nSubject: inbound ${msgid}\r\nMessage-ID: <${msgid}@sealpost.test>\r\n\r\nhi\r\n`;
    await acceptMessage(
      { blobs: r.blobs, flow, attempts: 5, backoffMs: 1000 },
      {
        msgid,
        from: 'ann@sealpost.test',
        recipients: [
          {
            address: 'bob@sealpost.test',
            wallet: 'BobWallet1111111111111111111111111111111111',
            form: 'alias',
            exempt: false,
          },
        ],
        remoteIp: '127.0.0.9',
        receivedAt: Date.now(),
        source: (async function* () {
          yield Buffer.from(raw);
        })(),
        maxBytes: 1 << 20,
      },
    );
    await flow.close();
    const id = `${msgid}.0`;

    const rows = await list('--queue', 'inbound');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id, queue: 'inbound', attempts: 0, recipients: ['bob@sealpost.test'] });
    expect(await list('--queue', 'outbound')).toEqual([]);

    const show = await sealpost(['queue', 'show', id, '--json'], cwd);
    expect(show.code, show.stderr).toBe(0);
    expect(JSON.parse(show.stdout)).toMatchObject({
      id,
      queue: 'inbound',
      envelope: { from: 'ann@sealpost.test', to: ['bob@sealpost.test'] },
    });

    const deleted = await sealpost(['queue', 'delete', id, '--bounce'], cwd);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toBe(`${id}: deleted; failure DSN queued to <ann@sealpost.test>\n`);
    const dsn = await eventually(() => senderMx.accepted[0]);
    expect(dsn.from).toBe('');
    expect(dsn.raw.toString()).toMatch(/Action: failed\r\nStatus: 5\.0\.0/);
    expect(dsn.raw.toString()).toContain('deleted from the queue by the operator');
    // The DSN read the original header section first; the one-recipient job's spool file went with it.
    expect(dsn.raw.toString()).toContain(`Subject: inbound ${msgid}`);
    expect(await r.blobs.exists(`spool/${msgid}`)).toBe(false);
    expect(await list('--queue', 'inbound')).toEqual([]);
  });

  it('bad input: an unknown id, a bad --queue, no id for retry, an unreachable Redis — one line, non-zero, nothing changed', async () => {
    const id = await deferred('ann@sealpost.test', 'ned@busy.test');
    const rowsBefore = (await list()).map(({ id, state, attempts }) => ({ id, state, attempts }));

    for (const args of [
      ['queue', 'show', 'no-such-job'],
      ['queue', 'retry', 'no-such-job'],
      ['queue', 'delete', 'no-such-job', '--bounce'],
    ]) {
      const run = await sealpost(args, cwd);
      expect(run.code).toBe(1);
      expect(run.stderr).toBe(
        'error: no queued message with id "no-such-job" (sealpost queue list shows the ids)\n',
      );
    }
    const badQueue = await sealpost(['queue', 'list', '--queue', 'sideways'], cwd);
    expect(badQueue.code).toBe(2);
    expect(badQueue.stderr).toContain('expected one of inbound, outbound, all, got "sideways"');
    const noId = await sealpost(['queue', 'retry'], cwd);
    expect(noId.code).toBe(2);
    expect(noId.stderr).toBe('error: give one job id or --all\n');

    // A port nothing listens on.
    const port = await new Promise<number>((done) => {
      const srv = createServer().listen(0, '127.0.0.1', () => {
        const p = (srv.address() as { port: number }).port;
        srv.close(() => done(p));
      });
    });
    const down = tempDir('sealpost-queue-cli-down-');
    writeFileSync(join(down, 'sealpost.toml'), `[redis]\nurl = "redis://127.0.0.1:${port}"\n`);
    for (const args of [
      ['queue', 'list'],
      ['queue', 'retry', '--all'],
      ['queue', 'delete', id],
    ]) {
      const run = await sealpost([...args, '--config', 'sealpost.toml'], down);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(
        new RegExp(`^error: cannot reach Redis at 127\\.0\\.0\\.1:${port} \\(\\[redis\\] url\\): .+\\n$`),
      );
    }

    // A peer that accepts the connection and never answers: the command gives up on its own.
    const sockets: Socket[] = [];
    const silent = createServer((sock) => {
      sockets.push(sock);
    });
    await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done));
    const silentPort = (silent.address() as { port: number }).port;
    writeFileSync(join(down, 'silent.toml'), `[redis]\nurl = "redis://127.0.0.1:${silentPort}"\n`);
    try {
      const run = await sealpost(['queue', 'list', '--config', 'silent.toml'], down);
      expect(run.code).toBe(1);
      expect(run.stderr).toBe(
        `error: cannot reach Redis at 127.0.0.1:${silentPort} ([redis] url): no answer within 3 s\n`,
      );
      expect(run.ms).toBeLessThan(30_000);
    } finally {
      for (const sock of sockets) sock.destroy();
      await new Promise((done) => silent.close(done));
    }

    expect((await list()).map(({ id, state, attempts }) => ({ id, state, attempts }))).toEqual(rowsBefore);
    expect(await (await r.deliver.getJob(id))?.getState()).toBe('delayed');
  });
});
