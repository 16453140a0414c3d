// Stage 1: which key the body is sealed to, and whether the mailbox opted
// out of IPFS. Reads the chain fresh (not the MX's cache): the sealing key
// must be the one published now. The Mailbox and the MailboxKey are read in
// one getMultipleAccounts (merged with other deliveries' reads of the same
// moment, chain/client/rpc.ts); the choice of key is recipient-key.ts's.
import type { Connection } from '@solana/web3.js';
import bs58 from 'bs58';
import {
  decodeMailbox,
  decodeMailboxKey,
  mailboxAddress,
  mailboxKeyAddress,
} from '../../chain/client/index.ts';
import { type RawAccount, readAccounts } from '../../chain/client/rpc.ts';
import type { StageResults } from '../../src/contracts/inbound-jobs.ts';
import { sealKeyFrom } from '../../src/mail/seal/recipient-key.ts';
import { PermanentDeliveryError } from '../errors.ts';

export interface ResolveDeps {
  connection: Connection;
  programId: string;
}

export async function resolveStage(
  deps: ResolveDeps,
  wallet: string,
): Promise<NonNullable<StageResults['resolve']>> {
  const [mailboxInfo, keyInfo] = await readAccounts(deps.connection, [
    mailboxAddress(deps.programId, wallet)[0],
    mailboxKeyAddress(deps.programId, wallet)[0],
  ]);
  const ours = (info: RawAccount | null | undefined) => (info?.owner === deps.programId ? info : null);
  const mailbox = ours(mailboxInfo);
  if (!mailbox) throw new PermanentDeliveryError('NoMailbox', `wallet ${wallet} has no mailbox on chain`);
  const published = ours(keyInfo);
  const key = sealKeyFrom(wallet, published ? decodeMailboxKey(published.data) : null);
  return {
    publicKey: bs58.encode(key.publicKey),
    source: key.source,
    noIpfs: decodeMailbox(mailbox.data).noIpfs,
  };
}
