// Vitest global setup: the tests spawn bin/sealpost.js, which runs the
// JavaScript build in dist/ only when it matches the sources (else tsx, a
// second or more per spawn). Build it once here when it does not.
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';

export default function setup(): void {
  const root = resolve(import.meta.dirname, '..');
  execFileSync(process.execPath, [resolve(root, 'bin', 'build-dist.js'), '--if-stale'], {
    cwd: root,
    stdio: 'inherit',
  });
}
