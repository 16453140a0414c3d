// Rebroadcast of signed transactions, shared by the delivery pipeline
// (delivery/sendmail/signature-watch.ts) and program deploy
// (chain/program/deploy/sender.ts). A transaction is sent with `maxRetries: 0`
// (the RPC node does not keep re-forwarding it on its own schedule) and the
// very same signed bytes are sent again about every 2 s until it is seen or
// its blockhash is past lastValidBlockHeight. Re-sending the same bytes is
// always safe: one signature lands at most once. Only a new signature (a
// re-sign, after the old one provably cannot land) can make a second effect,
// and that is the caller's decision, never this module's.
import type { Commitment, Connection } from '@solana/web3.js';

/** How often the same bytes go out again while unconfirmed. */
export const REBROADCAST_MS = 2000;

/** The first send of signed bytes: no RPC-side retries, this process re-sends them itself. */
export function sendSigned(
  connection: Connection,
  wire: Uint8Array,
  opts: { skipPreflight?: boolean; preflightCommitment?: Commitment } = {},
): Promise<string> {
  return connection.sendRawTransaction(wire, { ...opts, maxRetries: 0 });
}

/** The same signed bytes again (skipPreflight, no RPC-side retries); never throws: the status poll tells the outcome. */
export async function resendSigned(connection: Connection, wire: Uint8Array): Promise<void> {
  await connection.sendRawTransaction(wire, { skipPreflight: true, maxRetries: 0 }).catch(() => undefined);
}

interface Tracked {
  wire: Uint8Array;
  lastValidBlockHeight: number;
  sentAt: number;
  /** Sends so far (the first one included). */
  sends: number;
}

/**
 * Transactions in flight, re-sent on the caller's timer: `tick()` (called
 * from a status poll, every round) re-sends every transaction last sent at
 * least `everyMs` ago and forgets those whose blockhash is past at the
 * given block height. Re-sends skip preflight and never throw (the status
 * poll is what tells the outcome).
 */
export class Rebroadcaster {
  private readonly tracked = new Map<string, Tracked>();
  private resends = 0;

  constructor(
    private readonly connection: Connection,
    readonly everyMs = REBROADCAST_MS,
  ) {}

  /** Starts re-sending `wire` (already sent once at `sentAt`). */
  track(signature: string, wire: Uint8Array, lastValidBlockHeight: number, sentAt = Date.now()): void {
    const known = this.tracked.get(signature);
    if (known) {
      known.sentAt = Math.max(known.sentAt, sentAt);
      return;
    }
    this.tracked.set(signature, { wire, lastValidBlockHeight, sentAt, sends: 1 });
  }

  untrack(signature: string): void {
    this.tracked.delete(signature);
  }

  has(signature: string): boolean {
    return this.tracked.has(signature);
  }

  /** Re-sends done so far (all transactions). */
  get resent(): number {
    return this.resends;
  }

  /** How many times `signature` went out (0 when not tracked). */
  sendsOf(signature: string): number {
    return this.tracked.get(signature)?.sends ?? 0;
  }

  /**
   * Re-sends what is due. `height`: the latest known block height (at
   * `confirmed`); a transaction whose lastValidBlockHeight is below it can
   * never land and is forgotten. Resolves to the number re-sent.
   */
  async tick(height?: number, now = Date.now()): Promise<number> {
    const due: [string, Tracked][] = [];
    for (const entry of this.tracked) {
      const t = entry[1];
      if (height !== undefined && height > t.lastValidBlockHeight) {
        this.tracked.delete(entry[0]);
        continue;
      }
      if (now - t.sentAt >= this.everyMs) due.push(entry);
    }
    for (const [, t] of due) {
      t.sentAt = now;
      t.sends++;
    }
    this.resends += due.length;
    await Promise.all(due.map(([, t]) => resendSigned(this.connection, t.wire)));
    return due.length;
  }
}
