// The rig of the webmail's server-side tests: the account API with the mail
// view routes (src/edge/api/routes/mail.ts) on a loopback port, over SQLite and
// real Redis under a random key prefix, plus the HTTP call, the wallet login
// and a delivered copy stored the way the pipeline stores it. Every change
// the store announces is recorded, which is how IMAP IDLE sessions hear of it.
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import { Keypair } from '@solana/web3.js';
import bs58 from 'bs58';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { afterEach, expect } from 'vitest';
import { BlobStore } from '../../src/core/blobs/blob-store.ts';
import { type Config, parseConfig } from '../../src/core/config/index.ts';
import { createCredentialKeyFile } from '../../src/core/crypto/credential-seal.ts';
import { createRedis } from '../../src/core/redis/client.ts';
import { MessagesRepo, openStore, type Store } from '../../src/core/store/index.ts';
import { setMailChangeSink } from '../../src/core/store/mail-events.ts';
import { type MailRouteDeps, mailRoutes } from '../../src/edge/api/routes/mail.ts';
import { buildApi } from '../../src/edge/api/server.ts';
import { sealMessage, walletEncryptionPublicKey } from '../../src/mail/seal/index.ts';
import { tempDir } from './temp-dir.ts';

export const MAIL_DOMAIN = 'mail.test';

export interface MailApiRig {
  url: string;
  app: FastifyInstance;
  config: Config;
  store: Store;
  redis: Redis;
  prefix: string;
  dir: string;
  blobs: BlobStore;
  messages: MessagesRepo;
  /** Every change the store announced: wallet and mailbox ids (all when absent). */
  changes: { wallet: string; mailboxIds?: readonly string[] }[];
}

export interface MailApiRigOptions {
  /** Appended to the rig's config (after its `[api]` keys). */
  toml?: string;
  /** Extra mail-route deps from the rig's parts; null: no mail routes at all. */
  mail?: (r: Omit<MailApiRig, 'url' | 'app'>) => Partial<MailRouteDeps> | null;
}

/** Call in a test file: returns the rig's start, and closes every rig it started after each test. */
export function useMailApiRigs(): (opts?: MailApiRigOptions) => Promise<MailApiRig> {
  const open: MailApiRig[] = [];
  afterEach(async () => {
    for (const rig of open.splice(0)) {
      await rig.app.close();
      let cursor = '0';
      do {
        const [next, keys] = await rig.redis.scan(cursor, 'MATCH', `${rig.prefix}:*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length) await rig.redis.del(...keys);
      } while (cursor !== '0');
      await rig.redis.quit();
      await rig.store.close();
    }
  });
  return async (opts = {}) => {
    const dir = tempDir('sealpost-mail-api-');
    const prefix = `spwm-${randomBytes(6).toString('hex')}`;
    createCredentialKeyFile(join(dir, 'credential.key'));
    const toml = `[smtp]\nlocal_domains = ["${MAIL_DOMAIN}"]\n[redis]\nprefix = "${prefix}"\n[api]\nrate_limit_ip_per_min = 0\nrate_limit_wallet_per_min = 0\n${opts.toml ?? ''}`;
    const config = parseConfig(toml, {
      configDir: dir,
      dataDirOverride: dir,
      source: join(dir, 'sealpost.toml'),
    });
    const store = await openStore({ url: config.store.url, dataDir: config.store.data_dir });
    const redis = createRedis(config.redis, { maxRetriesPerRequest: null });
    const blobs = new BlobStore(join(dir, 'blobs'));
    const messages = new MessagesRepo(store.db);
    const changes: MailApiRig['changes'] = [];
    setMailChangeSink(store.db, {
      mailChanged: (wallet, mailboxIds) => changes.push({ wallet, mailboxIds }),
    });
    const base = { config, store, redis, prefix, dir, blobs, messages, changes };
    const extra = opts.mail ? opts.mail(base) : {};
    const plugins =
      extra === null
        ? []
        : [
            mailRoutes({
              db: store.db,
              messages,
              blobs,
              localDomains: config.smtp.local_domains,
              maxMessageBytes: config.smtp.max_message_bytes,
              ...extra,
            }),
          ];
    const app = await buildApi({ config, store, redis, plugins });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const rig = { ...base, app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
    open.push(rig);
    return rig;
  };
}

/** One request; `body` is the parsed JSON ({} when the answer is not JSON). */
export async function call(
  rig: MailApiRig,
  method: string,
  path: string,
  o: { token?: string; json?: unknown } = {},
): Promise<{ status: number; headers: Headers; bytes: Uint8Array; body: Record<string, unknown> }> {
  const headers: Record<string, string> = {};
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  if (o.json !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(rig.url + path, {
    method,
    headers,
    body: o.json === undefined ? undefined : JSON.stringify(o.json),
  });
  const bytes = new Uint8Array(await res.arrayBuffer());
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>;
  } catch {
    // not JSON
  }
  return { status: res.status, headers: res.headers, bytes, body };
}

/** Logs `kp` in through the API's challenge and returns its token. */
export async function login(rig: MailApiRig, kp: Keypair): Promise<string> {
  const wallet = kp.publicKey.toBase58();
  const c = await call(rig, 'POST', '/v1/auth/challenge', { json: { wallet } });
  const signature = bs58.encode(
    ed25519.sign(new TextEncoder().encode(c.body.nonce as string), kp.secretKey.subarray(0, 32)),
  );
  const l = await call(rig, 'POST', '/v1/auth/login', { json: { wallet, signature } });
  expect(l.status).toBe(200);
  return l.body.token as string;
}

/**
 * A delivered copy the way the pipeline stores it: sealed to the wallet, in
 * the blob store. `chain`: it has an Email account (index 0); `publishedByUs`
 * defaults to `chain`. Returns the sealed bytes.
 */
export async function deliverSealed(
  rig: MailApiRig,
  kp: Keypair,
  id: string,
  raw: Uint8Array,
  opts: { chain?: boolean; publishedByUs?: boolean } = {},
): Promise<Uint8Array> {
  const chain = opts.chain ?? false;
  const { sealed, contentKey } = await sealMessage({
    envelope: {
      version: 1,
      from: 'a@remote.example',
      to: `${kp.publicKey.toBase58()}@${MAIL_DOMAIN}`,
      receivedAt: 1,
    },
    raw,
    recipientPublicKey: walletEncryptionPublicKey(kp.publicKey.toBytes()),
  });
  contentKey.fill(0);
  const stored = await rig.blobs.putContent(sealed);
  await rig.messages.storeDelivered({
    id,
    wallet: kp.publicKey.toBase58(),
    blobKey: stored.key,
    size: stored.size,
    receivedAt: Date.now(),
    cid: `b3:${'0'.repeat(64)}`,
    pinnedByOperator: false,
    chainIndex: chain ? '0' : null,
    emailAddress: chain ? Keypair.generate().publicKey.toBase58() : null,
    txSignature: null,
    publishedByUs: opts.publishedByUs ?? chain,
  });
  return sealed;
}
