// `startServe` on a devnet, real Redis (random prefix) and a real pind, with
// a config written the way an operator writes one. Everything is stopped and
// removed after the test.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Keypair } from '@solana/web3.js';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterEach } from 'vitest';
import { listInbox } from '../../chain/client/index.ts';
import { startPind } from '../../pinning/pind/server.ts';
import { type Config, parseConfig } from '../../src/core/config/index.ts';
import { createCredentialKeyFile } from '../../src/core/crypto/credential-seal.ts';
import { keypairFromSeed, writeKeypairFile } from '../../src/core/keys/keypair-file.ts';
import { createRedis } from '../../src/core/redis/client.ts';
import { ensureSelfSignedFiles } from '../../src/core/tls/self-signed.ts';
import { openSealed, walletEncryptionKeypair } from '../../src/mail/seal/index.ts';
import { type ServeOptions, type Serving, startServe } from '../../src/run/serve/serve.ts';
import { startTestChain, type TestChain } from './devnet.ts';
import { type MailChain, prepareMailChain } from './mail-chain.ts';
import { tempDir } from './temp-dir.ts';

export const RIG_DOMAIN = 'mail.test';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => {});
});

export interface ServeRig {
  chain: TestChain;
  mail: MailChain;
  config: Config;
  serving: Serving;
  mxPort: number;
  gatewayUrl: string;
  pinUrl: string;
  prefix: string;
  redis: Redis;
  credentialKey: Uint8Array;
  dataDir: string;
  configFile: string;
  postmaster?: Keypair;
  /** With `mailAccess`: the IMAPS and POP3S ports. */
  imapPort?: number;
  pop3Port?: number;
  stop(): Promise<void>;
}

