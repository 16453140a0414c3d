// Two processes writing one SQLite store file at once, as `sealpost serve` and
// `sealpost worker` (or two workers) do on a single machine: every delivered
// copy is stored and none fails with "database is locked". A transaction that
// reads before it writes used to lose its turn at once (SQLITE_BUSY in WAL
// mode, whatever the busy timeout) whenever the other process committed in
// between, and the delivery was deferred.
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateKeypair } from '../../src/core/keys/keypair-file.ts';
import { openStore } from '../../src/core/store/index.ts';
import { tempDir } from '../support/temp-dir.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');

interface WriterResult {
  stored: number;
  failed: number;
  errors: string[];
}

function writer(file: string, wallet: string, prefix: string, count: number): Promise<WriterResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(
      process.execPath,
      ['bin/run-ts.js', 'test/fixtures/store/sqlite-writer.ts', file, wallet, prefix, String(count)],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`writer exited ${code}: ${err.slice(-2000)}`));
      resolvePromise(JSON.parse(out.trim().split('\n').pop() as string) as WriterResult);
    });
  });
}

describe('one SQLite store written by two processes', () => {
  it('stores every copy from both, with no "database is locked"', async () => {
    const dir = tempDir();
    const file = join(dir, 'mail.sqlite');
    const store = await openStore({ url: `sqlite:${file}`, dataDir: dir });
    try {
      // Both processes deliver to the same wallet, so they bump the same INBOX row.
      const wallet = generateKeypair().address;
      const count = 300;
      const [a, b] = await Promise.all([writer(file, wallet, 'a', count), writer(file, wallet, 'b', count)]);
      expect(a.errors).toEqual([]);
      expect(b.errors).toEqual([]);
      expect(a.stored + b.stored).toBe(2 * count);
      const rows = await store.db
        .selectFrom('messages')
        .select(['uid'])
        .where('wallet', '=', wallet)
        .execute();
      expect(rows).toHaveLength(2 * count);
      // Each copy took its own UID.
      expect(new Set(rows.map((r) => r.uid)).size).toBe(2 * count);
    } finally {
      await store.close();
    }
  }, 120_000);
});
