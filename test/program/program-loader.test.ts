// The BPF Upgradeable Loader builders (chain/client/loader.ts) against the
// real loader in litesvm: Write chunk size at the transaction limit, resuming a
// partly written buffer, Upgrade, SetAuthority, Close, ExtendProgram, and a
// genesis-style deploy to a program id without its key.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Keypair, PublicKey, Transaction, TransactionInstruction } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withComputeBudget } from '../../chain/client/compute-budget.ts';
import {
  BUFFER_METADATA_SIZE,
  close,
  createBuffer,
  decodeLoaderState,
  deployWithMaxDataLen,
  elfLength,
  extendProgram,
  LOADER_ID,
  MAX_WRITE_CHUNK,
  PROGRAMDATA_METADATA_SIZE,
  programDataAddress,
  setAuthority,
  upgrade,
  write,
  writeChunks,
} from '../../chain/client/loader.ts';
import { createRuntime, type Runtime } from '../../chain/program/host/runtime.ts';
import { buildSbfProgram } from '../../chain/program/tools/build.ts';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'sbf');
let dir: string;
let hello: Uint8Array;
let probe: Uint8Array;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'program-loader-'));
  hello = new Uint8Array(
    await readFile((await buildSbfProgram(join(FIXTURES, 'hello.c'), join(dir, 'h.so'))).outFile),
  );
  probe = new Uint8Array(
    await readFile((await buildSbfProgram(join(FIXTURES, 'probe.c'), join(dir, 'p.so'))).outFile),
  );
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const invoke = (rt: Runtime) =>
  rt.run([new TransactionInstruction({ programId: rt.programId, keys: [], data: Buffer.alloc(0) })]);

/** Creates a buffer holding `so` (optionally only its first `upTo` bytes), authority = payer. */
function fillBuffer(rt: Runtime, so: Uint8Array, upTo = so.length): PublicKey {
  const buffer = Keypair.generate();
  const p = rt.payer.publicKey;
  const create = createBuffer({ payer: p, buffer: buffer.publicKey, authority: p, programLen: so.length });
  expect(rt.run(create, [buffer]).err).toBeNull();
  for (const w of writeChunks(buffer.publicKey, p, so.subarray(0, upTo))) expect(rt.run([w]).err).toBeNull();
  return buffer.publicKey;
}

describe('Write chunks', () => {
  it('MAX_WRITE_CHUNK fills a 1232-byte transaction with one signer and the budget instructions exactly', () => {
    const payer = Keypair.generate();
    const tx = (n: number) => {
      const t = new Transaction({ feePayer: payer.publicKey, recentBlockhash: PublicKey.default.toBase58() });
      const w = write(Keypair.generate().publicKey, payer.publicKey, 123_456, new Uint8Array(n));
      t.add(...withComputeBudget([w], 2n ** 63n));
      t.sign(payer);
      return t.serialize();
    };
    expect(tx(MAX_WRITE_CHUNK).length).toBe(1232);
    expect(() => tx(MAX_WRITE_CHUNK + 1)).toThrow(/too large/i);
  });
});

