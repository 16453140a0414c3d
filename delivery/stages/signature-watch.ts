// One poller for every SendMail a worker process waits on: instead of each
// job asking getSignatureStatuses for its own signature every 50 ms, the
// waiting signatures are asked about together (up to 256 per call, the RPC
// limit) on one timer, with the block height in the same JSON-RPC batch
// (to tell "still valid" from "expired" for a signature not seen yet).
import type { Connection, SignatureStatus } from '@solana/web3.js';
import { heightAndStatuses } from '../rpc.ts';

export type SignatureState =
  | { kind: 'landed' }
  | { kind: 'processed' }
  /** Landed with an error (final: the signature can never land again). */
  | { kind: 'failed'; err: unknown }
  | { kind: 'pending' }
  | { kind: 'expired' };

interface Waiter {
  signature: string;
  lastValidBlockHeight: number;
  /** Resolves on the first state this waiter accepts. */
  accept(state: SignatureState): boolean;
  fast: boolean;
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

/** What a status says, given the block height when it is missing. */
export function stateOf(
  status: SignatureStatus | null,
  height: number | undefined,
  lastValidBlockHeight: number,
): SignatureState {
  if (status) {
    if (status.err) return { kind: 'failed', err: status.err };
    return status.confirmationStatus === 'processed' ? { kind: 'processed' } : { kind: 'landed' };
  }
  if (height === undefined) return { kind: 'pending' };
  return height <= lastValidBlockHeight ? { kind: 'pending' } : { kind: 'expired' };
}

export class SignatureWatch {
  private readonly waiters = new Set<Waiter>();
  private timer: NodeJS.Timeout | undefined;
  private polling = false;

  constructor(
    private readonly connection: Connection,
    /** Poll interval while someone waits for `processed` / only for `confirmed`. */
    private readonly intervals = { fastMs: 10, slowMs: 50 },
  ) {}

  /** The current state of one signature (one round trip, or two when it is not seen). */
  async check(signature: string, lastValidBlockHeight: number): Promise<SignatureState> {
    const { value } = await this.connection.getSignatureStatuses([signature], {
      searchTransactionHistory: true,
    });
    const status = value[0] ?? null;
    if (status) return stateOf(status, undefined, lastValidBlockHeight);
    return stateOf(null, await this.connection.getBlockHeight('confirmed'), lastValidBlockHeight);
  }

  /**
   * Resolves with the first state `accept` takes (checked at least every
   * poll interval); rejects after `timeoutMs` with `onTimeout()`'s error.
   */
  wait(
    signature: string,
    lastValidBlockHeight: number,
    accept: (state: SignatureState) => boolean,
    opts: { fast: boolean; timeoutMs: number; onTimeout: () => Error },
  ): Promise<SignatureState> {
    return new Promise<SignatureState>((resolve, reject) => {
      const timeout = setTimeout(() => {
        this.waiters.delete(waiter);
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
          resolve(state);
          return true;
        },
      };
      this.waiters.add(waiter);
      this.schedule(0);
    });
  }

  private schedule(ms: number): void {
    if (this.timer || this.polling || this.waiters.size === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.round();
    }, ms);
  }

  private async round(): Promise<void> {
    this.polling = true;
    const waiters = [...this.waiters];
    try {
      const signatures = [...new Set(waiters.map((w) => w.signature))];
      const statuses = new Map<string, SignatureStatus | null>();
      let height: number | undefined;
      for (let i = 0; i < signatures.length; i += STATUS_BATCH) {
        const slice = signatures.slice(i, i + STATUS_BATCH);
        // The block height rides along in the same request (read before the statuses).
        const answer = await heightAndStatuses(this.connection, slice);
        height ??= answer.height;
        slice.forEach((s, j) => {
          statuses.set(s, answer.statuses[j] ?? null);
        });
      }
      for (const w of waiters) {
        w.accept(stateOf(statuses.get(w.signature) ?? null, height, w.lastValidBlockHeight));
      }
    } catch {
      // RPC trouble: waiters keep waiting until their own timeout.
    } finally {
      this.polling = false;
      const fast = [...this.waiters].some((w) => w.fast);
      this.schedule(fast ? this.intervals.fastMs : this.intervals.slowMs);
    }
  }

  /** Stops polling; waiters time out on their own. */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
