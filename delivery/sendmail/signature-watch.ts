// One poller for every SendMail a worker process waits on: instead of each
// job asking getSignatureStatuses for its own signature every 50 ms, the
// waiting signatures are asked about together (up to 256 per call, the RPC
// limit) on one timer, with the block height in the same JSON-RPC batch
// (to tell "still valid" from "expired" for a signature not seen yet).
// Waiters that hand over their signed bytes have them re-sent about every
// 2 s while they wait (chain/client/rebroadcast.ts), until seen or expired.
// Polls start at least `minPollMs` apart (`[chain] status_poll_ms`: by
// default one slot, 400 ms, for a node elsewhere, 10 ms for one on this
// host), however many waiters come and go: a new waiter joins the next
// poll, and only the first of a burst (the poller idle) is looked at at once.
//
// "Expired" is only ever said on evidence: the status missing from an
// answer whose context slot is at or past the slot of a block height above
// lastValidBlockHeight, both read in one JSON-RPC batch (chain/client/rpc.ts).
// That is still not proof that the transaction did not land (a lagging or
// history-less node answers "not found" for one that did): a re-sign needs
// `provedExpired()` (two such observations seconds apart) and then the
// caller's own search of the chain state for the effect
// (docs/inbound.md "Exactly once").
import type { Connection, SignatureStatus } from '@solana/web3.js';
import { REBROADCAST_MS, Rebroadcaster } from '../../chain/client/rebroadcast.ts';
import { heightAndStatuses } from '../../chain/client/rpc.ts';
import { defaultStatusPollMs } from '../../src/core/net/rpc-discipline.ts';

export type SignatureState =
  | { kind: 'landed' }
  | { kind: 'processed' }
  /** Landed with an error (final: the signature can never land again). */
  | { kind: 'failed'; err: unknown }
  | { kind: 'pending' }
  /**
   * Not seen by a bank at or past the slot where the block height passed
   * lastValidBlockHeight (`passedSlot`, a bound: at most that slot).
   */
  | { kind: 'expired'; heightSlot: number; passedSlot: number };

interface Waiter {
  signature: string;
  lastValidBlockHeight: number;
  /** Resolves on the first state this waiter accepts. */
  accept(state: SignatureState): boolean;
  fast: boolean;
  /** A one-off look (check()): told when its round's read failed, instead of waiting for the next. */
  fail?(err: unknown): void;
}

/** The longest a check() waits for the shared poll to answer it. */
const CHECK_TIMEOUT_MS = 30_000;

/** One status read's view: the block height with its slot, and the slot the statuses were answered at. */
export interface StatusView {
  height: number;
  heightSlot: number;
  statusSlot: number;
}

const STATUS_BATCH = 256;

/** Whether waiting for `target` is over: reached, or final (failed, expired). */
export function settledAt(target: 'processed' | 'confirmed'): (s: SignatureState) => boolean {
  return (s) =>
    s.kind === 'landed' ||
    s.kind === 'failed' ||
    s.kind === 'expired' ||
    (target === 'processed' && s.kind === 'processed');
}

/**
 * What a status says, given the block height read in the same batch. A
 * missing status is `expired` only when the height is past
 * lastValidBlockHeight and the statuses came from a bank that had seen the
 * chain pass it: a context slot at or past the slot where the height first
 * exceeded lastValidBlockHeight. That slot is not read; it is bounded from
 * above by the height's own slot minus the heights since (every block takes
 * a slot at least), so the check is `statusSlot >= heightSlot - (height -
 * lastValidBlockHeight - 1)` — implied by `statusSlot >= heightSlot`, and
 * still met by an honest node whose statuses trail by a few slots once the
 * chain is far enough past. Otherwise it is `pending` (nothing proven).
 */
export function stateOf(
  status: SignatureStatus | null,
  view: StatusView | undefined,
  lastValidBlockHeight: number,
): SignatureState {
  if (status) {
    if (status.err) return { kind: 'failed', err: status.err };
    return status.confirmationStatus === 'processed' ? { kind: 'processed' } : { kind: 'landed' };
  }
  if (view === undefined) return { kind: 'pending' };
  if (view.height <= lastValidBlockHeight) return { kind: 'pending' };
  const passedSlot = view.heightSlot - (view.height - (lastValidBlockHeight + 1));
  if (view.statusSlot < passedSlot) return { kind: 'pending' };
  return { kind: 'expired', heightSlot: view.heightSlot, passedSlot };
}

