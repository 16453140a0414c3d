// pind throughput: pins (POST /pins) and gateway reads (GET /ipfs/{cid}).
// pind runs as its own process (`sealpost pind`), as in production; this
// process drives the pins, autocannon (another process) drives the reads.
//
//   npm run bench:pind -- [--pins-10k 2000] [--pins-1m 200] [--concurrency 8]
//                         [--read-secs 10] [--connections 32]
//
// Pin load: every body is distinct random bytes (identical bodies would only
// measure deduplication), `concurrency` requests in flight on keep-alive
// connections. Pins are durable when answered (fsync of blocks and record).
// Read load: `connections` keep-alive clients fetching one pinned CID over
// and over (a hot body, the way a just-delivered message is read).
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    'pins-10k': { type: 'string', default: '2000' },
    'pins-1m': { type: 'string', default: '200' },
    concurrency: { type: 'string', default: '8' },
    'read-secs': { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
  },
});
const CONCURRENCY = Number(values.concurrency);
const READ_SECS = Number(values['read-secs']);
const CONNECTIONS = Number(values.connections);

function startPind(dataDir: string): Promise<{ child: ChildProcess; url: string }> {
  // Log level warn: a line per pin is not what this measures.
  const config = join(dataDir, 'bench.toml');
  writeFileSync(config, '[log]\nlevel = "warn"\n');
  const child = spawn(
    process.execPath,
    ['bin/sealpost.js', 'pind', '--config', config, '--data-dir', dataDir, '--listen', '127.0.0.1:0'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (d) => {
      out += d;
      const url = /pin surface\s+(\S+)/.exec(out)?.[1];
      if (url) resolve({ child, url });
    });
    child.once('exit', (code) => reject(new Error(`pind exited with ${code}`)));
  });
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

function postPin(agent: Agent, url: URL, body: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        method: 'POST',
        path: '/pins',
        headers: { 'content-type': 'application/octet-stream', 'content-length': body.byteLength },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => {
          text += d;
        });
        res.on('end', () =>
          res.statusCode === 201
            ? resolve((JSON.parse(text) as { cid: string }).cid)
            : reject(new Error(`HTTP ${res.statusCode}: ${text}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

interface PinFigures {
  load: string;
  pins: number;
  'pins/s': number;
  'MB/s': number;
  'p50 ms': number;
  'p99 ms': number;
}

async function pinLoad(
  base: string,
  size: number,
  count: number,
  label: string,
): Promise<PinFigures & { cid: string }> {
  const url = new URL(base);
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const bodies = Array.from({ length: count }, () => randomBytes(size));
  const latencies: number[] = [];
  let next = 0;
  let lastCid = '';
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        const body = bodies[next++] as Buffer;
        const t = performance.now();
        lastCid = await postPin(agent, url, body);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const secs = (performance.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return {
    load: `pin ${label} ×${CONCURRENCY}`,
    pins: count,
    'pins/s': Math.round(count / secs),
    'MB/s': Number(((count * size) / 1e6 / secs).toFixed(1)),
    'p50 ms': Number(percentile(latencies, 50).toFixed(1)),
    'p99 ms': Number(percentile(latencies, 99).toFixed(1)),
    cid: lastCid,
  };
}

interface AutocannonResult {
  requests: { average: number; total: number };
  throughput: { average: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
}

function readLoad(url: string): Promise<AutocannonResult> {
  const bin = createRequire(import.meta.url).resolve('autocannon/autocannon.js');
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [bin, '-c', String(CONNECTIONS), '-d', String(READ_SECS), '-j', url],
      { maxBuffer: 64 * 1024 * 1024 },
      (err, stdout) => (err ? reject(err) : resolve(JSON.parse(stdout) as AutocannonResult)),
    );
  });
}

const dataDir = mkdtempSync(join(tmpdir(), 'sealpost-bench-pind-'));
const pind = await startPind(dataDir);
try {
  const small = await pinLoad(pind.url, 10_000, Number(values['pins-10k']), '10 KB');
  const large = await pinLoad(pind.url, 1_000_000, Number(values['pins-1m']), '1 MB');
  const pinRows = [small, large].map(({ cid: _cid, ...row }) => row);
  console.log(`\npind pin throughput (distinct bodies, ${CONCURRENCY} in flight, durable on answer)`);
  console.table(pinRows);

  const readRows = [];
  for (const [label, pinned] of [
    ['10 KB', small],
    ['1 MB', large],
  ] as const) {
    const r = await readLoad(`${pind.url}/ipfs/${pinned.cid}`);
    if (r.non2xx > 0 || r.errors > 0)
      throw new Error(`reads failed: ${r.non2xx} non-2xx, ${r.errors} errors`);
    readRows.push({
      load: `GET ${label} ×${CONNECTIONS}`,
      requests: r.requests.total,
      'req/s': Math.round(r.requests.average),
      'MB/s': Number((r.throughput.average / 1e6).toFixed(1)),
      'p50 ms': r.latency.p50,
      'p99 ms': r.latency.p99,
    });
  }
  console.log(`\npind gateway read throughput (${CONNECTIONS} keep-alive clients, ${READ_SECS} s each)`);
  console.table(readRows);
} finally {
  pind.child.kill('SIGTERM');
  await new Promise((r) => pind.child.once('exit', r));
  rmSync(dataDir, { recursive: true, force: true });
}
