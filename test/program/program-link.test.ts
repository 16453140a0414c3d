// The SBF toolchain end to end: clang-19 + our post-link step (elf-link.ts),
// deployed through the BPF Upgradeable Loader's real instructions into the
// real runtime (litesvm), then invoked: logs, PDAs, CPI into the System
// program (PDA-signed CreateAccount, Transfer), the clock, duplicate accounts,
// custom errors, compute units. Fixtures: test/fixtures/sbf/*.c.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Keypair, PublicKey, SystemProgram, TransactionInstruction } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  decodeLoaderState,
  elfLength,
  LOADER_ID,
  programDataAddress,
  rentExemptLamports,
} from '../../chain/client/loader.ts';
import { createRuntime, type RunResult, type Runtime } from '../../chain/program/host/runtime.ts';
import { buildSbfProgram } from '../../chain/program/tools/build.ts';
import { linkSbf } from '../../chain/program/tools/elf-link.ts';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'sbf');
let dir: string;
let so: Uint8Array;
let rt: Runtime;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'program-link-'));
  const built = await buildSbfProgram(join(FIXTURES, 'probe.c'), join(dir, 'probe.so'));
  so = new Uint8Array(await readFile(built.outFile));
  console.log(`probe.so: ${built.size} bytes (text ${built.textSize}, rodata ${built.rodataSize})`);
  rt = createRuntime({ so });
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const meta = (pubkey: PublicKey, isSigner: boolean, isWritable: boolean) => ({
  pubkey,
  isSigner,
  isWritable,
});
const call = (data: number[], keys: ReturnType<typeof meta>[] = []) =>
  new TransactionInstruction({ programId: rt.programId, keys, data: Buffer.from(data) });
const u64 = (n: bigint) => [...new Uint8Array(new BigUint64Array([n]).buffer)];
const view = (d: Uint8Array) => new DataView(d.buffer, d.byteOffset, d.byteLength);

/** The CU figure the runtime logged for the top-level invocation equals what the result reports. */
function loggedUnits(r: RunResult): number {
  const line = r.logs.find((l) => l.startsWith(`Program ${rt.programId.toBase58()} consumed `));
  return Number(/consumed (\d+) of/.exec(line ?? '')?.[1] ?? -1);
}

describe('elf-link output', () => {
  it('is an SBPFv0 shared object, byte-identical across builds', async () => {
    const again = await buildSbfProgram(join(FIXTURES, 'probe.c'), join(dir, 'probe-again.so'));
    expect(new Uint8Array(await readFile(again.outFile))).toEqual(so);
    const v = view(so);
    expect([...so.subarray(0, 4)]).toEqual([0x7f, 0x45, 0x4c, 0x46]);
    expect(v.getUint16(16, true)).toBe(3); // ET_DYN
    expect(v.getUint16(18, true)).toBe(247); // EM_BPF
    expect(v.getUint32(48, true)).toBe(0); // e_flags: SBPFv0
    expect(elfLength(so)).toBe(so.length);
    expect(again.syscalls).toEqual(
      expect.arrayContaining([
        'sol_log_',
        'sol_invoke_signed_c',
        'sol_try_find_program_address',
        'sol_get_clock_sysvar',
      ]),
    );
  });

  it('refuses a writable global with a clear message', async () => {
    await expect(buildSbfProgram(join(FIXTURES, 'writable-global.c'), join(dir, 'w.so'))).rejects.toThrow(
      /writable section \.bss \(holds `counter`\): SBF programs cannot have writable globals/,
    );
  });

  it('refuses input that is not a relocatable BPF object', () => {
    expect(() => linkSbf(new Uint8Array(16))).toThrow(/not an ELF file/);
    expect(() => linkSbf(so)).toThrow(/expected a relocatable object \(ET_REL\), got e_type 3/);
  });

  it('refuses a call to an undefined function that is not a syscall', async () => {
    await expect(buildSbfProgram(join(FIXTURES, 'undefined-call.c'), join(dir, 'u.so'))).rejects.toThrow(
      /undefined function `strlen` called at \.text\+0x[0-9a-f]+: only Solana syscalls/,
    );
  });
});

describe('deployment through the upgradeable loader', () => {
  it('leaves an executable program account and a ProgramData account holding the ELF', () => {
    const program = rt.account(rt.programId);
    expect(program?.executable).toBe(true);
    expect(program?.owner.equals(LOADER_ID)).toBe(true);
    const state = decodeLoaderState(program?.data ?? new Uint8Array());
    expect(state.kind).toBe('program');
    if (state.kind !== 'program') return;
    expect(state.programData.equals(programDataAddress(rt.programId))).toBe(true);
    const pd = rt.account(state.programData);
    expect(pd?.owner.equals(LOADER_ID)).toBe(true);
    const data = decodeLoaderState(pd?.data ?? new Uint8Array());
    expect(data.kind).toBe('programData');
    if (data.kind !== 'programData') return;
    expect(data.authority?.equals(rt.payer.publicKey)).toBe(true);
    expect(view(data.bytes).getUint16(18, true)).toBe(247);
    expect(data.bytes.subarray(0, elfLength(data.bytes))).toEqual(so);
  });
});

