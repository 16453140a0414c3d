// Black-box: the Postfix-style queue tools (`sealpost queue hold|release|
// delete|summary`, `queue show --message`) run as child processes.
// Outbound: a real spooler whose destination MX answers 451 (random Redis
// prefix); a held job is never tried, not when something promotes it and
// not after the spooler restarts, and release restores its due time.
// Inbound: messages accepted over SMTP by a real MX with no workers running;
// show --message prints the spooled message; a deleted copy is marked
// finished, so after Redis loses everything `queue reconcile` re-queues only
// the copies not deleted; deleting the rest of the message removes its spool
// entry. Selectors that match nothing exit 1.
import { execFile } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { FlowProducer } from 'bullmq';
import nodemailer from 'nodemailer';
import { describe, expect, it } from 'vitest';
import { acceptMessage } from '../../delivery/intake/accept.ts';
import { domainJobId } from '../../src/contracts/outbound-jobs.ts';
import { newMessageId } from '../../src/core/log.ts';
import { HELD_DELAY_MS } from '../../src/core/queue/hold.ts';
import { type RemoteMx, startRemoteMx } from '../support/doubles/remote-mx.ts';
import { startMxRig } from '../support/mx-rig.ts';
import { eventually, REDIS_URL, startSpoolerRig } from '../support/spooler-rig.ts';
import { tempDir } from '../support/temp-dir.ts';

const BIN = resolve(import.meta.dirname, '..', '..', 'bin', 'sealpost.js');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function sealpost(args: string[], cwd: string): Promise<Run> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd, env: { ...process.env, NO_COLOR: '1' }, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        done({ code, stdout, stderr });
      },
    );
  });
}

async function ok(args: string[], cwd: string): Promise<string> {
  const run = await sealpost(args, cwd);
  expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(0);
  return run.stdout;
}

interface Row {
  id: string;
  msgid: string;
  state: string;
  attempts: number;
  recipients: string[];
  nextAttemptAt: number | null;
}

async function list(cwd: string, ...args: string[]): Promise<Row[]> {
  return JSON.parse(await ok(['queue', 'list', '--json', ...args], cwd)) as Row[];
}

function deploymentDir(prefix: string, blobDir: string): string {
  const cwd = tempDir('sealpost-queue-tools-');
  mkdirSync(join(cwd, 'data'));
  symlinkSync(blobDir, join(cwd, 'data', 'blobs'));
  writeFileSync(
    join(cwd, 'sealpost.toml'),
    `[redis]\nurl = "${REDIS_URL}"\nprefix = "${prefix}"\n\n[store]\ndata_dir = "data"\n\n` +
      `[spooler]\nhostname = "out.sealpost.test"\n`,
  );
  return cwd;
}

