// The key tables of docs/config.md, rendered from the config schema: each
// field's `.meta({ description, default })` is one row. docs/config.md holds
// the prose; every table sits between marker comments
//
//   <!-- generated: config-keys spooler.relay -->
//   …
//   <!-- end generated -->
//
// and `npm run gen:config-docs` rewrites what is between them. A marker may
// narrow a table to a run of keys (`spam keys=dnsbl..dnsbl_skip_networks`).
//
// How fields become rows:
// - a leaf field is one row: `key`, the default text, the description;
// - the default text is the meta's `default` when given (prose such as
//   "derived: `[smtp] hostname`"), else the schema default as a literal, else
//   "—" for an optional key and "required" for a required one;
// - a nested table (a strict object, or an array of them: `[[spooler.dkim]]`)
//   has a table of its own; it is a row of its parent table too only when it
//   has a description (`[smtp] listeners`: "see below");
// - a nested table whose meta says `flatten: true` (`[smtp] timeouts`) has no
//   table of its own: its keys are rows of the parent, as `timeouts.key`.
import * as z from 'zod';
import { configSchema } from './schema.ts';

type Schema = z.core.$ZodType;

export interface KeyRow {
  /** The key as shown: `name`, or `table.name` for a flattened table's key. */
  key: string;
  /** The full path from the config root, e.g. `smtp.timeouts.socket_timeout_secs`. */
  path: string;
  default: string;
  description: string;
}

/** What a field's meta (on the field or on any wrapper inside it) says. */
interface FieldMeta {
  description?: string;
  default?: string;
  flatten?: boolean;
}

/** The schema inside optional/default/prefault/nullable wrappers and pipes (preprocess, transform). */
function unwrapField(schema: Schema): Schema {
  let s = schema;
  for (;;) {
    if (
      s instanceof z.ZodOptional ||
      s instanceof z.ZodDefault ||
      s instanceof z.ZodPrefault ||
      s instanceof z.ZodNullable ||
      s instanceof z.ZodReadonly ||
      s instanceof z.ZodNonOptional ||
      s instanceof z.ZodCatch
    ) {
      s = s.unwrap() as Schema;
    } else if (s instanceof z.ZodPipe) {
      // A preprocess pipe parses with its `out` side, a transform with its `in` side.
      s = (s.in instanceof z.ZodTransform ? s.out : s.in) as Schema;
    } else {
      return s;
    }
  }
}

/** The wrappers from the field's outermost schema inward, down to (and including) the unwrapped one. */
function layers(schema: Schema): Schema[] {
  const out: Schema[] = [schema];
  let s = schema;
  while (s !== unwrapField(s)) {
    if (s instanceof z.ZodPipe) s = (s.in instanceof z.ZodTransform ? s.out : s.in) as Schema;
    else s = (s as z.ZodOptional).unwrap() as Schema;
    out.push(s);
  }
  return out;
}

function metaOf(schema: Schema): FieldMeta {
  const meta: FieldMeta = {};
  // The outermost meta wins: `.meta()` after `.default()` is the usual place.
  for (const layer of layers(schema).reverse()) {
    const m = z.globalRegistry.get(layer);
    if (!m) continue;
    if (typeof m.description === 'string') meta.description = m.description;
    if (typeof m.default === 'string') meta.default = m.default;
    if (typeof m.flatten === 'boolean') meta.flatten = m.flatten;
  }
  return meta;
}

/** The strict object a field holds: the object itself, or the element of an array of objects. */
function tableOf(schema: Schema): z.ZodObject | undefined {
  let s = unwrapField(schema);
  if (s instanceof z.ZodArray) s = unwrapField(s.element as Schema);
  return s instanceof z.ZodObject ? s : undefined;
}

/** A default value as it reads in TOML-ish docs: strings quoted, arrays as `[a, b]`. */
function literal(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(literal).join(', ')}]`;
  return JSON.stringify(value);
}

function defaultText(schema: Schema, meta: FieldMeta): string {
  if (meta.default !== undefined) return meta.default;
  for (const layer of layers(schema)) {
    if (layer instanceof z.ZodDefault) return `\`${literal(layer.def.defaultValue)}\``;
    if (layer instanceof z.ZodOptional) return '—';
  }
  return 'required';
}

/** The object schema at a dotted path of tables (`spooler.relay`, `smtp.listeners`). */
export function tableAt(path: string, root: Schema = configSchema): z.ZodObject {
  let table = tableOf(root);
  for (const segment of path.split('.')) {
    const field = table?.shape[segment] as Schema | undefined;
    table = field ? tableOf(field) : undefined;
    if (!table) throw new Error(`config schema: no table at ${path} (stopped at "${segment}")`);
  }
  if (!table) throw new Error(`config schema: no table at ${path}`);
  return table;
}

/** The rows of the table at `path`, in the schema's key order. Throws on a key without a description. */
export function tableRows(path: string, root: Schema = configSchema): KeyRow[] {
  const rows: KeyRow[] = [];
  const walk = (table: z.ZodObject, prefix: string, fullPrefix: string) => {
    for (const [key, field] of Object.entries(table.shape as Record<string, Schema>)) {
      const meta = metaOf(field);
      const nested = tableOf(field);
      const fullPath = `${fullPrefix}.${key}`;
      if (nested && meta.flatten) {
        walk(nested, `${prefix}${key}.`, fullPath);
        continue;
      }
      if (nested && meta.description === undefined) continue; // documented by its own table
      if (meta.description === undefined) {
        throw new Error(`config schema: ${fullPath} has no description (give it .meta({ description }))`);
      }
      rows.push({
        key: `${prefix}${key}`,
        path: fullPath,
        default: defaultText(field, meta),
        description: meta.description,
      });
    }
  };
  walk(tableAt(path, root), '', path);
  return rows;
}

