// Transaction and instruction errors in the JSON shape a real node returns
// (serde's externally tagged enums: unit variants as strings, others as
// one-key objects), with the Display texts its logs and RPC errors carry.

export type InstructionErrorValue = string | { Custom: number } | { BorshIoError: string };

export type TransactionErrorJson =
  | string
  | { InstructionError: [number, InstructionErrorValue] }
  | { InsufficientFundsForRent: { account_index: number } }
  | { ProgramExecutionTemporarilyRestricted: { account_index: number } }
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
  CallChainTooDeep: 'Loader call chain is too deep',
  AccountBorrowOutstanding: 'Transaction processing left an account with an outstanding borrowed reference',
  TooManyAccountLocks: 'Transaction locked too many accounts',
  InvalidRentPayingAccount: 'Transaction leaves an account with a lower balance than rent-exempt minimum',
  MaxLoadedAccountsDataSizeExceeded: 'Transaction exceeded max loaded accounts data size cap',
  InvalidLoadedAccountsDataSizeLimit:
    'LoadedAccountsDataSizeLimit set for transaction must be greater than 0.',
  UnbalancedTransaction: 'Sum of account balances before and after transaction do not match',
  ProgramCacheHitMaxLimit: 'Program cache hit max limit',
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
  DuplicateAccountIndex: 'instruction contains duplicate accounts',
  RentEpochModified: 'instruction modified rent epoch of an account',
  AccountDataSizeChanged: 'instruction changed the size of the account data',
  AccountNotExecutable: 'instruction expected an executable account',
  AccountBorrowFailed: 'instruction tries to borrow reference for an account which is already borrowed',
  AccountBorrowOutstanding: 'instruction left account with an outstanding borrowed reference',
  DuplicateAccountOutOfSync: 'instruction modifications of multiply-passed account differ',
  InvalidError: 'program returned invalid error code',
  ExecutableAccountNotRentExempt: 'executable accounts must be rent exempt',
  UnsupportedProgramId: 'Unsupported program id',
  CallDepth: 'Cross-program invocation call depth too deep',
  ReentrancyNotAllowed: 'Cross-program invocation reentrancy not allowed for this instruction',
  MaxSeedLengthExceeded: 'Length of the seed is too long for address generation',
  InvalidSeeds: 'Provided seeds do not result in a valid address',
  ComputationalBudgetExceeded: 'Computational budget exceeded',
  PrivilegeEscalation: 'Cross-program invocation with unauthorized signer or writable account',
  ProgramEnvironmentSetupFailure: 'Failed to create program execution environment',
  ProgramFailedToCompile: 'Program failed to compile',
  Immutable: 'Account is immutable',
  IncorrectAuthority: 'Incorrect authority provided',
  AccountNotRentExempt: 'An account does not have enough lamports to be rent-exempt',
  UnsupportedSysvar: 'Unsupported sysvar',
  IllegalOwner: 'Provided owner is not allowed',
  MaxAccountsDataAllocationsExceeded:
    'Accounts data allocations exceeded the maximum allowed per transaction',
  MaxAccountsExceeded: 'Max accounts exceeded',
  MaxInstructionTraceLengthExceeded: 'Max instruction trace length exceeded',
  BuiltinProgramsMustConsumeComputeUnits: 'Builtin programs must consume compute units',
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
  if ('ProgramExecutionTemporarilyRestricted' in err) {
    return `Execution of the program referenced by account at index ${err.ProgramExecutionTemporarilyRestricted.account_index} is temporarily restricted.`;
  }
  return `Transaction contains a duplicate instruction (${err.DuplicateInstruction}) that is not allowed`;
}
