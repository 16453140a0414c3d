// SMTP fuzz: many connections send random and mutated command streams to
// the MX (`sealpost serve`, its own process) for a bounded time: valid
// dialogues with mutated bytes, binary junk, NUL and bare CR/LF, over-long
// lines, pipelined garbage, unknown verbs, commands out of order, DATA cut
// off mid-body, HTTP on the SMTP port, connections dropped at random. Every
// few seconds a valid message must still get its 250 and be delivered. At
// the end the process must be alive and its memory flat.
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import nodemailer from 'nodemailer';
import type { Drill } from '../drill.ts';
import {
  account,
  accountingOk,
  describeAccounting,
  readInboxes,
  type Sent,
  waitForInboxes,
} from '../mail.ts';
import { startDrillStack } from '../rig.ts';

const DURATION_MS = Number(process.env.DRILL_FUZZ_SECS ?? 90) * 1000;
const CONNECTIONS = 24;

const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)] as T;
const rnd = (n: number) => Math.floor(Math.random() * n);

function junk(n: number): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = rnd(256);
  return b;
}

function mutate(line: string): Buffer {
  const b = Buffer.from(line, 'latin1');
  const out = [...b];
  const edits = 1 + rnd(4);
  for (let e = 0; e < edits; e++) {
    const at = rnd(out.length + 1);
    const kind = rnd(5);
    if (kind === 0) out.splice(at, 1);
    else if (kind === 1) out.splice(at, 0, rnd(256));
    else if (kind === 2 && out.length) out[at % out.length] = rnd(256);
    else if (kind === 3)
      out.splice(at, 0, ...Buffer.from(pick(['\0', '\r', '\n', '\r\n', '<', '>', ':', '@', '"', '\\'])));
    else out.splice(at, 0, ...Buffer.from('A'.repeat(rnd(3000))));
  }
  return Buffer.from(out);
}

function script(rcpt: string): Buffer[] {
  const valid = [
    'EHLO fuzz.example\r\n',
    'MAIL FROM:<fuzz@remote.example>\r\n',
    `RCPT TO:<${rcpt}>\r\n`,
    'DATA\r\n',
    'Subject: fuzz\r\n\r\nbody\r\n.\r\n',
    'QUIT\r\n',
  ];
  const shape = rnd(9);
  switch (shape) {
    case 0: // a valid dialogue with some lines mutated
      return valid.map((l) => (Math.random() < 0.4 ? mutate(l) : Buffer.from(l)));
    case 1: // pure junk
      return Array.from({ length: 1 + rnd(6) }, () => junk(1 + rnd(4000)));
    case 2: // unknown and out-of-order verbs, pipelined in one write
      return [
        Buffer.from(
          `${Array.from({ length: 5 + rnd(40) }, () =>
            pick([
              'RCPT TO:<a@b>',
              'DATA',
              'BDAT 10',
              'XYZZY',
              'AUTH PLAIN AAAA',
              'STARTTLS',
              'VRFY root',
              'EXPN x',
              'HELO',
              'MAIL FROM:',
              'RSET',
              'NOOP',
              'TURN',
              'ETRN x',
            ]),
          ).join('\r\n')}\r\n`,
        ),
      ];
    case 3: // over-long lines
      return [
        Buffer.from('EHLO fuzz\r\n'),
        Buffer.from(`MAIL FROM:<${'x'.repeat(2000 + rnd(100_000))}@a>\r\n`),
      ];
    case 4: // DATA cut off mid-body, then the connection drops
      return [
        ...valid.slice(0, 4).map((l) => Buffer.from(l)),
        Buffer.from(`Subject: cut\r\n\r\n${'y'.repeat(rnd(50_000))}`),
      ];
    case 5: // HTTP on the SMTP port
      return [
        Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'),
        Buffer.from('POST /x HTTP/1.0\r\nContent-Length: 5\r\n\r\nhello'),
      ];
    case 6: // bare LF / CR, NUL inside a valid message
      return [
        ...valid.slice(0, 4).map((l) => Buffer.from(l)),
        Buffer.from(
          pick([
            'Subject: a\nb\r\n\r\nx\r\n.\r\n',
            'Subject: a\rb\r\n\r\nx\r\n.\r\n',
            'Subject: a\0b\r\n\r\nx\r\n.\r\n',
          ]),
        ),
        Buffer.from('QUIT\r\n'),
      ];
    case 7: // header flood
      return [
        ...valid.slice(0, 4).map((l) => Buffer.from(l)),
        Buffer.from(`X-H: ${'z'.repeat(900)}\r\n`.repeat(200 + rnd(2000))),
        Buffer.from('\r\nbody\r\n.\r\n'),
      ];
    default: // random case, whitespace and stray bytes in every command
      return valid.map((l) =>
        Buffer.from(
          l
            .replace(/[A-Za-z]/g, (c) => (Math.random() < 0.5 ? c.toLowerCase() : c.toUpperCase()))
            .replace(/ /g, () => pick([' ', '  ', '\t', ''])),
        ),
      );
  }
}

