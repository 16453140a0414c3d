// IMAP IDLE latency: how long after a message is accepted (the MX's 250),
// and after its store write, a session in IDLE sees `* n EXISTS`.
//
//   npm run bench:imap-idle -- [--messages 200] [--wallets 10] [--sessions 50] [--push both|on|off]
//                              [--serve-workers N] [--store sqlite|postgres]
//
// The stack runs as processes of their own, the way an operator runs it:
// `sealpost devnet` (400 ms slots), `sealpost pind` and `sealpost serve`
// (which forks one serving process per core, each with its MX, pipeline
// workers and IMAP listener), against the machine's Redis under a random
// prefix. `sessions` IMAP sessions (spread over `wallets` accounts) log in,
// SELECT INBOX and IDLE; then `messages` messages are sent over SMTP, round
// robin over the wallets, one at a time per wallet (the next when every
// session of that wallet has seen the last), so each latency is one
// message's and not a queue's. The store write is timestamped by this
// process's own subscription to the store's change notifications
// (`<prefix>:imap:mail-changed`, published after each commit whether or
// not push is on). `--push off` runs serve with `[imap] idle_push = false`
// (IDLE polls every 2 s, as before push); `both` runs off, then on, against
// the same chain and store. `--store postgres` puts the store in a schema
// of its own on SEALPOST_TEST_PG_URL (default the local test database),
// dropped at the end.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, type TLSSocket } from 'node:tls';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { faucetKeypairPath } from '../chain/devnet/server.ts';
import { loadConfig } from '../src/core/config/index.ts';
import { CredentialSealer, loadCredentialKey } from '../src/core/crypto/credential-seal.ts';
import { mailChangeChannel } from '../src/core/limits/redis-keys.ts';
import { AccountsRepo, openStore } from '../src/core/store/index.ts';
import { ensureSelfSignedFiles } from '../src/core/tls/self-signed.ts';
import { setMailPassword } from '../src/mail/reader-keys/mail-password.ts';
import { dropSchema } from '../test/support/postgres.ts';
import { Proc } from './drill/procs.ts';
import { canListen, freePort } from './harness/net.ts';
import { SmtpLoad } from './harness/smtp-load.ts';
import {
  dropRedisPrefix,
  prepareChain,
  randomPrefix,
  STACK_DOMAIN,
  writeStackConfig,
} from './harness/stack.ts';

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '200' },
    wallets: { type: 'string', default: '10' },
    sessions: { type: 'string', default: '50' },
    push: { type: 'string', default: 'both' },
    'serve-workers': { type: 'string' },
    store: { type: 'string', default: 'sqlite' },
  },
});
const MESSAGES = Number(values.messages);
const WALLETS = Number(values.wallets);
const SESSIONS = Number(values.sessions);
const MODES: boolean[] =
  values.push === 'on'
    ? [true]
    : values.push === 'off'
      ? [false]
      : values.push === 'both'
        ? [false, true]
        : [];
if (MODES.length === 0) throw new Error('--push is both, on or off');
if (!(SESSIONS >= WALLETS && WALLETS >= 1 && MESSAGES >= 1))
  throw new Error('need messages ≥ 1 and sessions ≥ wallets ≥ 1');
if (values.store !== 'sqlite' && values.store !== 'postgres')
  throw new Error('--store is sqlite or postgres');
const PG_URL = process.env.SEALPOST_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PASSWORD = 'benchmark mail password';
const EXISTS_TIMEOUT_MS = 60_000;

/** One IMAP session in IDLE, recording when each EXISTS count was first seen. */
class IdleSession {
  private buf = '';
  private waiter: { re: RegExp; resolve(line: string): void } | null = null;
  /** [count, ms] in arrival order. */
  readonly exists: [number, number][] = [];
  baseline = 0;

