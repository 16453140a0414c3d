// IMAP FETCH throughput: messages per second for 10 KB messages, with one
// session and with 20 parallel sessions (one account each).
//
//   npm run bench:imap -- [--messages 300] [--sessions 20] [--rounds 3] [--size 10240]
//
// Each account's INBOX holds `messages` messages stored exactly as delivery
// stores them: sealed to the wallet key, the content key wrapped for the
// account's reader key (unlocked at login with the mail password). Every
// round is one `UID FETCH 1:* (UID BODY.PEEK[])` of the whole INBOX over
// implicit TLS, with the session's plaintext cache off, so each message is
// read from the blob store and decrypted on every fetch (the first-read
// cost). The IMAP server runs on this thread against SQLite and Redis; the
// clients run on a worker thread (raw TLS, literals skipped by length), so
// the figures are the server's.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import bs58 from 'bs58';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { BlobStore } from '../src/core/blobs/blob-store.ts';
import { CredentialSealer } from '../src/core/crypto/credential-seal.ts';
import { generateKeypair } from '../src/core/keys/keypair-file.ts';
import { newMessageId } from '../src/core/log.ts';
import { AccountsRepo, MessagesRepo, openStore } from '../src/core/store/index.ts';
import { createSelfSignedCert } from '../src/core/tls/self-signed.ts';
import { startImapServer } from '../src/edge/imap/server.ts';
import { getReaderKey, MailLogin } from '../src/mail/reader-keys/index.ts';
import { setMailPassword } from '../src/mail/reader-keys/mail-password.ts';
import { sealMessage, walletEncryptionPublicKey, wrapContentKey } from '../src/mail/seal/index.ts';

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '300' },
    sessions: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '3' },
    size: { type: 'string', default: '10240' },
  },
});
const MESSAGES = Number(values.messages);
const SESSIONS = Number(values.sessions);
const ROUNDS = Number(values.rounds);
const SIZE = Number(values.size);
const PASSWORD = 'benchmark mail password';

function messageOf(i: number): Buffer {
  const head =
    `From: Sender ${i} <sender${i}@remote.example>\r\nTo: reader@bench.example\r\nSubject: bench message ${i}\r\n` +
    `Date: Tue, 03 Mar 2026 10:00:00 +0000\r\nMessage-ID: <${i}.${randomBytes(4).toString('hex')}@remote.example>\r\n` +
    'MIME-Version: 1.0\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\n';
  const lines: string[] = [];
  let size = head.length;
  while (size < SIZE) {
    const line =
      randomBytes(38)
        .toString('hex')
        .slice(0, Math.min(76, SIZE - size)) || 'x';
    lines.push(line);
    size += line.length + 2;
  }
  return Buffer.from(`${head}${lines.join('\r\n')}\r\n`);
}

// The client side, plain JS so the worker needs no TypeScript loader.
const CLIENT = String.raw`
const { workerData, parentPort } = require('node:worker_threads');
const tls = require('node:tls');
function session(port, user, pass, rounds) {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false });
    let buf = Buffer.alloc(0), skip = 0, step = 0, fetched = 0, bytes = 0, round = 0, started = 0;
    const times = [];
    const send = (t) => s.write(t + '\r\n');
    const next = () => {
      if (step === 0) { step = 1; send('a LOGIN "' + user + '" "' + pass + '"'); }
      else if (step === 1) { step = 2; send('b SELECT INBOX'); }
      else if (step === 2 || step === 3) {
        if (step === 3) times.push(performance.now() - started);
        if (round === rounds) { step = 4; send('z LOGOUT'); return; }
        step = 3; round++; started = performance.now(); send('f' + round + ' UID FETCH 1:* (UID BODY.PEEK[])');
      }
    };
    s.on('data', (d) => {
      buf = buf.length ? Buffer.concat([buf, d]) : d;
      for (;;) {
        if (skip > 0) { const n = Math.min(skip, buf.length); skip -= n; bytes += n; buf = buf.subarray(n); if (skip > 0) return; }
        const nl = buf.indexOf(10);
        if (nl < 0) return;
        const line = buf.subarray(0, nl + 1).toString('latin1');
        buf = buf.subarray(nl + 1);
        const lit = /\{(\d+)\}\r\n$/.exec(line);
        if (lit) { skip = Number(lit[1]); if (/^\* \d+ FETCH/.test(line)) fetched++; continue; }
        if (/^\* OK \[CAPABILITY/.test(line) && step === 0) { next(); continue; }
        const tagged = /^([abfz]\d*) (OK|NO|BAD)/.exec(line);
        if (tagged) {
          if (tagged[2] !== 'OK') { reject(new Error(line.trim())); s.destroy(); return; }
          if (tagged[1] === 'z') { s.end(); resolve({ fetched, bytes, times }); return; }
          next();
        }
      }
    });
    s.on('error', reject);
  });
}
(async () => {
  const { port, users, pass, rounds } = workerData;
  const t0 = performance.now();
  const results = await Promise.all(users.map((u) => session(port, u, pass, rounds)));
  parentPort.postMessage({ results, wallMs: performance.now() - t0 });
})().catch((e) => { parentPort.postMessage({ error: e.message }); });
`;