export async function startServeRig(
  opts: {
    extraToml?: string;
    serve?: Partial<ServeOptions>;
    /** Default "none": tests have no public DNS. */
    senderAuth?: 'spf' | 'dmarc-lite' | 'none';
    /** `host:port` of a DNS double for [dns] resolvers. */
    resolver?: string;
    /** Give the deployment a postmaster wallet (a mailbox made before the config is written). */
    postmaster?: boolean;
    /** Use a Kubo RPC endpoint (e.g. the double) as the operator pin instead of pind. */
    kuboUrl?: string;
    /** More [smtp] local_domains (not authorized on chain). */
    extraLocalDomains?: string[];
    /** Also run IMAP and POP3 (implicit TLS, OS-chosen loopback ports, a self-signed certificate). */
    mailAccess?: boolean;
    /** Written to the default `[api] admin_token_file` before the API starts. */
    adminToken?: string;
    /** Offer STARTTLS on the MX (a self-signed certificate). */
    mxStarttls?: boolean;
    /** More `[redis]` keys, e.g. `sentinels` and `name` (test/support/redis-sentinel.ts). */
    redisToml?: string;
  } = {},
): Promise<ServeRig> {
  const chain = await startTestChain();
  const mail = await prepareMailChain(chain, RIG_DOMAIN);
  const dataDir = tempDir();
  const postmaster = opts.postmaster ? await mail.mailbox() : undefined;
  const pind = await startPind({
    dataDir: join(dataDir, 'pind'),
    pin: { host: '127.0.0.1', port: 0 },
    maxPinBytes: 64 * 1024 * 1024,
    logger: pino({ level: 'silent' }),
  });
  cleanups.push(() => pind.close());
  const authorityFile = join(dataDir, 'authority.json');
  writeKeypairFile(authorityFile, keypairFromSeed(mail.authority.secretKey.slice(0, 32)));
  const credFile = join(dataDir, 'credential.key');
  const credentialKey = createCredentialKeyFile(credFile);
  if (opts.adminToken) writeFileSync(join(dataDir, 'admin.token'), `${opts.adminToken}\n`, { mode: 0o600 });
  const prefix = `sptest-${randomBytes(6).toString('hex')}`;
  const toml = `
[smtp]
hostname = "mx.mail.test"
local_domains = ${JSON.stringify([RIG_DOMAIN, ...(opts.extraLocalDomains ?? [])])}
sender_auth = "${opts.senderAuth ?? 'none'}"
${postmaster ? `postmaster_wallet = "${postmaster.publicKey.toBase58()}"` : ''}
[[smtp.listeners]]
mode = "mx"
host = "127.0.0.1"
port = 2525
tls = "${opts.mxStarttls ? 'starttls' : 'none'}"

[chain]
rpc_url = "${chain.devnet.rpcUrl}"
program_id = "${chain.programId}"
authority_key_file = "${authorityFile}"

[ipfs]
operator = "${opts.kuboUrl ? 'kubo' : 'pind'}"
pind_url = "${pind.pinUrl}"
${opts.kuboUrl ? `kubo_rpc_url = "${opts.kuboUrl}"` : ''}
gateway_url = "${pind.gatewayUrl}"
recipient_pin_timeout_secs = 3

[api]
credential_key_file = "${credFile}"

[redis]
prefix = "${prefix}"
${opts.redisToml ?? ''}

[log]
level = "silent"
${opts.resolver ? `[dns]\nresolvers = ["${opts.resolver}"]\nreverse_cache_secs = 0\n` : ''}${opts.extraToml ?? ''}`;
  const configFile = join(dataDir, 'sealpost.toml');
  writeFileSync(configFile, toml);
  const config = parseConfig(toml, { dataDirOverride: dataDir, source: configFile });
  if (opts.mailAccess || opts.mxStarttls) {
    await ensureSelfSignedFiles(config.smtp.tls_cert_file, config.smtp.tls_key_file, [
      'localhost',
      '127.0.0.1',
    ]);
  }
  const loopback0 = { host: '127.0.0.1', port: 0 };
  // Port 0: the OS picks a free port for the MX.
  const serving = await startServe({
    config,
    logger: pino({ level: 'silent' }),
    listenerOverrides: [{ host: '127.0.0.1', port: 0 }],
    apiListen: { host: '127.0.0.1', port: 0 },
    mailAccess: opts.mailAccess
      ? { imapListen: loopback0, pop3Listen: loopback0 }
      : { imap: false, pop3: false },
    ...opts.serve,
  });
  const redis = createRedis(config.redis);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await serving.close();
  };
  cleanups.push(async () => {
    await stop();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await redis.del(...keys);
    } while (cursor !== '0');
    redis.disconnect();
  });
  const mx = serving.listeners.find((l) => l.mode === 'mx');
  if (!mx) throw new Error('no MX listener');
  return {
    chain,
    mail,
    config,
    serving,
    mxPort: mx.port,
    gatewayUrl: pind.gatewayUrl,
    pinUrl: pind.pinUrl,
    prefix,
    redis,
    credentialKey,
    dataDir,
    configFile,
    postmaster,
    imapPort: serving.mailAccessListeners?.find((l) => l.name === 'imaps')?.port,
    pop3Port: serving.mailAccessListeners?.find((l) => l.name === 'pop3s')?.port,
    stop,
  };
}

/**
 * The first `count` messages delivered to `owner`'s inbox, oldest first, as
 * the recipient reads them: fetched from the rig's gateway and unsealed with
 * the wallet key. Waits up to 30 s for them to arrive.
 */
export async function deliveredTexts(rig: ServeRig, owner: Keypair, count: number): Promise<string[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const inbox = await listInbox(rig.chain.connection, rig.chain.programId, owner.publicKey);
    if (inbox.length >= count) {
      const texts: string[] = [];
      for (const entry of [...inbox].reverse()) {
        const res = await fetch(`${rig.gatewayUrl}/ipfs/${entry.email.cid}`);
        const opened = await openSealed(
          new Uint8Array(await res.arrayBuffer()),
          walletEncryptionKeypair(owner.secretKey),
        );
        texts.push(Buffer.from(opened.raw).toString('utf8'));
      }
      return texts;
    }
    if (Date.now() > deadline) throw new Error(`inbox has ${inbox.length} of ${count}`);
    await sleep(100);
  }
}
