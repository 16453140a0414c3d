// The mail program's binary, its own hashing, and its compute costs:
// - the committed chain/program/mail_program.so is what the source builds to;
// - the C BLAKE3 / base58 (blake3.h, base58.h) agree with chain/client/hash.ts and
//   bs58, through a probe program built from the same headers and through the
//   PDAs the mail program derives from long names;
// - a table of compute units per instruction, asserted under the targets
//   (SendMail <= 20,000, every instruction <= 50,000; deterministic keys, so
//   deterministic costs).
import { Buffer } from 'node:buffer';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { blake3 } from '@noble/hashes/blake3.js';
import { Keypair, TransactionInstruction } from '@solana/web3.js';
import bs58 from 'bs58';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeAlias } from '../../chain/client/accounts/index.ts';
import { blake3Text } from '../../chain/client/hash.ts';
import { createAliasInstruction, createDomainInstruction } from '../../chain/client/instructions.ts';
import { aliasAddress } from '../../chain/client/pda.ts';
import {
  CU_BASELINE,
  measureComputeUnits,
  PROGRAM_SIZE_TARGET,
  SEND_MAIL_TARGET,
} from '../../chain/program/host/compute-units.ts';
import { createRuntime, type Runtime } from '../../chain/program/host/runtime.ts';
import { buildSbfProgram } from '../../chain/program/tools/build.ts';
import { C_SOURCE, expectOk, programSo, SO_PATH, World } from '../support/program-world.ts';

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'mail-program-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('the committed binary', () => {
  it('is byte-identical to a fresh build of the source, and under 100 KB', async () => {
    const out = join(tmp, 'mail_program.so');
    const built = await buildSbfProgram(C_SOURCE, out);
    expect(Buffer.compare(readFileSync(out), readFileSync(SO_PATH))).toBe(0);
    expect(built.size).toBeLessThanOrEqual(PROGRAM_SIZE_TARGET);
    expect(built.syscalls).not.toContain('sol_blake3');
  });
});

describe('BLAKE3 and base58 in C', () => {
  let rt: Runtime;
  beforeAll(async () => {
    const out = join(tmp, 'probe.so');
    await buildSbfProgram(C_SOURCE.replace(/mail\.c$/, 'probe.c'), out);
    rt = createRuntime({ so: new Uint8Array(readFileSync(out)) });
  });

  const probe = (data: Uint8Array) => {
    const ix = new TransactionInstruction({ programId: rt.programId, keys: [], data: Buffer.from(data) });
    return rt.run([ix]);
  };
  const cat = (...parts: Uint8Array[]) => Uint8Array.from(parts.flatMap((p) => [...p]));

  it('hashes like @noble/hashes across block and chunk boundaries (up to two chunks)', () => {
    const lengths = [0, 1, 3, 31, 32, 44, 63, 64, 65, 127, 128, 129, 253, 512, 1000, 1023, 1024, 1025, 1029];
    for (const n of lengths) {
      const input = Uint8Array.from({ length: n }, (_, i) => (i * 7 + n) & 0xff);
      const r = probe(cat(Uint8Array.of(0), blake3(input), input));
      expect({ n, ok: r.ok, err: r.err?.message }).toEqual({ n, ok: true, err: undefined });
      const wrong = blake3(input);
      wrong[0] = (wrong[0] as number) ^ 1;
      expect(probe(cat(Uint8Array.of(0), wrong, input)).err?.customCode).toBe(1);
    }
  });

  it('encodes keys in base58 like bs58, leading zero bytes included', () => {
    const keys = [
      new Uint8Array(32),
      Uint8Array.from({ length: 32 }, (_, i) => (i < 3 ? 0 : i * 13)),
      new Uint8Array(32).fill(0xff),
      Uint8Array.from({ length: 32 }, (_, i) => (i === 31 ? 1 : 0)),
      ...Array.from({ length: 8 }, () => Keypair.generate().publicKey.toBytes()),
    ];
    for (const k of keys) {
      const text = new TextEncoder().encode(bs58.encode(k));
      const r = probe(cat(Uint8Array.of(1), k, text));
      expect({ key: bs58.encode(k), ok: r.ok }).toEqual({ key: bs58.encode(k), ok: true });
    }
  });

  it('recognizes key-shaped text like bs58 decoding to 32 bytes', () => {
    const texts = [
      'z'.repeat(43),
      'z'.repeat(44),
      'z'.repeat(45),
      '1'.repeat(32),
      '1'.repeat(31),
      bs58.encode(new Uint8Array(32).fill(0xff)),
      `${bs58.encode(new Uint8Array(32).fill(0xff))}1`,
      Keypair.generate().publicKey.toBase58(),
      'abcdefghijkmnopqrstuvwxyz123456789abcd',
      'bob',
      'l'.repeat(40),
    ];
    for (const t of texts) {
      const decoded = (() => {
        try {
          return bs58.decode(t).length === 32;
        } catch {
          return false;
        }
      })();
      const r = probe(cat(Uint8Array.of(2, decoded ? 1 : 0), new TextEncoder().encode(t)));
      expect({ t, ok: r.ok }).toEqual({ t, ok: true });
    }
  });

  it('derives domain and alias PDAs from long names as the client does', () => {
    const w = new World({ seed: 7 });
    const label = (n: number) => 'a'.repeat(n);
    const names = [
      'x',
      `${label(60)}.io`,
      `${label(61)}.io`,
      `${label(62)}.io`,
      `${label(63)}.${label(63)}`,
      `${label(63)}.${label(63)}.${label(63)}.${label(61)}`,
    ];
    for (const domain of names) {
      const r = w.run(
        createDomainInstruction({
          programId: w.programId,
          delegate: w.delegate,
          domain,
          authority: w.authority,
        }),
      );
      expectOk(r);
      expect(w.domain(domain).nameHash).toEqual(blake3Text(domain));
    }
    expect(names.at(-1)?.length).toBe(253);
    const owner = w.user();
    const alias = `${'q'.repeat(40)}.${'r'.repeat(23)}`;
    expect(alias.length).toBe(64);
    expectOk(w.run(createAliasInstruction({ programId: w.programId, owner, name: alias })));
    const stored = decodeAlias(w.data(aliasAddress(w.programId, alias)[0]) as Uint8Array);
    expect(stored.nameHash).toEqual(blake3Text(alias));
  });
});

