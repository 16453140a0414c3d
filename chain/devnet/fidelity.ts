// Fidelity mode: switches that make devnet answer like a mainnet RPC provider
// in front of a real cluster — lagging status reads, silently dropped sends,
// a minimum priority fee under congestion, HTTP 429 above a request rate,
// refused or slow getProgramAccounts, commitment-true reads and block
// heights, and Agave's request limits. Every switch is off by default, and a
// devnet started without `fidelity` never consults this module's state.

import { createHash } from 'node:crypto';
import { prng } from '../client/prng.ts';
import type { Bank } from './bank.ts';
import { RpcError } from './rpc-errors.ts';

export type ProgramAccountsMode = 'ok' | 'refuse' | 'slow';

export interface FidelityOptions {
  /**
   * A lagging provider node: a signature that landed within the last N slots
   * is not found by getSignatureStatuses (with or without
   * searchTransactionHistory), getTransaction and getSignaturesForAddress
   * (and PubSub signatureSubscribe notifies only after the lag), and
   * getSignatureStatuses' context slot trails the node's by N. 0 = off.
   */
  statusLagSlots?: number;
  /**
   * With statusLagSlots: the probability that a given signature is hidden
   * (drawn once per signature, so a hidden one stays hidden for the whole
   * lag). Omitted = every recent signature is hidden.
   */
  statusLagProbability?: number;
  /**
   * The fraction of sendTransaction calls accepted (the signature returned,
   * after preflight) but never processed. Each call draws afresh: a
   * rebroadcast of the same bytes may land. 0 = off.
   */
  dropRate?: number;
  /**
   * Congestion: a transaction whose SetComputeUnitPrice is below this (or
   * absent) is accepted and dropped; getRecentPrioritizationFees answers 150
   * recent slots with fees around this level. 0 = off.
   */
  minPriorityFeeMicroLamports?: number;
  /** HTTP 429 above this many JSON-RPC calls per second (token bucket, a batch counts each call). 0 = off. */
  maxRps?: number;
  /** The Retry-After (seconds) of a 429; default 1. */
  retryAfterSecs?: number;
  /** getProgramAccounts: 'ok' (default), 'refuse' (-32010 as a provider answers), 'slow'. */
  programAccounts?: ProgramAccountsMode;
  /** The delay of 'slow' getProgramAccounts answers; default 3000 ms. */
  programAccountsDelayMs?: number;
  /**
   * Commitment-true reads: `confirmed` is one closed slot behind the last
   * (two behind processed), `finalized` finalizeDepth (32) behind that;
   * getAccountInfo / getMultipleAccounts / getBalance read the state as of
   * the commitment's slot, statuses report that confirmation; block height
   * is the slot minus a skip count (BLOCK_HEIGHT_SKIP, halved slots below
   * twice that), blockhash lifetimes counted in block heights.
   */
  commitmentTrue?: boolean;
  /**
   * Agave's request limits: bodies over 50 kB answered HTTP 413, the
   * deprecated commitments (recent, single, singleGossip, root, max)
   * refused, at most 128 accounts for getRecentPrioritizationFees.
   * (getMultipleAccounts ≤ 100 and getSignatureStatuses ≤ 256 hold always.)
   */
  agaveLimits?: boolean;
  /** Seed of the random draws (drops, hidden signatures); default random. */
  seed?: number;
}

export interface FidelityStats {
  /** HTTP POSTs to the JSON-RPC port. */
  requests: number;
  /** JSON-RPC calls in them (a batch counts each). */
  calls: number;
  /** HTTP 429 answers. */
  rateLimited: number;
  /** Requests that arrived inside the Retry-After window of an earlier 429 (a client ignoring Retry-After). */
  requestsInRetryAfter: number;
  /** sendTransaction calls accepted and dropped by dropRate. */
  dropped: number;
  /** sendTransaction calls accepted and dropped for a priority fee under the minimum. */
  droppedLowFee: number;
  /** Statuses / transactions answered as not found by the status lag. */
  hiddenStatuses: number;
  /** getProgramAccounts calls refused ('refuse'). */
  programAccountsRefused: number;
  /** getProgramAccounts answers delayed ('slow'). */
  programAccountsDelayed: number;
  /** Requests refused by agaveLimits (413 bodies, deprecated commitments, too many keys). */
  agaveRefused: number;
  /** The most JSON-RPC calls that arrived within any one second (a sliding window; 429'd calls included). */
  peakCallsPerSecond: number;
  /**
   * Of the requests counted in requestsInRetryAfter, the longest time (ms)
   * between the most recent 429 and such a request's arrival: a few ms for
   * requests already on their way when the 429 was answered, up to the
   * Retry-After for a client that ignores it (0: none arrived in a window).
   */
  retryAfterLatestArrivalMs: number;
  /** The calls served (not answered 429), by method. */
  methods: Record<string, number>;
}

