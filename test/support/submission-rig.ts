// Shared rig of the submission tests: a real submission listener on a random
// loopback port over a devnet with mailboxes and an alias, a real SQLite
// accounts store with a mail password set, real Redis (random prefix), real
// TLS certificates (server, a peer CA and its client certificate, and a
// stranger's CA), and a real DKIM key. Everything is removed after each test.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { connect as netConnect, type Socket } from 'node:net';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import type { Keypair } from '@solana/web3.js';
import { FlowProducer, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterEach } from 'vitest';
import {
  type DeliverJobData,
  type OutboundJobData,
  QUEUE_DELIVER,
  QUEUE_OUTBOUND,
} from '../../src/contracts/inbound-jobs.ts';
import { BlobStore } from '../../src/core/blobs/blob-store.ts';
import { CredentialSealer } from '../../src/core/crypto/credential-seal.ts';
import { dkimPublicKeyFromPem, dkimRecord, generateDkimKey } from '../../src/core/keys/dkim-key.ts';
import { AccountsRepo, openStore, type Store } from '../../src/core/store/index.ts';
import { OutboundLedger } from '../../src/core/store/outbound-ledger.ts';
import { type CertificatePair, createSelfSignedCert } from '../../src/core/tls/self-signed.ts';
import type { ErrorLimits } from '../../src/edge/mx/error-limit.ts';
import type { AuthBackoff } from '../../src/edge/submission/password-auth.ts';
import { SendRate, type SendRateLimits } from '../../src/edge/submission/send-rate.ts';
import { type SubmissionServer, startSubmission } from '../../src/edge/submission/server.ts';
import type { SubmitDeps } from '../../src/edge/submission/submit.ts';
import { ChainView } from '../../src/mail/chain-view.ts';
import { createDkimSigner } from '../../src/mail/dkim-sign.ts';
import { setMailPassword } from '../../src/mail/reader-keys/mail-password.ts';
import { startTestChain, type TestChain } from './devnet.ts';
import { type MailChain, prepareMailChain } from './mail-chain.ts';
import { tempDir } from './temp-dir.ts';

export const DOMAIN = 'mail.test';
export const PEER_DOMAIN = 'peer.example';
export const PASSWORD = 'correct horse battery staple';
export const SELECTOR = 'sp1';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => {});
});

export interface RigOptions {
  mode?: 'submission' | 'submissions';
  peers?: boolean;
  maxMessageBytes?: number;
  limits?: SendRateLimits;
  backoff?: AuthBackoff;
  /** Redis for the flow producer (a dead port shows what happens when the queue is down). */
  queueRedisUrl?: string;
  errorLimits?: ErrorLimits;
  /** Record remote copies in the store's outbound ledger (as serve does). */
  ledger?: boolean;
  /** The outbound content scan ([spam] scan_submission). */
  spam?: SubmitDeps['spam'];
}

export interface Certs {
  server: CertificatePair;
  peerCa: CertificatePair;
  peer: CertificatePair;
  strangerCa: CertificatePair;
  stranger: CertificatePair;
}

export interface SubmissionRig {
  chain: TestChain;
  mail: MailChain;
  /** Account with the mail password and the alias `alice`. */
  alice: Keypair;
  aliceAddress: string;
  /** A mailbox (postage 0) with no account here. */
  bob: Keypair;
  bobAddress: string;
  /** A mailbox asking first-contact senders for postage. */
  gated: Keypair;
  server: SubmissionServer;
  port: number;
  deps: SubmitDeps;
  redis: Redis;
  prefix: string;
  blobs: BlobStore;
  deliver: Queue<DeliverJobData>;
  outbound: Queue<OutboundJobData>;
  certs: Certs;
  /** TXT answers a DKIM verifier needs: `<selector>._domainkey.<domain>` → value. */
  dkimTxt: Map<string, string>;
  /** Delays the back-off asked for, in order (the rig's sleep returns at once). */
  sleeps: number[];
  dir: string;
  accounts: AccountsRepo;
  /** The accounts store (alice's account and mail password are in it). */
  store: Store;
  redisKeys(): Promise<string[]>;
}

