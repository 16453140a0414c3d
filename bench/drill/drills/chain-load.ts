// What the chain drills (chain-lag, chain-drops, chain-congestion, chain-429,
// chain-rollback) share: a drill stack whose devnet runs in this process in
// fidelity mode, a load of mail through the MX, and the figures. While the
// load runs and drains the drill itself sends no JSON-RPC call (it watches
// the mailboxes in the bank), so the node's counters are the stack's alone:
// calls per delivered message, the peak calls in any one second, 429s. The
// authority's balance is read from the bank before and after; the Email
// accounts' lamports are the rent and the authority's landed transactions
// (the bank's history) the fees, split into signature and priority fees.
// Only once the figures are taken are the node's limits lifted for the proof
// (every acknowledged message read from the chain, opened, accounted).
// The one-phase drills (chainDrill) also run under a provider's request
// limit (NODE_RPS at the node, `max_rps` per process below it) and fail on a
// 429 or a peak over what the stack was allowed.
import { setTimeout as sleep } from 'node:timers/promises';
import { decodeMailbox } from '../../../chain/client/accounts/index.ts';
import { mailboxAddress } from '../../../chain/client/pda.ts';
import type { FidelityOptions, FidelityStats } from '../../../chain/devnet/server.ts';
import type { DrillResult } from '../drill.ts';
import {
  type Accounting,
  account,
  describeAccounting,
  type LoadResult,
  readInboxes,
  sendLoad,
} from '../mail.ts';
import { type FidelityDrillStack, startDrillStack } from '../rig.ts';

/** Rent of one Email account with an operator-pinned CID (docs/operations.md "What a message costs on chain"). */
export const EMAIL_RENT_LAMPORTS = 2_679_600;
const SIGNATURE_FEE = 5000n;

export interface PhaseOptions {
  /** Subject tag of the phase's messages (unique per phase). */
  tag: string;
  messages: number;
  /** SMTP connections sending (default 4). */
  connections?: number;
  /** Pause between messages on one connection (default none). */
  paceMs?: number;
  /** Runs while the load is sent (a fault); awaited before the drain is waited for. `done()` says the load is sent. */
  during?: (stack: FidelityDrillStack, done: () => boolean) => Promise<void>;
  /** Longest wait for every acknowledged message to be on chain at `confirmed` (default 4 min). */
  drainMs?: number;
}

export interface Phase {
  tag: string;
  load: LoadResult;
  /** The node's counters from the first message to the drain (plus a few seconds to settle). */
  stats: FidelityStats;
  /** Email accounts counted in the mailboxes at `confirmed` when the wait ended. */
  onChain: number;
  /** From the first message sent to the last acknowledged one on chain at `confirmed`, or null (not all within drainMs). */
  deliverMs: number | null;
  /** Authority balance before minus after. */
  spentLamports: bigint;
  /** The authority's landed transactions in the phase: count, failed, fees. */
  txs: number;
  failedTxs: number;
  /** Landed without a priority fee (a compute-unit price of 0 or none). */
  txsWithoutPriorityFee: number;
  signatureFees: bigint;
  priorityFees: bigint;
  /** Set once the inboxes are read (finish). */
  accounting?: Accounting;
  rentLamports?: bigint;
}

/** The Email accounts in the stack's mailboxes, as of the `confirmed` slot, read from the bank. */
export function emailsOnChain(stack: FidelityDrillStack): number {
  const bank = stack.devnet.bank;
  const slot = bank.slotAt('confirmed');
  let n = 0;
  for (const w of stack.wallets) {
    const address = mailboxAddress(stack.programId, w.address)[0].toBase58();
    const state = bank.accountAt(address, slot);
    if (state && state.owner === stack.programId) n += Number(decodeMailbox(state.data).mailCount);
  }
  return n;
}

function balance(stack: FidelityDrillStack): bigint {
  return stack.devnet.bank.getAccount(stack.authority.address)?.lamports ?? 0n;
}

