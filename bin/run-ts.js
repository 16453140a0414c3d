#!/usr/bin/env node
// Runs a TypeScript file (benchmarks, drills) with the tsx loader.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { register } from 'tsx/esm/api';

register();
const file = process.argv[2];
if (!file) {
  console.error('usage: run-ts.js FILE.ts [args…]');
  process.exit(2);
}
process.argv.splice(2, 1);
await import(pathToFileURL(resolve(file)).href);