/** Block height = slot − this in commitment-true mode (slots below twice this: half the slot). */
export const BLOCK_HEIGHT_SKIP = 64;
/** Agave's MAX_REQUEST_BODY_SIZE. */
export const AGAVE_MAX_REQUEST_BODY_BYTES = 50 * 1024;
/** Slots of getRecentPrioritizationFees (Agave's prioritization fee cache). */
export const RECENT_FEE_SLOTS = 150;
export const DEFAULT_RETRY_AFTER_SECS = 1;
export const DEFAULT_PROGRAM_ACCOUNTS_DELAY_MS = 3000;

/**
 * Realistic values for a busy mainnet-beta through a commercial provider
 * (`--fidelity mainnet`): a node that often lags a few slots, one send in
 * five lost, 10,000 µlamports/CU to land, 50 calls/s, no getProgramAccounts.
 */
export const MAINNET_FIDELITY: FidelityOptions = {
  statusLagSlots: 8,
  statusLagProbability: 0.3,
  dropRate: 0.2,
  minPriorityFeeMicroLamports: 10_000,
  maxRps: 50,
  retryAfterSecs: 1,
  programAccounts: 'refuse',
  commitmentTrue: true,
  agaveLimits: true,
};

const DEPRECATED_COMMITMENTS = new Set(['recent', 'single', 'singleGossip', 'root', 'max']);

function check(o: FidelityOptions): void {
  const fraction = (v: number | undefined, what: string) => {
    if (v !== undefined && !(Number.isFinite(v) && v >= 0 && v <= 1))
      throw new RangeError(`fidelity: ${what} must be in 0..1, got ${v}`);
  };
  const count = (v: number | undefined, what: string) => {
    if (v !== undefined && !(Number.isFinite(v) && v >= 0))
      throw new RangeError(`fidelity: ${what} must be a number ≥ 0, got ${v}`);
  };
  count(o.statusLagSlots, 'statusLagSlots');
  fraction(o.statusLagProbability, 'statusLagProbability');
  fraction(o.dropRate, 'dropRate');
  count(o.minPriorityFeeMicroLamports, 'minPriorityFeeMicroLamports');
  count(o.maxRps, 'maxRps');
  count(o.retryAfterSecs, 'retryAfterSecs');
  count(o.programAccountsDelayMs, 'programAccountsDelayMs');
  if (o.programAccounts !== undefined && !['ok', 'refuse', 'slow'].includes(o.programAccounts))
    throw new RangeError(`fidelity: programAccounts must be ok, refuse or slow, got ${o.programAccounts}`);
}

export const emptyFidelityStats = (): FidelityStats => ({
  requests: 0,
  calls: 0,
  rateLimited: 0,
  requestsInRetryAfter: 0,
  dropped: 0,
  droppedLowFee: 0,
  hiddenStatuses: 0,
  programAccountsRefused: 0,
  programAccountsDelayed: 0,
  agaveRefused: 0,
  peakCallsPerSecond: 0,
  retryAfterLatestArrivalMs: 0,
  methods: {},
});

/** The calls of the last second (a sliding window) and the most ever seen in one. */
class CallRate {
  private times: number[] = [];
  private counts: number[] = [];
  private head = 0;
  private inWindow = 0;

  /** Adds `calls` arriving at `t` (ms); the calls within the second up to t. */
  add(t: number, calls: number): number {
    while (this.head < this.times.length && (this.times[this.head] as number) <= t - 1000) {
      this.inWindow -= this.counts[this.head] as number;
      this.head++;
    }
    if (this.head > 1024) {
      this.times = this.times.slice(this.head);
      this.counts = this.counts.slice(this.head);
      this.head = 0;
    }
    this.times.push(t);
    this.counts.push(calls);
    this.inWindow += calls;
    return this.inWindow;
  }

