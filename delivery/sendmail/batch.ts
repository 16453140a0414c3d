// Several SendMails in one transaction (the design and its failure cases are
// in docs/inbound.md "Batched SendMail"). Deliveries that reach the submit
// stage within a few milliseconds of each other in one worker process are
// packed together: a hot recipient's messages take consecutive indices
// n..n+k-1 from its mail_count, and other recipients' messages fill the same
// transaction, up to `maxPerTx` instructions and the 1232-byte packet limit
// counted with the two compute-budget instructions every transaction carries
// (SetComputeUnitLimit sized from the measured use of its SendMails,
// SetComputeUnitPrice: delivery/priority-fee.ts).
//
// Crash safety. Every job of a transaction checkpoints the shared signed
// bytes, the signature and its own index, Email address and position before
// anything is sent; then the batch is marked `sent` in Redis (SET NX) and
// only then sent. A retry that finds the signature unknown while its
// blockhash is valid marks the batch `abandoned` (SET NX): if that wins, the
// bytes were never sent and never will be (the sender checks the same key),
// so the job rebuilds at once; if `sent` won, it resends the same bytes. So
// bytes that carry other jobs' messages are only ever resent when every one
// of those jobs recorded them. A batch that fails on chain is final (its
// signature can never land again): the job whose instruction was refused
// permanently bounces, every other job of it is sent again on its own.
import type { Connection, Keypair, PublicKey, TransactionInstruction } from '@solana/web3.js';
import type { Redis } from 'ioredis';
import { computeBudgetInstructions, type PriorityFeePolicy } from '../../chain/client/compute-budget.ts';
import {
  decodeMailbox,
  emailAddress,
  fromHash,
  type Mailbox,
  mailboxAddress,
  parseMailProgramError,
  sendMailInstruction,
  ZERO_KEY,
} from '../../chain/client/index.ts';
import { sendSigned } from '../../chain/client/rebroadcast.ts';
import { relayDomainOf } from '../../chain/client/relay.ts';
import { readAccounts } from '../../chain/client/rpc.ts';
import type { StageResults } from '../../src/contracts/inbound-jobs.ts';
import type { Keypair as KeyFile } from '../../src/core/keys/keypair-file.ts';
import { LeaseSet } from '../../src/core/limits/lease.ts';
import { walletLeaseKey } from '../../src/core/limits/redis-keys.ts';
import { ExpiredError, PendingError, PermanentDeliveryError } from '../errors.ts';
import { feeBookOf } from '../priority-fee.ts';
import { keyFileOf, signLegacy } from './legacy-tx.ts';
import { type SignatureState, type SignatureWatch, settledAt } from './signature-watch.ts';

type Submitted = NonNullable<StageResults['submit']>;

/** Solana's PACKET_DATA_SIZE: the wire size limit of one transaction. */
const PACKET_LIMIT = 1232;
/** A batch's `sent`/`abandoned` mark outlives any blockhash (about 150 slots). */
const MARK_TTL_SECS = 3600;
/** How long a delivery waits for a recipient whose lease another process holds. */
const LEASE_WAIT_MS = 750;

export interface BatchRequest {
  wallet: string;
  envelopeFrom: string;
  /** The server's local domains: the SendMail names the one the mailbox belongs to (submit.ts). */
  localDomains: readonly string[];
  cid: string;
  /** How many transactions the job signed before (raises the priority fee). */
  round?: number;
  checkpoint(submit: Submitted): Promise<void>;
}

export interface BatcherOptions {
  connection: Connection;
  programId: string;
  authority: Keypair;
  redis: Redis;
  lockPrefix: string;
  watch: SignatureWatch;
  /** Read mail_count at `processed` and free a recipient once its sends are processed. */
  pipelined: boolean;
  /** SendMail instructions per transaction at most (the packet limit may allow fewer). */
  maxPerTx: number;
  /** How long the first request waits for others to join its batch. */
  lingerMs: number;
  lockMs?: number;
  confirmTimeoutMs?: number;
  /** `[chain] priority_fee` & co. (delivery/priority-fee.ts). */
  priorityFee?: PriorityFeePolicy;
}

/** A batch failed on chain because of another message (or for a reason no retry of it fixes): send this one alone. */
export class SendAloneError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SendAloneError';
  }
}

