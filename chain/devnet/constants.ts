// Fixed parameters of the local chain. Values follow a real Solana cluster so
// fees, rent and expiry behave the same for clients.
import type { Address } from './program-api.ts';

export const SYSTEM_PROGRAM_ID: Address = '11111111111111111111111111111111';
export const COMPUTE_BUDGET_PROGRAM_ID: Address = 'ComputeBudget111111111111111111111111111111';
export const NATIVE_LOADER_ID: Address = 'NativeLoader1111111111111111111111111111111';
export const BPF_LOADER_ID: Address = 'BPFLoader2111111111111111111111111111111111';

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
export const DEFAULT_COMPUTE_UNIT_LIMIT = 200_000;
export const U64_MAX = (1n << 64n) - 1n;

/** Rent-exempt minimum: (128 bytes of account overhead + data) × 3480 lamports/byte-year × 2 years. */
export function rentExemptMinimum(dataLength: number): bigint {
  return BigInt(128 + dataLength) * 6960n;
}
