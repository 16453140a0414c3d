// The program interface is written once (chain/protocol/schema.ts) and
// rendered into the C header, docs/protocol.md's tables and the Codama IDL:
// each generated file must be what the schema renders now (else `npm run
// gen:protocol`), the IDL must pass Codama's own validators, and the C
// header's offsets must be the TypeScript codecs' (two renderings of one
// schema by separate code), so the program and the clients cannot disagree.
import { readFileSync } from 'node:fs';
import { getValidationItemsVisitor } from '@codama/validators';
import { visit } from '@codama/visitors-core';
import { describe, expect, it } from 'vitest';
import { ACCOUNT_LAYOUTS } from '../../chain/client/accounts/index.ts';
import { INSTRUCTION_LAYOUTS } from '../../chain/client/instruction-data.ts';
import { generatedFiles } from '../../chain/protocol/gen/files.ts';
import { renderHeader, upperSnake } from '../../chain/protocol/gen/render-c.ts';
import { rewriteProtocolDocs } from '../../chain/protocol/gen/render-docs.ts';
import { renderIdl } from '../../chain/protocol/gen/render-idl.ts';
import { ACCOUNTS, ERRORS, INSTRUCTIONS, SEEDS } from '../../chain/protocol/schema.ts';

const read = (path: string): string | null => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
};

const defines = (text: string): Map<string, string> =>
  new Map(
    [...text.matchAll(/^#define (\w+) (\S+(?: << \d+\))?)/gm)].map((m) => [m[1] as string, m[2] as string]),
  );

describe('the generated protocol files', () => {
  it('are what the schema renders (run `npm run gen:protocol` when this fails)', () => {
    const files = generatedFiles(read);
    expect(files.map((f) => f.name).sort()).toEqual([
      'chain/program/src/generated/accounts.h',
      'chain/program/src/generated/args.h',
      'chain/program/src/generated/decode.h',
      'chain/program/src/generated/dispatch.h',
      'chain/program/src/generated/interface.h',
      'chain/protocol/idl.json',
      'docs/protocol.md',
    ]);
    for (const f of files) {
      expect(f.problems, f.name).toEqual([]);
      expect(f.before === f.after, `${f.name} is stale: ${f.detail}; run npm run gen:protocol`).toBe(true);
    }
  });

  it('notice a hand edit inside a generated table, and a table without its marker', () => {
    const docs = read('docs/protocol.md') ?? '';
    const edited = docs.replace(
      '| 1 | Mailbox | `["mailbox", owner]` |',
      '| 1 | Mailbox | `["mbox", owner]` |',
    );
    expect(edited).not.toBe(docs);
    expect(rewriteProtocolDocs(edited).stale).toEqual(['protocol-accounts']);
    const unmarked = docs.replace(/<!-- generated: protocol-errors -->\n[\s\S]*?<!-- end generated -->/, '');
    expect(rewriteProtocolDocs(unmarked).missing).toEqual(['protocol-errors']);
  });

  it('give the C program the codecs’ tags, sizes and offsets', () => {
    const h = defines(renderHeader());
    for (const [kind, spec] of Object.entries(ACCOUNTS)) {
      const layout = ACCOUNT_LAYOUTS[kind as keyof typeof ACCOUNTS];
      expect(h.get(spec.c.tag), kind).toBe(String(layout.tag));
      expect(h.get(spec.c.size), kind).toBe(String(layout.fixedSize));
      for (const [field, off] of Object.entries(layout.offsets as Record<string, number>)) {
        const c = (spec.fields as Record<string, { c: string }>)[field]?.c;
        expect(h.get(`${spec.c.prefix}_${c}`), `${kind}.${field}`).toBe(String(off));
      }
    }
    for (const [kind, layout] of Object.entries(INSTRUCTION_LAYOUTS)) {
      expect(renderHeader()).toContain(`IX_${upperSnake(kind)} = ${layout.tag},`);
    }
    for (const [name, spec] of Object.entries(ERRORS)) {
      expect(h.get(spec.c), name).toBe(spec.code === 0 ? '(1ULL << 32)' : `${spec.code}ULL`);
    }
  });

  it('keep tags, codes, names and seed prefixes unique', () => {
    const unique = (xs: readonly unknown[]) => expect(new Set(xs).size).toBe(xs.length);
    unique(Object.values(ACCOUNTS).map((a) => a.tag));
    unique(Object.values(INSTRUCTIONS).map((i) => i.tag));
    unique(Object.values(ERRORS).map((e) => e.code));
    unique(Object.values(SEEDS).map((s) => s.prefix));
    for (const [kind, spec] of Object.entries(INSTRUCTIONS)) {
      const names = spec.accounts.map((a) => a.name);
      expect(new Set(names).size, kind).toBe(names.length);
      // Only trailing accounts may be conditional: the program finds the others by position.
      const firstOptional = spec.accounts.findIndex((a) => 'when' in a);
      if (firstOptional >= 0)
        expect(
          spec.accounts.slice(firstOptional).every((a) => 'when' in a),
          kind,
        ).toBe(true);
    }
  });
});

describe('the IDL', () => {
  it('passes Codama’s validators and names every account, instruction, PDA and error', () => {
    const idl = renderIdl();
    const items = visit(idl, getValidationItemsVisitor());
    expect(items.filter((i) => i.level === 'error').map((i) => i.message)).toEqual([]);
    expect(idl.program.accounts).toHaveLength(Object.keys(ACCOUNTS).length);
    expect(idl.program.instructions).toHaveLength(Object.keys(INSTRUCTIONS).length);
    expect(idl.program.pdas).toHaveLength(Object.keys(SEEDS).length);
    expect((idl.program.errors ?? []).map((e) => e.code)).toEqual(Object.values(ERRORS).map((e) => e.code));
    const sendMail = (idl.program.instructions ?? []).find((i) => i.name === 'sendMail');
    expect((sendMail?.accounts ?? []).map((a) => [a.name, a.isSigner, a.isWritable, a.isOptional])).toEqual(
      INSTRUCTIONS.SendMail.accounts.map((a) => [a.name, a.signer, a.writable, 'when' in a]),
    );
  });
});
