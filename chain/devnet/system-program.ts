// The System program's instructions devnet runs: CreateAccount, Assign,
// Transfer, Allocate, with the checks, error codes and log texts of the real
// one (solana-program system_processor).
import bs58 from 'bs58';
import { MAX_PERMITTED_DATA_LENGTH, SYSTEM_PROGRAM_ID } from './constants.ts';
import type { BuiltinContext } from './invoke-context.ts';
import {
  type AccountState,
  type Address,
  type InvokeContext,
  type Program,
  ProgramError,
} from './program-api.ts';
import { InstructionFailure } from './tx-error.ts';

/** SystemError codes, as `{Custom: n}` in instruction errors. */
export const SystemError = {
  AccountAlreadyInUse: 0,
  ResultWithNegativeLamports: 1,
  InvalidProgramId: 2,
  InvalidAccountDataLength: 3,
} as const;

const EMPTY: AccountState = {
  lamports: 0n,
  owner: SYSTEM_PROGRAM_ID,
  data: new Uint8Array(0),
  executable: false,
};

class Args {
  private offset = 0;
  private readonly view: DataView;
  constructor(private readonly data: Uint8Array) {
    this.view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  }
  private need(n: number): void {
    if (this.offset + n > this.data.length) throw new InstructionFailure('InvalidInstructionData');
  }
  u32(): number {
    this.need(4);
    const v = this.view.getUint32(this.offset, true);
    this.offset += 4;
    return v;
  }
  u64(): bigint {
    this.need(8);
    const v = this.view.getBigUint64(this.offset, true);
    this.offset += 8;
    return v;
  }
  pubkey(): Address {
    this.need(32);
    const v = bs58.encode(this.data.subarray(this.offset, this.offset + 32));
    this.offset += 32;
    return v;
  }
}

function account(
  ctx: InvokeContext,
  index: number,
): { address: Address; isSigner: boolean; state: AccountState } {
  const meta = ctx.accounts[index];
  if (!meta) throw new InstructionFailure('NotEnoughAccountKeys');
  return { address: meta.address, isSigner: meta.isSigner, state: ctx.getAccount(meta.address) ?? EMPTY };
}

function log(ctx: InvokeContext, message: string): void {
  if ('logRaw' in ctx) (ctx as BuiltinContext).logRaw(message);
  else ctx.log(message);
}

function fail(ctx: InvokeContext, code: number, message: string): never {
  log(ctx, message);
  throw new ProgramError(code, message);
}

function requireSigner(ctx: InvokeContext, a: { address: Address; isSigner: boolean }, what: string): void {
  if (!a.isSigner) {
    log(ctx, `${what}: account ${a.address} must sign`);
    throw new InstructionFailure('MissingRequiredSignature');
  }
}

function transfer(ctx: InvokeContext, fromIndex: number, toIndex: number, lamports: bigint): void {
  const from = account(ctx, fromIndex);
  requireSigner(ctx, from, 'Transfer: `from`');
  if (from.state.data.length > 0) {
    log(ctx, 'Transfer: `from` must not carry data');
    throw new InstructionFailure('InvalidArgument');
  }
  if (lamports > from.state.lamports) {
    fail(
      ctx,
      SystemError.ResultWithNegativeLamports,
      `Transfer: insufficient lamports ${from.state.lamports}, need ${lamports}`,
    );
  }
  ctx.setAccount(from.address, { ...from.state, lamports: from.state.lamports - lamports });
  const to = account(ctx, toIndex);
  ctx.setAccount(to.address, { ...to.state, lamports: to.state.lamports + lamports });
}

function allocate(ctx: InvokeContext, index: number, space: bigint): void {
  const a = account(ctx, index);
  requireSigner(ctx, a, 'Allocate: `to`');
  if (a.state.data.length > 0 || a.state.owner !== SYSTEM_PROGRAM_ID) {
    fail(ctx, SystemError.AccountAlreadyInUse, `Allocate: account ${a.address} already in use`);
  }
  if (space > BigInt(MAX_PERMITTED_DATA_LENGTH)) {
    fail(
      ctx,
      SystemError.InvalidAccountDataLength,
      `Allocate: requested ${space}, max allowed ${MAX_PERMITTED_DATA_LENGTH}`,
    );
  }
  ctx.setAccount(a.address, { ...a.state, data: new Uint8Array(Number(space)) });
}

function assign(ctx: InvokeContext, index: number, owner: Address): void {
  const a = account(ctx, index);
  if (a.state.owner === owner) return;
  requireSigner(ctx, a, 'Assign:');
  ctx.setAccount(a.address, { ...a.state, owner });
}

function process(ctx: InvokeContext): void {
  const args = new Args(ctx.data);
  const tag = args.u32();
  switch (tag) {
    case 0: {
      const lamports = args.u64();
      const space = args.u64();
      const owner = args.pubkey();
      const to = account(ctx, 1);
      account(ctx, 0);
      if (to.state.lamports > 0n) {
        fail(ctx, SystemError.AccountAlreadyInUse, `Create Account: account ${to.address} already in use`);
      }
      allocate(ctx, 1, space);
      assign(ctx, 1, owner);
      transfer(ctx, 0, 1, lamports);
      return;
    }
    case 1:
      assign(ctx, 0, args.pubkey());
      return;
    case 2:
      transfer(ctx, 0, 1, args.u64());
      return;
    case 8:
      allocate(ctx, 0, args.u64());
      return;
    default:
      throw new InstructionFailure('InvalidInstructionData');
  }
}

export function createSystemProgram(): Program {
  return { programId: SYSTEM_PROGRAM_ID, process };
}