/** One load through the stack, with its figures (no inbox read yet: see finish). */
export async function runPhase(
  stack: FidelityDrillStack,
  log: (line: string) => void,
  opts: PhaseOptions,
): Promise<Phase> {
  const bank = stack.devnet.bank;
  const before = balance(stack);
  const startSlot = bank.slot;
  const baseEmails = emailsOnChain(stack);
  stack.devnet.resetFidelityStats();
  const t0 = Date.now();
  let sent = false;
  const sending = sendLoad({
    mxPort: stack.mxPort,
    to: stack.addresses(),
    count: opts.messages,
    connections: opts.connections ?? 4,
    paceMs: opts.paceMs,
    deadlineMs: 4 * 60_000,
    tag: opts.tag,
  }).finally(() => {
    sent = true;
  });
  const fault = opts.during?.(stack, () => sent) ?? Promise.resolve();
  const load = await sending;
  log(
    `${opts.tag}: ${load.acked.length} acknowledged in ${((Date.now() - t0) / 1000).toFixed(0)} s, ${load.unacked} given up`,
  );
  await fault;
  const deadline = Date.now() + (opts.drainMs ?? 4 * 60_000);
  let onChain = emailsOnChain(stack) - baseEmails;
  let deliverMs: number | null = null;
  let lastLog = Date.now();
  for (;;) {
    onChain = emailsOnChain(stack) - baseEmails;
    if (onChain >= load.acked.length) {
      deliverMs = Date.now() - t0;
      break;
    }
    if (Date.now() > deadline) break;
    if (Date.now() - lastLog > 10_000) {
      lastLog = Date.now();
      log(
        `${opts.tag}: ${onChain} of ${load.acked.length} on chain at confirmed after ${((Date.now() - t0) / 1000).toFixed(0)} s`,
      );
    }
    await sleep(200);
  }
  log(
    `${opts.tag}: ${onChain} Email accounts at confirmed ${deliverMs === null ? 'when the wait ended' : `after ${(deliverMs / 1000).toFixed(1)} s`}`,
  );
  // Confirmation polls and stragglers (a late double would land now).
  await sleep(5000);
  const stats = stack.devnet.fidelityStats();
  const spentLamports = before - balance(stack);
  let txs = 0;
  let failedTxs = 0;
  let txsWithoutPriorityFee = 0;
  let signatureFees = 0n;
  let priorityFees = 0n;
  for (const r of bank.signaturesForAddress(stack.authority.address, { limit: 1_000_000 })) {
    if (r.slot <= startSlot || r.accountKeys[0] !== stack.authority.address) continue;
    txs++;
    if (r.err) failedTxs++;
    const sig = SIGNATURE_FEE * BigInt(r.wire[0] ?? 1);
    signatureFees += sig;
    priorityFees += r.fee - sig;
    if (!r.err && r.fee <= sig) txsWithoutPriorityFee++;
  }
  return {
    tag: opts.tag,
    load,
    stats,
    onChain,
    deliverMs,
    spentLamports,
    txs,
    failedTxs,
    txsWithoutPriorityFee,
    signatureFees,
    priorityFees,
  };
}

/**
 * Lifts the node's limits (the commitment mode stays), reads every mailbox
 * from the chain and opens each message, and accounts each phase's messages.
 */
export async function finish(stack: FidelityDrillStack, phases: Phase[]): Promise<{ unreadable: number }> {
  stack.devnet.setFidelity({
    statusLagSlots: 0,
    dropRate: 0,
    minPriorityFeeMicroLamports: 0,
    maxRps: 0,
  });
  const inbox = await readInboxes(stack.connection, stack.programId, stack.gatewayUrl, stack.wallets);
  for (const p of phases) {
    const mine = inbox.filter((e) => e.subject.startsWith(`${p.tag}-`) || e.subject === '?');
    p.accounting = account(p.load.acked, mine);
    p.rentLamports = mine
      .filter((e) => e.subject.startsWith(`${p.tag}-`))
      .reduce((s, e) => s + BigInt(e.lamports), 0n);
  }
  return { unreadable: inbox.filter((e) => e.subject === '?').length };
}

const n = (v: number | bigint) => v.toLocaleString('en-US');

/** Lost, doubled (either kind), unreadable, wrong wallet, given up: none of them allowed. */
export function phaseOk(p: Phase): boolean {
  const a = p.accounting;
  return (
    a !== undefined &&
    a.lost.length === 0 &&
    a.duplicates.length === 0 &&
    a.retriedDuplicates.length === 0 &&
    a.unreadable === 0 &&
    a.wrongRecipient === 0 &&
    p.load.unacked === 0 &&
    p.deliverMs !== null
  );
}

/** The methods served most, per delivered message. */
function topMethods(stats: FidelityStats, delivered: number): string {
  return Object.entries(stats.methods)
    .sort(([, a], [, b]) => b - a)
    .slice(0, 5)
    .map(([m, c]) => `${m} ${(c / delivered).toFixed(1)}`)
    .join(', ');
}

/** The figures of a phase, one line. */
export function describePhase(p: Phase): string {
  const a = p.accounting as Accounting;
  const delivered = Math.max(1, a.delivered);
  const rent = p.rentLamports ?? 0n;
  const fees = p.spentLamports - rent;
  const per = (v: bigint) => n(Math.round(Number(v) / delivered));
  const other = fees - p.signatureFees - p.priorityFees;
  return [
    `${a.acked} messages: ${a.lost.length} lost, ${a.duplicates.length + a.retriedDuplicates.length} doubled (${describeAccounting(a)})`,
    `${(p.stats.calls / delivered).toFixed(1)} RPC calls/msg (${n(p.stats.calls)} calls in ${n(p.stats.requests)} requests; a msg: ${topMethods(p.stats, delivered)}), peak ${n(p.stats.peakCallsPerSecond)} calls/s at the node`,
    `${per(p.spentLamports)} lamports/msg paid by the authority = ${per(rent)} rent + ${per(fees)} fees (${per(p.signatureFees)} signature + ${per(p.priorityFees)} priority${other !== 0n ? ` + ${per(other)} unexplained` : ''}; ${n(p.txs)} transactions, ${n(p.failedTxs)} failed on chain)`,
    p.deliverMs === null
      ? `NOT all delivered (${p.onChain} on chain at the end of the wait)`
      : `all delivered in ${(p.deliverMs / 1000).toFixed(1)} s`,
  ].join('; ');
}

