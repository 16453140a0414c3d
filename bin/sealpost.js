#!/usr/bin/env node
// Entry point for the `sealpost` CLI. Runs the JavaScript build in dist/
// (bin/build-dist.js; `npm ci` makes it) when it was built from the sources
// as they are now. When dist/ is missing or older than the sources (they
// were edited after the build), the TypeScript sources run through tsx
// instead, with a note on stderr: slower to start, never stale.
// SEALPOST_FROM_SOURCE=1 forces the sources.
import { resolve } from 'node:path';
import { distState } from './dist-state.js';

const root = resolve(import.meta.dirname, '..');
const state = process.env.SEALPOST_FROM_SOURCE ? 'skipped' : distState(root);
if (state === 'current') {
  await import('../dist/src/cli/main.js');
} else {
  if (state !== 'skipped')
    process.stderr.write(
      `sealpost: dist/ is ${state === 'missing' ? 'not built' : 'older than the sources'}; running the TypeScript sources (slower start; \`npm run build:cli\` builds dist/)\n`,
    );
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