/** The longest pause between two polls: about one slot of a real cluster. */
export const QUIET_MAX_MS = 400;

/**
 * The poll interval after `quiet` rounds in a row that answered nobody: the
 * base doubled each time, at most QUIET_MAX_MS. While transactions land the
 * base holds (devnet confirms in tens of milliseconds); while everyone waits
 * for a dropped send's rebroadcast or for congestion to pass, polling settles
 * at slot cadence instead of a hundred calls a second.
 */
export function quietInterval(baseMs: number, quiet: number): number {
  return Math.min(QUIET_MAX_MS, Math.max(baseMs, baseMs * 2 ** Math.min(quiet, 10)));
}

export class SignatureWatch {
  private readonly waiters = new Set<Waiter>();
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  /** Rounds in a row in which no waiter was answered: the interval doubles with each, up to QUIET_MAX_MS. */
  private quiet = 0;
  /** When the last poll began. */
  private polledAt = Number.NEGATIVE_INFINITY;
  /** Re-sends the signed bytes of waiters that gave them (chain/client/rebroadcast.ts). */
  readonly rebroadcast: Rebroadcaster;
  /** The shortest time from one poll's start to the next's (`[chain] status_poll_ms`). */
  readonly minPollMs: number;

  constructor(
    private readonly connection: Connection,
    /** Poll interval while someone waits for `processed` / only for `confirmed` (never below minPollMs). */
    private readonly intervals = { fastMs: 10, slowMs: 50 },
    opts: {
      rebroadcastMs?: number;
      /** Default: by the connection's endpoint (src/core/net/rpc-discipline.ts defaultStatusPollMs). */
      minPollMs?: number;
    } = {},
  ) {
    this.rebroadcast = new Rebroadcaster(connection, opts.rebroadcastMs ?? REBROADCAST_MS);
    this.minPollMs = Math.max(0, opts.minPollMs ?? defaultStatusPollMs(connection.rpcEndpoint));
  }

  /** The pause between two polls: the cadence asked for, after `quiet` unanswered rounds, never below minPollMs. */
  intervalMs(fast: boolean, quiet = 0): number {
    return Math.max(
      this.minPollMs,
      quietInterval(fast ? this.intervals.fastMs : this.intervals.slowMs, quiet),
    );
  }