  reset(): void {
    this.times = [];
    this.counts = [];
    this.head = 0;
    this.inWindow = 0;
  }
}

/** The live fidelity state of one devnet: its switches, draws, token bucket and counters. */
export class Fidelity {
  private opts: FidelityOptions = {};
  private random: () => number;
  private readonly seed: number;
  private readonly hidden = new Map<string, boolean>();
  private tokens = 0;
  private refilledAt = 0;
  private retryAfterUntil = 0;
  private last429At = 0;
  private readonly rate = new CallRate();
  stats: FidelityStats = emptyFidelityStats();

  constructor(
    private readonly bank: Bank,
    opts: FidelityOptions = {},
    private readonly now: () => number = () => performance.now(),
  ) {
    this.seed = opts.seed ?? Math.floor(Math.random() * 2 ** 32);
    this.random = prng(this.seed);
    bank.enableJournal();
    this.set(opts);
  }

  get options(): Readonly<FidelityOptions> {
    return this.opts;
  }

  /** Changes some switches (the others keep their values); `undefined` values are ignored. */
  set(partial: FidelityOptions): void {
    const defined = Object.fromEntries(Object.entries(partial).filter(([, v]) => v !== undefined));
    const next = { ...this.opts, ...defined } as FidelityOptions;
    check(next);
    if (partial.seed !== undefined) this.random = prng(partial.seed);
    if (next.maxRps !== this.opts.maxRps) {
      this.tokens = next.maxRps ?? 0;
      this.refilledAt = this.now();
    }
    if (next.statusLagProbability !== this.opts.statusLagProbability) this.hidden.clear();
    this.opts = next;
    const commitmentTrue = next.commitmentTrue === true;
    this.bank.setConfirmLag(commitmentTrue ? 1 : 0);
    this.bank.setBlockHeightSkip(commitmentTrue ? BLOCK_HEIGHT_SKIP : 0);
  }

  resetStats(): void {
    this.stats = emptyFidelityStats();
    this.rate.reset();
  }

  get commitmentTrue(): boolean {
    return this.opts.commitmentTrue === true;
  }

  get agaveLimits(): boolean {
    return this.opts.agaveLimits === true;
  }

  // ── HTTP level ───────────────────────────────────────────────────────

  /** Counts a request of `calls` calls; a number of seconds to answer 429 with, or null to serve it. */
  admit(calls: number): number | null {
    const t = this.now();
    this.stats.requests++;
    this.stats.calls += calls;
    this.stats.peakCallsPerSecond = Math.max(this.stats.peakCallsPerSecond, this.rate.add(t, calls));
    if (t < this.retryAfterUntil) {
      this.stats.requestsInRetryAfter++;
      this.stats.retryAfterLatestArrivalMs = Math.max(
        this.stats.retryAfterLatestArrivalMs,
        Math.round(t - this.last429At),
      );
    }
    const rps = this.opts.maxRps ?? 0;
    if (rps <= 0) return null;
    this.tokens = Math.min(rps, this.tokens + ((t - this.refilledAt) / 1000) * rps);
    this.refilledAt = t;
    // A batch larger than the bucket passes when the bucket is full (and leaves it in debt).
    if (this.tokens < Math.min(calls, rps)) {
      const retryAfter = this.opts.retryAfterSecs ?? DEFAULT_RETRY_AFTER_SECS;
      this.stats.rateLimited++;
      this.last429At = t;
      this.retryAfterUntil = Math.max(this.retryAfterUntil, t + retryAfter * 1000);
      return retryAfter;
    }
    this.tokens -= calls;
    return null;
  }

  /** The body limit in force (Agave's 50 kB under agaveLimits). */
  maxBodyBytes(configured: number): number {
    return this.agaveLimits ? Math.min(configured, AGAVE_MAX_REQUEST_BODY_BYTES) : configured;
  }