  private constructor(private readonly socket: TLSSocket) {
    socket.setEncoding('latin1');
    socket.setNoDelay(true);
    socket.on('data', (d: string) => {
      const now = performance.now();
      this.buf += d;
      let i = this.buf.indexOf('\r\n');
      while (i >= 0) {
        const line = this.buf.slice(0, i);
        this.buf = this.buf.slice(i + 2);
        const m = /^\* (\d+) EXISTS$/.exec(line);
        if (m) this.exists.push([Number(m[1]), now]);
        if (this.waiter?.re.test(line)) {
          const w = this.waiter;
          this.waiter = null;
          w.resolve(line);
        }
        i = this.buf.indexOf('\r\n');
      }
    });
    socket.on('error', () => {});
  }

  static async open(port: number, user: string): Promise<IdleSession> {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false });
    const s = new IdleSession(socket);
    await s.expect(null, /^\* OK/);
    await s.expect(`a LOGIN "${user}" "${PASSWORD}"`, /^a (OK|NO|BAD)/, /^a OK/);
    const before = s.exists.length;
    await s.expect('b SELECT INBOX', /^b (OK|NO|BAD)/, /^b OK/);
    s.baseline = s.exists.slice(before).at(-1)?.[0] ?? 0;
    await s.expect('c IDLE', /^\+ /);
    return s;
  }

  private expect(command: string | null, re: RegExp, ok?: RegExp): Promise<string> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`IMAP: no answer to ${command}`)), 60_000);
      this.waiter = {
        re,
        resolve: (line) => {
          clearTimeout(timer);
          if (ok && !ok.test(line)) reject(new Error(`IMAP ${command}: ${line}`));
          else resolve(line);
        },
      };
      if (command) this.socket.write(`${command}\r\n`);
    });
  }

  /** When the count first reached `n`, or undefined. */
  reached(n: number): number | undefined {
    return this.exists.find(([c]) => c >= n)?.[1];
  }

  async close(): Promise<void> {
    await this.expect('DONE', /^c /).catch(() => undefined);
    this.socket.end('d LOGOUT\r\n');
    this.socket.destroy();
  }
}

/** When the store's notifications for each wallet arrived (ms, this process's clock). */
class StoreWrites {
  private readonly seen = new Map<string, number[]>();
  private constructor(readonly sub: Redis) {}

  static async open(redisUrl: string, prefix: string): Promise<StoreWrites> {
    const sub = new Redis(redisUrl);
    const w = new StoreWrites(sub);
    sub.on('message', (_c: string, text: string) => {
      const now = performance.now();
      const wallet = (JSON.parse(text) as { w: string }).w;
      w.seen.set(wallet, [...(w.seen.get(wallet) ?? []), now]);
    });
    await sub.subscribe(mailChangeChannel(prefix));
    return w;
  }

  first(wallet: string, after: number): number | undefined {
    return this.seen.get(wallet)?.find((t) => t >= after);
  }

  close(): void {
    this.sub.disconnect();
  }
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
}

function summary(samples: number[]): { p50: number; p99: number; max: number; n: number } {
  const s = [...samples].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p99: percentile(s, 99), max: s.at(-1) ?? Number.NaN, n: s.length };
}

async function pairPort(): Promise<number> {
  for (;;) {
    const p = await freePort();
    if (p < 65535 && (await canListen(p + 1))) return p;
  }
}