  /**
   * The current state of one signature: its status and the block height
   * (with slots), read in one batch. The read is the shared poll's next
   * round (due at once unless a round ran within minPollMs), so the checks
   * of many jobs retrying at once (a dropped send fails those pipelined on
   * it) cost one request between them, not one each. Rejects with the
   * round's error when its read fails.
   */
  check(signature: string, lastValidBlockHeight: number): Promise<SignatureState> {
    return new Promise<SignatureState>((resolve, reject) => {
      const done = () => {
        clearTimeout(timeout);
        this.waiters.delete(waiter);
      };
      const timeout = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(`no status read of ${signature} within ${CHECK_TIMEOUT_MS / 1000} s`));
      }, CHECK_TIMEOUT_MS);
      const waiter: Waiter = {
        signature,
        lastValidBlockHeight,
        fast: true,
        accept: (state) => {
          done();
          resolve(state);
          return true;
        },
        fail: (err) => {
          done();
          reject(err);
        },
      };
      this.waiters.add(waiter);
      // A look is wanted now: a round put off by quiet rounds is brought forward (minPollMs still holds).
      if (this.timer && !this.polling) {
        clearTimeout(this.timer);
        this.timer = undefined;
      }
      this.schedule(0);
    });
  }

  /**
   * Two `expired` observations at least `gapMs` apart (each one batch as in
   * check()), else the first other state seen. `expired` from here still
   * leaves the caller's search of the chain state for the transaction's
   * effect before any re-sign.
   */
  async provedExpired(
    signature: string,
    lastValidBlockHeight: number,
    opts: { gapMs: number; sleep?: (ms: number) => Promise<void> },
  ): Promise<SignatureState> {
    const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
    const first = await this.check(signature, lastValidBlockHeight);
    if (first.kind !== 'expired') return first;
    await sleep(opts.gapMs);
    return this.check(signature, lastValidBlockHeight);
  }

  /**
   * Resolves with the first state `accept` takes (checked at least every
   * poll interval); rejects after `timeoutMs` with `onTimeout()`'s error.
   */
  wait(
    signature: string,
    lastValidBlockHeight: number,
    accept: (state: SignatureState) => boolean,
    opts: {
      fast: boolean;
      timeoutMs: number;
      onTimeout: () => Error;
      /** The signed bytes, already sent once: re-sent every rebroadcast interval while this waits. */
      wire?: Uint8Array;
    },
  ): Promise<SignatureState> {
    if (opts.wire) this.rebroadcast.track(signature, opts.wire, lastValidBlockHeight);
    return new Promise<SignatureState>((resolve, reject) => {
      const timeout = setTimeout(() => {
        this.waiters.delete(waiter);
        this.forget(signature);
        reject(opts.onTimeout());
      }, opts.timeoutMs);
      const waiter: Waiter = {
        signature,
        lastValidBlockHeight,
        fast: opts.fast,
        accept: (state) => {
          if (!accept(state)) return false;
          clearTimeout(timeout);
          this.waiters.delete(waiter);
          if (state.kind !== 'processed') this.forget(signature);
          resolve(state);
          return true;
        },
      };
      // The first waiter of a burst is looked at at once (at the fast cadence again); later
      // ones join the poll already due, which keeps its time.
      const idle = this.waiters.size === 0;
      this.waiters.add(waiter);
      if (idle) this.quiet = 0;
      this.schedule(0);
    });
  }

  /** Stops re-sending a signature nobody waits for any more. */
  private forget(signature: string): void {
    for (const w of this.waiters) if (w.signature === signature) return;
    this.rebroadcast.untrack(signature);
  }

  private schedule(ms: number): void {
    if (this.timer || this.polling || this.waiters.size === 0) return;
    const due = Math.max(ms, this.polledAt + this.minPollMs - Date.now(), 0);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.round();
    }, due);
  }

  private async round(): Promise<void> {
    this.polling = true;
    this.polledAt = Date.now();
    const waiters = [...this.waiters];
    try {
      const signatures = [...new Set(waiters.map((w) => w.signature))];
      const statuses = new Map<string, { status: SignatureStatus | null; view: StatusView }>();
      let height: number | undefined;
      for (let i = 0; i < signatures.length; i += STATUS_BATCH) {
        const slice = signatures.slice(i, i + STATUS_BATCH);
        // The block height rides along in the same request (asked before the statuses).
        const answer = await heightAndStatuses(this.connection, slice);
        height = Math.min(height ?? answer.height, answer.height);
        slice.forEach((s, j) => {
          statuses.set(s, { status: answer.statuses[j] ?? null, view: answer });
        });
      }
      let answered = false;
      for (const w of waiters) {
        const seen = statuses.get(w.signature);
        // Confirmed or final: no more re-sends (a processed one may still be dropped with its fork).
        if (seen?.status && seen.status.confirmationStatus !== 'processed')
          this.rebroadcast.untrack(w.signature);
        if (w.accept(stateOf(seen?.status ?? null, seen?.view, w.lastValidBlockHeight))) answered = true;
      }
      this.quiet = answered ? 0 : this.quiet + 1;
      await this.rebroadcast.tick(height);
    } catch (err) {
      // RPC trouble: waiters keep waiting until their own timeout, polled less often meanwhile;
      // one-off looks get the error, as a direct read would have.
      for (const w of waiters) w.fail?.(err);
      this.quiet++;
    } finally {
      this.polling = false;
      const fast = [...this.waiters].some((w) => w.fast);
      this.schedule(this.intervalMs(fast, this.quiet));
    }
  }

  /** Stops polling; waiters time out on their own. */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