describe('the probe program in the runtime', () => {
  it('logs from rodata', () => {
    const r = rt.run([call([])]);
    expect(r.err).toBeNull();
    expect(r.logs).toContain('Program log: hello from C');
    expect(r.computeUnits).toBe(loggedUnits(r));
    expect(r.computeUnits).toBeGreaterThan(50);
    expect(r.computeUnits).toBeLessThan(1000);
    expect(r.fee).toBe(5000);
    const one = rt.run([call([], [meta(rt.payer.publicKey, false, false)])]);
    expect(one.logs).toContain('Program log: hello, one account');
  });

  it('creates a PDA account by CPI into the System program with PDA signer seeds', () => {
    const payer = rt.payer.publicKey;
    const [vault, bump] = PublicKey.findProgramAddressSync(
      [Buffer.from('vault'), payer.toBytes()],
      rt.programId,
    );
    const rent = rentExemptLamports(32);
    const before = rt.account(payer)?.lamports ?? 0n;
    const keys = [
      meta(payer, true, true),
      meta(vault, false, true),
      meta(SystemProgram.programId, false, false),
    ];
    const r = rt.run([call([1, ...u64(BigInt(rent))], keys)]);
    expect(r.err).toBeNull();
    expect(r.logs).toContain('Program 11111111111111111111111111111111 invoke [2]');
    expect(r.logs).toContain('Program log: vault created');
    // After the CPI: SolAccountInfo.data_len, the serialized length, owner == program, lamports.
    expect(r.logs).toContain(`Program log: 0x20, 0x20, 0x1, 0x${rent.toString(16)}, 0x0`);
    // find_program_address costs 1500 CU per bump tried, create_program_address 1500, the CPI and the rest ~2600.
    const rest = r.computeUnits - 1500 * (256 - bump) - 1500;
    expect(rest).toBeGreaterThan(1500);
    expect(rest).toBeLessThan(3500);
    const acct = rt.account(vault);
    expect(acct?.owner.equals(rt.programId)).toBe(true);
    expect(acct?.lamports).toBe(BigInt(rent));
    expect(acct?.data.length).toBe(32);
    expect(Buffer.from(acct?.data.subarray(0, 6) ?? []).toString('latin1')).toBe(
      `VAULT${String.fromCharCode(bump)}`,
    );
    expect(rt.account(payer)?.lamports).toBe(before - BigInt(rent) - BigInt(r.fee));

    expect(rt.run([call([1, ...u64(BigInt(rent))], keys)]).err?.message).toBe('AlreadyProcessed');
    rt.expireBlockhash();
    const again = rt.run([call([1, ...u64(BigInt(rent))], keys)]);
    expect(again.err?.instructionIndex).toBe(0);
    expect(again.err?.customCode).toBe(0); // SystemError::AccountAlreadyInUse, passed through the CPI
    expect(again.logs.some((l) => l.includes('already in use'))).toBe(true);
    expect(again.logs).not.toContain('Program log: the CPI returned an error'); // the caller did not resume
  });

  it('refuses an account that is not the PDA with its custom error', () => {
    const keys = [
      meta(rt.payer.publicKey, true, true),
      meta(Keypair.generate().publicKey, false, true),
      meta(SystemProgram.programId, false, false),
    ];
    const r = rt.run([call([1, ...u64(2_000_000n)], keys)]);
    expect(r.err).toEqual({
      message: 'InstructionError(0, Custom(2))',
      instructionIndex: 0,
      instructionError: 'Custom',
      customCode: 2,
    });
  });

  it('transfers by CPI from a signer, and cannot spend from a non-signer', () => {
    const to = Keypair.generate().publicKey;
    const payer = rt.payer.publicKey;
    const before = rt.account(payer)?.lamports ?? 0n;
    const sys = meta(SystemProgram.programId, false, false);
    const r = rt.run([call([2, ...u64(3_000_000n)], [meta(payer, true, true), meta(to, false, true), sys])]);
    expect(r.err).toBeNull();
    expect(r.computeUnits).toBeLessThan(3000);
    expect(rt.account(to)?.lamports).toBe(3_000_000n);
    expect(rt.account(payer)?.lamports).toBe(before - 3_000_000n - BigInt(r.fee));

    const victim = Keypair.generate().publicKey;
    rt.airdrop(victim, 5_000_000n);
    const stolen = rt.run([
      call([2, ...u64(1_000_000n)], [meta(victim, false, true), meta(to, false, true), sys]),
    ]);
    expect(stolen.err?.instructionError).toBe('PrivilegeEscalation');
    expect(rt.account(victim)?.lamports).toBe(5_000_000n);
  });

  it('reads the clock sysvar and sees duplicate accounts in the input', () => {
    const payer = rt.payer.publicKey;
    const [vault] = PublicKey.findProgramAddressSync([Buffer.from('vault'), payer.toBytes()], rt.programId);
    rt.setClock({ unixTimestamp: 1_800_000_000n });
    rt.warp(2, 1);
    const slot = rt.clock().slot;
    const other = Keypair.generate().publicKey;
    rt.airdrop(other, 123_456_789n);
    const r = rt.run([
      call([3], [meta(vault, false, true), meta(other, false, false), meta(vault, false, true)]),
    ]);
    expect(r.err).toBeNull();
    const d = rt.account(vault)?.data ?? new Uint8Array();
    expect(view(d).getBigUint64(8, true)).toBe(slot);
    expect(view(d).getBigInt64(16, true)).toBe(1_800_000_001n);
    expect([...d.subarray(24, 27)]).toEqual([0, 0, 0]); // account 2 duplicates account 0; account 1: not signer, not writable
    expect(view(d).getUint32(27, true) + (d[31] ?? 0) * 2 ** 32).toBe(123_456_789); // its lamports, read past the 10 KiB padding
    expect(r.logs).toContain(
      `Program log: 0x${slot.toString(16)}, 0x6b49d201, 0x0, 0x3, 0x${(123_456_789).toString(16)}`,
    );
  });

  it('moves lamports out of a program-owned account by writing balances; draining it closes it', () => {
    const [vault] = PublicKey.findProgramAddressSync(
      [Buffer.from('vault'), rt.payer.publicKey.toBytes()],
      rt.programId,
    );
    const to = Keypair.generate().publicKey;
    rt.airdrop(to, 1_000_000n);
    rt.airdrop(vault, 1_000n); // above its rent-exempt minimum, so 100 can leave
    const start = rt.account(vault)?.lamports ?? 0n;
    const keys = [meta(vault, false, true), meta(to, false, true)];
    expect(rt.run([call([6, ...u64(100n)], keys)]).err).toBeNull();
    expect(rt.account(vault)?.lamports).toBe(start - 100n);
    expect(rt.account(to)?.lamports).toBe(1_000_100n);
    // Left below rent exemption (but not empty), the transaction fails.
    const below = rt.run([call([6, ...u64(start - 2_000n)], keys)]);
    expect(below.err?.message).toMatch(/^InsufficientFundsForRent \{ account_index: \d+ \}$/);
    const all = rt.run([call([6, ...u64(start - 100n)], keys)]);
    expect(all.err).toBeNull();
    expect(rt.account(vault)).toBeNull();
    expect(rt.account(to)?.lamports).toBe(1_000_000n + start);
    // A System account cannot be debited by the program.
    const foreign = rt.run([call([6, ...u64(1n)], [meta(to, false, true), meta(vault, false, true)])]);
    expect(foreign.err?.instructionError).toBe('ExternalAccountLamportSpend');
  });

  it('calls through a const table of function pointers and into another code section', () => {
    expect(rt.run([call([7, 0, 9])]).logs).toContain('Program log: 0x12, 0x64, 0x0, 0x0, 0x0');
    expect(rt.run([call([7, 1, 9])]).logs).toContain('Program log: 0x51, 0x64, 0x0, 0x0, 0x0');
  });

  it('has 32 KiB of zeroed heap at 0x300000000', () => {
    expect(rt.run([call([8, ...u64(0n)])]).logs).toContain('Program log: 0x0, 0xab, 0x0, 0x0, 0x0');
    rt.expireBlockhash();
    expect(rt.run([call([8, ...u64(0n)])]).logs).toContain('Program log: 0x0, 0xab, 0x0, 0x0, 0x0'); // fresh again
    expect(rt.run([call([8, ...u64(32_767n)])]).logs).toContain('Program log: 0x0, 0xab, 0x0, 0x0, 0x0');
    const outside = rt.run([call([8, ...u64(32_768n)])]);
    expect(outside.err?.instructionError).toBe('ProgramFailedToComplete');
    expect(outside.logs.some((l) => l.includes('Access violation'))).toBe(true);
  });

  it('returns custom error codes and runs a frame bigger than 512 bytes', () => {
    const r = rt.run([call([4, ...u64(12345n)])]);
    expect(r.err?.message).toBe('InstructionError(0, Custom(12345))');
    expect(r.err?.customCode).toBe(12345);
    expect(r.logs.at(-1)).toBe(`Program ${rt.programId.toBase58()} failed: custom program error: 0x3039`);

    // Builtin errors are the error's number shifted left by 32; Custom(0) is 1 << 32.
    const code = (n: bigint) => rt.run([call([4, ...u64(n)])]).err?.message;
    expect(code(1n << 32n)).toBe('InstructionError(0, Custom(0))');
    expect(code(2n << 32n)).toBe('InstructionError(0, InvalidArgument)');
    expect(code(3n << 32n)).toBe('InstructionError(0, InvalidInstructionData)');
    expect(code(4n << 32n)).toBe('InstructionError(0, InvalidAccountData)');
    expect(code(8n << 32n)).toBe('InstructionError(0, MissingRequiredSignature)');

    let sum = 0;
    for (let i = 0; i < 3000; i += 3) sum += (9 + i * 7) & 0xff;
    const big = rt.run([call([5, 9])]);
    expect(big.err).toBeNull();
    expect(big.logs).toContain(`Program log: 0x${sum.toString(16)}, 0x0, 0x0, 0x0, 0x0`);
    expect(big.computeUnits).toBe(loggedUnits(big));
  });
});
