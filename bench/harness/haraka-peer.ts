// Haraka (from npm, installed by install-peers.sh) as an MX peer: one
// process, rcpt_to.in_host_list for the bench domain, and a queue plugin
// written here that streams each message to its own file and fsyncs it
// before answering 250, the same durability as Sealpost's spool and
// Postfix's queue file.
import { type ChildProcess, spawn } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { waitForSmtp } from './net.ts';

export const HARAKA_BIN = resolve(
  import.meta.dirname,
  '..',
  'results',
  'peers',
  'haraka',
  'node_modules',
  'Haraka',
  'bin',
  'haraka',
);

const QUEUE_PLUGIN = `// Bench queue: each message to its own file, fsynced before 250.
const fs = require('node:fs');
const path = require('node:path');
let seq = 0;

exports.register = function () {
  this.dir = process.env.BENCH_QUEUE_DIR;
};

exports.hook_queue = function (next, connection) {
  const file = path.join(this.dir, process.pid + '-' + Date.now() + '-' + seq++ + '.eml');
  let fd;
  try {
    fd = fs.openSync(file, 'w');
  } catch (err) {
    return next(DENYSOFT, 'queue file: ' + err.message);
  }
  const out = fs.createWriteStream(null, { fd, autoClose: false });
  out.on('error', (err) => {
    fs.close(fd, () => {});
    next(DENYSOFT, 'queue write: ' + err.message);
  });
  out.on('finish', () => {
    fs.fsync(fd, (err) => {
      fs.close(fd, () => {});
      if (err) return next(DENYSOFT, 'queue fsync: ' + err.message);
      next(OK, 'queued');
    });
  });
  connection.transaction.message_stream.pipe(out, { line_endings: '\\r\\n' });
};
`;

export interface HarakaPeer {
  port: number;
  /** Messages written to the queue directory. */
  queued(): number;
  stop(): Promise<void>;
}

export async function startHarakaPeer(opts: { port: number; domain: string }): Promise<HarakaPeer> {
  if (!existsSync(HARAKA_BIN)) throw new Error('Haraka is not installed (bench/harness/install-peers.sh)');
  const dir = mkdtempSync(join(tmpdir(), 'sealpost-bench-haraka-'));
  const config = join(dir, 'config');
  const queue = join(dir, 'queue');
  for (const d of [config, join(dir, 'plugins', 'queue'), queue]) mkdirSync(d, { recursive: true });
  writeFileSync(join(dir, 'plugins', 'queue', 'bench_disk.js'), QUEUE_PLUGIN);
  // Haraka reads its greeting and limits from connection.ini: start from the package's defaults.
  copyFileSync(
    join(dirname(dirname(HARAKA_BIN)), 'config', 'connection.ini'),
    join(config, 'connection.ini'),
  );
  writeFileSync(join(config, 'plugins'), 'rcpt_to.in_host_list\nqueue/bench_disk\n');
  writeFileSync(join(config, 'host_list'), `${opts.domain}\n`);
  writeFileSync(join(config, 'me'), 'haraka.bench.localdomain\n');
  // One process (no cluster), like the single Sealpost MX process it is compared with.
  writeFileSync(join(config, 'smtp.ini'), `[main]\nlisten=127.0.0.1:${opts.port}\n`);
  writeFileSync(join(config, 'log.ini'), '[main]\nlevel=warn\ntimestamps=false\n');
  const child: ChildProcess = spawn(process.execPath, [HARAKA_BIN, '-c', dir], {
    env: { ...process.env, BENCH_QUEUE_DIR: queue },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  const keep = (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  try {
    await Promise.race([
      waitForSmtp(opts.port, 60_000),
      exited.then(() => {
        throw new Error(`haraka exited: ${stderr.trim()}`);
      }),
    ]);
  } catch (err) {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    port: opts.port,
    queued: () => readdirSync(queue).length,
    async stop() {
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
