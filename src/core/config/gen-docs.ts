// `npm run gen:config-docs`: renders the key tables of docs/config.md from
// the config schema's descriptions (src/core/config/docs-tables.ts). With
// `--check` it writes nothing and exits 1, naming the stale tables, when the
// file differs from what it would write (the freshness test runs the same check).
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { rewriteDocs } from './docs-tables.ts';

const DOCS = fileURLToPath(new URL('../../../docs/config.md', import.meta.url));

const check = process.argv.includes('--check');
const unknown = process.argv.slice(2).filter((a) => a !== '--check');
if (unknown.length > 0) {
  console.error(`usage: gen-docs.ts [--check] (unknown: ${unknown.join(' ')})`);
  process.exit(2);
}

const before = readFileSync(DOCS, 'utf8');
const { text, stale } = rewriteDocs(before);
if (check) {
  if (stale.length > 0) {
    console.error(`docs/config.md: stale key tables: ${stale.join(', ')}; run npm run gen:config-docs`);
    process.exit(1);
  }
  console.log('docs/config.md: key tables are current');
} else if (text !== before) {
  writeFileSync(DOCS, text);
  console.log(`docs/config.md: rewrote ${stale.length} key table(s): ${stale.join(', ')}`);
} else {
  console.log('docs/config.md: key tables are current');
}
