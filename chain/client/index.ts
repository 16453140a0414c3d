// Public API of the mail-program interface: codecs, PDAs, instruction
// builders, errors and read helpers. Runs in Node and the browser.
export * from './accounts/index.ts';
export {
  bytesEqual,
  I64_MAX,
  I64_MIN,
  isZeroBytes,
  type Key,
  keyBytes,
  SYSTEM_PROGRAM_ID,
  toBase58,
  toHex,
  toPublicKey,
  U64_MAX,
  u64Le,
  ZERO_KEY,
} from './bytes.ts';
export * from './client.ts';
export * from './compute-budget.ts';
export * from './errors.ts';
export * from './hash.ts';
export * from './instructions.ts';
export * from './market-client.ts';
export * from './pda.ts';
export { DEFAULT_PROGRAM_ID } from './program-id.ts';
export * from './timelock-client.ts';
