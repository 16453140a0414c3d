// A Sealpost deployment on loopback for the benchmark harness and the fault
// drills: keys and a chain prepared for mail (postoffice, one domain under
// the authority key, wallets with open mailboxes), and the config file an
// operator would write for it. Limits that would throttle a load test (cost
// guard windows, per-IP caps, SPF without DNS) are off; everything else is
// the production default.
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { Connection } from '@solana/web3.js';
import { Redis } from 'ioredis';
import { deriveWsUrl } from '../../src/core/config/sections/chain.ts';
import { createCredentialKeyFile } from '../../src/core/crypto/credential-seal.ts';
import {
  generateKeypair,
  type Keypair,
  writeKeypairFile,
  writeSecretFile,
} from '../../src/core/keys/keypair-file.ts';
import { bootstrapChain } from '../../src/run/dev/bootstrap-chain.ts';

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

/**
 * Writes dir/sealpost.toml and returns its path. An RPC counter started in
 * this process and not yet placed (startRpcCounter) takes this stack: the
 * config's `rpc_url` is the counter, which forwards to `c.rpcUrl` (and
 * `ws_url` the chain's own PubSub port).
 */
export function writeStackConfig(c: StackConfigInput): string {
  const counter = placeRpcCounter(c);
  const rpcLines = counter
    ? `rpc_url = "${counter.url}"\nws_url = "${deriveWsUrl(c.rpcUrl)}"`
    : `rpc_url = "${c.rpcUrl}"`;
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
${rpcLines}
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

// ── The stack's JSON-RPC calls, counted ──────────────────────────────────
// The stack's servers run as processes of their own (or in this one) and
// talk to devnet over HTTP; an HTTP proxy between them and devnet counts
// what the chain node receives: each POST and the JSON-RPC calls in it (a
// batch counts each call, as providers count), by method. The harness's
// own set-up and its reads of the results go to devnet directly and are not
// counted. The pipeline uses no PubSub (it polls), so ws_url bypasses it.

export interface RpcCount {
  /** HTTP POSTs. */
  requests: number;
  /** JSON-RPC calls in them. */
  calls: number;
  /** Calls by method. */
  methods: Record<string, number>;
}

export interface RpcCounter {
  /** The URL the stack's config names as `rpc_url`. */
  readonly url: string;
  /** The chain node it forwards to (set when a stack config is written with it). */
  readonly target: string | undefined;
  /** That stack's keys directory (authority.json). */
  readonly keysDir: string | undefined;
  /** The counts so far (a copy). */
  count(): Promise<RpcCount>;
  close(): Promise<void>;
}

/** Calls counted between two snapshots. */
export function rpcCountSince(before: RpcCount, after: RpcCount): RpcCount {
  const methods: Record<string, number> = {};
  for (const [m, n] of Object.entries(after.methods)) {
    const d = n - (before.methods[m] ?? 0);
    if (d > 0) methods[m] = d;
  }
  return { requests: after.requests - before.requests, calls: after.calls - before.calls, methods };
}

interface CounterState {
  url: string;
  target: string | undefined;
  keysDir: string | undefined;
  /** Tells the proxy where to forward. */
  onTarget(url: string): void;
}
/** Counters started in this process that no stack config has taken yet. */
const unplaced: CounterState[] = [];

function placeRpcCounter(c: StackConfigInput): CounterState | undefined {
  const counter = unplaced.shift();
  if (!counter) return undefined;
  counter.target = c.rpcUrl;
  counter.keysDir = c.keysDir;
  counter.onTarget(c.rpcUrl);
  return counter;
}

/**
 * The proxy, in a thread of its own (so the load generator's event loop, busy
 * with the SMTP sessions, does not delay the stack's RPC calls): counts each
 * POST and its calls by method, forwards to its target once it has one.
 */
const PROXY_THREAD = `
const { parentPort } = require('node:worker_threads');
const http = require('node:http');
const counts = { requests: 0, calls: 0, methods: {} };
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
let target;
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    if (req.method === 'POST') {
      counts.requests++;
      let calls;
      try {
        const parsed = JSON.parse(body.toString('utf8'));
        calls = Array.isArray(parsed) ? parsed : [parsed];
      } catch {
        calls = [{ method: '(not JSON)' }];
      }
      counts.calls += calls.length;
      for (const call of calls) {
        const m = call && typeof call.method === 'string' ? call.method : '(none)';
        counts.methods[m] = (counts.methods[m] || 0) + 1;
      }
    }
    if (!target) return res.writeHead(503).end('no chain behind this counter yet');
    const up = http.request(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, agent,
        headers: { ...req.headers, host: target.host, 'content-length': String(body.length) } },
      (answer) => { res.writeHead(answer.statusCode || 502, answer.headers); answer.pipe(res); },
    );
    up.on('error', (err) => { if (!res.headersSent) res.writeHead(502); res.end(String(err)); });
    up.end(body);
  });
});
server.keepAliveTimeout = 60000;
parentPort.on('message', (m) => {
  if (m.type === 'target') { target = new URL(m.url); parentPort.postMessage({ type: 'ok', id: m.id }); }
  else if (m.type === 'count') parentPort.postMessage({ type: 'count', id: m.id, counts });
  else if (m.type === 'close') { server.closeAllConnections(); server.close(() => { agent.destroy(); parentPort.postMessage({ type: 'ok', id: m.id }); }); }
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ type: 'listening', port: server.address().port }));
`;

/**
 * A counting proxy on a loopback port; the next stack config written in this
 * process (writeStackConfig) points its servers at it and it at that stack's
 * chain. Requests before then are answered 503.
 */
export async function startRpcCounter(): Promise<RpcCounter> {
  const thread = new Worker(PROXY_THREAD, { eval: true });
  let next = 0;
  const ask = <T>(type: string, extra: Record<string, unknown> = {}): Promise<T> =>
    new Promise((resolve, reject) => {
      const id = ++next;
      const onMessage = (m: { id?: number } & T) => {
        if (m.id !== id) return;
        thread.off('message', onMessage);
        thread.off('error', reject);
        resolve(m);
      };
      thread.on('message', onMessage);
      thread.once('error', reject);
      thread.postMessage({ type, id, ...extra });
    });
  const port = await new Promise<number>((resolve, reject) => {
    thread.once('error', reject);
    thread.once('message', (m: { port: number }) => resolve(m.port));
  });
  const state: CounterState = {
    url: `http://127.0.0.1:${port}`,
    target: undefined,
    keysDir: undefined,
    onTarget: (url) => void ask('target', { url }),
  };
  unplaced.push(state);
  let closed = false;
  return {
    get url() {
      return state.url;
    },
    get target() {
      return state.target;
    },
    get keysDir() {
      return state.keysDir;
    },
    count: async () => {
      const { counts } = await ask<{ counts: RpcCount }>('count');
      return { ...counts, methods: { ...counts.methods } };
    },
    close: async () => {
      if (closed) return;
      closed = true;
      const i = unplaced.indexOf(state);
      if (i >= 0) unplaced.splice(i, 1);
      await ask('close');
      await thread.terminate();
    },
  };
}