  /** Milliseconds to hold a response holding a getProgramAccounts answer ('slow'); 0 = none. */
  programAccountsDelay(methods: readonly string[]): number {
    if (this.opts.programAccounts !== 'slow' || !methods.includes('getProgramAccounts')) return 0;
    this.stats.programAccountsDelayed++;
    return this.opts.programAccountsDelayMs ?? DEFAULT_PROGRAM_ACCOUNTS_DELAY_MS;
  }

  // ── per call ─────────────────────────────────────────────────────────

  /**
   * Every call served: counted by method; getProgramAccounts refused under
   * 'refuse'; agaveLimits: refuses a deprecated commitment anywhere in a
   * call's config objects.
   */
  checkCall(method: string, params: unknown[]): void {
    this.stats.methods[method] = (this.stats.methods[method] ?? 0) + 1;
    if (method === 'getProgramAccounts' && this.opts.programAccounts === 'refuse') {
      this.stats.programAccountsRefused++;
      const key = typeof params[0] === 'string' ? params[0] : 'program id';
      throw new RpcError(
        -32010,
        `${key} excluded from account secondary indexes; this RPC method unavailable for key`,
      );
    }
    if (!this.agaveLimits) return;
    for (const p of params) {
      if (typeof p !== 'object' || p === null || Array.isArray(p)) continue;
      for (const key of ['commitment', 'preflightCommitment']) {
        const v = (p as Record<string, unknown>)[key];
        if (typeof v === 'string' && DEPRECATED_COMMITMENTS.has(v)) {
          this.stats.agaveRefused++;
          throw new RpcError(
            -32602,
            `Invalid params: unknown variant \`${v}\`, expected one of \`processed\`, \`confirmed\`, \`finalized\`.`,
          );
        }
      }
    }
  }

  noteAgaveRefusal(): void {
    this.stats.agaveRefused++;
  }

  /**
   * The lag: whether a status / transaction of `signature`, landed in `slot`,
   * is answered as not found (`count`: in hiddenStatuses).
   */
  hides(signature: string, slot: number, count = true): boolean {
    const lag = this.opts.statusLagSlots ?? 0;
    if (lag <= 0 || slot <= this.bank.slot - lag) return false;
    const p = this.opts.statusLagProbability;
    let hide = true;
    if (p !== undefined) {
      let drawn = this.hidden.get(signature);
      if (drawn === undefined) {
        if (this.hidden.size > 100_000) this.hidden.clear();
        drawn = this.random() < p;
        this.hidden.set(signature, drawn);
      }
      hide = drawn;
    }
    if (hide && count) this.stats.hiddenStatuses++;
    return hide;
  }

  /** getSignatureStatuses' context slot: the lagging node's. */
  statusContextSlot(slot: number): number {
    return Math.max(0, slot - (this.opts.statusLagSlots ?? 0));
  }

  /** Whether an accepted transaction with this compute-unit price is dropped (and counts why). */
  drops(priceMicroLamports: bigint): boolean {
    const min = this.opts.minPriorityFeeMicroLamports ?? 0;
    if (min > 0 && priceMicroLamports < BigInt(Math.ceil(min))) {
      this.stats.droppedLowFee++;
      return true;
    }
    const rate = this.opts.dropRate ?? 0;
    if (rate > 0 && this.random() < rate) {
      this.stats.dropped++;
      return true;
    }
    return false;
  }

  /** getRecentPrioritizationFees under congestion: 150 slots of fees between 0.75× and 1.5× the minimum. */
  recentPrioritizationFees(
    accounts: readonly string[],
  ): { slot: number; prioritizationFee: number }[] | null {
    const min = this.opts.minPriorityFeeMicroLamports ?? 0;
    if (min <= 0) return null;
    const last = this.bank.slot;
    const out: { slot: number; prioritizationFee: number }[] = [];
    const keys = accounts.join(',');
    for (let slot = Math.max(0, last - RECENT_FEE_SLOTS + 1); slot <= last; slot++) {
      // The same answer for a slot on every call (a hash, not a draw).
      const h = createHash('sha256').update(`${this.seed}:${slot}:${keys}`).digest().readUInt32LE(0);
      out.push({ slot, prioritizationFee: Math.round(min * (0.75 + (0.75 * h) / 2 ** 32)) });
    }
    return out;
  }
}

