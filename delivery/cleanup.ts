// Follow-up work off the delivery path: removing a spool file once every
// copy of its message is done, releasing operator pins, and closing Email
// accounts this deployment published (DeleteMail, signed by the authority
// as the account's sender; the rent returns to the rent payer).
import { type Connection, type Keypair, PublicKey, Transaction } from '@solana/web3.js';
import { deleteBountyLocked } from '../chain/bounty-lock.ts';
import { deleteMailInstruction, getEmailAt } from '../chain/index.ts';
import type { Pinner } from '../pinning/types.ts';
import type { BlobStore } from '../src/blobs/blob-store.ts';
import type { DeleteMailJobData, SpoolJobData, UnpinJobData } from './jobs.ts';

export async function removeSpool(blobs: BlobStore, data: SpoolJobData): Promise<void> {
  await blobs.delete(data.spoolKey);
}

export async function releaseOperatorPin(pinner: Pinner, data: UnpinJobData): Promise<void> {
  if (data.cid.startsWith('b3:')) return;
  await pinner.release(data.cid, { signal: AbortSignal.timeout(30_000) });
}

export async function closeEmailAccount(
  deps: { connection: Connection; programId: string; authority: Keypair },
  data: DeleteMailJobData,
): Promise<'closed' | 'gone'> {
  const email = await getEmailAt(deps.connection, deps.programId, data.emailAddress);
  if (!email) return 'gone';
  // Relayed mail carries no bounty; should an account of ours hold one, its
  // recipient may claim it until expires_at, and DeleteMail waits (BountyLocked).
  if (email.bountyLamports > 0n) {
    const slot = await deps.connection.getSlot('confirmed');
    const now = (await deps.connection.getBlockTime(slot)) ?? Math.floor(Date.now() / 1000);
    if (deleteBountyLocked(email, deps.authority.publicKey, now)) {
      throw new Error(
        `the bounty of ${email.bountyLamports} lamports on ${data.emailAddress} is the recipient's to claim until ` +
          `${new Date(Number(email.expiresAt) * 1000).toISOString()}; it can be deleted after that`,
      );
    }
  }
  const { blockhash, lastValidBlockHeight } = await deps.connection.getLatestBlockhash('confirmed');
  const tx = new Transaction({ feePayer: deps.authority.publicKey, blockhash, lastValidBlockHeight }).add(
    deleteMailInstruction({
      programId: deps.programId,
      signer: deps.authority.publicKey,
      email: new PublicKey(data.emailAddress),
      rentPayer: email.rentPayer,
    }),
  );
  tx.sign(deps.authority);
  const signature = await deps.connection.sendRawTransaction(tx.serialize());
  const result = await deps.connection.confirmTransaction(
    { signature, blockhash, lastValidBlockHeight },
    'confirmed',
  );
  if (result.value.err)
    throw new Error(`DeleteMail ${signature} failed: ${JSON.stringify(result.value.err)}`);
  return 'closed';
}
