// Follow-up work off the delivery path: removing a spool file once every
// copy of its message is done, releasing operator pins, and closing Email
// accounts this deployment published (DeleteMail, signed by the authority
// as the account's sender; the rent returns to the rent payer).
//
// DeleteMail is sent like SendMail (delivery/stages/submit.ts): the signed
// transaction is checkpointed in the job before it is sent, sent with
// `maxRetries: 0` and re-sent about every 2 s while the status poller
// watches it (no WebSocket), and signed again only once the recorded one is
// proven not to have landed: its status missing twice, seconds apart, from
// answers at or past the slot where the block height passed its
// lastValidBlockHeight, and the Email account still there at `confirmed`
// read at or past that slot. An account found gone is closed, whoever
// closed it. A worker killed after sending leaves the checkpoint, and its
// retry settles from it the same way.
import { type Connection, type Keypair, PublicKey, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { deleteBountyLocked } from '../chain/client/bounty-lock.ts';
import {
  budgetedUnitLimit,
  computeBudgetInstructions,
  type PriorityFeePolicy,
  resolvePriorityFee,
  writableKeysOf,
} from '../chain/client/compute-budget.ts';
import { deleteMailInstruction, getEmailAt } from '../chain/client/index.ts';
import { sendSigned } from '../chain/client/rebroadcast.ts';
import { readAccountsSince } from '../chain/client/rpc.ts';
import type { DeleteMailJobData, SpoolJobData, UnpinJobData } from '../src/contracts/inbound-jobs.ts';
import type { Pinner } from '../src/contracts/pinner.ts';
import type { BlobStore } from '../src/core/blobs/blob-store.ts';
import { PendingError } from './errors.ts';
import { DEFAULT_PRIORITY_FEE } from './priority-fee.ts';
import { type SignatureState, SignatureWatch, settledAt } from './sendmail/signature-watch.ts';

export async function removeSpool(blobs: BlobStore, data: SpoolJobData): Promise<void> {
  await blobs.delete(data.spoolKey);
}

export async function releaseOperatorPin(pinner: Pinner, data: UnpinJobData): Promise<void> {
  if (data.cid.startsWith('b3:')) return;
  await pinner.release(data.cid, { signal: AbortSignal.timeout(30_000) });
}

export interface DeleteMailDeps {
  connection: Connection;
  programId: string;
  authority: Keypair;
  /** The process's status poller (one per call when absent). */
  watch?: SignatureWatch;
  /** `[chain] priority_fee` & co. (delivery/priority-fee.ts). */
  priorityFee?: PriorityFeePolicy;
  /** Gap between the two "expired" observations before a re-sign (default 3 s). */
  expiryGapMs?: number;
  confirmTimeoutMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

type Sent = NonNullable<DeleteMailJobData['sent']>;

export async function closeEmailAccount(
  deps: DeleteMailDeps,
  data: DeleteMailJobData,
  /** Persists the signed DeleteMail into the job before it is sent. */
  checkpoint: (sent: Sent) => Promise<void> = async () => {},
): Promise<'closed' | 'gone'> {
  const watch = deps.watch ?? new SignatureWatch(deps.connection);
  let prev = data.sent;
  for (let resign = 0; ; resign++) {
    if (prev) {
      if ((await settleDelete(deps, watch, data, prev)) === 'closed') return 'closed';
      if (resign >= 3)
        throw new Error(`DeleteMail of ${data.emailAddress} expired ${resign} times; will retry`);
    }
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
    const round = prev?.round ?? 0;
    const ix = deleteMailInstruction({
      programId: deps.programId,
      signer: deps.authority.publicKey,
      email: new PublicKey(data.emailAddress),
      rentPayer: email.rentPayer,
    });
    const policy = deps.priorityFee ?? DEFAULT_PRIORITY_FEE;
    const unitLimit = budgetedUnitLimit([ix], 1n);
    const price = await resolvePriorityFee(
      deps.connection,
      policy,
      writableKeysOf([ix], deps.authority.publicKey),
      round,
      unitLimit,
    );
    const { blockhash, lastValidBlockHeight } = await deps.connection.getLatestBlockhash('confirmed');
    const tx = new Transaction({ feePayer: deps.authority.publicKey, blockhash, lastValidBlockHeight }).add(
      ...computeBudgetInstructions({ unitLimit, microLamportsPerCu: price }),
      ix,
    );
    tx.sign(deps.authority);
    const raw = tx.serialize();
    const sent: Sent = {
      signature: bs58.encode(tx.signature ?? new Uint8Array()),
      lastValidBlockHeight,
      tx: raw.toString('base64'),
      round: round + 1,
    };
    await checkpoint(sent);
    await sendSigned(deps.connection, raw, { preflightCommitment: 'confirmed' });
    const state = await watchDelete(deps, watch, sent, raw);
    if (state.kind === 'landed') return 'closed';
    if (state.kind === 'failed')
      throw new Error(`DeleteMail ${sent.signature} failed: ${JSON.stringify(state.err)}`);
    // Expired as far as the watch could tell: settled (proven) before anything is signed again.
    prev = sent;
  }
}

/** The recorded DeleteMail driven to an end: 'closed' (landed, or the account is gone), or 'rebuild' (proven not landed). */
async function settleDelete(
  deps: DeleteMailDeps,
  watch: SignatureWatch,
  data: DeleteMailJobData,
  prev: Sent,
): Promise<'closed' | 'rebuild'> {
  let state = await watch.check(prev.signature, prev.lastValidBlockHeight);
  if (state.kind === 'pending' || state.kind === 'processed') {
    const wire = Buffer.from(prev.tx, 'base64');
    await sendSigned(deps.connection, wire, { skipPreflight: true }).catch(() => {});
    state = await watchDelete(deps, watch, prev, wire);
  }
  if (state.kind === 'landed') return 'closed';
  // Failed is final for that signature; the fresh read before a re-sign decides the rest.
  if (state.kind === 'failed') return 'rebuild';
  const proof = await watch.provedExpired(prev.signature, prev.lastValidBlockHeight, {
    gapMs: deps.expiryGapMs ?? 3000,
    sleep: deps.sleep,
  });
  if (proof.kind === 'landed') return 'closed';
  if (proof.kind === 'failed') return 'rebuild';
  if (proof.kind !== 'expired')
    throw new PendingError(`DeleteMail ${prev.signature}: its expiry is not proven yet`, 1000);
  // The effect itself: the account gone, read at `confirmed` from a bank at or past the expiry.
  const [account] = await readAccountsSince(
    deps.connection,
    [data.emailAddress],
    'confirmed',
    proof.passedSlot,
  );
  return account && account.owner === deps.programId ? 'rebuild' : 'closed';
}

async function watchDelete(
  deps: DeleteMailDeps,
  watch: SignatureWatch,
  sent: Sent,
  wire: Uint8Array,
): Promise<SignatureState> {
  return watch.wait(sent.signature, sent.lastValidBlockHeight, settledAt('confirmed'), {
    fast: false,
    timeoutMs: deps.confirmTimeoutMs ?? 120_000,
    onTimeout: () => new PendingError(`DeleteMail ${sent.signature} not confirmed yet`),
    wire,
  });
}
