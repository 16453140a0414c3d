// Key files as @solana/web3.js signers.
import { Keypair } from '@solana/web3.js';
import type { Keypair as KeyFile } from '../../core/keys/keypair-file.ts';

export function toWeb3Keypair(key: KeyFile): Keypair {
  return Keypair.fromSecretKey(key.secretKey);
}
