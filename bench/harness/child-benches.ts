// The benchmarks that already exist, run as they are (each its own process,
// as `npm run bench:*` runs them) and read back from their printed report:
// bench/spooler.ts (outbound vs Postfix), bench/api.ts (account API vs a
// bare route).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..', '..');

export class ChildBenchError extends Error {}

function runBench(file: string, args: string[], timeoutMs: number): Promise<string> {
  if (!existsSync(join(ROOT, file)))
    return Promise.reject(new ChildBenchError(`${file} is not in this checkout`));
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'run-ts.js'), file, ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      err = (err + d.toString()).slice(-4000);
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolvePromise(out);
      const why = timedOut
        ? `did not finish within ${timeoutMs / 60_000} min`
        : `exited with ${signal ?? code}`;
      // The last line of the child's own report says most; the JSON keeps the tail.
      const tail = (err || out).trim().split('\n').slice(-5);
      reject(new ChildBenchError(`${file} ${why}: ${tail.at(-1) ?? ''}\n${tail.join('\n')}`));
    });
  });
}

function num(text: string, re: RegExp, what: string): number {
  const m = re.exec(text);
  if (!m?.[1]) throw new ChildBenchError(`could not read ${what} from the report:\n${text}`);
  return Number(m[1]);
}

export interface OutboundResult {
  messages: number;
  sealpostPerSecond: number;
  postfixPerSecond?: number;
  postfixMissing?: string;
  report: string;
}

export async function runOutbound(opts: { messages: number; timeoutMs: number }): Promise<OutboundResult> {
  const out = await runBench('bench/spooler.ts', ['--messages', String(opts.messages)], opts.timeoutMs);
  const row = (name: RegExp) => {
    const m = new RegExp(`^${name.source}\\s+([\\d.]+)\\s+(\\d+)`, 'm').exec(out);
    return m ? opts.messages / Number(m[1]) : undefined;
  };
  const sealpost = row(/sealpost spooler \(relay\)/);
  if (sealpost === undefined) throw new ChildBenchError(`no spooler row in the report:\n${out}`);
  const postfix = row(/postfix \S+/);
  const notRun = /Postfix: not run — (.*)/.exec(out)?.[1];
  return {
    messages: opts.messages,
    sealpostPerSecond: sealpost,
    postfixPerSecond: postfix,
    postfixMissing: postfix === undefined ? (notRun ?? 'no Postfix row in the report') : undefined,
    report: out.trim(),
  };
}

export interface ApiResult {
  apiPerSecond: number;
  apiP99Ms: number;
  barePerSecond: number;
  bareP99Ms: number;
}

export async function runApi(opts: { durationSecs: number; connections: number }): Promise<ApiResult> {
  const out = await runBench(
    'bench/api.ts',
    ['--duration', String(opts.durationSecs), '--connections', String(opts.connections)],
    10 * 60_000,
  );
  return {
    barePerSecond: num(out, /bare Fastify route\s+(\d+) req\/s/, 'bare req/s'),
    bareP99Ms: num(out, /bare Fastify route[^\n]*p99\s+(\d+) ms/, 'bare p99'),
    apiPerSecond: num(out, /pin-provider \(valid JWT\)\s+(\d+) req\/s/, 'API req/s'),
    apiP99Ms: num(out, /pin-provider \(valid JWT\)[^\n]*p99\s+(\d+) ms/, 'API p99'),
  };
}
