// The peers of the outbound benchmark (bench/spooler.ts): the SMTP sink
// both systems deliver to, and a throwaway Postfix instance.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import nodemailer from 'nodemailer';
import { SMTPServer } from 'smtp-server';

export interface Sink {
  port: number;
  count: number;
  reset(): void;
  waitFor(n: number, timeoutMs: number): Promise<number>;
  close(): Promise<void>;
}

/**
 * The sink: Postfix's smtp-sink (a separate C process, so it takes no CPU
 * from the Node process under test) when installed, else smtp-server in
 * this process. Either counts messages answered 250.
 */
export async function startSink(): Promise<Sink & { kind: string }> {
  const state = { total: 0, base: 0, lastAt: 0 };
  const port = await freePort();
  let stop: () => Promise<void>;
  let kind: string;
  if (existsSync('/usr/sbin/smtp-sink')) {
    const userArgs = process.getuid?.() === 0 ? ['-u', 'nobody'] : [];
    const child = spawn('/usr/sbin/smtp-sink', ['-c', ...userArgs, `127.0.0.1:${port}`, '1024'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    // Never outlive the benchmark, however it ends.
    const killChild = () => child.kill('SIGKILL');
    process.once('exit', killChild);
    // `-c` prints "sess=N quit=N mesg=N" after every completed DATA.
    child.stdout.setEncoding('utf8');
    let tail = '';
    child.stdout.on('data', (chunk: string) => {
      tail = (tail + chunk).slice(-200);
      const all = [...tail.matchAll(/mesg=(\d+)/g)];
      const last = all[all.length - 1];
      if (last) {
        const total = Number(last[1]);
        if (total !== state.total) {
          state.total = total;
          state.lastAt = performance.now();
        }
      }
    });
    await sleep(300);
    kind = 'smtp-sink (Postfix)';
    stop = async () => {
      process.removeListener('exit', killChild);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    };
  } else {
    const server = new SMTPServer({
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      size: 50 * 1024 * 1024,
      maxClients: 1000,
      onData(stream, _session, cb) {
        stream.on('end', () => {
          state.total++;
          state.lastAt = performance.now();
          cb();
        });
        stream.resume();
      },
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
    kind = 'smtp-server (in this process)';
    stop = () => new Promise<void>((resolve) => server.close(() => resolve()));
  }
  return {
    kind,
    port,
    get count() {
      return state.total - state.base;
    },
    reset() {
      state.base = state.total;
    },
    async waitFor(n, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (state.total - state.base < n) {
        if (Date.now() > deadline)
          throw new Error(`sink got ${state.total - state.base} of ${n} messages in time`);
        await sleep(20);
      }
      return state.lastAt;
    },
    close: () => stop(),
  };
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Postfix commands log only to syslog or a terminal; `script` gives them one so failures are visible. */
export function postfixCmd(argv: string[]): string {
  const r = spawnSync('script', ['-qec', argv.join(' '), '/dev/null'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${argv.join(' ')} failed: ${(r.stdout + r.stderr).trim()}`);
  return r.stdout;
}

export function postfixUnavailable(): string | null {
  if (!existsSync('/usr/sbin/postfix')) return 'postfix is not installed (apt-get install -y postfix)';
  if (process.getuid?.() !== 0) return 'starting a Postfix instance needs root';
  if (spawnSync('script', ['-V']).status !== 0) return 'the `script` utility is missing';
  return null;
}

export interface PostfixRun {
  count: number;
  concurrency: number;
  message(i: number): Buffer;
}

export async function runPostfix(
  sink: Sink,
  run: PostfixRun,
): Promise<{ seconds: number; injectSeconds: number }> {
  const { count: N, concurrency: CONCURRENCY, message } = run;
  const dir = mkdtempSync(join(tmpdir(), 'sealpost-bench-postfix-'));
  chmodSync(dir, 0o755);
  const etc = join(dir, 'etc');
  mkdirSync(etc);
  mkdirSync(join(dir, 'spool'));
  mkdirSync(join(dir, 'data'));
  execFileSync('chown', ['postfix', join(dir, 'data')]);
  const smtpdPort = await freePort();
  const master = readFileSync('/etc/postfix/master.cf', 'utf8')
    .split('\n')
    .map((line) => {
      if (/^smtp\s+inet\s/.test(line)) return `127.0.0.1:${smtpdPort} inet n - n - - smtpd`;
      // No chroot: the throwaway queue directory has no chroot tree.
      const f = line.split(/\s+/);
      if (!line.startsWith('#') && f.length >= 8 && /^(unix|inet|fifo|pass|unix-dgram)$/.test(f[1] ?? '')) {
        f[4] = 'n';
        return f.join(' ');
      }
      return line;
    })
    .join('\n');
  writeFileSync(join(etc, 'master.cf'), master);
  writeFileSync(
    join(etc, 'main.cf'),
    [
      'compatibility_level = 3.6',
      `queue_directory = ${dir}/spool`,
      `data_directory = ${dir}/data`,
      'mail_owner = postfix',
      'setgid_group = postdrop',
      'inet_interfaces = 127.0.0.1',
      'inet_protocols = ipv4',
      'myhostname = bench-postfix.sealpost.test',
      'mydestination =',
      'relay_domains =',
      'mynetworks = 127.0.0.0/8',
      `relayhost = [127.0.0.1]:${sink.port}`,
      'smtp_tls_security_level = none',
      'smtpd_tls_security_level = none',
      'alias_maps =',
      'alias_database =',
      'local_recipient_maps =',
      `default_destination_concurrency_limit = ${CONCURRENCY}`,
      `maillog_file_prefixes = ${dir}`,
      `maillog_file = ${dir}/maillog`,
      'defer_transports = smtp',
      '',
    ].join('\n'),
  );
  const c = ['-c', etc];
  try {
    postfixCmd(['postfix', ...c, 'start']);
    await sleep(1000);
    sink.reset();
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: smtpdPort,
      secure: false,
      ignoreTLS: true,
      pool: true,
      maxConnections: 8,
      maxMessages: Number.POSITIVE_INFINITY,
    });
    const i0 = performance.now();
    const inflight = new Set<Promise<unknown>>();
    for (let i = 0; i < N; i++) {
      const p = transport.sendMail({
        envelope: { from: 'bench@sealpost.test', to: [`r${i}@bench.test`] },
        raw: message(i),
      });
      inflight.add(p);
      void p.finally(() => inflight.delete(p));
      if (inflight.size >= 64) await Promise.race(inflight);
    }
    await Promise.all(inflight);
    const injectSeconds = (performance.now() - i0) / 1000;
    transport.close();
    // Wait until every message sits in the (held) queue.
    for (;;) {
      const q = postfixCmd(['postqueue', ...c, '-p']);
      const m = /in (\d+) Requests?\./.exec(q);
      if (m && Number(m[1]) >= N) break;
      await sleep(250);
    }
    if (sink.count !== 0) throw new Error('Postfix delivered while held');
    postfixCmd(['postconf', ...c, '-e', "'defer_transports ='"]);
    const t0 = performance.now();
    postfixCmd(['postfix', ...c, 'reload']);
    postfixCmd(['postqueue', ...c, '-f']);
    const last = await sink.waitFor(N, 30 * 60_000);
    return { seconds: (last - t0) / 1000, injectSeconds };
  } finally {
    try {
      postfixCmd(['postfix', ...c, 'stop']);
      // `stop` returns before every daemon is gone; wait for the master to go.
      for (let i = 0; i < 50 && spawnSync('postfix', [...c, 'status']).status === 0; i++) await sleep(200);
    } catch {
      // not started
    }
    rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  }
}
