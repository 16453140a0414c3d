// `npm run gen:protocol`: writes what the schema (../schema.ts) renders into:
// the program's C header, the tables of docs/protocol.md and the Codama IDL.
// With `--check` it writes nothing and exits 1, naming each stale file (the
// freshness test, test/program/protocol-generated.test.ts, runs the same check).
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { generatedFiles } from './files.ts';

const check = process.argv.includes('--check');
const unknown = process.argv.slice(2).filter((a) => a !== '--check');
if (unknown.length > 0) {
  console.error(`usage: npm run gen:protocol [-- --check] (unknown: ${unknown.join(' ')})`);
  process.exit(2);
}

const read = (path: string): string | null => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
};

const files = generatedFiles(read);
const stale = files.filter((f) => f.before !== f.after);
for (const f of files) for (const problem of f.problems) console.error(`${f.name}: ${problem}`);
if (files.some((f) => f.problems.length > 0)) process.exit(1);
if (check) {
  if (stale.length > 0) {
    for (const f of stale) console.error(`${f.name}: stale (${f.detail}); run npm run gen:protocol`);
    process.exit(1);
  }
  console.log(`protocol: ${files.map((f) => f.name).join(', ')} are current`);
} else {
  for (const f of stale) {
    writeFileSync(fileURLToPath(f.url), f.after);
    console.log(`${f.name}: rewritten (${f.detail})`);
  }
  if (stale.length === 0) console.log('protocol: every generated file is current');
}