interface SessionResult {
  fetched: number;
  bytes: number;
  times: number[];
}

function runClients(port: number, users: string[]): Promise<{ results: SessionResult[] }> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(CLIENT, {
      eval: true,
      workerData: { port, users, pass: PASSWORD, rounds: ROUNDS },
    });
    worker.once('message', (m: { error?: string; results: SessionResult[] }) => {
      if (m.error) reject(new Error(m.error));
      else resolve(m);
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'sealpost-bench-imap-'));
  const prefix = `bench-imap-${randomBytes(4).toString('hex')}`;
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  const store = await openStore({ url: `sqlite:${join(dir, 'bench.sqlite')}`, dataDir: dir });
  try {
    const sealer = new CredentialSealer(new Uint8Array(randomBytes(32)));
    const accounts = new AccountsRepo(store.db);
    const messages = new MessagesRepo(store.db);
    const blobs = new BlobStore(join(dir, 'blobs'));
    const wallets: string[] = [];
    const setupStart = performance.now();
    for (let a = 0; a < SESSIONS; a++) {
      const wallet = generateKeypair().address;
      wallets.push(wallet);
      await accounts.create(wallet, { source: 'self' });
      await setMailPassword({ accounts, sealer, db: store.db }, wallet, PASSWORD);
      const reader = await getReaderKey(store.db, wallet);
      if (!reader) throw new Error('no reader key');
      const recipient = walletEncryptionPublicKey(bs58.decode(wallet));
      for (let i = 0; i < MESSAGES; i++) {
        const raw = messageOf(i);
        const now = Date.now();
        const { sealed, contentKey } = await sealMessage({
          envelope: {
            version: 1,
            from: `sender${i}@remote.example`,
            to: `${wallet}@bench.example`,
            receivedAt: now,
          },
          raw,
          recipientPublicKey: recipient,
        });
        const wrap = Buffer.from(await wrapContentKey(contentKey, reader.publicKey)).toString('base64');
        contentKey.fill(0);
        const blob = await blobs.putContent(sealed);
        await messages.storeDelivered({
          id: `${newMessageId()}.0`,
          wallet,
          blobKey: blob.key,
          size: blob.size,
          receivedAt: now,
          cid: null,
          pinnedByOperator: false,
          chainIndex: null,
          emailAddress: null,
          txSignature: null,
          publishedByUs: false,
          wraps: [{ readerId: reader.readerId, wrap }],
        });
      }
    }
    const setupSecs = (performance.now() - setupStart) / 1000;
    const cert = await createSelfSignedCert(['localhost', '127.0.0.1']);
    const server = await startImapServer({
      host: '127.0.0.1',
      port: 0,
      tls: 'implicit',
      ...cert,
      login: new MailLogin({
        db: store.db,
        accounts,
        sealer,
        redis,
        prefix,
        walletOf: async (name) => name,
      }),
      mail: { db: store.db, blobs, cacheBytes: 0 },
      maxAppendBytes: 25 * 1024 * 1024,
      idlePollMs: 2000,
      idleTimeoutMs: 1_800_000,
      preAuthTimeoutMs: 60_000,
      maxConnectionsPerIp: SESSIONS + 5,
      logger: pino({ level: 'warn' }),
    });
    try {
      const report = (label: string, results: SessionResult[]) => {
        const fetched = results.reduce((n, r) => n + r.fetched, 0);
        const bytes = results.reduce((n, r) => n + r.bytes, 0);
        // Rounds run back to back in every session; the slowest session bounds the wall time.
        const busyMs = Math.max(...results.map((r) => r.times.reduce((a, b) => a + b, 0)));
        const perRound = results.flatMap((r) => r.times).sort((a, b) => a - b);
        console.log(
          `${label.padEnd(22)} ${String(fetched).padStart(6)} messages in ${(busyMs / 1000).toFixed(2)} s: ` +
            `${Math.round((fetched / busyMs) * 1000)} messages/s, ${(((bytes / busyMs) * 1000) / 1e6).toFixed(1)} MB/s ` +
            `(one full-INBOX FETCH: median ${perRound[Math.floor(perRound.length / 2)]?.toFixed(0)} ms)`,
        );
        const expected = results.length * MESSAGES * ROUNDS;
        if (fetched !== expected) throw new Error(`fetched ${fetched} messages, expected ${expected}`);
      };
      console.log(
        `IMAP FETCH benchmark: ${SESSIONS} accounts × ${MESSAGES} messages of ~${SIZE} bytes ` +
          `(setup ${setupSecs.toFixed(1)} s), ${ROUNDS} rounds of UID FETCH 1:* (UID BODY.PEEK[]) per session`,
      );
      report('1 session', (await runClients(server.port, [wallets[0] as string])).results);
      report(`${SESSIONS} parallel sessions`, (await runClients(server.port, wallets)).results);
    } finally {
      await server.close(1000);
    }
  } finally {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
