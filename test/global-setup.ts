// Vitest global setup.
// - The tests spawn bin/sealpost.js, which runs the JavaScript build in dist/
//   only when it matches the sources (else tsx, a second or more per spawn).
//   Build it once here when it does not.
// - Every private rspamd of the run (test/support/rspamd.ts, `sealpost dev`
//   stacks) shares one Hyperscan cache, filled here by one start: otherwise
//   each instance compiles the same databases again (about 12 s of CPU each,
//   several at once on two cores). Removed when the run ends.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { findRspamd, removeRspamdDir, startRspamd } from '../src/run/dev/rspamd.ts';

export default async function setup(): Promise<() => void> {
  const root = resolve(import.meta.dirname, '..');
  execFileSync(process.execPath, [resolve(root, 'bin', 'build-dist.js'), '--if-stale'], {
    cwd: root,
    stdio: 'inherit',
  });
  const cache = mkdtempSync(join(tmpdir(), 'sealpost-rspamd-cache-'));
  process.env.SEALPOST_RSPAMD_CACHE = cache;
  if (findRspamd()) {
    const dir = mkdtempSync(join(tmpdir(), 'sealpost-rspamd-warm-'));
    try {
      const warm = await startRspamd({ dir, cacheDir: cache, timeoutMs: 180_000 });
      await warm.close();
    } finally {
      removeRspamdDir(dir);
    }
  }
  return () => rmSync(cache, { recursive: true, force: true });
}
