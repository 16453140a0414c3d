// Transaction and instruction errors in the JSON shape a real node returns
// (serde's externally tagged enums: unit variants as strings, others as
// one-key objects), with the Display texts its logs and RPC errors carry.

export type InstructionErrorValue = string | { Custom: number } | { BorshIoError: string };

export type TransactionErrorJson =
  | string
  | { InstructionError: [number, InstructionErrorValue] }
  | { InsufficientFundsForRent: { account_index: number } }
  | { DuplicateInstruction: number };

const TX_MESSAGES: Record<string, string> = {
  AccountInUse: 'Account in use',
  AccountLoadedTwice: 'Account loaded twice',
  AccountNotFound: 'Attempt to debit an account but found no record of a prior credit.',
  ProgramAccountNotFound: 'Attempt to load a program that does not exist',
  InsufficientFundsForFee: 'Insufficient funds for fee',
  InvalidAccountForFee: 'This account may not be used to pay transaction fees',
  AlreadyProcessed: 'This transaction has already been processed',
  BlockhashNotFound: 'Blockhash not found',
  MissingSignatureForFee: 'Transaction requires a fee but has no signature present',
  InvalidAccountIndex: 'Transaction contains an invalid account reference',
  SignatureFailure: 'Transaction did not pass signature verification',
  InvalidProgramForExecution: 'This program may not be used for executing instructions',
  SanitizeFailure: 'Transaction failed to sanitize accounts offsets correctly',
  UnsupportedVersion: 'Transaction version is unsupported',
  InvalidWritableAccount: 'Transaction loads a writable account that cannot be written',
  AddressLookupTableNotFound: "Transaction loads an address table account that doesn't exist",
};

const IX_MESSAGES: Record<string, string> = {
  GenericError: 'generic instruction error',
  InvalidArgument: 'invalid program argument',
  InvalidInstructionData: 'invalid instruction data',
  InvalidAccountData: 'invalid account data for instruction',
  AccountDataTooSmall: 'account data too small for instruction',
  InsufficientFunds: 'insufficient funds for instruction',
  IncorrectProgramId: 'incorrect program id for instruction',
  MissingRequiredSignature: 'missing required signature for instruction',
  AccountAlreadyInitialized: 'instruction requires an uninitialized account',
  UninitializedAccount: 'instruction requires an initialized account',
  UnbalancedInstruction: 'sum of account balances before and after instruction do not match',
  ModifiedProgramId: 'instruction illegally modified the program id of an account',
  ExternalAccountLamportSpend: 'instruction spent from the balance of an account it does not own',
  ExternalAccountDataModified: 'instruction modified data of an account it does not own',
  ReadonlyLamportChange: 'instruction changed the balance of a read-only account',
  ReadonlyDataModified: 'instruction modified data of a read-only account',
  ExecutableModified: 'instruction changed executable bit of an account',
  ExecutableLamportChange: 'instruction changed the balance of an executable account',
  ExecutableDataModified: 'instruction modified data of an executable account',
  NotEnoughAccountKeys: 'insufficient account keys for instruction',
  MissingAccount: 'An account required by the instruction is missing',
  InvalidRealloc: 'Failed to reallocate account data',
  ArithmeticOverflow: 'Program arithmetic overflowed',
  ProgramFailedToComplete: 'Program failed to complete',
  InvalidAccountOwner: 'Invalid account owner',
};

export function instructionErrorMessage(err: InstructionErrorValue): string {
  if (typeof err === 'string') return IX_MESSAGES[err] ?? err;
  if ('Custom' in err) return `custom program error: 0x${err.Custom.toString(16)}`;
  return `Failed to serialize or deserialize account data: ${err.BorshIoError}`;
}

export function transactionErrorMessage(err: TransactionErrorJson): string {
  if (typeof err === 'string') return TX_MESSAGES[err] ?? err;
  if ('InstructionError' in err) {
    const [index, ixErr] = err.InstructionError;
    return `Error processing Instruction ${index}: ${instructionErrorMessage(ixErr)}`;
  }
  if ('InsufficientFundsForRent' in err) {
    return `Transaction results in an account (${err.InsufficientFundsForRent.account_index}) with insufficient funds for rent`;
  }
  return `Transaction contains a duplicate instruction (${err.DuplicateInstruction}) that is not allowed`;
}

/**
 * Thrown inside instruction processing for a failure the bank (not the
 * program) detects, e.g. a write to a read-only account; the executor turns
 * it into `{InstructionError: [index, variant]}`.
 */
export class InstructionFailure extends Error {
  constructor(
    readonly error: InstructionErrorValue,
    detail?: string,
  ) {
    super(detail ?? instructionErrorMessage(error));
    this.name = 'InstructionFailure';
  }
}

/** A transaction refused before it could pay its fee: it never lands. */
export class TransactionRefused extends Error {
  constructor(readonly error: TransactionErrorJson) {
    super(transactionErrorMessage(error));
    this.name = 'TransactionRefused';
  }
}