describe('sealpost queue hold|release|delete|summary|show --message', { timeout: 240_000 }, () => {
  it('outbound: a held job is never tried (promoted or after a restart) until released; release restores its due time', async () => {
    const busy: RemoteMx = await startRemoteMx({
      host: '127.0.0.30',
      rcpt: () => ({ code: 451, message: '4.3.0 try again later' }),
    });
    const r = await startSpoolerRig({
      config: { smtp_port: busy.port, retry_schedule_secs: [3600] },
      zone: {
        'busy.test': { MX: [{ preference: 5, exchange: 'mx.busy.test' }] },
        'mx.busy.test': { A: ['127.0.0.30'] },
      },
    });
    try {
      const cwd = deploymentDir(r.prefix, r.blobDir);
      const ids: string[] = [];
      for (const to of ['kim@busy.test', 'lee@busy.test']) {
        const msgid = await r.send({ from: 'ann@sealpost.test', to: [to] });
        const id = domainJobId(msgid, 'busy.test');
        await r.jobWhere(msgid, 'busy.test', (d) => d.attempts >= 1);
        await eventually(async () =>
          (await (await r.deliver.getJob(id))?.getState()) === 'delayed' ? true : undefined,
        );
        ids.push(id);
      }
      const [kim, lee] = ids as [string, string];
      const dueBefore = (await list(cwd)).find((x) => x.id === kim)?.nextAttemptAt as number;
      expect(dueBefore).toBeGreaterThan(Date.now() + 30 * 60_000);

      const nothing = await sealpost(['queue', 'hold', '--domain', 'nowhere.test'], cwd);
      expect(nothing.code).toBe(1);
      expect(nothing.stderr).toBe('error: nothing matched\n');
      const none = await sealpost(['queue', 'hold'], cwd);
      expect(none.code).toBe(2);
      expect(none.stderr).toBe('error: give one job id, --all, --domain D, --rcpt R or --msgid M\n');

      expect(await ok(['queue', 'hold', '--domain', 'busy.test'], cwd)).toBe(`${kim}: held\n${lee}: held\n`);
      const rows = await list(cwd);
      expect(rows.map((x) => [x.id, x.state, x.nextAttemptAt])).toEqual([
        [kim, 'held', null],
        [lee, 'held', null],
      ]);
      const text = await ok(['queue', 'list'], cwd);
      expect(text).toMatch(new RegExp(`${kim.replace(/[.~]/g, '\\$&')}\\s+outbound\\s+held\\s`));
      // Far in the future in BullMQ's own terms too.
      const job = await r.deliver.getJob(kim);
      expect(job?.delay).toBe(HELD_DELAY_MS);

      // retry leaves held jobs alone.
      expect(await ok(['queue', 'retry', '--all'], cwd)).toBe('0 jobs set to run now\n');
      const refused = await sealpost(['queue', 'retry', kim], cwd);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toBe(`error: ${kim} is held; sealpost queue release ${kim} first\n`);

      // A worker restart, then something promotes the job behind the CLI's back: the worker sends it back.
      const connections = busy.stats.connections;
      await r.restart();
      await (await r.deliver.getJob(kim))?.promote();
      await eventually(async () => {
        const j = await r.deliver.getJob(kim);
        return j && (await j.getState()) === 'delayed' && j.delay === HELD_DELAY_MS ? true : undefined;
      });
      await new Promise((done) => setTimeout(done, 500));
      expect((await r.deliver.getJob(kim))?.data.attempts).toBe(1);
      expect(busy.stats.connections).toBe(connections);
      expect((await list(cwd)).find((x) => x.id === kim)?.state).toBe('held');

      const released = await ok(['queue', 'release', '--rcpt', 'kim@busy.test'], cwd);
      expect(released).toMatch(
        // The hold kept the hour's due time; the minute or two the steps above took (more on a busy machine) has passed.
        new RegExp(`^${kim.replace(/[.~]/g, '\\$&')}: released; next attempt in (5\\dm|1h)`),
      );
      const after = (await list(cwd)).find((x) => x.id === kim);
      expect(after?.state).toBe('delayed');
      expect(Math.abs((after?.nextAttemptAt as number) - dueBefore)).toBeLessThan(5_000);
      const notHeld = await sealpost(['queue', 'release', kim], cwd);
      expect(notHeld.code).toBe(1);
      expect(notHeld.stderr).toBe(`error: ${kim} is not held\n`);

      // qshape: the two recipients of busy.test, both younger than 5 minutes.
      const summary = JSON.parse(await ok(['queue', 'summary', '--json'], cwd));
      expect(summary.buckets).toEqual(['5m', '10m', '20m', '40m', '80m', '160m', '320m', '320m+']);
      expect(summary.total).toEqual({ domain: 'TOTAL', total: 2, buckets: [2, 0, 0, 0, 0, 0, 0, 0] });
      expect(summary.domains).toEqual([{ domain: 'busy.test', total: 2, buckets: [2, 0, 0, 0, 0, 0, 0, 0] }]);
      const table = await ok(['queue', 'summary'], cwd);
      expect(table.split('\n')[0]).toMatch(/^\s+T\s+5m\s+10m\s+20m\s+40m\s+80m\s+160m\s+320m\s+320m\+$/);
      expect(table).toMatch(/TOTAL\s+2\s+2\s+0/);
      expect(table).toMatch(/busy\.test\s+2\s+2\s+0/);
      const heldOnly = JSON.parse(await ok(['queue', 'summary', '--json', '--state', 'held'], cwd));
      expect(heldOnly.total.total).toBe(1);

      // Delete by selector: every held job of busy.test, and nothing else.
      expect(await ok(['queue', 'delete', '--domain', 'busy.test', '--state', 'held'], cwd)).toBe(
        `${lee}: deleted\n`,
      );
      expect((await list(cwd)).map((x) => x.id)).toEqual([kim]);
      expect(await r.redis.hlen(`${r.prefix}:queue-held`)).toBe(0);
    } finally {
      await r.close();
      await busy.close();
    }
  });

  it('inbound: show --message prints the spooled message; a deleted copy stays deleted through reconcile; the last one takes the spool entry', async () => {
    const rig = await startMxRig();
    const cwd = deploymentDir(rig.prefix, rig.blobs.root);
    const send = async (to: string[], raw: string) => {
      const t = nodemailer.createTransport({
        host: '127.0.0.1',
        port: rig.port,
        secure: false,
        ignoreTLS: true,
      });
      try {
        const info = await t.sendMail({ envelope: { from: 'ann@remote.example', to }, raw });
        return info.response.split(' ').pop() as string;
      } finally {
        t.close();
      }
    };
    const a = await send(
      [rig.rcpt],
      'From: Ann <ann@remote.example>\r\nSubject: first of two\r\n\r\nhello there\r\nsecond line\r\n',
    );
    // Two copies (two wallets) of one message, through the MX's own acceptance path (the rig has one mailbox).
    const b = newMessageId();
    const flow = new FlowProducer({ connection: rig.redis, prefix: rig.prefix });
    await acceptMessage(
      { blobs: rig.blobs, flow, attempts: 5, backoffMs: 1000 },
      {
        msgid: b,
        from: 'ann@remote.example',
        recipients: ['bob', 'cat'].map((n) => ({
          address: `${n}@mail.test`,
          wallet: `${n[0]?.toUpperCase()}${n.slice(1)}Wallet11111111111111111111111111111111111`,
          form: 'alias' as const,
          exempt: false,
        })),
        remoteIp: '127.0.0.9',
        receivedAt: Date.now(),
        source: (async function* () {
          yield Buffer.from('From: Ann <ann@remote.example>\r\nSubject: to two copies\r\n\r\nboth\r\n');
        })(),
        maxBytes: 1 << 20,
      },
    );
    await flow.close();
    const rows = await list(cwd, '--queue', 'inbound');
    expect(rows.map((x) => [x.id, x.state]).sort()).toEqual(
      [
        [`${a}.0`, 'wait'],
        [`${b}.0`, 'wait'],
        [`${b}.1`, 'wait'],
      ].sort(),
    );

    // postcat -q
    const shown = await ok(['queue', 'show', `${a}.0`, '--message'], cwd);
    expect(shown).toContain(`*** ENVELOPE RECORDS ${a}.0 ***\n`);
    expect(shown).toContain('sender: ann@remote.example\n');
    expect(shown).toContain(`recipient: ${rig.rcpt}\n`);
    expect(shown).toContain(`*** MESSAGE CONTENTS ${a}.0 ***\n`);
    expect(shown).toContain('Subject: first of two\n\nhello there\nsecond line\n');
    expect(shown.endsWith(`*** MESSAGE FILE END ${a}.0 ***\n`)).toBe(true);
    const json = JSON.parse(await ok(['queue', 'show', `${a}.0`, '--message', '--json'], cwd));
    expect(json).toMatchObject({
      id: `${a}.0`,
      msgid: a,
      envelope: { from: 'ann@remote.example', to: [rig.rcpt] },
      body: 'hello there\r\nsecond line\r\n',
    });
    expect(json.headers).toContain('Subject: first of two');

    // Hold a whole message, release one copy of it.
    expect(await ok(['queue', 'hold', '--msgid', b], cwd)).toBe(`${b}.0: held\n${b}.1: held\n`);
    expect(await ok(['queue', 'release', `${b}.0`], cwd)).toBe(`${b}.0: released; runs now\n`);
    const states = Object.fromEntries((await list(cwd)).map((x) => [x.id, x.state]));
    expect(states).toEqual({ [`${a}.0`]: 'wait', [`${b}.0`]: 'wait', [`${b}.1`]: 'held' });

    // One copy of b deleted; its spool entry stays for the other.
    expect(await ok(['queue', 'delete', `${b}.0`], cwd)).toBe(`${b}.0: deleted\n`);
    expect(await rig.blobs.exists(`spool/${b}`)).toBe(true);

    // Redis loses everything: reconcile re-queues a's copy and b's second copy, never the deleted one.
    await new Promise((done) => setTimeout(done, 1100));
    const keys = await rig.redis.keys(`${rig.prefix}:*`);
    if (keys.length) await rig.redis.del(...keys);
    const rec = JSON.parse(await ok(['queue', 'reconcile', '--grace-secs', '0', '--json'], cwd));
    const byId = Object.fromEntries(
      (rec.entries as { id: string; action: string; jobs: string[] }[]).map((e) => [e.id, e]),
    );
    expect(byId[a]).toMatchObject({ action: 'recovered', jobs: [`${a}.0`] });
    expect(byId[b]).toMatchObject({ action: 'recovered', jobs: [`${b}.1`] });
    expect((await list(cwd, '--queue', 'inbound')).map((x) => x.id).sort()).toEqual(
      [`${a}.0`, `${b}.1`].sort(),
    );

    // The rest of b: nothing of it is left, so its spool entry goes, and reconcile has nothing to bring back.
    expect(await ok(['queue', 'delete', '--msgid', b], cwd)).toBe(
      `${b}.1: deleted\n${b}: nothing of it left in the queue; spool entry removed\n`,
    );
    expect(await rig.blobs.exists(`spool/${b}`)).toBe(false);
    const again = JSON.parse(await ok(['queue', 'reconcile', '--grace-secs', '0', '--json'], cwd));
    expect((again.entries as { id: string }[]).map((e) => e.id)).not.toContain(b);
    expect((await list(cwd)).map((x) => x.id)).toEqual([`${a}.0`]);

    const gone = await sealpost(['queue', 'delete', '--msgid', b], cwd);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toBe('error: nothing matched\n');
  });
});
