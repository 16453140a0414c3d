// The key tables of docs/config.md are rendered from the config schema's
// descriptions: this keeps the file current, makes a new key without a
// description (or without a table) fail, and shows that the check notices
// a changed description.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import {
  documentedKeyPaths,
  generatedBlocks,
  renderTable,
  rewriteDocs,
  schemaKeyPaths,
  staleTables,
  tableRows,
} from './docs-tables.ts';
import { configSchema } from './schema.ts';
import { spoolerSchema } from './sections/spooler.ts';

const DOCS = fileURLToPath(new URL('../../../docs/config.md', import.meta.url));
const docs = readFileSync(DOCS, 'utf8');

describe('docs/config.md key tables', () => {
  it('are what the schema renders', () => {
    expect(generatedBlocks(docs).length).toBeGreaterThan(20);
    const stale = staleTables(docs);
    expect(
      stale,
      `stale tables in docs/config.md (${stale.join(', ')}): run npm run gen:config-docs`,
    ).toEqual([]);
  });

  it('document every key of every section', () => {
    const documented = new Set(documentedKeyPaths(docs));
    const missing = schemaKeyPaths().filter((path) => !documented.has(path));
    expect(missing, 'keys with no row in docs/config.md: add a table marker or a description').toEqual([]);
    // Each key is shown once.
    expect(documentedKeyPaths(docs).length).toBe(documented.size);
  });

  it('names the table whose description changed', () => {
    // The [spooler] section with a new description for `concurrency`.
    const field = spoolerSchema.shape.concurrency;
    const edited = configSchema.extend({
      spooler: spoolerSchema
        .safeExtend({ concurrency: field.meta({ ...field.meta(), description: 'Sessions at once.' }) })
        .prefault({}),
    });
    expect(staleTables(docs, edited)).toEqual(['spooler']);
    const { text } = rewriteDocs(docs, edited);
    expect(text).toContain('| `concurrency` | `32` | Sessions at once. |');
    expect(staleTables(text, edited)).toEqual([]);
    // The real schema is untouched by that.
    expect(staleTables(docs)).toEqual([]);
  });
});

describe('renderTable', () => {
  const schema = z.strictObject({
    demo: z
      .strictObject({
        name: z.string().meta({ description: 'A name.' }),
        count: z.number().default(3).meta({ description: 'How many.' }),
        list: z.array(z.string()).default(['a', 'b']).meta({ description: 'Some | items.' }),
        note: z.string().optional().meta({ description: '' }),
        host: z.string().optional().meta({ description: 'Where.', default: 'derived: `[x] y`' }),
        inner: z
          .strictObject({ secs: z.number().default(1).meta({ description: 'Seconds.' }) })
          .prefault({})
          .meta({ flatten: true }),
        own: z.strictObject({ a: z.boolean().default(false).meta({ description: 'A.' }) }).optional(),
        entries: z
          .array(z.preprocess((v) => v, z.strictObject({ id: z.string().meta({ description: 'Id.' }) })))
          .default([])
          .meta({ description: 'Entries, see below.', default: 'none' }),
      })
      .superRefine(() => {}),
  });

  it('renders one row per key in key order, flattening and skipping nested tables as their meta says', () => {
    expect(renderTable('demo', schema)).toBe(
      [
        '| key | default | meaning |',
        '| --- | --- | --- |',
        '| `name` | required | A name. |',
        '| `count` | `3` | How many. |',
        '| `list` | `["a", "b"]` | Some \\| items. |',
        '| `note` | — | |',
        '| `host` | derived: `[x] y` | Where. |',
        '| `inner.secs` | `1` | Seconds. |',
        '| `entries` | none | Entries, see below. |',
      ].join('\n'),
    );
    expect(renderTable('demo.own', schema)).toContain('| `a` | `false` | A. |');
    expect(renderTable('demo.entries', schema)).toContain('| `id` | required | Id. |');
    expect(renderTable('demo keys=count..note', schema).split('\n').slice(2)).toEqual([
      '| `count` | `3` | How many. |',
      '| `list` | `["a", "b"]` | Some \\| items. |',
      '| `note` | — | |',
    ]);
  });

  it('refuses a key without a description', () => {
    const bare = z.strictObject({ demo: z.strictObject({ plain: z.string().default('x') }) });
    expect(() => tableRows('demo', bare)).toThrow('demo.plain has no description');
    expect(schemaKeyPaths(bare)).toEqual(['demo.plain']);
  });
});