/** One table spec as a marker names it: a path, optionally `keys=FIRST..LAST`. */
export interface TableSpec {
  path: string;
  first?: string;
  last?: string;
}

export function parseSpec(spec: string): TableSpec {
  const m = /^([a-z0-9_.]+)(?:\s+keys=([a-z0-9_.]+)\.\.([a-z0-9_.]+))?$/.exec(spec.trim());
  if (!m?.[1]) throw new Error(`config docs: bad table spec "${spec}" (expected PATH [keys=FIRST..LAST])`);
  return { path: m[1], first: m[2], last: m[3] };
}

/** The rows a spec selects: the whole table, or the keys from `first` through `last`. */
export function specRows(spec: TableSpec | string, root: Schema = configSchema): KeyRow[] {
  const s = typeof spec === 'string' ? parseSpec(spec) : spec;
  const rows = tableRows(s.path, root);
  if (s.first === undefined || s.last === undefined) return rows;
  const from = rows.findIndex((r) => r.key === s.first);
  const to = rows.findIndex((r) => r.key === s.last);
  if (from === -1 || to === -1 || to < from) {
    throw new Error(`config docs: ${s.path} has no key run ${s.first}..${s.last}`);
  }
  return rows.slice(from, to + 1);
}

function cell(text: string): string {
  const escaped = text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
  return escaped === '' ? ' ' : ` ${escaped} `;
}

/** The Markdown table for a spec (`spooler.relay`, `spam keys=enabled..scan_submission`), no trailing newline. */
export function renderTable(spec: TableSpec | string, root: Schema = configSchema): string {
  const lines = ['| key | default | meaning |', '| --- | --- | --- |'];
  for (const row of specRows(spec, root)) {
    lines.push(`|${[`\`${row.key}\``, row.default, row.description].map(cell).join('|')}|`);
  }
  return lines.join('\n');
}

const START = /^<!-- generated: config-keys (.+?) -->$/;
const END = '<!-- end generated -->';

export interface GeneratedBlock {
  /** The spec as the marker spells it. */
  spec: string;
  /** Line indexes of the start and end markers. */
  start: number;
  end: number;
}

/** The marked blocks of a docs text, in order. Throws on a start marker without its end. */
export function generatedBlocks(text: string): GeneratedBlock[] {
  const lines = text.split('\n');
  const blocks: GeneratedBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = START.exec(lines[i] ?? '');
    if (!m?.[1]) continue;
    const end = lines.findIndex((l, j) => j > i && (l === END || START.test(l)));
    if (end === -1 || lines[end] !== END) {
      throw new Error(`config docs: line ${i + 1}: "${lines[i]}" has no "${END}" after it`);
    }
    blocks.push({ spec: m[1], start: i, end });
    i = end;
  }
  return blocks;
}

export interface RewriteResult {
  /** The docs text with every marked table rendered afresh. */
  text: string;
  /** The specs of the tables whose text changed. */
  stale: string[];
}

/** Renders every marked table of a docs text; the prose around them is left as it is. */
export function rewriteDocs(text: string, root: Schema = configSchema): RewriteResult {
  const lines = text.split('\n');
  const out: string[] = [];
  const stale: string[] = [];
  let next = 0;
  for (const block of generatedBlocks(text)) {
    out.push(...lines.slice(next, block.start + 1));
    const current = lines.slice(block.start + 1, block.end).join('\n');
    const fresh = `\n${renderTable(block.spec, root)}\n`;
    if (current !== fresh) stale.push(block.spec);
    out.push(fresh);
    next = block.end;
  }
  out.push(...lines.slice(next));
  return { text: out.join('\n'), stale };
}

/** The specs of the marked tables that differ from what `rewriteDocs` would write (empty: current). */
export function staleTables(text: string, root: Schema = configSchema): string[] {
  return rewriteDocs(text, root).stale;
}

/**
 * Every documentable key path of the schema: leaf keys, plus each nested
 * table that has a row of its own (a description). Flattened and own-table
 * containers contribute their keys instead.
 */
export function schemaKeyPaths(root: Schema = configSchema): string[] {
  const paths: string[] = [];
  const walk = (table: z.ZodObject, prefix: string) => {
    for (const [key, field] of Object.entries(table.shape as Record<string, Schema>)) {
      const path = prefix === '' ? key : `${prefix}.${key}`;
      const nested = tableOf(field);
      if (!nested) {
        paths.push(path);
        continue;
      }
      if (prefix !== '' && metaOf(field).description !== undefined) paths.push(path);
      walk(nested, path);
    }
  };
  const top = tableOf(root);
  if (top) walk(top, '');
  return paths;
}

/** The key paths the marked tables of a docs text render. */
export function documentedKeyPaths(text: string, root: Schema = configSchema): string[] {
  return generatedBlocks(text).flatMap((b) => specRows(b.spec, root).map((r) => r.path));
}