/** The IDLE series of the deployment's /metrics (summed over its serving processes). */
async function wakeups(apiUrl: string, adminToken: string): Promise<Record<string, number>> {
  const res = await fetch(`${apiUrl}/metrics`, { headers: { authorization: `Bearer ${adminToken}` } });
  const out: Record<string, number> = {};
  for (const line of (await res.text()).split('\n')) {
    const m = /^sealpost_imap_idle_wakeups_total\{cause="(\w+)",result="(\w+)"\} (\S+)$/.exec(line);
    if (m) out[`${m[1]}/${m[2]}`] = Number(m[3]);
  }
  return out;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'sealpost-bench-idle-'));
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const prefix = randomPrefix('bench-idle');
  const procs: Proc[] = [];
  // serve creates the schema on first open; the end drops it.
  const schema = `sealpost_bench_idle_${randomBytes(5).toString('hex')}`;
  const storeUrl = values.store === 'postgres' ? `${PG_URL}?schema=${schema}` : undefined;
  try {
    const rpcPort = await pairPort();
    const [pindPort, mxPort, apiPort, imapPort] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    const devnet = Proc.sealpost(
      'devnet',
      ['devnet', '--data-dir', join(dir, 'chain'), '--listen', `127.0.0.1:${rpcPort}`, '--slot-ms', '400'],
      /program id\s+(\S+)/,
    );
    procs.push(devnet);
    const programId = /program id\s+(\S+)/.exec(await devnet.start())?.[1] as string;
    const rpcUrl = `http://127.0.0.1:${rpcPort}`;
    const gatewayUrl = `http://127.0.0.1:${pindPort}`;
    const keys = await prepareChain({
      dir,
      rpcUrl,
      programId,
      wallets: WALLETS,
      upgradeAuthorityFile: faucetKeypairPath(join(dir, 'chain', 'devnet')),
    });
    const dataDir = join(dir, 'data');
    const configFile = writeStackConfig({
      dir,
      keysDir: keys.keysDir,
      rpcUrl,
      programId,
      pindUrl: gatewayUrl,
      gatewayUrl,
      redisUrl,
      prefix,
      mxPort,
      apiPort,
      dataDir,
      storeUrl,
    });
    const base = readFileSync(configFile, 'utf8');
    const noImap = '[mail_hosts]\nimap_enabled = false\npop3_enabled = false\n';
    if (!base.includes(noImap)) throw new Error('the stack config has no [mail_hosts] block to replace');
    const writeConfig = (push: boolean) =>
      writeFileSync(
        configFile,
        base.replace(
          noImap,
          '[mail_hosts]\nimap_enabled = true\npop3_enabled = false\n\n' +
            `[imap]\nhost = "127.0.0.1"\nport = ${imapPort}\nmax_connections_per_ip = 1000\nidle_push = ${push}\n`,
        ),
      );
    writeConfig(true);
    const config = loadConfig(configFile);
    await ensureSelfSignedFiles(config.smtp.tls_cert_file, config.smtp.tls_key_file, ['127.0.0.1']);
    const pind = Proc.sealpost(
      'pind',
      ['pind', '--config', configFile, '--data-dir', join(dir, 'pind'), '--listen', `127.0.0.1:${pindPort}`],
      /gateway\s+\S+/,
    );
    procs.push(pind);
    await pind.start();
    // Accounts with a mail password (what `sealpost account password` does).
    const store = await openStore({ url: config.store.url, dataDir: config.store.data_dir });
    const accounts = new AccountsRepo(store.db);
    const sealer = new CredentialSealer(loadCredentialKey(config.api.credential_key_file));
    const wallets = keys.wallets.map((w) => w.address);
    for (const wallet of wallets) {
      await accounts.create(wallet, { source: 'self' });
      await setMailPassword({ accounts, sealer, db: store.db }, wallet, PASSWORD);
    }
    await store.close();
    const writes = await StoreWrites.open(redisUrl, prefix);
    const results: Record<string, unknown>[] = [];
    for (const push of MODES) {
      writeConfig(push);
      const serve = Proc.sealpost(
        'serve',
        [
          'serve',
          '--config',
          configFile,
          ...(values['serve-workers'] ? ['--workers', values['serve-workers']] : []),
        ],
        /pipeline workers:/,
      );
      procs.push(serve);
      await serve.start();
      const sessions: { wallet: string; s: IdleSession }[] = [];
      // Logins one after another at first: the first one of a wallet makes its reader key.
      for (let i = 0; i < SESSIONS; i++) {
        const wallet = wallets[i % WALLETS] as string;
        sessions.push({ wallet, s: await IdleSession.open(imapPort, `${wallet}@${STACK_DOMAIN}`) });
      }
      const smtp = new SmtpLoad({ host: '127.0.0.1', port: mxPort, sessions: WALLETS });
      const fromAccept: number[] = [];
      const fromStore: number[] = [];
      let missing = 0;
      let sent = 0;
      const started = performance.now();
      await Promise.all(
        wallets.map(async (wallet, w) => {
          const mine = sessions.filter((x) => x.wallet === wallet).map((x) => x.s);
          for (let k = 1; ; k++) {
            if (w + (k - 1) * WALLETS >= MESSAGES) return;
            sent++;
            const n = (mine[0] as IdleSession).baseline + k;
            const msgid = `${Date.now()}.${w}.${k}`;
            const text =
              `From: Load <load@remote.example>\r\nTo: ${wallet}@${STACK_DOMAIN}\r\nSubject: idle ${k}\r\n` +
              `Message-ID: <${msgid}@remote.example>\r\nDate: ${new Date().toUTCString()}\r\n\r\nmessage ${k}\r\n`;
            await smtp.send('load@remote.example', `${wallet}@${STACK_DOMAIN}`, text);
            const accepted = performance.now();
            const deadline = accepted + EXISTS_TIMEOUT_MS;
            while (mine.some((s) => s.reached(n) === undefined) && performance.now() < deadline)
              await sleep(5);
            const stored = writes.first(wallet, accepted);
            for (const s of mine) {
              const at = s.reached(n);
              if (at === undefined) {
                missing++;
                continue;
              }
              fromAccept.push(at - accepted);
              if (stored !== undefined) fromStore.push(at - stored);
            }
          }
        }),
      );
      const seconds = (performance.now() - started) / 1000;
      smtp.close();
      const server = await wakeups(`http://127.0.0.1:${apiPort}`, keys.adminToken).catch(() => ({}));
      await Promise.all(sessions.map((x) => x.s.close()));
      await serve.stop('SIGTERM');
      procs.splice(procs.indexOf(serve), 1);
      const a = summary(fromAccept);
      const s = summary(fromStore);
      const row = {
        push,
        store: values.store,
        messages: sent,
        sessions: SESSIONS,
        wallets: WALLETS,
        samples: a.n,
        missing,
        seconds: Number(seconds.toFixed(1)),
        acceptToExistsMs: { p50: Math.round(a.p50), p99: Math.round(a.p99), max: Math.round(a.max) },
        storeToExistsMs: {
          p50: Number(s.p50.toFixed(1)),
          p99: Number(s.p99.toFixed(1)),
          max: Number(s.max.toFixed(1)),
        },
        serverWakeups: server,
      };
      results.push(row);
      process.stdout.write(
        `IDLE ${push ? 'push' : 'poll (idle_push = false, 2 s)'}, ${values.store}: ${sent} messages, ${SESSIONS} sessions over ${WALLETS} wallets, ` +
          `${a.n} samples${missing ? `, ${missing} missing` : ''}\n` +
          `  250 -> EXISTS    p50 ${Math.round(a.p50)} ms   p99 ${Math.round(a.p99)} ms   max ${Math.round(a.max)} ms\n` +
          `  store -> EXISTS  p50 ${s.p50.toFixed(1)} ms   p99 ${s.p99.toFixed(1)} ms   max ${s.max.toFixed(1)} ms\n` +
          `  server wake-ups  ${JSON.stringify(server)}\n`,
      );
    }
    writes.close();
    process.stdout.write(`${JSON.stringify({ bench: 'imap-idle', results })}\n`);
  } finally {
    for (const p of procs.reverse()) await p.stop('SIGTERM').catch(() => undefined);
    await dropRedisPrefix(redisUrl, prefix);
    if (storeUrl) await dropSchema(schema, PG_URL).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
