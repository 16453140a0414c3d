// The queue commands' library: a session on the deployment's Redis and
// queues, the rows `queue list` prints, finding a job by id, retrying and
// bouncing (src/cli/commands/operate/queue.ts wires the commands, queue-tools.ts the
// hold/release/delete/show tools).

import { join } from 'node:path';
import { type Job, Queue } from 'bullmq';
import { InvalidArgumentError } from 'commander';
import type { Redis } from 'ioredis';
import { bounce } from '../../../../delivery/bounce.ts';
import type { ReconcileResult } from '../../../../delivery/reconcile.ts';
import { queueDsn, wantsDsn } from '../../../../spooler/dsn-out.ts';
import {
  type DeliverJobData,
  type OutboundJobData,
  QUEUE_DELIVER,
  QUEUE_OUTBOUND,
} from '../../../contracts/inbound-jobs.ts';
import { type DomainJobData, QUEUE_SPOOLER_DELIVER } from '../../../contracts/outbound-jobs.ts';
import { BlobStore } from '../../../core/blobs/blob-store.ts';
import { openBlobStore } from '../../../core/blobs/open-blob-store.ts';
import type { Config } from '../../../core/config/types.ts';
import { heldField, heldKey, readHolds } from '../../../core/queue/hold.ts';
import { openStore } from '../../../core/store/index.ts';
import { CliError, loadCliConfig } from '../../common.ts';
import { connectCliRedis } from '../../redis-connect.ts';

export type Which = 'inbound' | 'outbound' | 'all';
export const WHICH = ['inbound', 'outbound', 'all'] as const;
/** Every state a job waits in; completed jobs have left the queue. */
const QUEUED_STATES = ['active', 'wait', 'prioritized', 'delayed', 'waiting-children', 'failed'] as const;

export interface QueueRef {
  name: string;
  side: 'inbound' | 'outbound';
}

const QUEUE_REFS: QueueRef[] = [
  { name: QUEUE_DELIVER, side: 'inbound' },
  { name: QUEUE_OUTBOUND, side: 'outbound' },
  { name: QUEUE_SPOOLER_DELIVER, side: 'outbound' },
];

export function parseWhich(value: string): Which {
  if (!(WHICH as readonly string[]).includes(value)) {
    throw new InvalidArgumentError(`expected one of ${WHICH.join(', ')}, got "${value}"`);
  }
  return value as Which;
}

type AnyJob = Job;
type AnyQueue = Queue;

export interface Session {
  redis: Redis;
  queues: { ref: QueueRef; queue: AnyQueue }[];
  config: Config;
  close(): Promise<void>;
}