describe('compute units', () => {
  it('stays under the targets for every instruction', () => {
    const rows = measureComputeUnits({ runs: 12 });
    const lines = rows.map(({ name, computeUnits: cus }) => {
      const max = Math.max(...cus);
      const min = Math.min(...cus);
      return `${name.padEnd(40)} ${String(max).padStart(6)}${cus.length > 1 ? `  (min ${min}, ${cus.length} runs)` : ''}`;
    });
    console.log(`compute units per instruction (max):\n${lines.join('\n')}`);
    for (const { name, computeUnits, target } of rows)
      expect({
        name,
        max: Math.max(...computeUnits),
        under: Math.max(...computeUnits) <= target,
      }).toMatchObject({
        under: true,
      });
    expect(rows.filter((r) => r.instruction === 'SendMail').length).toBe(11);
    // 28 instructions (0–27), the attestation block's 4 (28–31), SetMailboxDomain (32), the alias
    // marketplace's 8, the domain marketplace's 3 and the postoffice admin's 4 (50–53).
    expect(new Set(rows.map((r) => r.instruction)).size).toBe(48);
    expect(rows.find((r) => r.instruction === 'SendMail')?.target).toBe(SEND_MAIL_TARGET);
    expect(programSo().length).toBeLessThanOrEqual(PROGRAM_SIZE_TARGET);
    // Within 5 % of the committed table, row by row: a refactor may not cost (or hide) compute.
    const baseline = JSON.parse(readFileSync(CU_BASELINE, 'utf8')) as { rows: Record<string, number> };
    expect(rows.map((r) => r.name).sort()).toEqual(Object.keys(baseline.rows).sort());
    const drifted = rows
      .map((r) => ({ name: r.name, was: baseline.rows[r.name] ?? 0, now: Math.max(...r.computeUnits) }))
      .filter((r) => Math.abs(r.now - r.was) > r.was * 0.05);
    expect(
      drifted,
      'rewrite chain/program/compute-units.json (npm run bench:program -- --write-baseline) only for a deliberate change',
    ).toEqual([]);
    // About 9 s of CPU in one go: on a loaded 2-core machine it has come within a few seconds of vitest's 30 s default.
  }, 120_000);
});