/**
 * The request limit the one-phase chain drills run under, a commercial
 * provider's: the node answers 429 above 50 calls/s (a paid entry plan's
 * rate; mainnet fidelity's too), and the stack, one process (serve with the
 * pipeline workers in it), keeps to `[chain] max_rps = 40`, leaving
 * 10 calls/s for what else shares the key (the CLI, a dashboard). The stack
 * polls statuses at `[chain] status_poll_ms = 400`, its default for a node
 * off this host (on loopback it would poll every 10 ms).
 */
export const NODE_RPS = 50;
export const STACK_RPS = 40;
export const STACK_PROCESSES = 1;
export const STATUS_POLL_MS = 400;
/** How the drills' summaries name that limit. */
export const LIMIT_SUMMARY = `node limit ${NODE_RPS} calls/s, [chain] max_rps = ${STACK_RPS} × ${STACK_PROCESSES} process${STACK_PROCESSES === 1 ? '' : 'es'}`;

export interface ChainDrillOptions extends PhaseOptions {
  label: string;
  fidelity: FidelityOptions;
  /** More `[chain]` keys for the stack. */
  chain?: Record<string, string | number | boolean>;
  wallets?: number;
  /** Drill-specific figures after the common ones, and more conditions to pass. */
  extra?: (phase: Phase, stack: FidelityDrillStack) => { detail: string; pass: boolean };
}

/** The rate the node saw against the limit held: no 429 and a peak within max_rps × processes (≤ the node's limit). */
export function rateHeld(
  stats: FidelityStats,
  limits: { nodeRps: number; stackRps: number; processes: number },
): { detail: string; pass: boolean } {
  const bound = limits.stackRps * limits.processes;
  const pass = stats.rateLimited === 0 && stats.peakCallsPerSecond <= bound && bound <= limits.nodeRps;
  return {
    detail: `peak ${n(stats.peakCallsPerSecond)} calls/s ≤ ${bound} (max_rps ${limits.stackRps} × ${limits.processes} process${limits.processes === 1 ? '' : 'es'}; node limit ${limits.nodeRps}, ${n(stats.rateLimited)} × 429): ${pass ? 'yes' : 'NO'}`,
    pass,
  };
}

/**
 * A one-phase chain drill: one process (`serve --workers 1` with the
 * pipeline workers in it), so "per process" figures are exact, against a
 * node limited to NODE_RPS with the process at `max_rps = STACK_RPS`. Fails on a loss, a double, a 429 or a peak over
 * STACK_RPS × STACK_PROCESSES at the node.
 */
export async function chainDrill(opts: ChainDrillOptions, log: (line: string) => void): Promise<DrillResult> {
  const stack = await startChainStack({
    ...opts,
    fidelity: { maxRps: NODE_RPS, retryAfterSecs: 1, ...opts.fidelity },
    chain: { max_rps: STACK_RPS, status_poll_ms: STATUS_POLL_MS, ...opts.chain },
    oneProcess: STACK_PROCESSES === 1,
  });
  try {
    const phase = await runPhase(stack, log, opts);
    await finish(stack, [phase]);
    const rate = rateHeld(phase.stats, {
      nodeRps: NODE_RPS,
      stackRps: STACK_RPS,
      processes: STACK_PROCESSES,
    });
    const extra = opts.extra?.(phase, stack) ?? { detail: '', pass: true };
    return {
      pass: phaseOk(phase) && rate.pass && extra.pass,
      detail: `${describePhase(phase)}; ${rate.detail}${extra.detail ? `; ${extra.detail}` : ''}`,
    };
  } finally {
    await stack.close();
  }
}

export function startChainStack(opts: {
  label: string;
  fidelity: FidelityOptions;
  chain?: Record<string, string | number | boolean>;
  wallets?: number;
  /** One process for everything (serve with the pipeline workers in it) instead of serve + a worker process. */
  oneProcess?: boolean;
}): Promise<FidelityDrillStack> {
  return startDrillStack({
    label: opts.label,
    wallets: opts.wallets ?? 5,
    workers: opts.oneProcess ? 0 : 1,
    workersInServe: opts.oneProcess === true,
    serveArgs: ['--workers', '1'],
    chain: opts.chain,
    fidelity: opts.fidelity,
  });
}
