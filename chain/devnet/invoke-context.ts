// The InvokeContext a program sees for one instruction, and the bank-side
// rules it enforces on every write (Solana's account ownership rules plus the
// devnet contract extension: a program may debit a System-owned account that
// signed, credit any writable account, and take ownership of an empty
// System-owned account to create its PDAs).
import bs58 from 'bs58';
import { MAX_PERMITTED_DATA_LENGTH, rentExemptMinimum, SYSTEM_PROGRAM_ID, U64_MAX } from './constants.ts';
import { isOnCurve } from './ed25519.ts';
import { isKeyText } from './key-cache.ts';
import type { AccountState, Address, Clock, InstructionAccount, InvokeContext } from './program-api.ts';
import { InstructionFailure } from './tx-error.ts';

export const EMPTY_ACCOUNT: AccountState = Object.freeze({
  lamports: 0n,
  owner: SYSTEM_PROGRAM_ID,
  data: new Uint8Array(0),
  executable: false,
});

/** Reads and writes of the transaction's copy-on-write account view. */
export interface AccountsView {
  /** Current state (EMPTY_ACCOUNT when missing); callers never mutate it. */
  get(address: Address): AccountState;
  put(address: Address, state: AccountState): void;
}

export interface InstructionLogs {
  push(line: string): void;
}

interface AccountMeta {
  isSigner: boolean;
  isWritable: boolean;
}

export function isEmptyAccount(state: AccountState): boolean {
  return state.lamports === 0n && state.data.length === 0;
}

export function sameAccount(a: AccountState, b: AccountState): boolean {
  return (
    a.lamports === b.lamports &&
    a.owner === b.owner &&
    a.executable === b.executable &&
    a.data.length === b.data.length &&
    Buffer.compare(a.data, b.data) === 0
  );
}

function isZeroed(data: Uint8Array): boolean {
  for (const byte of data) if (byte !== 0) return false;
  return true;
}

function copyAccount(state: AccountState): AccountState {
  return {
    lamports: state.lamports,
    owner: state.owner,
    data: state.data.slice(),
    executable: state.executable,
  };
}

function checkShape(state: AccountState): void {
  if (typeof state.lamports !== 'bigint' || state.lamports < 0n || state.lamports > U64_MAX) {
    throw new InstructionFailure('ArithmeticOverflow', 'account lamports out of u64 range');
  }
  if (!(state.data instanceof Uint8Array)) throw new InstructionFailure('InvalidAccountData');
  if (state.data.length > MAX_PERMITTED_DATA_LENGTH) throw new InstructionFailure('InvalidRealloc');
  if (typeof state.owner !== 'string' || !isKeyText(state.owner))
    throw new InstructionFailure('InvalidAccountOwner', `invalid owner ${state.owner}`);
}

/** Enforces who may change what; `program` is the running program's id. */
function checkWrite(
  program: Address,
  address: Address,
  meta: AccountMeta,
  cur: AccountState,
  next: AccountState,
): void {
  if (!meta.isWritable) {
    throw new InstructionFailure(
      cur.lamports !== next.lamports ? 'ReadonlyLamportChange' : 'ReadonlyDataModified',
    );
  }
  if (cur.executable || next.executable) {
    if (cur.executable !== next.executable) throw new InstructionFailure('ExecutableModified');
    throw new InstructionFailure(
      cur.lamports !== next.lamports ? 'ExecutableLamportChange' : 'ExecutableDataModified',
    );
  }
  const debit = next.lamports < cur.lamports;
  const creating =
    program !== SYSTEM_PROGRAM_ID &&
    cur.owner === SYSTEM_PROGRAM_ID &&
    cur.data.length === 0 &&
    next.owner === program;
  if (creating) {
    // Taking over a funded wallet would be theft; a PDA (off-curve) or a
    // co-signing account may be adopted, an address with no lamports always.
    if (cur.lamports > 0n && !meta.isSigner && isOnCurve(bs58.decode(address))) {
      throw new InstructionFailure('ModifiedProgramId', `cannot assign funded wallet ${address}`);
    }
    if (debit && !meta.isSigner) throw new InstructionFailure('ExternalAccountLamportSpend');
    return;
  }
  if (cur.owner !== program) {
    if (next.owner !== cur.owner) throw new InstructionFailure('ModifiedProgramId');
    if (next.data.length !== cur.data.length || Buffer.compare(next.data, cur.data) !== 0) {
      throw new InstructionFailure('ExternalAccountDataModified');
    }
    if (debit && !(cur.owner === SYSTEM_PROGRAM_ID && meta.isSigner)) {
      throw new InstructionFailure('ExternalAccountLamportSpend');
    }
    return;
  }
  if (next.owner !== cur.owner && !isZeroed(next.data)) {
    // Handing an account to another program with data in it would let the
    // new owner inherit bytes it never wrote.
    throw new InstructionFailure('ModifiedProgramId', 'owner change requires zeroed data');
  }
}

export interface ContextArgs {
  programId: Address;
  accounts: InstructionAccount[];
  data: Uint8Array;
  clock: Clock;
  view: AccountsView;
  logs: InstructionLogs;
}

/** What built-in programs get: they log without the "Program log: " prefix, like native programs. */
export interface BuiltinContext extends InvokeContext {
  logRaw(line: string): void;
}

export function createInvokeContext(args: ContextArgs): BuiltinContext {
  const { programId, view, logs } = args;
  const metas = new Map<Address, AccountMeta>();
  for (const a of args.accounts) {
    const prev = metas.get(a.address);
    metas.set(a.address, {
      isSigner: a.isSigner || (prev?.isSigner ?? false),
      isWritable: a.isWritable || (prev?.isWritable ?? false),
    });
  }
  const clock = { slot: args.clock.slot, unixTimestamp: args.clock.unixTimestamp };
  return {
    programId,
    accounts: args.accounts.map((a) => ({ ...a })),
    data: args.data.slice(),
    clock,
    getAccount(address) {
      if (!metas.has(address) && address !== programId) {
        throw new InstructionFailure(
          'MissingAccount',
          `account ${address} was not passed to the instruction`,
        );
      }
      const state = view.get(address);
      if (isEmptyAccount(state)) return null;
      return copyAccount(state);
    },
    setAccount(address, state) {
      const meta = metas.get(address);
      if (!meta)
        throw new InstructionFailure(
          'MissingAccount',
          `account ${address} was not passed to the instruction`,
        );
      const next = state === null || isEmptyAccount(state) ? EMPTY_ACCOUNT : state;
      checkShape(next);
      const cur = view.get(address);
      if (sameAccount(cur, next)) return;
      checkWrite(programId, address, meta, cur, next);
      view.put(address, next === EMPTY_ACCOUNT ? EMPTY_ACCOUNT : copyAccount(next));
    },
    rentExemptMinimum: rentExemptMinimum,
    log(message) {
      logs.push(`Program log: ${message}`);
    },
    logRaw(line) {
      logs.push(line);
    },
  };
}

/** Sum of the lamports of the instruction's distinct accounts. */
export function instructionLamports(accounts: InstructionAccount[], view: AccountsView): bigint {
  let sum = 0n;
  for (const address of new Set(accounts.map((a) => a.address))) sum += view.get(address).lamports;
  return sum;
}