/** One fuzz session; resolves whether the server answered anything (its greeting at least). */
function fuzzConnection(port: number, rcpt: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const parts = script(rcpt);
    let answered = false;
    const done = () => {
      socket.destroy();
      resolve(answered);
    };
    socket.setTimeout(5000, done);
    socket.on('error', done);
    socket.on('close', done);
    socket.on('data', () => {
      answered = true; // the replies themselves are read and dropped
    });
    socket.once('connect', async () => {
      for (const p of parts) {
        if (socket.destroyed) return;
        socket.write(p);
        await sleep(rnd(40));
      }
      // Sometimes wait for the server to finish, sometimes drop the connection at once.
      if (Math.random() < 0.5) done();
      else setTimeout(done, rnd(1500));
    });
  });
}

export const smtpFuzz: Drill = {
  name: 'smtp-fuzz',
  summary: `random and mutated SMTP streams on ${CONNECTIONS} connections for ${DURATION_MS / 1000} s`,
  budgetMs: DURATION_MS + 6 * 60_000,
  async run(log) {
    const stack = await startDrillStack({ label: 'fuzz', wallets: 2 });
    try {
      const rcpt = stack.addresses()[0] as string;
      const canaryTo = stack.addresses()[1] as string;
      const rss: number[] = [];
      const canaries: Sent[] = [];
      const canaryFailures: string[] = [];
      let sessions = 0;
      let answered = 0;
      const end = Date.now() + DURATION_MS;
      const sampler = setInterval(() => {
        const r = stack.serve.rss();
        if (r) rss.push(r);
      }, 1000);
      const fuzzers = Array.from({ length: CONNECTIONS }, async () => {
        while (Date.now() < end) {
          if (await fuzzConnection(stack.mxPort, rcpt)) answered++;
          sessions++;
        }
      });
      const canary = (async () => {
        for (let i = 0; Date.now() < end; i++) {
          await sleep(4000);
          const subject = `canary-${i}`;
          try {
            const t = nodemailer.createTransport({
              host: '127.0.0.1',
              port: stack.mxPort,
              secure: false,
              ignoreTLS: true,
            });
            const info = await t.sendMail({
              envelope: { from: 'canary@remote.example', to: [canaryTo] },
              raw: `From: canary@remote.example\r\nSubject: ${subject}\r\n\r\nstill here\r\n`,
            });
            t.close();
            canaries.push({
              subject,
              wallet: canaryTo.split('@')[0] as string,
              msgid: info.messageId,
              attempts: 1,
              earlier: [],
              ackedAt: Date.now(),
            });
          } catch (err) {
            canaryFailures.push(`${subject}: ${(err as Error).message}`);
          }
        }
      })();
      await Promise.all([...fuzzers, canary]);
      clearInterval(sampler);
      const alive = stack.serve.running;
      log(
        `${sessions} fuzz sessions (${answered} answered by the server); serve ${alive ? 'alive' : 'DEAD'}; canaries ${canaries.length} accepted, ${canaryFailures.length} failed`,
      );
      const canaryWallet = stack.wallets[1];
      if (!canaryWallet) throw new Error('no canary wallet');
      await waitForInboxes(stack.connection, stack.programId, [canaryWallet], canaries.length, 3 * 60_000);
      const inbox = (
        await readInboxes(stack.connection, stack.programId, stack.gatewayUrl, [canaryWallet])
      ).filter((e) => e.subject.startsWith('canary'));
      const a = account(canaries, inbox);
      // Memory flat: the lowest RSS of the last quarter against the lowest of the
      // second quarter (after warm-up). The lows are where the garbage collector
      // left the heap; a leak raises them, the collector's sawtooth does not.
      const q = Math.floor(rss.length / 4);
      const early = Math.min(...rss.slice(q, 2 * q));
      const late = Math.min(...rss.slice(3 * q));
      const growth = late - early;
      const flat = rss.length >= 8 && growth < 64 * 1048576;
      const mb = (n: number) => `${(n / 1048576).toFixed(0)} MB`;
      return {
        pass: alive && canaryFailures.length === 0 && canaries.length > 0 && accountingOk(a) && flat,
        detail: `${sessions} fuzz sessions (${answered} answered); serve ${alive ? 'alive' : 'crashed'}; RSS low ${mb(early)} → ${mb(late)}, peak ${mb(Math.max(...rss))} (${growth >= 0 ? '+' : ''}${mb(growth)}); canaries: ${describeAccounting(a)}${canaryFailures.length ? `; failed: ${canaryFailures.slice(0, 2).join('; ')}` : ''}`,
      };
    } finally {
      await stack.close();
    }
  },
};