let certsCache: Promise<Certs> | undefined;

/** Certificates are the same for every test of a file: making RSA/EC keys is slow enough to share. */
function makeCerts(): Promise<Certs> {
  certsCache ??= (async () => {
    const server = await createSelfSignedCert(['localhost', '127.0.0.1']);
    const peerCa = await createSelfSignedCert(['Sealpost Peer CA'], { isCa: true });
    const peer = await createSelfSignedCert([PEER_DOMAIN, `mx.${PEER_DOMAIN}`], { ca: peerCa });
    const strangerCa = await createSelfSignedCert(['Stranger CA'], { isCa: true });
    const stranger = await createSelfSignedCert([PEER_DOMAIN], { ca: strangerCa });
    return { server, peerCa, peer, strangerCa, stranger };
  })();
  return certsCache;
}

export async function startSubmissionRig(opts: RigOptions = {}): Promise<SubmissionRig> {
  const chain = await startTestChain();
  const mail = await prepareMailChain(chain, DOMAIN);
  const alice = await mail.mailbox({ alias: 'alice' });
  const bob = await mail.mailbox();
  const gated = await mail.mailbox({ postage: 5000n });

  const dir = tempDir();
  const store = await openStore({ url: `sqlite:${join(dir, 'store.sqlite')}`, dataDir: dir });
  cleanups.push(() => store.close());
  const accounts = new AccountsRepo(store.db);
  const sealer = new CredentialSealer(new Uint8Array(randomBytes(32)));
  await accounts.create(alice.publicKey.toBase58(), { source: 'self' });
  await setMailPassword({ accounts, sealer, db: store.db }, alice.publicKey.toBase58(), PASSWORD);

  const certs = await makeCerts();
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  const caFile = join(dir, 'peer-ca.pem');
  writeFileSync(certFile, certs.server.cert);
  writeFileSync(keyFile, certs.server.key);
  writeFileSync(caFile, certs.peerCa.cert);

  // One DKIM key signs for the local domain and for the peer's domain.
  const dkimKey = await generateDkimKey();
  const dkimFile = join(dir, 'dkim.pem');
  writeFileSync(dkimFile, dkimKey.privateKeyPem);
  const dkimTxt = new Map<string, string>();
  for (const domain of [DOMAIN, PEER_DOMAIN]) {
    const record = dkimRecord(domain, SELECTOR, dkimPublicKeyFromPem(dkimKey.privateKeyPem));
    dkimTxt.set(record.name, record.value);
  }

  const prefix = `sptest-sub-${randomBytes(6).toString('hex')}`;
  const redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
  const queueRedis = new Redis(opts.queueRedisUrl ?? 'redis://127.0.0.1:6379', {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    lazyConnect: true,
    retryStrategy: () => null,
  });
  queueRedis.on('error', () => {});
  await queueRedis.connect().catch(() => {});
  const flow = new FlowProducer({ connection: queueRedis, prefix });
  const blobs = new BlobStore(join(dir, 'blobs'));
  const deps: SubmitDeps = {
    policy: { localDomains: [DOMAIN] },
    chain: new ChainView({ connection: chain.connection, programId: chain.programId, ttlMs: 0 }),
    accept: { blobs, flow, attempts: 3, backoffMs: 1000 },
    dkim: createDkimSigner([
      { domain: DOMAIN, selector: SELECTOR, key_file: dkimFile },
      { domain: PEER_DOMAIN, selector: SELECTOR, key_file: dkimFile },
    ]),
    sendRate: new SendRate(redis, prefix, opts.limits ?? { perHour: 100, perDay: 1000 }),
    maxMessageBytes: opts.maxMessageBytes ?? 256 * 1024,
    maxRecipients: 10,
    hostname: 'mx.mail.test',
    ...(opts.ledger ? { ledger: new OutboundLedger(store.db) } : {}),
    ...(opts.spam ? { spam: opts.spam } : {}),
  };
  const sleeps: number[] = [];
  const server = await startSubmission({
    mode: opts.mode ?? 'submissions',
    host: '127.0.0.1',
    port: 0,
    hostname: 'mx.mail.test',
    tls: { certFile, keyFile },
    peerCaFile: opts.peers ? caFile : undefined,
    maxConnectionsPerIp: 20,
    socketTimeoutMs: 10_000,
    errorLimits: opts.errorLimits,
    submit: deps,
    auth: {
      password: { accounts, sealer },
      redis,
      prefix,
      backoff: opts.backoff,
      sleep: async (ms) => {
        sleeps.push(ms);
      },
    },
    logger: pino({ level: 'silent' }),
  });
  const deliver = new Queue<DeliverJobData>(QUEUE_DELIVER, { connection: redis, prefix });
  const outbound = new Queue<OutboundJobData>(QUEUE_OUTBOUND, { connection: redis, prefix });
  const redisKeys = () => redis.keys(`${prefix}:*`);
  cleanups.push(async () => {
    await server.close(100);
    await flow.close().catch(() => {});
    queueRedis.disconnect();
    await deliver.close();
    await outbound.close();
    const keys = await redisKeys();
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });
  return {
    chain,
    mail,
    alice,
    aliceAddress: `${alice.publicKey.toBase58()}@${DOMAIN}`,
    bob,
    bobAddress: `${bob.publicKey.toBase58()}@${DOMAIN}`,
    gated,
    server,
    port: server.port,
    deps,
    redis,
    prefix,
    blobs,
    deliver,
    outbound,
    certs,
    dkimTxt,
    sleeps,
    dir,
    accounts,
    store,
    redisKeys,
  };
}

