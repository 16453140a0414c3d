// Temporary directories for tests. One made inside a test is removed after
// that test; one made outside any test (in beforeAll, for a server the whole
// file shares) is removed after the file's last test — removing it earlier
// would pull the directory from under a server still using it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach } from 'vitest';

const perTest: string[] = [];
const perFile: string[] = [];
let inTest = false;

function removeAll(dirs: string[]): void {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

beforeEach(() => {
  inTest = true;
});

afterEach(() => {
  inTest = false;
  removeAll(perTest);
});

afterAll(() => {
  removeAll(perTest);
  removeAll(perFile);
});

/** A fresh directory under the OS temp dir, deleted after the current test (or, made outside a test, after the file). */
export function tempDir(prefix = 'sealpost-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  (inTest ? perTest : perFile).push(dir);
  return dir;
}