/** Program errors that no retry can fix (shared with submit.ts). */
export const PERMANENT = new Set([
  'PostageRequired',
  'NoIpfs',
  'NotFound',
  'InvalidArgument',
  'Unauthorized',
  'DomainInactive',
  // The mailbox left this server's domain after the message was accepted.
  'RelayNotAllowed',
  // Only a wallet's own stamps are left, and they pay for its direct sends only.
  'StampsNotRelayable',
]);

/** The recipient's mailbox belongs to none of the server's domains: no relayed SendMail can land. */
export function notOurDomain(wallet: string, domainAccount: string): PermanentDeliveryError {
  return new PermanentDeliveryError(
    'RelayNotAllowed',
    domainAccount === ZERO_KEY.toBase58()
      ? `the mailbox of ${wallet} has no mail domain, so it takes no relayed mail`
      : `the mailbox of ${wallet} belongs to the mail domain ${domainAccount}, not to one of this server's`,
  );
}

export function batchMarkKey(prefix: string, signature: string): string {
  return `${prefix}:sendmail-batch:${signature}`;
}

/** The instruction a failed transaction stopped at, from its error ({InstructionError: [i, …]}). */
export function failedInstruction(err: unknown): number | undefined {
  if (err && typeof err === 'object' && 'InstructionError' in err) {
    const ie = (err as { InstructionError: unknown }).InstructionError;
    if (Array.isArray(ie) && typeof ie[0] === 'number') return ie[0];
  }
  return undefined;
}

/** The index in its transaction of the job's own SendMail (after the compute-budget instructions). */
export function instructionOf(rec: Pick<Submitted, 'ixOffset' | 'batch'>): number {
  return (rec.ixOffset ?? 0) + (rec.batch?.position ?? 0);
}

/** A permanent refusal of this job's own instruction in a failed transaction, else null. */
export function ownRefusal(err: unknown, position: number, programId: string): PermanentDeliveryError | null {
  const at = failedInstruction(err);
  if (at !== undefined && at !== position) return null;
  const program = parseMailProgramError({ err }, programId);
  if (program && PERMANENT.has(program.name))
    return new PermanentDeliveryError(program.name, `the chain refused SendMail: ${program.name}`);
  return null;
}

interface Pending {
  req: BatchRequest;
  since: number;
  resolve(submit: Submitted): void;
  reject(err: unknown): void;
}

interface Planned {
  p: Pending;
  index: bigint;
  ix: TransactionInstruction;
}

export class SendMailBatcher {
  private readonly queued = new Map<string, Pending[]>();
  /** Recipients with sends in flight from this process (their lease is held). */
  private readonly inFlight = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  private readonly payer: KeyFile;

  constructor(private readonly o: BatcherOptions) {
    this.payer = keyFileOf(o.authority.secretKey);
  }

  /** Sends the request's SendMail in a batch; resolves once it is confirmed. */
  send(req: BatchRequest): Promise<Submitted> {
    return new Promise<Submitted>((resolve, reject) => {
      if (this.closed) return reject(new PendingError('the SendMail batcher is closing'));
      const list = this.queued.get(req.wallet) ?? [];
      list.push({ req, since: Date.now(), resolve, reject });
      this.queued.set(req.wallet, list);
      this.schedule(this.o.lingerMs);
    });
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (const list of this.queued.values())
      for (const p of list) p.reject(new PendingError('the SendMail batcher is closing'));
    this.queued.clear();
  }

