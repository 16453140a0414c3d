#!/usr/bin/env node
// Entry point for the `sealpost` CLI. Sources are TypeScript; tsx loads them
// directly so a checkout runs without a separate build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