async function open(opts: { config?: string; queue?: Which; dataDir?: string }): Promise<Session> {
  const { config } = loadCliConfig(opts);
  const redis = await connectCliRedis(config.redis);
  const which = opts.queue ?? 'all';
  const queues = QUEUE_REFS.filter((ref) => which === 'all' || ref.side === which).map((ref) => ({
    ref,
    queue: new Queue(ref.name, { connection: redis, prefix: config.redis.prefix }),
  }));
  return {
    redis,
    queues,
    config,
    async close() {
      for (const q of queues) await q.queue.close().catch(() => {});
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

export async function withSession<T>(
  opts: { config?: string; queue?: Which; dataDir?: string },
  fn: (s: Session) => Promise<T>,
) {
  const s = await open(opts);
  try {
    return await fn(s);
  } finally {
    await s.close();
  }
}

export interface QueueRow {
  id: string;
  queue: 'inbound' | 'outbound';
  /** The BullMQ queue holding the job. */
  stage: string;
  state: string;
  msgid: string;
  from: string;
  /** Recipients still waiting. */
  recipients: string[];
  createdAt: number;
  ageSecs: number;
  attempts: number;
  nextAttemptAt: number | null;
  reason: string | null;
  /** Inbound: the checkpointed SendMail's signature (null before one was signed, and outbound). */
  signature: string | null;
  /** Inbound: a SendMail was signed and is not confirmed (a failed such job is what `retry` requeues). */
  unconfirmed: boolean;
  /** Inbound: the spam verdict the MX gave a flagged message (it goes to Junk), e.g. `add header 8.2/6`; else null. */
  spam: string | null;
}

export function isDomainJob(ref: QueueRef): boolean {
  return ref.name === QUEUE_SPOOLER_DELIVER;
}

/** When a delayed job is due: the spooler records it; otherwise BullMQ's delay from the last run. */
function nextAttemptOf(ref: QueueRef, job: AnyJob, state: string): number | null {
  if (state !== 'delayed') return null;
  if (isDomainJob(ref)) {
    const at = (job.data as DomainJobData).nextAttemptAt;
    if (at !== undefined) return at;
  }
  return (job.processedOn ?? job.timestamp) + (job.delay ?? 0);
}

function lastReasonOf(ref: QueueRef, job: AnyJob): string | null {
  if (ref.name === QUEUE_DELIVER) {
    const f = (job.data as DeliverJobData).finalFailure;
    if (f && job.failedReason) {
      const dsn = f.dsn === 'queued' ? `DSN ${f.status ?? ''} sent`.replace('  ', ' ') : `no DSN (${f.dsn})`;
      return `${f.reason}: SendMail ${f.signature} never confirmed; ${dsn}; last error: ${f.error}`;
    }
  }
  if (isDomainJob(ref)) {
    const d = job.data as DomainJobData;
    const pending = d.rcpts.filter((r) => !d.final[r]);
    for (const r of pending) {
      const t = d.lastTemporary[r];
      if (t) return `${t.status} ${t.diagnostic}`;
    }
  }
  return job.failedReason ? job.failedReason : null;
}

export function rowOf(ref: QueueRef, job: AnyJob, state: string, now: number): QueueRow {
  let msgid: string;
  let from: string;
  let recipients: string[];
  let createdAt: number;
  let attempts = job.attemptsMade;
  if (ref.name === QUEUE_DELIVER) {
    const d = job.data as DeliverJobData;
    ({ msgid } = d);
    from = d.envelope.from;
    recipients = [d.envelope.to];
    createdAt = d.receivedAt;
  } else if (isDomainJob(ref)) {
    const d = job.data as DomainJobData;
    ({ msgid, from } = d);
    recipients = d.rcpts.filter((r) => !d.final[r]);
    createdAt = d.createdAt;
    attempts = d.attempts;
  } else {
    const d = job.data as OutboundJobData;
    ({ msgid, from } = d);
    recipients = d.to;
    createdAt = d.createdAt;
  }
  createdAt = createdAt || job.timestamp;
  return {
    id: String(job.id),
    queue: ref.side,
    stage: ref.name,
    state,
    msgid,
    from,
    recipients,
    createdAt,
    ageSecs: Math.max(0, Math.round((now - createdAt) / 1000)),
    attempts,
    nextAttemptAt: nextAttemptOf(ref, job, state),
    reason: lastReasonOf(ref, job),
    signature:
      ref.name === QUEUE_DELIVER ? ((job.data as DeliverJobData).stages.submit?.signature ?? null) : null,
    unconfirmed:
      ref.name === QUEUE_DELIVER &&
      Boolean((job.data as DeliverJobData).stages.submit?.signature) &&
      !(job.data as DeliverJobData).stages.submit?.confirmed,
    spam: spamOf(ref, job),
  };
}

function spamOf(ref: QueueRef, job: AnyJob): string | null {
  if (ref.name !== QUEUE_DELIVER) return null;
  const fact = (job.data as DeliverJobData).trace?.spam;
  if (!fact) return null;
  return `${fact.scanner === 'dnsbl' ? 'dnsbl ' : ''}${fact.action} ${fact.score}/${fact.required}${fact.publish ? '' : ' (off chain)'}`;
}

export async function listRows(s: Session): Promise<QueueRow[]> {
  const now = Date.now();
  const rows: QueueRow[] = [];
  // Held jobs (sealpost queue hold, src/core/queue/hold.ts) are listed as `held`, with no next attempt.
  const holds = await readHolds(s.redis, s.config.redis.prefix);
  for (const { ref, queue } of s.queues) {
    for (const state of QUEUED_STATES) {
      const jobs = await queue.getJobs([state], 0, -1, true);
      for (const job of jobs) {
        if (!job) continue;
        const row = rowOf(ref, job, state, now);
        if (holds.has(heldField(ref.name, row.id))) {
          row.state = 'held';
          row.nextAttemptAt = null;
        }
        rows.push(row);
      }
    }
  }
  return rows.sort((a, b) => a.createdAt - b.createdAt);
}

export function formatAge(secs: number): string {
  if (secs < 60) return `${secs}s`;
  if (secs < 3600) return `${Math.floor(secs / 60)}m${String(secs % 60).padStart(2, '0')}s`;
  if (secs < 86_400)
    return `${Math.floor(secs / 3600)}h${String(Math.floor((secs % 3600) / 60)).padStart(2, '0')}m`;
  return `${Math.floor(secs / 86_400)}d${String(Math.floor((secs % 86_400) / 3600)).padStart(2, '0')}h`;
}

function nextText(at: number | null, now: number): string {
  if (at === null) return '-';
  return at <= now ? 'due' : `in ${formatAge(Math.round((at - now) / 1000))}`;
}

export function table(rows: QueueRow[]): string {
  const now = Date.now();
  const head = ['ID', 'QUEUE', 'STATE', 'AGE', 'ATTEMPTS', 'NEXT', 'RECIPIENTS', 'LAST REASON'];
  const body = rows.map((r) => [
    r.id,
    r.queue,
    r.state,
    formatAge(r.ageSecs),
    String(r.attempts),
    nextText(r.nextAttemptAt, now),
    r.recipients.join(',') || '-',
    r.reason ?? '-',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return `${[line(head), ...body.map(line)].join('\n')}\n`;
}

export async function findJob(
  s: Session,
  id: string,
): Promise<{ ref: QueueRef; queue: AnyQueue; job: AnyJob; state: string }> {
  for (const { ref, queue } of s.queues) {
    const job = await queue.getJob(id);
    if (!job) continue;
    const state = await job.getState();
    if (state === 'completed' || state === 'unknown') continue;
    const held = (await s.redis.hexists(heldKey(s.config.redis.prefix), heldField(ref.name, id))) === 1;
    return { ref, queue, job, state: held ? 'held' : state };
  }
  throw new CliError(`no queued message with id "${id}" (sealpost queue list shows the ids)`);
}

interface ShowRecipient {
  rcpt: string;
  state: 'delivered' | 'failed' | 'pending';
  status?: string;
  reason?: string;
  remoteMta?: string;
  at?: string;
  bounced?: boolean;
}

function iso(ms: number | undefined | null): string | null {
  return ms ? new Date(ms).toISOString() : null;
}

export function showOf(ref: QueueRef, job: AnyJob, state: string) {
  const row = rowOf(ref, job, state, Date.now());
  let recipients: ShowRecipient[];
  let envelope: { from: string; to: string[] };
  if (isDomainJob(ref)) {
    const d = job.data as DomainJobData;
    envelope = { from: d.from, to: d.rcpts };
    recipients = d.rcpts.map((rcpt) => {
      const f = d.final[rcpt];
      if (f) {
        return {
          rcpt,
          state: f.state,
          status: f.status,
          reason: f.diagnostic,
          remoteMta: f.remoteMta,
          at: new Date(f.at).toISOString(),
          bounced: d.bounced.includes(rcpt),
        };
      }
      const t = d.lastTemporary[rcpt];
      return t
        ? { rcpt, state: 'pending', status: t.status, reason: t.diagnostic, remoteMta: t.remoteMta }
        : { rcpt, state: 'pending' };
    });
  } else if (ref.name === QUEUE_DELIVER) {
    const d = job.data as DeliverJobData;
    envelope = { from: d.envelope.from, to: [d.envelope.to] };
    recipients = [
      { rcpt: d.envelope.to, state: 'pending', ...(job.failedReason ? { reason: job.failedReason } : {}) },
    ];
  } else {
    const d = job.data as OutboundJobData;
    envelope = { from: d.from, to: d.to };
    recipients = d.to.map((rcpt) => ({ rcpt, state: 'pending' }));
  }
  const deliver = ref.name === QUEUE_DELIVER ? (job.data as DeliverJobData) : undefined;
  const checkpoint = deliver?.stages.submit;
  return {
    ...row,
    envelope,
    recipientStatus: recipients,
    // The SendMail checkpoint (without its signed bytes): what a retry proves before any re-sign.
    submit: checkpoint
      ? {
          signature: checkpoint.signature,
          confirmed: checkpoint.confirmed === true,
          index: checkpoint.index,
          since: checkpoint.since ?? checkpoint.index,
          round: checkpoint.round ?? 1,
          lastValidBlockHeight: checkpoint.lastValidBlockHeight,
          emailAddress: checkpoint.emailAddress,
          ...(checkpoint.batch ? { batch: checkpoint.batch } : {}),
          cid: deliver?.stages.pin?.cid ?? null,
        }
      : null,
    finalFailure: deliver?.finalFailure ?? null,
    awaitingProof: deliver?.exhausted ?? null,
    // BullMQ keeps the message of each failed attempt (the stacktrace list, newest last).
    reasons: [...(job.stacktrace ?? [])].map((s) => s.split('\n')[0] ?? s),
    timestamps: {
      created: iso(row.createdAt),
      queued: iso(job.timestamp),
      lastProcessed: iso(job.processedOn),
      finished: iso(job.finishedOn),
      nextAttempt: iso(row.nextAttemptAt),
    },
    data: job.data as unknown,
  };
}

export function showText(v: ReturnType<typeof showOf>): string {
  const out: string[] = [
    `id:           ${v.id}`,
    `queue:        ${v.queue} (${v.stage})`,
    `state:        ${v.state}`,
    `message id:   ${v.msgid}`,
    `from:         <${v.envelope.from}>`,
    `to:           ${v.envelope.to.map((t) => `<${t}>`).join(', ')}`,
    `age:          ${formatAge(v.ageSecs)}`,
    `attempts:     ${v.attempts}`,
    `next attempt: ${v.timestamps.nextAttempt ?? '-'}`,
    `created:      ${v.timestamps.created ?? '-'}`,
    `queued:       ${v.timestamps.queued ?? '-'}`,
    `last run:     ${v.timestamps.lastProcessed ?? '-'}`,
    `last reason:  ${v.reason ?? '-'}`,
    ...(v.spam ? [`spam verdict: ${v.spam}`] : []),
    'recipients:',
  ];
  for (const r of v.recipientStatus) {
    const parts = [`  <${r.rcpt}> ${r.state}`];
    if (r.status) parts.push(r.status);
    if (r.remoteMta) parts.push(`relay=${r.remoteMta}`);
    if (r.at) parts.push(`at ${r.at}`);
    if (r.bounced) parts.push('(DSN queued)');
    if (r.reason) parts.push(`(${r.reason})`);
    out.push(parts.join(' '));
  }
  if (v.submit) {
    const c = v.submit;
    out.push(
      'sendmail checkpoint:',
      `  signature:    ${c.signature}`,
      `  confirmed:    ${c.confirmed ? 'yes' : 'no'}`,
      `  index:        ${c.index} (searched from ${c.since}; signing round ${c.round})`,
      `  valid until:  block height ${c.lastValidBlockHeight}`,
      `  email:        ${c.emailAddress}`,
      `  cid:          ${c.cid ?? '-'}`,
    );
  }
  if (v.awaitingProof) out.push(`waiting:      out of attempts, for the expiry proof of its SendMail`);
  if (v.finalFailure) {
    const f = v.finalFailure;
    out.push(
      `final failure: ${f.reason} at ${new Date(f.at).toISOString()}; DSN ${f.dsn}${f.status ? ` ${f.status}` : ''}; ${f.error}`,
    );
  }
  if (v.reasons.length > 0) {
    out.push('recorded failures:');
    for (const r of v.reasons) out.push(`  ${r}`);
  }
  return `${out.join('\n')}\n`;
}

/** Runs now: a delayed job is promoted, a failed one retried; others are already waiting or running. */
export async function retryJob(job: AnyJob, state: string): Promise<'promoted' | 'retried' | 'waiting'> {
  if (state === 'delayed') {
    await job.promote();
    return 'promoted';
  }
  if (state === 'failed') {
    if (job.queueName === QUEUE_DELIVER) {
      // A fresh attempt budget. A signed SendMail stays checkpointed: submit proves it did not
      // land (or records it) before anything is signed again, so a retry never publishes twice;
      // its earlier DSN (finalFailure.dsn) is never sent a second time.
      const { exhausted: _, ...data } = job.data as DeliverJobData;
      await job.updateData(data);
      await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
      return 'retried';
    }
    await job.retry('failed');
    return 'retried';
  }
  return 'waiting';
}

const OPERATOR_DELETED = 'deleted from the queue by the operator';

/** The failure DSN for a dropped job, through the spooler's (outbound) or the pipeline's (inbound) DSN path. */
export async function bounceDropped(s: Session, ref: QueueRef, job: AnyJob, state: string): Promise<string> {
  if (ref.name === QUEUE_DELIVER && state === 'failed') {
    // The pipeline bounced it when it failed, unless a sent SendMail was still unconfirmed.
    const failed = job.data as DeliverJobData;
    const submit = failed.stages.submit;
    if (!submit || submit.confirmed || failed.finalFailure?.dsn === 'queued')
      return 'no DSN: the pipeline bounced it when it failed';
  }
  // The spool and sealed bodies may live in PostgreSQL ([blobs] backend): the DSN reads them from there.
  const pgStore =
    s.config.blobs?.backend === 'postgres'
      ? await openStore({ url: s.config.store.url, dataDir: s.config.store.data_dir })
      : null;
  const blobs = pgStore
    ? openBlobStore(s.config, pgStore)
    : new BlobStore(join(s.config.store.data_dir, 'blobs'));
  const intake = new Queue<OutboundJobData>(QUEUE_OUTBOUND, {
    connection: s.redis,
    prefix: s.config.redis.prefix,
  });
  try {
    if (ref.name === QUEUE_DELIVER) {
      const d = job.data as DeliverJobData;
      const why = job.failedReason ? `; last error: ${job.failedReason}` : '';
      const outcome = await bounce(
        { blobs, outbound: intake, hostname: s.config.smtp.hostname },
        String(job.id),
        d,
        { status: '5.0.0', diagnostic: `${OPERATOR_DELETED}${why}` },
      );
      return outcome === 'queued' ? `failure DSN queued to <${d.envelope.from}>` : 'no DSN: null sender';
    }
    const d: DomainJobData = isDomainJob(ref)
      ? (job.data as DomainJobData)
      : (() => {
          const o = job.data as OutboundJobData;
          return {
            msgid: o.msgid,
            from: o.from,
            domain: '',
            rcpts: o.to,
            blobKey: o.blobKey,
            kind: o.kind,
            createdAt: o.createdAt,
            attempts: 0,
            final: {},
            lastTemporary: {},
            bounced: [],
            delayNotified: false,
            ...(o.dsn ? { dsn: o.dsn } : {}),
          };
        })();
    if (d.from === '') return 'no DSN: null sender';
    if (!wantsDsn(d, 'FAILURE')) return 'no DSN: the sender asked for none (NOTIFY)';
    const pending = d.rcpts.filter((r) => !d.final[r]);
    if (pending.length === 0) return 'no DSN: no recipient was pending';
    const entries = pending.map((rcpt) => {
      const t = d.lastTemporary[rcpt];
      return {
        rcpt,
        status: '5.0.0',
        diagnostic: t ? `${OPERATOR_DELETED}; last error: ${t.diagnostic}` : OPERATOR_DELETED,
        ...(t?.remoteMta ? { remoteMta: t.remoteMta } : {}),
      };
    });
    await queueDsn(
      { blobs, intake, hostname: s.config.spooler.hostname, now: Date.now },
      d,
      'failed',
      entries,
      { lastAttempt: new Date() },
    );
    return `failure DSN queued to <${d.from}>`;
  } finally {
    await intake.close();
    await pgStore?.close();
  }
}

export interface CommonOptions {
  config?: string;
  queue: Which;
  json?: boolean;
}

export const HELP_AFTER = `
Queues: "inbound" is the pipeline's deliver queue (one job per recipient
copy); "outbound" is the spooler: its intake (whole messages, split within
moments) and its per-domain delivery jobs (ids MSGID~DOMAIN), which keep
per-recipient status and the last deferral reason. Only jobs still in the
queue are listed (waiting, active, delayed, failed); delivered ones are not.

Examples:
  $ sealpost queue list --config sealpost.toml
  $ sealpost queue list --queue outbound --json
  $ sealpost queue list --failed --queue inbound
  $ sealpost queue show 'MSGID~example.org'
  $ sealpost queue retry --all
  $ sealpost queue delete 'MSGID~example.org' --bounce
  $ sealpost queue hold --domain example.org
  $ sealpost queue release --all
  $ sealpost queue delete --msgid MSGID
  $ sealpost queue show 'MSGID.0' --message
  $ sealpost queue summary
  $ sealpost queue reconcile --dry-run
`;

export function reconcileText(r: ReconcileResult): string {
  if (r.outcome === 'busy')
    return 'another reconcile run holds the lease; nothing done (try again shortly)\n';
  const verb = r.dryRun ? 'would be ' : '';
  const lines = [
    `spool entries: ${r.scanned} looked at, ${r.young} younger than the grace period left alone`,
    `  with jobs in Redis: ${r.withJobs}${r.legacy ? ` (${r.legacy} written before the spool index)` : ''}`,
    `  without jobs: ${r.withoutJobs}`,
    `    recovered (${verb}queued again): ${r.recovered} entries, ${r.recoveredJobs} jobs`,
    `    finished (${verb}removed): ${r.finished}`,
    `    unreadable (${verb}moved to spool-corrupt/): ${r.corrupt}`,
  ];
  for (const e of r.entries)
    lines.push(
      `  ${e.action.padEnd(9)} ${e.id}${e.jobs ? ` ${e.jobs.join(',')}` : ''}${e.reason ? ` (${e.reason})` : ''}${e.movedTo ? ` -> ${e.movedTo}` : ''}`,
    );
  const o = r.outbound;
  lines.push(
    `outbound ledger: ${o.scanned} messages owed looked at, ${o.withJobs} with jobs in Redis`,
    `  recovered (${verb}queued again): ${o.recovered} messages, ${o.recoveredRecipients} recipients`,
    `  finished (${verb}removed): ${o.finished}`,
  );
  for (const e of o.entries)
    lines.push(`  ${e.action.padEnd(9)} ${e.msgid} (${e.kind})${e.to ? ` ${e.to.join(',')}` : ''}`);
  return `${lines.join('\n')}\n`;
}