describe('the loader lifecycle', () => {
  it('resumes a partly written buffer, deploys, upgrades, changes and removes the authority', () => {
    const rt = createRuntime({ so: hello, maxDataLen: 16_384 });
    expect(invoke(rt).logs).toContain('Program log: hello v2');
    const p = rt.payer.publicKey;

    // A buffer interrupted after the first chunk: its bytes say where to resume.
    const buffer = fillBuffer(rt, probe, MAX_WRITE_CHUNK);
    const state = decodeLoaderState(rt.account(buffer)?.data ?? new Uint8Array());
    expect(state.kind).toBe('buffer');
    if (state.kind !== 'buffer') return;
    expect(state.authority?.equals(p)).toBe(true);
    expect(state.bytes.length).toBe(probe.length);
    expect(state.bytes.subarray(0, MAX_WRITE_CHUNK)).toEqual(probe.subarray(0, MAX_WRITE_CHUNK));
    expect(state.bytes.subarray(MAX_WRITE_CHUNK).every((b) => b === 0)).toBe(true);
    for (const w of writeChunks(buffer, p, probe, MAX_WRITE_CHUNK)) expect(rt.run([w]).err).toBeNull();

    const spill = Keypair.generate().publicKey;
    const bufferLamports = rt.account(buffer)?.lamports ?? 0n;
    const up = rt.run([upgrade({ programId: rt.programId, buffer, authority: p, spill })]);
    expect(up.err).toBeNull();
    expect(rt.account(buffer)).toBeNull();
    expect(rt.account(spill)?.lamports).toBe(bufferLamports);
    rt.warp();
    expect(invoke(rt).logs).toContain('Program log: hello from C');
    const pd = decodeLoaderState(rt.account(rt.programData)?.data ?? new Uint8Array());
    if (pd.kind !== 'programData') throw new Error('expected ProgramData');
    expect(pd.bytes.length).toBe(16_384);
    expect(pd.bytes.subarray(0, elfLength(pd.bytes))).toEqual(probe);
    expect(pd.slot).toBe(rt.clock().slot - 1n);

    const next = Keypair.generate();
    expect(rt.run([setAuthority(rt.programData, p, next.publicKey)]).err).toBeNull();
    const moved = decodeLoaderState(rt.account(rt.programData)?.data ?? new Uint8Array());
    expect(moved.kind === 'programData' && moved.authority?.equals(next.publicKey)).toBe(true);
    expect(rt.run([setAuthority(rt.programData, next.publicKey, null)], [next]).err).toBeNull();
    const frozen = decodeLoaderState(rt.account(rt.programData)?.data ?? new Uint8Array());
    expect(frozen.kind === 'programData' && frozen.authority === null).toBe(true);
    const again = fillBuffer(rt, hello);
    const refused = rt.run([upgrade({ programId: rt.programId, buffer: again, authority: p, spill })]);
    expect(refused.err?.instructionError).toBe('Immutable');
  });

  it('closes a buffer and extends a program', () => {
    const rt = createRuntime({ so: hello });
    const p = rt.payer.publicKey;
    const buffer = fillBuffer(rt, hello);
    const lamports = rt.account(buffer)?.lamports ?? 0n;
    const to = Keypair.generate().publicKey;
    expect(rt.run([close({ account: buffer, recipient: to, authority: p })]).err).toBeNull();
    expect(rt.account(buffer)).toBeNull();
    expect(rt.account(to)?.lamports).toBe(lamports);

    const before = rt.account(rt.programData)?.data.length ?? 0;
    expect(before).toBe(PROGRAMDATA_METADATA_SIZE + hello.length);
    expect(rt.run([extendProgram(rt.programId, p, 10_240)]).err).toBeNull();
    expect(rt.account(rt.programData)?.data.length).toBe(before + 10_240);
  });

  it('deploys to a program id whose key it does not hold (genesis style)', () => {
    const programId = Keypair.generate().publicKey;
    const rt = createRuntime({ so: hello, programId });
    expect(rt.programId.equals(programId)).toBe(true);
    expect(rt.programData.equals(programDataAddress(programId))).toBe(true);
    const acct = rt.account(programId);
    expect(acct?.executable).toBe(true);
    expect(acct?.owner.equals(LOADER_ID)).toBe(true);
    expect(invoke(rt).logs).toContain('Program log: hello v2');
  });

  it('refuses a deploy whose authority differs from the buffer authority', () => {
    const rt = createRuntime({ so: hello });
    const buffer = fillBuffer(rt, hello);
    const program = Keypair.generate();
    const other = Keypair.generate();
    rt.airdrop(other.publicKey, 1_000_000_000n);
    const ixs = deployWithMaxDataLen({
      payer: rt.payer.publicKey,
      programId: program.publicKey,
      buffer,
      authority: other.publicKey,
      maxDataLen: hello.length,
    });
    const r = rt.run(ixs, [program, other]);
    expect(r.err?.instructionIndex).toBe(1);
    expect(r.err?.instructionError).toBe('IncorrectAuthority');
    expect(BUFFER_METADATA_SIZE).toBe(37);
  });
});
