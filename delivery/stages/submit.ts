// SendMail, signed by the domain authority. Crash safety: the signed
// transaction and its signature are checkpointed in the job before it is
// sent; a retry first asks the chain whether that signature landed and, while
// its blockhash is still valid, resends the very same bytes (the chain
// ignores duplicates), so a crash can never create two Email accounts.
// Sends to one recipient are serialized by a wallet-keyed lease
// (src/limits/lease.ts, swept with the account), because the Email
// account's address depends on the mailbox's mail_count at send time.
// Pipelined (opt-in, `[chain] pipeline_sendmail`): mail_count is read
// at `processed` and the lease is released once the send is processed, so
// the next send to the same recipient builds on it without waiting a slot
// for confirmation; the job itself still waits for `confirmed`. If a
// processed send is dropped (a skipped block), a later send built on it
// fails on chain (its Email address no longer matches) and is rebuilt by
// its retry, as is the dropped one: a fee is lost, never mail.
import { type Connection, type Keypair, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import type { Redis } from 'ioredis';
import {
  emailAddress,
  fromHash,
  getMailbox,
  parseMailProgramError,
  sendMailInstruction,
} from '../../chain/index.ts';
import { acquireWalletLease } from '../../src/limits/lease.ts';
import { PendingError, PermanentDeliveryError } from '../errors.ts';
import type { StageResults } from '../jobs.ts';

export interface SubmitDeps {
  connection: Connection;
  programId: string;
  authority: Keypair;
  redis: Redis;
  lockPrefix: string;
  /** Expiry of a recipient's SendMail lease (renewed while held; a crashed holder frees it this late). */
  lockMs?: number;
  /** How long to wait for confirmation before giving the job back for a retry. */
  confirmTimeoutMs?: number;
  /** Hold the recipient's lease only until the send is processed (see the header). */
  pipelined?: boolean;
  sleep?: (ms: number) => Promise<void>;
}

export interface SubmitInput {
  wallet: string;
  envelopeFrom: string;
  domain: string;
  cid: string;
  previous?: StageResults['submit'];
  /** Persists the checkpoint into the job before the transaction is sent. */
  checkpoint(submit: NonNullable<StageResults['submit']>): Promise<void>;
}

// Program errors that no retry can fix.
const PERMANENT = new Set([
  'PostageRequired',
  'NoIpfs',
  'NotFound',
  'InvalidArgument',
  'Unauthorized',
  'DomainInactive',
]);

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function submitSendMail(
  deps: SubmitDeps,
  input: SubmitInput,
): Promise<NonNullable<StageResults['submit']>> {
  const sleep = deps.sleep ?? defaultSleep;
  if (input.previous?.confirmed) return input.previous;
  if (input.previous) {
    const outcome = await recheck(deps, input.previous);
    if (outcome === 'landed') return { ...input.previous, confirmed: true };
    if (outcome === 'pending' || outcome === 'processed') {
      // Same bytes again: harmless if it already reached the node.
      await deps.connection
        .sendRawTransaction(Buffer.from(input.previous.tx, 'base64'), { skipPreflight: true })
        .catch(() => {});
      await waitFor(deps, input.previous, 'confirmed', sleep);
      return { ...input.previous, confirmed: true };
    }
    // 'expired' or 'failed': build a new transaction below.
  }

  // Held (and kept alive) while this send reads mail_count and until it is processed (pipelined) or confirmed.
  const lease = await acquireWalletLease(deps.redis, deps.lockPrefix, input.wallet, 'sendmail', {
    ttlMs: deps.lockMs ?? 15_000,
    // Waiting long here would hold a worker slot that other recipients' mail could use.
    waitMs: 750,
    retryMs: 25,
    sleep,
  });
  if (!lease)
    throw new PendingError(`recipient ${input.wallet} is busy`, 400 + Math.floor(Math.random() * 600));
  const pipelined = deps.pipelined ?? false;
  let submit: NonNullable<StageResults['submit']>;
  try {
    const mailbox = await getMailbox(
      deps.connection,
      deps.programId,
      input.wallet,
      pipelined ? 'processed' : 'confirmed',
    );
    if (!mailbox) throw new PermanentDeliveryError('NoMailbox', `wallet ${input.wallet} has no mailbox`);
    const index = mailbox.mailCount;
    const { blockhash, lastValidBlockHeight } = await deps.connection.getLatestBlockhash('confirmed');
    const tx = new Transaction({ feePayer: deps.authority.publicKey, blockhash, lastValidBlockHeight }).add(
      sendMailInstruction({
        programId: deps.programId,
        sender: deps.authority.publicKey,
        recipient: input.wallet,
        index,
        fromHash: fromHash(input.envelopeFrom),
        cid: input.cid,
        domain: input.domain,
      }),
    );
    tx.sign(deps.authority);
    const raw = tx.serialize({ verifySignatures: false });
    submit = {
      signature: bs58.encode(tx.signature ?? new Uint8Array()),
      index: index.toString(),
      emailAddress: emailAddress(deps.programId, input.wallet, index)[0].toBase58(),
      lastValidBlockHeight,
      tx: raw.toString('base64'),
    };
    await input.checkpoint(submit);
    try {
      await deps.connection.sendRawTransaction(raw, {
        preflightCommitment: pipelined ? 'processed' : 'confirmed',
      });
    } catch (err) {
      const program = parseMailProgramError(err, deps.programId);
      if (program && PERMANENT.has(program.name)) {
        throw new PermanentDeliveryError(program.name, `the chain refused SendMail: ${program.name}`);
      }
      throw err;
    }
    await waitFor(deps, submit, pipelined ? 'processed' : 'confirmed', sleep);
  } finally {
    // Releases only our own lease (it may have expired and been taken by another worker).
    await lease.release().catch(() => false);
  }
  if (pipelined) await waitFor(deps, submit, 'confirmed', sleep);
  return { ...submit, confirmed: true };
}

type Recheck = 'landed' | 'processed' | 'pending' | 'expired' | 'failed';

async function recheck(deps: SubmitDeps, prev: NonNullable<StageResults['submit']>): Promise<Recheck> {
  const { value } = await deps.connection.getSignatureStatuses([prev.signature], {
    searchTransactionHistory: true,
  });
  const status = value[0];
  if (status) {
    if (status.err) {
      const program = parseMailProgramError({ err: status.err }, deps.programId);
      if (program && PERMANENT.has(program.name)) {
        throw new PermanentDeliveryError(program.name, `the chain refused SendMail: ${program.name}`);
      }
      return 'failed';
    }
    return status.confirmationStatus === 'processed' ? 'processed' : 'landed';
  }
  const height = await deps.connection.getBlockHeight('confirmed');
  return height <= prev.lastValidBlockHeight ? 'pending' : 'expired';
}

/** Polls until the send reaches `target` (processed, or landed at confirmed); throws when it failed or expired. */
async function waitFor(
  deps: SubmitDeps,
  prev: NonNullable<StageResults['submit']>,
  target: 'processed' | 'confirmed',
  sleep: (ms: number) => Promise<void>,
): Promise<void> {
  const deadline = Date.now() + (deps.confirmTimeoutMs ?? 60_000);
  while (Date.now() < deadline) {
    const state = await recheck(deps, prev);
    if (state === 'landed' || (state === 'processed' && target === 'processed')) return;
    if (state === 'failed') throw new Error(`SendMail ${prev.signature} failed on chain; will rebuild`);
    if (state === 'expired')
      throw new Error(`SendMail ${prev.signature} expired before landing; will rebuild`);
    await sleep(target === 'processed' ? 10 : 50);
  }
  throw new PendingError(`SendMail ${prev.signature} not ${target} yet`);
}
