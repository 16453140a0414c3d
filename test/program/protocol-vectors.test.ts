// The vectors of docs/protocol.md ("Test vectors") against the code: every
// value of docs/vectors/protocol-vectors.json is recomputed with chain/,
// src/mail/cid.ts and src/mail/seal/ (the randomized sealed object is opened and
// re-addressed instead), and every vector docs/protocol.md quotes must be
// the JSON's, so the spec, the file and the code cannot drift apart. The
// spec's layout, rent, instruction and error tables are read against the
// codecs and chain/client/errors.ts the same way.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { blake3 } from '@noble/hashes/blake3.js';
import { describe, expect, it } from 'vitest';
import { ACCOUNT_LAYOUTS } from '../../chain/client/accounts/index.ts';
import type { FieldType } from '../../chain/client/accounts/layout.ts';
import { MAIL_ERRORS } from '../../chain/client/errors.ts';
import { fromHash } from '../../chain/client/hash.ts';
import { INSTRUCTION_LAYOUTS } from '../../chain/client/instruction-data.ts';
import { b3Marker, computeCid } from '../../src/mail/cid.ts';
import {
  checkCid,
  openContentKey,
  openSealed,
  type Preamble,
  parsePreamble,
  readerKeypairFromSecret,
} from '../../src/mail/seal/index.ts';
import { computeDeterministicVectors, sealInputs, VECTORS_PATH } from '../support/protocol-vectors.ts';

const PROTOCOL_MD = join(dirname(fileURLToPath(import.meta.url)), '../../docs/protocol.md');
const vectors = JSON.parse(readFileSync(VECTORS_PATH, 'utf8'));
const doc = readFileSync(PROTOCOL_MD, 'utf8');
const fromHex = (s: string) => new Uint8Array(Buffer.from(s, 'hex'));
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** `a/b/3` or `instructions/SendMail (direct)/data_hex`: array items by index or by their first field's value. */
function lookup(path: string): unknown {
  let at: unknown = vectors;
  for (const seg of path.split('/')) {
    if (Array.isArray(at)) {
      const byIndex = /^\d+$/.test(seg) ? at[Number(seg)] : undefined;
      at = byIndex ?? at.find((item) => Object.values(item as object)[0] === seg);
    } else if (at && typeof at === 'object') {
      at = (at as Record<string, unknown>)[seg];
    } else {
      at = undefined;
    }
    if (at === undefined) throw new Error(`docs/protocol.md names ${path}, which the vectors file lacks`);
  }
  return at;
}

function allStrings(v: unknown, out: string[] = []): string[] {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) for (const x of v) allStrings(x, out);
  else if (v && typeof v === 'object') for (const x of Object.values(v)) allStrings(x, out);
  return out;
}

