// The MX-accept ceiling: the SMTP library Sealpost's MX is built on
// (smtp-server) with the MX's listener options and nothing else: every
// message is read to its end and dropped, and 250 follows at once: no spool
// write, no fsync, no job, no recipient or sender checks. It runs the way
// `sealpost serve --workers N` runs its MX: a node:cluster primary and N
// processes sharing the port. What this does per second under a load is
// the most any MX on this library, this runtime and this machine can do
// under that load; Sealpost's MX does its durable work on top.
//
// With `durable`, each message also goes through Sealpost's own acceptance
// step (delivery/intake/accept.ts, the MX's code) before its 250: its bytes into
// the spool with the group commit's segment fdatasync and directory fsync,
// and its delivery job added to Redis with BullMQ. Nothing else of the MX
// runs (no recipient lookup, no sender checks, no message checks, no trace,
// no log line). That is the floor of a durable MX on this library, this
// queue and this machine: what the MX does above it is its own checks.
//
// As a process (SEALPOST_BARE_SMTP=PORT,PROCESSES[,durable] bin/run-ts.js
// bench/harness/bare-smtp.ts; durable also reads SEALPOST_BARE_SMTP_DURABLE
// = REDIS_URL PREFIX DIR), it prints `ready` once every process listens, then `accepted N` (all
// processes' messages so far) at most every 100 ms while the count grows.
// As a module: startBareSmtp runs that process and reads it back.
import { type ChildProcess, spawn } from 'node:child_process';
import cluster from 'node:cluster';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { FlowProducer } from 'bullmq';
import { pino } from 'pino';
import { SMTPServer } from 'smtp-server';
import { DELIVERY_ATTEMPTS } from '../../delivery/backoff.ts';
import { acceptMessage } from '../../delivery/intake/accept.ts';
import { BlobStore } from '../../src/core/blobs/blob-store.ts';
import { newMessageId } from '../../src/core/log.ts';
import type { SmtpReply } from '../../src/mail/smtp-error.ts';
import { edgeRedis } from '../../src/run/serve/redis-connections.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');
const SELF = fileURLToPath(import.meta.url);
/** Set (to `PORT,PROCESSES`) in the ceiling server's own processes only. */
const ENV = 'SEALPOST_BARE_SMTP';
const DURABLE_ENV = 'SEALPOST_BARE_SMTP_DURABLE';

/** Where the durable variant keeps its spool and its jobs. */
export interface BareDurable {
  redisUrl: string;
  prefix: string;
  dir: string;
}

export interface BareSmtp {
  port: number;
  pid: number;
  /** Messages the processes have read to their end and answered 250 for. */
  accepted(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * Starts the ceiling server as a process of its own, with `processes` serving
 * processes; with `durable`, the durable floor (spool and jobs there).
 */
export function startBareSmtp(port: number, processes: number, durable?: BareDurable): Promise<BareSmtp> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    [ENV]: `${port},${processes}${durable ? ',durable' : ''}`,
  };
  if (durable) env[DURABLE_ENV] = `${durable.redisUrl} ${durable.prefix} ${durable.dir}`;
  const child: ChildProcess = spawn(process.execPath, [resolve(ROOT, 'bin', 'run-ts.js'), SELF], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  let out = '';
  let err = '';
  let count = 0;
  child.stderr?.on('data', (d: Buffer) => {
    err = (err + d.toString()).slice(-3000);
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`bare smtp-server not ready in 30 s: ${err}`));
    }, 30_000);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`bare smtp-server exited (${signal ?? code}): ${err}`));
    });
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const lines = out.split('\n');
      out = lines.pop() ?? '';
      for (const line of lines) {
        const m = /^accepted (\d+)$/.exec(line);
        if (m) count = Number(m[1]);
        if (line === 'ready') {
          clearTimeout(timer);
          resolvePromise({
            port,
            pid: child.pid as number,
            // The count is printed at most every 100 ms: wait past the next report.
            accepted: async () => {
              await sleep(250);
              return count;
            },
            stop: async () => {
              child.kill('SIGTERM');
              await exited;
            },
          });
        }
      }
    });
  });
}

function primary(processes: number): void {
  // The serving processes run this file again (the environment tells them apart).
  cluster.setupPrimary({ exec: resolve(ROOT, 'bin', 'run-ts.js'), args: [SELF] });
  let ready = 0;
  let total = 0;
  let printed = 0;
  for (let i = 0; i < processes; i++) {
    const worker = cluster.fork();
    worker.on('message', (m: { t: string; n?: number }) => {
      if (m.t === 'ready' && ++ready === processes) process.stdout.write('ready\n');
      if (m.t === 'count') total += m.n ?? 0;
    });
  }
  setInterval(() => {
    if (total === printed) return;
    printed = total;
    process.stdout.write(`accepted ${total}\n`);
  }, 100).unref();
  process.on('SIGTERM', () => {
    for (const w of Object.values(cluster.workers ?? {})) w?.kill('SIGTERM');
    setTimeout(() => process.exit(0), 200);
  });
}

/** The durable floor's acceptance: Sealpost's step behind the 250, to one fixed recipient. */
function durableAccept(): (stream: AsyncIterable<Uint8Array>, from: string, to: string) => Promise<void> {
  const [redisUrl, prefix, dir] = (process.env[DURABLE_ENV] ?? '').split(' ') as [string, string, string];
  // The MX's own connection.
  const connection = edgeRedis(redisUrl, pino({ level: 'silent' }));
  const flow = new FlowProducer({ connection, prefix });
  const blobs = new BlobStore(dir);
  return async (source, from, to) => {
    await acceptMessage(
      // The job options serve's MX gives (src/run/serve/serve.ts).
      { blobs, flow, attempts: DELIVERY_ATTEMPTS, backoffMs: 2000 },
      {
        msgid: newMessageId(),
        from,
        recipients: [
          { address: to, wallet: '11111111111111111111111111111111', form: 'wallet', exempt: false },
        ],
        remoteIp: '127.0.0.1',
        receivedAt: Date.now(),
        source,
        maxBytes: 10 * 1024 * 1024,
      },
    );
  };
}

function serving(port: number, durable: boolean): void {
  let unreported = 0;
  const accept = durable ? durableAccept() : undefined;
  // The MX's own listener options (src/edge/mx/mx-server.ts), without TLS.
  const server = new SMTPServer({
    name: 'bare.bench.test',
    banner: 'bare smtp-server',
    size: 10 * 1024 * 1024,
    rejectOversized: true,
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    hideSTARTTLS: true,
    disableReverseLookup: true,
    logger: false,
    onData(stream, session, done) {
      if (accept) {
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        accept(stream, from, session.envelope.rcptTo[0]?.address ?? '').then(
          () => {
            unreported++;
            done();
          },
          (err: SmtpReply) => done(err),
        );
        return;
      }
      stream.on('data', () => {});
      stream.on('end', () => {
        unreported++;
        done();
      });
    },
  });
  setInterval(() => {
    if (unreported === 0) return;
    process.send?.({ t: 'count', n: unreported });
    unreported = 0;
  }, 50).unref();
  server.listen(port, '127.0.0.1', () => process.send?.({ t: 'ready' }));
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}

const role = process.env[ENV];
if (role) {
  const [portText, processesText, mode] = role.split(',');
  if (cluster.isPrimary) primary(Number(processesText));
  else serving(Number(portText), mode === 'durable');
}
