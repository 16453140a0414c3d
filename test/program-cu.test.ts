// The mail program's binary, its own hashing, and its compute costs:
// - the committed chain/program/mail_program.so is what the source builds to;
// - the C BLAKE3 / base58 (blake3.h, base58.h) agree with chain/hash.ts and
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
import { Keypair, type PublicKey, TransactionInstruction } from '@solana/web3.js';
import bs58 from 'bs58';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeAlias } from '../chain/accounts/index.ts';
import { blake3Text, fromHash, replyToHash } from '../chain/hash.ts';
import {
  addStampsInstruction,
  buyStampsInstruction,
  claimBountyInstruction,
  createAliasInstruction,
  createDomainInstruction,
  createFromboxInstruction,
  createMailboxInstruction,
  deleteMailInstruction,
  initPostofficeInstruction,
  publishKeyInstruction,
  reclaimFromboxStampsInstruction,
  removeKeyInstruction,
  sendMailInstruction,
  setMailboxFlagsInstruction,
  topUpStampsInstruction,
  updateFromboxInstruction,
} from '../chain/instructions.ts';
import { aliasAddress } from '../chain/pda.ts';
import { createRuntime, type Runtime } from '../chain/program/runtime.ts';
import { buildSbfProgram } from '../chain/program/tools/build.ts';
import { C_SOURCE, DOMAIN, expectOk, programSo, SO_PATH, World } from './program-world.ts';

const SEND_TARGET = 20_000;
const INSTRUCTION_TARGET = 50_000;
const SIZE_TARGET = 100 * 1024;
const CID = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy';

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
    expect(built.size).toBeLessThanOrEqual(SIZE_TARGET);
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
    const table: { instruction: string; computeUnits: number }[] = [];
    const w = new World({ seed: 42, setup: false });
    const programId = w.programId;
    const measure = (instruction: string, ...ixs: TransactionInstruction[]) => {
      const r = w.run(...ixs);
      expectOk(r);
      table.push({ instruction, computeUnits: r.computeUnits });
      return r.computeUnits;
    };
    const admin = w.wallet();
    w.delegate = w.wallet();
    w.authority = w.wallet();
    measure(
      'InitPostoffice',
      initPostofficeInstruction({
        programId,
        admin,
        delegateAddress: w.delegate,
        stampFeeLamports: 1_000n,
        settlementSurchargeLamports: 5_000n,
      }),
    );
    measure(
      'CreateDomain',
      createDomainInstruction({ programId, delegate: w.delegate, domain: DOMAIN, authority: w.authority }),
    );
    measure(
      'CreateDomain (253 bytes)',
      createDomainInstruction({
        programId,
        delegate: w.delegate,
        domain: `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`,
        authority: w.authority,
      }),
    );
    const owner = w.wallet();
    measure('CreateMailbox', createMailboxInstruction({ programId, owner }));
    const recipient = w.wallet();
    measure(
      'CreateMailbox (domain)',
      createMailboxInstruction({ programId, owner: recipient, domain: DOMAIN, defaultPostage: 10_000n }),
    );
    measure(
      'SetMailboxFlags',
      setMailboxFlagsInstruction({ programId, owner, noIpfs: false, defaultPostage: 0n }),
    );
    measure('PublishKey (create)', publishKeyInstruction({ programId, owner, pubKey: w.address() }));
    measure('PublishKey (replace)', publishKeyInstruction({ programId, owner, pubKey: w.address() }));
    measure('RemoveKey', removeKeyInstruction({ programId, owner }));
    measure('CreateAlias', createAliasInstruction({ programId, owner, name: 'bob' }));
    measure('CreateAlias (64 bytes)', createAliasInstruction({ programId, owner, name: 'b'.repeat(64) }));
    const sender = w.wallet();
    const fh = fromHash(sender);
    measure(
      'CreateFrombox',
      createFromboxInstruction({ programId, owner, fromHash: fh, requiredPostage: 0n }),
    );
    measure(
      'UpdateFrombox',
      updateFromboxInstruction({ programId, owner, fromHash: fh, requiredPostage: 0n }),
    );
    measure('BuyStamps', buyStampsInstruction({ programId, buyer: sender, recipient, stamps: 40n }));
    measure('TopUpStamps', topUpStampsInstruction({ programId, buyer: sender, recipient, stamps: 40n }));
    const relayedHash = fromHash('alice@ext.example');
    measure(
      'CreateFrombox (relayed sender)',
      createFromboxInstruction({
        programId,
        owner: recipient,
        fromHash: relayedHash,
        requiredPostage: 7_000n,
      }),
    );
    measure(
      'AddStamps',
      addStampsInstruction({ programId, payer: sender, recipient, fromHash: relayedHash, stamps: 40n }),
    );

    const sends: Record<string, number[]> = {};
    const send = (
      label: string,
      to: PublicKey,
      p: Partial<Parameters<typeof sendMailInstruction>[0]> = {},
    ) => {
      const index = w.mailbox(to).mailCount;
      const cu = measure(
        `SendMail (${label})`,
        sendMailInstruction({ programId, sender, recipient: to, index, fromHash: fh, cid: CID, ...p }),
      );
      const list = sends[label] ?? [];
      list.push(cu);
      sends[label] = list;
      return index;
    };
    // Each index derives its own Email PDA (its own bump search): many sends cover many bumps.
    const open = w.wallet();
    measure('CreateMailbox', createMailboxInstruction({ programId, owner: open }));
    for (let i = 0; i < 12; i++) send('direct, open mailbox', open);
    for (let i = 0; i < 12; i++) send('direct, allowlisted', owner);
    for (let i = 0; i < 12; i++) send('direct, stamp spent', recipient);
    for (let i = 0; i < 12; i++)
      send('relayed, stamp spent', recipient, { sender: w.authority, fromHash: relayedHash, domain: DOMAIN });
    const bountied = send('direct, bounty, reply', owner, {
      bountyLamports: 50_000n,
      expiresAt: w.now + 3600n,
      replyToHash: replyToHash(w.emailAddress(owner, 0n)),
    });
    send('direct, 128-byte cid', owner, { cid: 'x'.repeat(128) });
    measure('ClaimBounty', claimBountyInstruction({ programId, recipient: owner, index: bountied }));
    measure(
      'DeleteMail',
      deleteMailInstruction({ programId, signer: owner, recipient: owner, index: 0n, rentPayer: sender }),
    );
    measure('ReclaimFromboxStamps', reclaimFromboxStampsInstruction({ programId, sender, recipient }));

    const rows = new Map<string, number[]>();
    for (const { instruction, computeUnits } of table) {
      const list = rows.get(instruction) ?? [];
      list.push(computeUnits);
      rows.set(instruction, list);
    }
    const lines = [...rows].map(([name, cus]) => {
      const max = Math.max(...cus);
      const min = Math.min(...cus);
      return `${name.padEnd(34)} ${String(max).padStart(6)}${cus.length > 1 ? `  (min ${min}, ${cus.length} runs)` : ''}`;
    });
    console.log(`compute units per instruction (max):\n${lines.join('\n')}`);
    for (const { instruction, computeUnits } of table) {
      const target = instruction.startsWith('SendMail') ? SEND_TARGET : INSTRUCTION_TARGET;
      expect({ instruction, computeUnits, under: computeUnits <= target }).toMatchObject({ under: true });
    }
    expect(Object.keys(sends).length).toBe(6);
    expect(programSo().length).toBeLessThanOrEqual(SIZE_TARGET);
  });
});
