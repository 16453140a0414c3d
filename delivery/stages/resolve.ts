// Stage 1: which key the body is sealed to, and whether the mailbox opted
// out of IPFS. Reads the chain fresh (not the MX's cache): the sealing key
// must be the one published now.
import type { Connection } from '@solana/web3.js';
import bs58 from 'bs58';
import { getMailbox } from '../../chain/index.ts';
import { recipientSealKey } from '../../src/seal/recipient-key.ts';
import { PermanentDeliveryError } from '../errors.ts';
import type { StageResults } from '../jobs.ts';

export interface ResolveDeps {
  connection: Connection;
  programId: string;
}

export async function resolveStage(
  deps: ResolveDeps,
  wallet: string,
): Promise<NonNullable<StageResults['resolve']>> {
  const mailbox = await getMailbox(deps.connection, deps.programId, wallet);
  if (!mailbox) throw new PermanentDeliveryError('NoMailbox', `wallet ${wallet} has no mailbox on chain`);
  const key = await recipientSealKey(deps.connection, deps.programId, wallet);
  return { publicKey: bs58.encode(key.publicKey), source: key.source, noIpfs: mailbox.noIpfs };
}