/** The fenced block after each `<!-- vector: PATH -->`, as hex with `#` annotations and spaces removed. */
function quotedBlocks(): { path: string; hex: string }[] {
  const out: { path: string; hex: string }[] = [];
  for (const m of doc.matchAll(/<!-- vector: (.+?) -->\s*```[a-z]*\n([\s\S]*?)```/g)) {
    const body = (m[2] ?? '')
      .split('\n')
      .map((line) => line.replace(/#.*/, '').replace(/\s+/g, ''))
      .join('');
    out.push({ path: m[1] ?? '', hex: body });
  }
  return out;
}

/** The table after each `<!-- vector-table: ARRAY FIELD… -->`: one code span per cell (none = empty text). */
function quotedTables(): { array: string; fields: string[]; rows: string[][] }[] {
  const out: { array: string; fields: string[]; rows: string[][] }[] = [];
  for (const m of doc.matchAll(/<!-- vector-table: (.+?) -->\s*\n((?:\|.*\n)+)/g)) {
    const [array = '', ...fields] = (m[1] ?? '').split(' ');
    const lines = (m[2] ?? '').trim().split('\n').slice(2);
    const rows = lines.map((line) =>
      line
        .slice(1, -1)
        .split(' | ')
        .map((cell) => /`([^`]*)`/.exec(cell)?.[1] ?? ''),
    );
    out.push({ array, fields, rows });
  }
  return out;
}

describe('docs/vectors/protocol-vectors.json', () => {
  it('every deterministic vector equals what the code computes now', async () => {
    const { seal: _seal, ...stored } = vectors;
    expect(await computeDeterministicVectors()).toEqual(stored);
  }, 60_000);

  it('each from_hash is blake3 of the text the spec says is hashed', () => {
    for (const row of vectors.from_hash as { input: string; hashed_text: string; hash_hex: string }[]) {
      expect(hex(blake3(new TextEncoder().encode(row.hashed_text))), row.input).toBe(row.hash_hex);
      expect(hex(fromHash(row.input)), row.input).toBe(row.hash_hex);
    }
  });

  it('the sealed object opens to its envelope and message, and its CID and b3 marker address its bytes', async () => {
    const v = vectors.seal;
    const inputs = sealInputs();
    const sealed = fromHex(v.sealed_hex);
    const reader = readerKeypairFromSecret(fromHex(v.reader_x25519_secret_hex));
    expect(hex(reader.publicKey)).toBe(v.reader_x25519_public_hex);
    expect(hex(inputs.reader.secretKey)).toBe(v.reader_x25519_secret_hex);
    expect(v.recipient_wallet).toBe(inputs.recipientWallet);

    const opened = await openSealed(sealed, reader);
    expect(opened.envelope).toEqual({
      version: 1,
      from: v.envelope.from,
      to: v.envelope.to,
      receivedAt: v.envelope.received_at_ms,
    });
    expect(new TextDecoder().decode(opened.raw)).toBe(v.raw_text);
    expect(hex(await openContentKey(sealed, reader))).toBe(v.content_key_hex);

    // The layout of docs/sealing.md: 34 + 80n + |C| + 17k bytes, k chunks of chunk_size.
    const preamble = parsePreamble(sealed, true) as Preamble;
    expect(preamble.chunkSize).toBe(v.chunk_size);
    expect(preamble.wraps).toHaveLength(1);
    const contentLength = 13 + v.envelope.from.length + v.envelope.to.length + opened.raw.length;
    const k = Math.ceil(contentLength / v.chunk_size);
    expect(sealed.length).toBe(34 + 80 + contentLength + 17 * k);

    expect(await computeCid(sealed)).toBe(v.cid);
    expect(b3Marker(sealed)).toBe(v.b3_marker);
    expect(await checkCid(v.cid, sealed)).toBe('match');
    expect(await checkCid(v.b3_marker, sealed)).toBe('match');
  });
});

describe('docs/protocol.md quotes the vectors file', () => {
  it('every annotated byte block equals its vector', () => {
    const blocks = quotedBlocks();
    expect(blocks.length).toBeGreaterThanOrEqual(4);
    for (const b of blocks) {
      expect(b.hex, b.path).toMatch(/^[0-9a-f]+$/);
      expect(b.hex, b.path).toBe(lookup(b.path));
    }
  });

  it('every vector table row equals its vector', () => {
    const tables = quotedTables();
    expect(tables.length).toBeGreaterThanOrEqual(3);
    for (const t of tables) {
      const items = lookup(t.array) as Record<string, unknown>[];
      expect(t.rows.length, t.array).toBeGreaterThan(0);
      for (const row of t.rows) {
        const key = t.fields[0] ?? '';
        const item = items.find((it) => it[key] === row[0]);
        expect(item, `${t.array}: no entry with ${key} = ${JSON.stringify(row[0])}`).toBeDefined();
        t.fields.forEach((field, i) => {
          const want = item?.[field];
          expect(row[i], `${t.array} ${row[0]} ${field}`).toBe(
            typeof want === 'string' ? want : String(want),
          );
        });
      }
    }
  });

  it('every CID, b3 marker, 32-byte hex value and account address in the spec comes from the vectors file', () => {
    const known = allStrings(vectors);
    const hexValues = known.filter((s) => /^[0-9a-f]+$/.test(s));
    const tokens = [
      ...doc.matchAll(/\b(?:baf[a-z2-7]{56}|b3:[0-9a-f]{64}|[0-9a-f]{64}|[1-9A-HJ-NP-Za-km-z]{43,44})\b/g),
    ].map((m) => m[0]);
    expect(tokens.length).toBeGreaterThan(10);
    for (const t of tokens) {
      const found = known.includes(t) || (/^[0-9a-f]{64}$/.test(t) && hexValues.some((h) => h.includes(t)));
      expect(found, `${t} is quoted in docs/protocol.md but is no vector`).toBe(true);
    }
  });
});

/** The text of `## title` up to the next `## ` heading. */
function section(title: string): string {
  const start = doc.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`docs/protocol.md has no section ${title}`);
  const end = doc.indexOf('\n## ', start + 1);
  return doc.slice(start, end < 0 ? undefined : end);
}

/** The body rows of a markdown table (header and rule dropped), each as trimmed cells. */
function tableRows(table: string): string[][] {
  return table
    .trim()
    .split('\n')
    .slice(2)
    .map((line) =>
      line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    );
}

/** Splits at commas outside parentheses. */
function topLevelParts(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let at = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')') depth--;
    else if (text[i] === ',' && depth === 0) {
      parts.push(text.slice(at, i).trim());
      at = i + 1;
    }
  }
  parts.push(text.slice(at).trim());
  return parts.filter((p) => p !== '');
}

const snake = (name: string): string => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** A field type as the spec writes it: `u64`, `[32]`, `string`, `Option<u64>`. */
function typeText(t: FieldType): string {
  if (typeof t === 'object') return 'option' in t ? `Option<${typeText(t.option)}>` : `[${t.bytes}]`;
  return t === 'key' || t === 'hash' ? '[32]' : t;
}

const layoutOf = (kind: string) => {
  const layout = Object.values(ACCOUNT_LAYOUTS).find((l) => l.kind === kind);
  if (!layout)
    throw new Error(`docs/protocol.md names ${kind}, which chain/client/accounts has no layout for`);
  return layout;
};

/** The account's size as the spec writes it: the whole size, or the fixed part with a string's length prefix. */
const sizeText = (kind: string): string => {
  const l = layoutOf(kind);
  if (l.isFixed) return String(l.fixedSize);
  const tail = Object.keys(l.fields).at(-1) ?? '';
  return `${l.fixedSize + 4} + len(${snake(tail)})`;
};

describe('docs/protocol.md tables against the code', () => {
  it('every account layout table gives the codec’s tag, offsets and size', () => {
    const seen = new Set<string>();
    for (const m of doc.matchAll(
      /^#{3,4} (\d+ \w+ \(size [^)]*\)[^\n]*)\n\n(?:<!-- generated: [^>]* -->\n)?((?:\|.*\n)+)/gm,
    )) {
      const kinds = [...(m[1] ?? '').matchAll(/(\d+) (\w+) \(size ([^)]*\)?)\)/g)];
      const rows = tableRows(m[2] ?? '');
      expect(m[2], m[1]).toMatch(/^\| off /);
      kinds.forEach(([, tag, kind = '', size], alt) => {
        const layout = layoutOf(kind);
        seen.add(kind);
        expect(Number(tag), kind).toBe(layout.tag);
        expect(size, `${kind} size`).toBe(sizeText(kind));
        const want = [
          ['0', 'tag'],
          ...Object.entries(layout.offsets as Record<string, number>)
            .sort((a, b) => a[1] - b[1])
            .map(([field, off]) => [String(off), snake(field)]),
        ];
        const got = rows.map(([off = '', field = '']) => [off, field.split(' / ')[alt] ?? field]);
        expect(got, `${kind} offsets`).toEqual(want);
        const tagType = rows[0]?.[2] ?? '';
        if (tagType.includes('=')) expect(tagType, kind).toBe(`u8 = ${layout.tag}`);
      });
    }
    expect([...seen].sort()).toEqual(
      Object.values(ACCOUNT_LAYOUTS)
        .map((l) => l.kind)
        .sort(),
    );
  });

  it('the rent table is (128 + size) × 6960 of each kind’s size', () => {
    const table = /\| account +\| size +\| rent-exempt lamports[^\n]*\n((?:\|.*\n)+)/.exec(doc)?.[0] ?? '';
    const rows = tableRows(table);
    const names = new Set<string>();
    const lamports = (n: number) => ((128 + n) * 6960).toLocaleString('en-US');
    for (const [accounts = '', size = '', rent = ''] of rows) {
      for (const name of accounts.split(', ')) {
        const kind = name === 'Beacon' ? 'ParticipantBeacon' : name;
        names.add(kind);
        expect(size, kind).toBe(sizeText(kind));
      }
      const [base = '', tail] = size.split(' + ');
      expect(rent, accounts).toBe(
        tail ? `${lamports(Number(base))} + 6960 × ${tail}` : lamports(Number(base)),
      );
    }
    expect([...names].sort()).toEqual(
      Object.values(ACCOUNT_LAYOUTS)
        .map((l) => l.kind)
        .sort(),
    );
  });

  it('the instruction table gives every tag and argument of chain/client/instruction-data.ts', () => {
    const table =
      /\| tag \| instruction +\| args[^\n]*\n((?:\|.*\n)+)/.exec(section('Instructions'))?.[0] ?? '';
    const got = tableRows(table).map(([tag = '', name = '', args = '']) => {
      const parts = args === '—' ? [] : topLevelParts(args.replace(/\\/g, ''));
      return [name, Number(tag), parts.map((p) => p.split(' ').slice(0, 2).join(' '))];
    });
    const want = Object.values(INSTRUCTION_LAYOUTS).map((l) => [
      l.kind,
      l.tag,
      Object.entries(l.fields as Record<string, FieldType>).map(([f, t]) => `${snake(f)} ${typeText(t)}`),
    ]);
    const byTag = (a: unknown[], b: unknown[]) => (a[1] as number) - (b[1] as number);
    expect(got.sort(byTag)).toEqual(want.sort(byTag));
  });

  it('the error table is chain/errors.ts’s MAIL_ERRORS', () => {
    const table = /\| code \| name[^\n]*\n((?:\|.*\n)+)/.exec(section('Error codes'))?.[0] ?? '';
    const got = Object.fromEntries(
      tableRows(table).map(([code = '', name = '']) => [name.split(' ')[0], Number(code)]),
    );
    expect(got).toEqual(MAIL_ERRORS);
  });
});
