// Renders the schema's tables into docs/protocol.md: the account index
// (tags and seeds), each account's field table, the instruction table and
// the error codes. Each table sits between
// `<!-- generated: protocol-<name> -->` and `<!-- end generated -->`; the prose
// around them stays hand-written.

import {
  ACCOUNTS,
  type AccountMetaSpec,
  type AccountSpec,
  ERRORS,
  type ErrorSpec,
  type FieldType,
  INSTRUCTIONS,
  type InstructionSpec,
  SEEDS,
  type SeedSpec,
} from '../schema.ts';
import { accountOffsets, lowerSnake } from './render-c.ts';

const cell = (text: string): string => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

function table(header: string[], rows: string[][]): string {
  return [
    `| ${header.join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`),
  ].join('\n');
}

function fieldTypeText(t: FieldType): string {
  if (typeof t === 'object') return 'bytes' in t ? `[u8;${t.bytes}]` : `Option<${fieldTypeText(t.option)}>`;
  return t === 'key' || t === 'hash' ? '[u8;32]' : t;
}

function argTypeText(t: FieldType): string {
  if (typeof t === 'object') return 'bytes' in t ? `[${t.bytes}]` : `Option\\<${argTypeText(t.option)}\\>`;
  return t === 'key' || t === 'hash' ? '[32]' : t;
}

export function seedsText(seed: SeedSpec): string {
  const parts = seed.parts.map((p) => p.doc ?? lowerSnake(p.name));
  return `\`[${[`"${seed.prefix}"`, ...parts].join(', ')}]\``;
}

function accountIndex(): string {
  const rows = (Object.entries(ACCOUNTS) as [string, AccountSpec][])
    .sort(([, a], [, b]) => a.tag - b.tag)
    .map(([kind, spec]) => [String(spec.tag), kind, seedsText(SEEDS[spec.seed])]);
  return table(['tag', 'account', 'seeds'], rows);
}

/** Rent-exempt minimum the program funds an account of `size` bytes with (docs/protocol.md "Conventions"). */
export const rentOf = (size: number): number => (128 + size) * 6960;

const thousands = (n: number): string => n.toLocaleString('en-US');

function rentTable(): string {
  const rows = (Object.entries(ACCOUNTS) as [string, AccountSpec][])
    .sort(([, a], [, b]) => a.tag - b.tag)
    .map(([kind, spec]) => {
      const { offsets, fixed, variable } = accountOffsets(spec);
      if (!variable) return [kind, String(fixed), thousands(rentOf(fixed))];
      // A trailing borsh string: its 4-byte length, then its bytes.
      const field = lowerSnake((offsets.at(-1) as [string, number])[0]);
      return [kind, `${fixed + 4} + len(${field})`, `${thousands(rentOf(fixed + 4))} + 6960 × len(${field})`];
    });
  return table(['account', 'size', 'rent-exempt lamports'], rows);
}

function accountTable(kind: string): string {
  const spec = ACCOUNTS[kind as keyof typeof ACCOUNTS] as AccountSpec;
  const { offsets } = accountOffsets(spec);
  const rows = [['0', 'tag', `u8 = ${spec.tag}`, '']];
  for (const [name, off] of offsets) {
    const field = spec.fields[name] as AccountSpec['fields'][string];
    rows.push([String(off), lowerSnake(name), fieldTypeText(field.type), field.doc ?? '']);
  }
  return table(['off', 'field', 'type', 'notes'], rows);
}

function accountMetaText(a: AccountMetaSpec): string {
  const flags = [a.signer ? 's' : '', a.writable ? 'w' : ''].filter(Boolean).join(',');
  const note = [flags, a.doc].filter(Boolean).join('; ');
  const name = a.name === 'systemProgram' ? 'System' : lowerSnake(a.name);
  const text = note ? `${name} (${note})` : name;
  return a.when ? `[${text} — ${a.when}]` : text;
}

function instructionTable(): string {
  const rows = (Object.entries(INSTRUCTIONS) as [string, InstructionSpec][]).map(([kind, spec]) => {
    const args = Object.entries(spec.args).map(
      ([name, arg]) => `${lowerSnake(name)} ${argTypeText(arg.type)}${arg.doc ? ` (${arg.doc})` : ''}`,
    );
    return [String(spec.tag), kind, args.join(', ') || '—', spec.accounts.map(accountMetaText).join(', ')];
  });
  return table(['tag', 'instruction', 'args', 'accounts'], rows);
}

function errorTable(): string {
  const rows = (Object.entries(ERRORS) as [string, ErrorSpec][]).map(([name, spec]) => [
    String(spec.code),
    spec.doc ? `${name} (${spec.doc})` : name,
  ]);
  return table(['code', 'name'], rows);
}

/** Every generated table by its marker name. */
export function docsTables(): Map<string, string> {
  const tables = new Map<string, string>([
    ['protocol-accounts', accountIndex()],
    ['protocol-rent', rentTable()],
  ]);
  for (const kind of Object.keys(ACCOUNTS)) tables.set(`protocol-account ${kind}`, accountTable(kind));
  tables.set('protocol-instructions', instructionTable());
  tables.set('protocol-errors', errorTable());
  return tables;
}

const BLOCK = /<!-- generated: (protocol-[a-z]+(?: [A-Za-z]+)?) -->\n[\s\S]*?<!-- end generated -->/g;

/**
 * Rewrites every generated table of a docs/protocol.md text. Returns the new
 * text, the tables that changed, and the tables the schema has but the text
 * lacks a marker for (a table nobody would see).
 */
export function rewriteProtocolDocs(text: string): { text: string; stale: string[]; missing: string[] } {
  const tables = docsTables();
  const stale: string[] = [];
  const seen = new Set<string>();
  const out = text.replace(BLOCK, (block, name: string) => {
    const body = tables.get(name);
    if (body === undefined) throw new Error(`docs/protocol.md: no generated table named "${name}"`);
    seen.add(name);
    const fresh = `<!-- generated: ${name} -->\n${body}\n<!-- end generated -->`;
    if (fresh !== block) stale.push(name);
    return fresh;
  });
  const missing = [...tables.keys()].filter((n) => !seen.has(n));
  return { text: out, stale, missing };
}
