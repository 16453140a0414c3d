// Fixed parameters of the node around the runtime. Values follow a real
// Solana cluster so expiry and history behave the same for clients; fees and
// rent are the runtime's (svm.ts).
import type { Address } from './account-store.ts';

export const SYSTEM_PROGRAM_ID: Address = '11111111111111111111111111111111';
export const COMPUTE_BUDGET_PROGRAM_ID: Address = 'ComputeBudget111111111111111111111111111111';

export const LAMPORTS_PER_SIGNATURE = 5000n;
/** A blockhash may be used while the current slot is at most its slot + this. */
export const MAX_PROCESSING_AGE = 150;
/** Slots a signature stays visible to getSignatureStatuses without searchTransactionHistory. */
export const STATUS_CACHE_SLOTS = 300;
/** Wire size limit of one transaction (Solana's PACKET_DATA_SIZE). */
export const PACKET_DATA_SIZE = 1232;
/** Largest account data a program may allocate (10 MiB). */
export const MAX_PERMITTED_DATA_LENGTH = 10 * 1024 * 1024;
export const SLOTS_PER_EPOCH = 432_000;
export const U64_MAX = (1n << 64n) - 1n;