  private schedule(ms: number): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush().catch(() => {});
    }, ms);
  }

  private async flush(): Promise<void> {
    const wallets = [...this.queued.keys()].filter((w) => !this.inFlight.has(w));
    if (wallets.length === 0) return;
    for (const w of wallets) this.inFlight.add(w);
    // Every recipient's lease in one round trip (and renewed, released together).
    const keys = new Map(wallets.map((w) => [w, walletLeaseKey(this.o.lockPrefix, w, 'sendmail')]));
    const set = await LeaseSet.acquire(this.o.redis, [...keys.values()], {
      ttlMs: this.o.lockMs ?? 15_000,
    }).catch(() => null);
    const leases = new Map([...keys].filter(([, key]) => set?.holds(key)));
    const now = Date.now();
    const taken = new Map<string, Pending[]>();
    const perWallet = this.o.pipelined ? Number.POSITIVE_INFINITY : this.o.maxPerTx;
    let blocked = false;
    for (const w of wallets) {
      const list = this.queued.get(w) ?? [];
      if (!leases.has(w)) {
        blocked = true;
        // Another process is sending to this recipient: wait a little, then give the job back.
        this.inFlight.delete(w);
        const keep = list.filter((p) => {
          if (now - p.since < LEASE_WAIT_MS) return true;
          p.reject(new PendingError(`recipient ${w} is busy`, 400 + Math.floor(Math.random() * 600)));
          return false;
        });
        if (keep.length) this.queued.set(w, keep);
        else this.queued.delete(w);
        continue;
      }
      const take = list.splice(0, perWallet);
      if (list.length === 0) this.queued.delete(w);
      taken.set(w, take);
    }
    if (blocked) this.schedule(25);
    if (taken.size === 0 || !set) return;
    void this.run(taken, set, leases);
  }

  /** Builds, checkpoints, sends and watches the transactions for `taken`; frees each recipient after. */
  private async run(
    taken: Map<string, Pending[]>,
    set: LeaseSet,
    leases: Map<string, string>,
  ): Promise<void> {
    const release = async (w: string) => {
      const key = leases.get(w);
      if (key) await set.release(key);
      leases.delete(w);
      this.inFlight.delete(w);
      if (this.queued.has(w)) this.schedule(0);
    };
    const fail = (list: Pending[], err: unknown) => {
      for (const p of list) p.reject(err);
    };
    let batches: SignedBatch[];
    try {
      await this.refreshBlockhash();
      const plans = await this.plan(taken);
      batches = await Promise.all(plans.map((planned) => this.sign(planned)));
    } catch (err) {
      for (const [w, list] of taken) {
        fail(list, err);
        await release(w);
      }
      return;
    }
    // Per recipient, the signatures its sends went out in (released once all are processed or confirmed).
    const sent: { batch: SignedBatch; state: Promise<SignatureState> }[] = [];
    const broken = new Set<string>();
    for (const batch of batches) {
      const wallets = new Set(batch.planned.map((x) => x.p.req.wallet));
      if ([...wallets].some((w) => broken.has(w))) {
        // Built on a send of this flush that did not go out: their indices are wrong; queue them again.
        for (const x of batch.planned) this.requeue(x.p);
        // Later transactions carrying these recipients were built on this one too.
        for (const w of wallets) broken.add(w);
        continue;
      }
      const ok = await this.checkpointAndMark(batch);
      if (!ok) {
        for (const w of wallets) broken.add(w);
        continue;
      }
      try {
        await sendSigned(this.o.connection, batch.raw, {
          // A batch is never preflighted: a failure must land (final) so no job resends other jobs' bytes later.
          skipPreflight: batch.planned.length > 1,
          preflightCommitment: this.o.pipelined ? 'processed' : 'confirmed',
        });
      } catch (err) {
        // Only a single send is preflighted; its program refusal is final for it.
        const program = parseMailProgramError(err, this.o.programId);
        const single = batch.planned[0];
        if (batch.planned.length === 1 && single && program && PERMANENT.has(program.name)) {
          single.p.reject(
            new PermanentDeliveryError(program.name, `the chain refused SendMail: ${program.name}`),
          );
        } else {
          // Unknown whether it reached the node: each job's retry asks the chain (and resends while valid).
          fail(
            batch.planned.map((x) => x.p),
            err,
          );
        }
        for (const w of wallets) broken.add(w);
        continue;
      }
      const target = this.o.pipelined ? 'processed' : 'confirmed';
      sent.push({ batch, state: this.watchFor(batch, target) });
    }
    // A recipient is free again once every send of it is processed (pipelined) or confirmed.
    const walletDone = new Map<string, Promise<unknown>[]>();
    for (const s of sent)
      for (const x of s.batch.planned) {
        const list = walletDone.get(x.p.req.wallet) ?? [];
        list.push(s.state.catch(() => undefined));
        walletDone.set(x.p.req.wallet, list);
      }
    for (const w of taken.keys()) {
      const waits = walletDone.get(w);
      if (!waits) void release(w);
      else void Promise.all(waits).then(() => release(w));
    }
    await Promise.all(sent.map((s) => this.settle(s.batch, s.state)));
  }

  private requeue(p: Pending): void {
    const list = this.queued.get(p.req.wallet) ?? [];
    list.unshift(p);
    this.queued.set(p.req.wallet, list);
  }

  /** Reads the mailboxes and packs the requests into transactions (a recipient's in index order). */
  private async plan(taken: Map<string, Pending[]>): Promise<Planned[][]> {
    const wallets = [...taken.keys()];
    const commitment = this.o.pipelined ? 'processed' : 'confirmed';
    const mailboxes = new Map<string, Mailbox>();
    // One getMultipleAccounts per 100 mailboxes (chain/client/rpc.ts).
    const infos = await readAccounts(
      this.o.connection,
      wallets.map((w) => mailboxAddress(this.o.programId, w)[0]),
      commitment,
    );
    wallets.forEach((w, j) => {
      const info = infos[j];
      if (info && info.owner === this.o.programId) mailboxes.set(w, decodeMailbox(info.data));
    });
    const plans: Planned[][] = [];
    let current: Planned[] = [];
    for (const [w, list] of taken) {
      const mailbox = mailboxes.get(w);
      if (mailbox === undefined) {
        for (const p of list) p.reject(new PermanentDeliveryError('NoMailbox', `wallet ${w} has no mailbox`));
        continue;
      }
      let k = 0n;
      for (const p of list) {
        // Through the domain the mailbox belongs to now (each request carries the server's domains).
        const domain = relayDomainOf(this.o.programId, mailbox, p.req.localDomains);
        if (domain === null) {
          p.reject(notOurDomain(w, mailbox.domain.toBase58()));
          continue;
        }
        const index = mailbox.mailCount + k;
        k++;
        const ix = sendMailInstruction({
          programId: this.o.programId,
          sender: this.o.authority.publicKey,
          recipient: w,
          index,
          fromHash: fromHash(p.req.envelopeFrom),
          cid: p.req.cid,
          domain,
        });
        const next = [...current, { p, index, ix }];
        if (current.length > 0 && (next.length > this.o.maxPerTx || this.size(next) > PACKET_LIMIT)) {
          plans.push(current);
          current = [{ p, index, ix }];
        } else {
          current = next;
        }
      }
    }
    if (current.length) plans.push(current);
    return plans;
  }

  private blockhash: { blockhash: string; lastValidBlockHeight: number; at: number } | undefined;

  /**
   * The wire size of a legacy transaction carrying `planned` behind both
   * compute-budget instructions (one signature), counted without serializing.
   */
  private size(planned: Planned[]): number {
    return legacyTxSize(this.o.authority.publicKey, [...BUDGET_TEMPLATE, ...planned.map((x) => x.ix)]);
  }

  /** Signs `planned` behind its compute budget (the price of the highest signing round among its jobs). */
  private async sign(planned: Planned[]): Promise<SignedBatch> {
    const hash = this.blockhash;
    if (!hash) throw new Error('no blockhash');
    const ixs = planned.map((x) => x.ix);
    const round = Math.max(0, ...planned.map((x) => x.p.req.round ?? 0));
    const { budget } = await feeBookOf(this.o.connection, this.o.priorityFee).budget(
      ixs,
      this.o.authority.publicKey,
      round,
    );
    const { raw, signature } = signLegacy(this.payer, [...budget, ...ixs], hash.blockhash);
    const base = {
      signature,
      lastValidBlockHeight: hash.lastValidBlockHeight,
      tx: raw.toString('base64'),
      ixOffset: budget.length,
    };
    return {
      raw,
      planned,
      lastValidBlockHeight: hash.lastValidBlockHeight,
      submit: { ...base, index: '', emailAddress: '' },
      each: planned.map((x, position) => ({
        ...base,
        index: x.index.toString(),
        emailAddress: emailAddress(this.o.programId, x.p.req.wallet, x.index)[0].toBase58(),
        ...(planned.length > 1 ? { batch: { size: planned.length, position } } : {}),
      })),
    };
  }

  /** Every job records the batch; then the batch is marked sent. False (and the jobs told) when it must not go. */
  private async checkpointAndMark(batch: SignedBatch): Promise<boolean> {
    const results = await Promise.allSettled(
      batch.planned.map((x, i) => x.p.req.checkpoint(batch.each[i] as Submitted)),
    );
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) {
      // Not sent, and never will be: a job that recorded it finds no `sent` mark and rebuilds.
      for (const x of batch.planned) x.p.reject(failed.reason);
      return false;
    }
    if (batch.planned.length === 1) return true;
    try {
      const marked = await this.o.redis.set(
        batchMarkKey(this.o.lockPrefix, batch.submit.signature),
        'sent',
        'EX',
        MARK_TTL_SECS,
        'NX',
      );
      if (marked === 'OK') return true;
      throw new Error(`SendMail batch ${batch.submit.signature} was abandoned by a retry`);
    } catch (err) {
      for (const x of batch.planned) x.p.reject(err);
      return false;
    }
  }

  /** Watches the batch's signature until `target`, its bytes re-sent about every 2 s meanwhile. */
  private watchFor(batch: SignedBatch, target: 'processed' | 'confirmed'): Promise<SignatureState> {
    const signature = batch.submit.signature;
    return this.o.watch.wait(signature, batch.lastValidBlockHeight, settledAt(target), {
      fast: target === 'processed',
      timeoutMs: this.o.confirmTimeoutMs ?? 60_000,
      onTimeout: () => new PendingError(`SendMail ${signature} not ${target} yet`),
      wire: batch.raw,
    });
  }

  /** Waits for the batch's confirmation and settles each job: confirmed, refused, or to be sent alone. */
  private async settle(batch: SignedBatch, first: Promise<SignatureState>): Promise<void> {
    const jobs = batch.planned.map((x) => x.p);
    let state: SignatureState;
    try {
      state = await first;
      if (state.kind === 'processed') state = await this.watchFor(batch, 'confirmed');
    } catch (err) {
      for (const p of jobs) p.reject(err);
      return;
    }
    const signature = batch.submit.signature;
    batch.planned.forEach((x, position) => {
      const mine = batch.each[position] as Submitted;
      if (state.kind === 'landed') x.p.resolve({ ...mine, confirmed: true });
      else if (state.kind === 'expired')
        // Not proof that it did not land: each job settles it (submit.ts) before any re-sign.
        x.p.reject(new ExpiredError(signature));
      else if (state.kind === 'failed') {
        const refused = ownRefusal(state.err, instructionOf(mine), this.o.programId);
        if (refused) x.p.reject(refused);
        else if (batch.planned.length > 1)
          x.p.reject(new SendAloneError(`SendMail batch ${signature} failed on chain; sending alone`));
        else x.p.reject(new Error(`SendMail ${signature} failed on chain; will rebuild`));
      } else x.p.reject(new PendingError(`SendMail ${signature} not confirmed yet`));
    });
  }

  /**
   * A recent blockhash, read at most once a slot (400 ms): a rebuilt
   * transaction then differs from the one it replaces (a retry comes seconds
   * later), so it never repeats a failed signature.
   */
  private async refreshBlockhash(): Promise<void> {
    if (this.blockhash && Date.now() - this.blockhash.at < 400) return;
    const { blockhash, lastValidBlockHeight } = await this.o.connection.getLatestBlockhash('confirmed');
    this.blockhash = { blockhash, lastValidBlockHeight, at: Date.now() };
  }
}