/**
 * Parses `--fidelity` specs: comma-separated switches, later ones winning.
 *   mainnet                  the MAINNET_FIDELITY preset
 *   lag=N[:P]                statusLagSlots N (probability P per signature)
 *   drop=F                   dropRate F (0..1)
 *   min-fee=N                minPriorityFeeMicroLamports N
 *   rps=N[:S]                maxRps N (Retry-After S seconds)
 *   gpa=ok|refuse|slow[:MS]  programAccounts (slow: delay MS)
 *   commitment               commitmentTrue
 *   agave                    agaveLimits
 *   seed=N                   seed
 */
export function parseFidelitySpec(spec: string): FidelityOptions {
  const out: FidelityOptions = {};
  const num = (text: string | undefined, what: string): number => {
    const n = Number(text);
    if (text === undefined || text === '' || !Number.isFinite(n) || n < 0)
      throw new RangeError(`fidelity: ${what} expects a number ≥ 0, got "${text ?? ''}"`);
    return n;
  };
  for (const raw of spec.split(',')) {
    const item = raw.trim();
    if (item === '') continue;
    const [key, value] = item.split('=', 2) as [string, string | undefined];
    const [a, b] = value === undefined ? [undefined, undefined] : value.split(':', 2);
    switch (key) {
      case 'mainnet':
        Object.assign(out, MAINNET_FIDELITY);
        break;
      case 'lag':
        out.statusLagSlots = num(a, 'lag');
        if (b !== undefined) out.statusLagProbability = num(b, 'lag probability');
        break;
      case 'drop':
        out.dropRate = num(a, 'drop');
        break;
      case 'min-fee':
        out.minPriorityFeeMicroLamports = num(a, 'min-fee');
        break;
      case 'rps':
        out.maxRps = num(a, 'rps');
        if (b !== undefined) out.retryAfterSecs = num(b, 'rps retry-after');
        break;
      case 'gpa':
        if (a !== 'ok' && a !== 'refuse' && a !== 'slow')
          throw new RangeError(`fidelity: gpa expects ok, refuse or slow[:MS], got "${value ?? ''}"`);
        out.programAccounts = a;
        if (b !== undefined) out.programAccountsDelayMs = num(b, 'gpa delay');
        break;
      case 'commitment':
        out.commitmentTrue = value === undefined ? true : value !== 'off' && value !== 'false';
        break;
      case 'agave':
        out.agaveLimits = value === undefined ? true : value !== 'off' && value !== 'false';
        break;
      case 'seed':
        out.seed = num(a, 'seed');
        break;
      default:
        throw new RangeError(
          `fidelity: unknown switch "${key}" (mainnet, lag=N[:P], drop=F, min-fee=N, rps=N[:S], gpa=ok|refuse|slow[:MS], commitment, agave, seed=N)`,
        );
    }
  }
  check(out);
  return out;
}

/** The `--fidelity` spec of these options (parseFidelitySpec's inverse), e.g. for a child `sealpost devnet`. */
export function formatFidelitySpec(o: FidelityOptions): string {
  const parts: string[] = [];
  if (o.statusLagSlots !== undefined)
    parts.push(
      `lag=${o.statusLagSlots}${o.statusLagProbability !== undefined ? `:${o.statusLagProbability}` : ''}`,
    );
  if (o.dropRate !== undefined) parts.push(`drop=${o.dropRate}`);
  if (o.minPriorityFeeMicroLamports !== undefined) parts.push(`min-fee=${o.minPriorityFeeMicroLamports}`);
  if (o.maxRps !== undefined)
    parts.push(`rps=${o.maxRps}${o.retryAfterSecs !== undefined ? `:${o.retryAfterSecs}` : ''}`);
  if (o.programAccounts !== undefined)
    parts.push(
      `gpa=${o.programAccounts}${o.programAccountsDelayMs !== undefined ? `:${o.programAccountsDelayMs}` : ''}`,
    );
  if (o.commitmentTrue !== undefined) parts.push(o.commitmentTrue ? 'commitment' : 'commitment=off');
  if (o.agaveLimits !== undefined) parts.push(o.agaveLimits ? 'agave' : 'agave=off');
  if (o.seed !== undefined) parts.push(`seed=${o.seed}`);
  return parts.join(',');
}
