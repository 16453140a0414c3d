// The contract between devnet's bank (transactions, signatures, fees, rent,
// persistence) and the programs it runs (System, the mail program). A program
// sees one instruction at a time; the bank applies a whole transaction
// atomically, so a program may throw at any point without leaving partial state.

/** 32-byte public key as base58 text; the bank's map key. */
export type Address = string;

export interface AccountState {
  lamports: bigint;
  /** base58 program id that owns the account. */
  owner: Address;
  data: Uint8Array;
  executable: boolean;
}

export interface InstructionAccount {
  address: Address;
  isSigner: boolean;
  isWritable: boolean;
}

export interface Clock {
  slot: bigint;
  /** Unix seconds of the current slot. */
  unixTimestamp: bigint;
}

export interface InvokeContext {
  programId: Address;
  accounts: InstructionAccount[];
  data: Uint8Array;
  clock: Clock;
  /** Current state of an account, or null when it does not exist (no lamports, no data). */
  getAccount(address: Address): AccountState | null;
  /**
   * Writes an account. The bank rejects the transaction if the account was not
   * passed writable, if the program does not own it (data/owner change) or,
   * for lamport debits, if it neither owns it nor is the System program.
   * Passing null (or zero lamports with empty data) closes the account.
   */
  setAccount(address: Address, state: AccountState | null): void;
  /** Minimum balance for rent exemption of an account holding `dataLength` bytes. */
  rentExemptMinimum(dataLength: number): bigint;
  /** Appends a program log line ("Program log: …" is added by the bank). */
  log(message: string): void;
}

/** A program error: the transaction fails with `custom program error: 0x<code>`. */
export class ProgramError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'ProgramError';
  }
}

export interface Program {
  readonly programId: Address;
  /** Runs one instruction; throws ProgramError (or any Error) to fail the transaction. */
  process(ctx: InvokeContext): void;
}