/**
 * The budget instructions at their largest (SetComputeUnitLimit and
 * SetComputeUnitPrice; their sizes do not depend on the values): a batch is
 * packed with them counted, whatever price it is signed with.
 */
const BUDGET_TEMPLATE = computeBudgetInstructions({ unitLimit: 1, microLamportsPerCu: 1n });

/** The wire size of a legacy transaction of `ixs` paid and signed by `payer` alone. */
export function legacyTxSize(payer: PublicKey, ixs: TransactionInstruction[]): number {
  const keys = new Set<string>([payer.toBuffer().toString('latin1')]);
  let instructions = 0;
  for (const ix of ixs) {
    keys.add(ix.programId.toBuffer().toString('latin1'));
    for (const k of ix.keys) keys.add(k.pubkey.toBuffer().toString('latin1'));
    instructions += 1 + shortVec(ix.keys.length) + ix.keys.length + shortVec(ix.data.length) + ix.data.length;
  }
  const message = 3 + shortVec(keys.size) + 32 * keys.size + 32 + shortVec(ixs.length) + instructions;
  return shortVec(1) + 64 + message;
}

/** Length of Solana's compact-u16 prefix for `n`. */
function shortVec(n: number): number {
  return n < 0x80 ? 1 : n < 0x4000 ? 2 : 3;
}

interface SignedBatch {
  raw: Buffer;
  planned: Planned[];
  lastValidBlockHeight: number;
  /** The shared part (signature, bytes). */
  submit: Submitted;
  /** Each job's checkpoint. */
  each: Submitted[];
}
