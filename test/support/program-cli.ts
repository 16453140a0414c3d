// Runs `sealpost program …` as a child process against a test devnet, and
// the keypair files those runs need. Children still running after a test are
// killed.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Keypair } from '@solana/web3.js';
import { afterEach } from 'vitest';
import { MAX_WRITE_CHUNK } from '../../chain/client/loader.ts';
import { writeKeypairFile } from '../../src/core/keys/keypair-file.ts';

const BIN = resolve(import.meta.dirname, '..', '..', 'bin', 'sealpost.js');
export const MAIL_SO = resolve(import.meta.dirname, '..', '..', 'chain', 'program', 'mail_program.so');
export const MAIL_SO_BYTES = new Uint8Array(readFileSync(MAIL_SO));
/** Write chunks of the committed program with one signer. */
export const MAIL_CHUNKS = Math.ceil(MAIL_SO_BYTES.length / MAX_WRITE_CHUNK);

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export function sealpost(args: string[], cwd: string): Promise<Run> {
  return new Promise((done) => {
    const child = execFile(
      process.execPath,
      [BIN, ...args],
      { cwd, env: { ...process.env, NO_COLOR: '1' }, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        done({ code, stdout, stderr });
      },
    );
    children.push(child);
  });
}

/** Starts `sealpost args…` and SIGKILLs it once its stderr matches `until`; resolves to what it printed. */
export function sealpostKilled(
  args: string[],
  cwd: string,
  until: RegExp,
): Promise<{ stderr: string; killed: boolean }> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stderr = '';
  let killed = false;
  child.stdout?.resume();
  child.stderr?.on('data', (d) => {
    stderr += d;
    if (!killed && until.test(stderr)) {
      killed = true;
      child.kill('SIGKILL');
    }
  });
  return new Promise((done) => child.once('close', () => done({ stderr, killed })));
}

/** Writes a new keypair to `dir/name` and returns it. */
export function keyFile(
  dir: string,
  name: string,
  kp: Keypair = Keypair.generate(),
): { path: string; kp: Keypair } {
  const path = join(dir, name);
  writeKeypairFile(path, {
    secretKey: kp.secretKey,
    publicKey: kp.publicKey.toBytes(),
    address: kp.publicKey.toBase58(),
  });
  return { path, kp };
}