/** A message with CRLF line ends. */
export function message(from: string, to: string, subject = 'hello', body = 'Hi there.'): string {
  return [`From: ${from}`, `To: ${to}`, `Subject: ${subject}`, '', body, ''].join('\r\n');
}

/**
 * A raw SMTP conversation: sends each line after the previous reply and
 * returns every reply (the greeting first). `tls`: implicit TLS from the
 * start; a line `STARTTLS` upgrades the socket once the server agrees.
 */
export async function converse(
  port: number,
  lines: string[],
  opts: { tls?: boolean; cert?: CertificatePair } = {},
): Promise<string[]> {
  const clientTls = {
    rejectUnauthorized: false,
    ...(opts.cert ? { cert: opts.cert.cert, key: opts.cert.key } : {}),
  };
  let sock: Socket = opts.tls
    ? tlsConnect({ port, host: '127.0.0.1', ...clientTls })
    : netConnect(port, '127.0.0.1');
  const out: string[] = [];
  let buf = '';
  const next = () =>
    new Promise<string>((resolve, reject) => {
      const onData = (d: Buffer) => {
        buf += d.toString('latin1');
        if (/(^|\r\n)\d{3} [^\r\n]*\r\n$/.test(buf)) {
          sock.off('data', onData);
          sock.off('error', reject);
          const all = buf;
          buf = '';
          resolve(all.trim());
        }
      };
      sock.on('data', onData);
      sock.once('error', reject);
    });
  out.push(await next());
  for (const line of lines) {
    sock.write(`${line}\r\n`);
    const reply = await next();
    out.push(reply);
    if (line.toUpperCase() === 'STARTTLS' && reply.startsWith('220')) {
      const plain = sock;
      sock = tlsConnect({ socket: plain, ...clientTls });
      await new Promise<void>((resolve, reject) => {
        sock.once('secureConnect', () => resolve());
        sock.once('error', reject);
      });
    }
  }
  sock.end();
  return out;
}

/** base64 of the AUTH PLAIN token for `login` / `password`. */
export function plainToken(login: string, password: string): string {
  return Buffer.from(`\u0000${login}\u0000${password}`, 'utf8').toString('base64');
}
