// A Sealpost deployment on loopback for the benchmark harness and the fault
// drills: keys and a chain prepared for mail (postoffice, one domain under
// the authority key, wallets with open mailboxes), and the config file an
// operator would write for it. Limits that would throttle a load test (cost
// guard windows, per-IP caps, SPF without DNS) are off; everything else is
// the production default.
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Connection } from '@solana/web3.js';
import { Redis } from 'ioredis';
import { createCredentialKeyFile } from '../../src/crypto/credential-seal.ts';
import { bootstrapChain } from '../../src/dev/bootstrap-chain.ts';
import {
  generateKeypair,
  type Keypair,
  writeKeypairFile,
  writeSecretFile,
} from '../../src/keys/keypair-file.ts';

export const STACK_DOMAIN = 'bench.test';

export interface StackKeys {
  authority: Keypair;
  delegate: Keypair;
  wallets: Keypair[];
  /** Key files of the wallets, in order. */
  walletFiles: string[];
  keysDir: string;
  adminToken: string;
}

/** Keys under dir/keys and a chain ready for mail at rpcUrl (idempotent on the chain side). */
export async function prepareChain(opts: {
  dir: string;
  rpcUrl: string;
  programId: string;
  wallets: number;
  /** The program's upgrade authority keypair file (devnet's faucet-keypair.json): InitPostoffice co-signs with it. */
  upgradeAuthorityFile: string;
}): Promise<StackKeys> {
  const keysDir = join(opts.dir, 'keys');
  mkdirSync(keysDir, { recursive: true, mode: 0o700 });
  const authority = generateKeypair();
  const delegate = generateKeypair();
  writeKeypairFile(join(keysDir, 'authority.json'), authority);
  writeKeypairFile(join(keysDir, 'delegate.json'), delegate);
  const wallets = Array.from({ length: opts.wallets }, () => generateKeypair());
  const walletFiles = wallets.map((w, i) => {
    const file = join(keysDir, `wallet-${i}.json`);
    writeKeypairFile(file, w);
    return file;
  });
  createCredentialKeyFile(join(keysDir, 'credential.key'));
  const adminToken = randomBytes(32).toString('hex');
  writeSecretFile(join(keysDir, 'admin.token'), `${adminToken}\n`);
  await bootstrapChain({
    connection: new Connection(opts.rpcUrl, 'confirmed'),
    programId: opts.programId,
    domain: STACK_DOMAIN,
    authority,
    delegate,
    upgradeAuthorityFile: opts.upgradeAuthorityFile,
    wallets: wallets.map((key, i) => ({ name: `w${i}`, key, defaultPostage: 0n })),
    // The authority pays every Email account's rent (about 0.0027 SOL): 200 SOL covers
    // the 10-minute soak's 12,000 messages with room, so the balance guard stays quiet.
    fundLamports: 200 * 1_000_000_000,
  });
  return { authority, delegate, wallets, walletFiles, keysDir, adminToken };
}

export interface StackConfigInput {
  dir: string;
  keysDir: string;
  rpcUrl: string;
  programId: string;
  pindUrl: string;
  gatewayUrl: string;
  redisUrl: string;
  prefix: string;
  mxPort: number;
  apiPort: number;
  /** Where the blob store lives (default: dir). */
  dataDir?: string;
  /** `[store] url` (default: SQLite under dataDir). */
  storeUrl?: string;
  logLevel?: string;
  /** More `[chain]` keys (numbers, booleans, strings), e.g. SendMail batching off for an A/B. */
  chain?: Record<string, string | number | boolean>;
}

/** Writes dir/sealpost.toml and returns its path. */
export function writeStackConfig(c: StackConfigInput): string {
  const toml = `# Written by the benchmark harness / fault drills (bench/harness/stack.ts).
[smtp]
hostname = "mx.${STACK_DOMAIN}"
local_domains = ["${STACK_DOMAIN}"]
sender_auth = "none"
max_connections_per_ip = 1000
connections_per_ip_per_minute = 0

[[smtp.listeners]]
mode = "mx"
host = "127.0.0.1"
port = ${c.mxPort}
tls = "none"

[chain]
rpc_url = "${c.rpcUrl}"
program_id = "${c.programId}"
authority_key_file = "${join(c.keysDir, 'authority.json')}"
delegate_key_file = "${join(c.keysDir, 'delegate.json')}"
${Object.entries(c.chain ?? {})
  .map(([k, v]) => `${k} = ${JSON.stringify(v)}`)
  .join('\n')}

[ipfs]
operator = "pind"
pind_url = "${c.pindUrl}"
gateway_url = "${c.gatewayUrl}"
recipient_pin_timeout_secs = 5

[api]
host = "127.0.0.1"
port = ${c.apiPort}
credential_key_file = "${join(c.keysDir, 'credential.key')}"
admin_token_file = "${join(c.keysDir, 'admin.token')}"
rate_limit_ip_per_min = 0
rate_limit_wallet_per_min = 0

[mail_hosts]
imap_enabled = false
pop3_enabled = false

[limits]
sender_messages = 0
recipient_messages = 0
overall_messages = 0
null_sender_messages = 0

[store]
data_dir = "${c.dataDir ?? c.dir}"
${c.storeUrl ? `url = "${c.storeUrl}"` : ''}

[redis]
url = "${c.redisUrl}"
prefix = "${c.prefix}"

[log]
level = "${c.logLevel ?? 'warn'}"
`;
  const file = join(c.dir, 'sealpost.toml');
  writeFileSync(file, toml);
  return file;
}

/** Deletes every Redis key under the prefix (the queues of one run). */
export async function dropRedisPrefix(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await redis.del(...keys);
    } while (cursor !== '0');
  } catch {
    // Redis gone (a drill's private server already stopped): nothing to clean.
  } finally {
    redis.disconnect();
  }
}

export function randomPrefix(kind: string): string {
  return `sealpost-${kind}-${randomBytes(5).toString('hex')}`;
}
