// One process's Prometheus metrics on prom-client: queue depths (read from
// Redis at scrape time), pipeline stage latencies, SMTP replies by code,
// pin failures, SendMail submit latency, and the Node.js process figures.
// Each process (and each server a test starts) owns its own Registry, so
// figures never mix. The cost guard's own registry (src/core/limits/metrics.ts)
// is appended to the same exposition.
import type { Redis } from 'ioredis';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { MetricsRegistry } from '../limits/metrics.ts';
import { closeQueueDepthSource, type QueueDepthSource, readQueueDepths } from './queue-depth.ts';
import type {
  DnsblMetrics,
  IdleWakeCause,
  ImapPushMetrics,
  PipelineMetrics,
  SmtpMetrics,
  SmtpPhase,
  SpamMetrics,
  StageName,
  UnconfirmedFailureReason,
} from './types.ts';

/** Prometheus text format 0.0.4, what GET /metrics answers with. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

// Seconds: stages run from a millisecond (store) to tens of seconds (a slow confirm).
const STAGE_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export interface SealpostMetricsOptions {
  /** Also expose the Node.js process metrics (memory, CPU, event loop); default true. */
  processMetrics?: boolean;
  /** Further registries rendered after these (the cost guard's counters). */
  extra?: MetricsRegistry[];
}

export class SealpostMetrics
  implements PipelineMetrics, SmtpMetrics, SpamMetrics, DnsblMetrics, ImapPushMetrics
{
  readonly registry = new Registry();
  private readonly extra: MetricsRegistry[];
  private readonly queueSources: QueueDepthSource[] = [];
  private readonly smtpReplies: Counter<'phase' | 'code'>;
  private readonly mxAccept: Histogram;
  private readonly sessionErrors: Counter<'listener' | 'action'>;
  private readonly stageSeconds: Histogram<'stage'>;
  private readonly stageFailures: Counter<'stage'>;
  private readonly chainSubmit: Histogram;
  private readonly pinFailures: Counter<'pin'>;
  private readonly deliveries: Counter<'outcome'>;
  private readonly queueReadErrors: Counter;
  private readonly unconfirmedFailures: Counter<'reason'>;
  private readonly awaitingProofGauge: Gauge;
  private readonly spamScans: Counter<'direction' | 'action'>;
  private readonly spamSeconds: Histogram;
  private readonly spamErrors: Counter<'kind' | 'handled'>;
  private readonly spamSkips: Counter<'why'>;
  private readonly spamLearns: Counter<'kind' | 'outcome'>;
  private readonly dnsblLookups: Counter<'list' | 'result'>;
  private readonly dnsblSeconds: Histogram;
  private readonly dnsblCacheHits: Counter<'list'>;
  private readonly dnsblRefusals: Counter<'list' | 'action'>;
  private readonly dnsblJunks: Counter<'list'>;
  private readonly dnsblAllows: Counter<'list'>;
  private readonly dnsblDisabledGauge: Gauge<'list'>;
  private readonly pushNotifications: Counter<'event'>;
  private readonly idleWakeups: Counter<'cause' | 'result'>;
  private readonly pushSubscribedGauge: Gauge;
  /** Jobs of this process waiting for an expiry proof (the gauge is their number). */
  private readonly awaiting = new Set<string>();

  constructor(opts: SealpostMetricsOptions = {}) {
    const registers = [this.registry];
    this.extra = opts.extra ?? [];
    if (opts.processMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: 'sealpost_' });
    this.smtpReplies = new Counter({
      name: 'sealpost_smtp_replies_total',
      help: 'Replies the MX gave, by SMTP phase (connect, mail, rcpt, data) and reply code.',
      labelNames: ['phase', 'code'],
      registers,
    });
    this.sessionErrors = new Counter({
      name: 'sealpost_smtp_session_errors_total',
      help: 'Per-session error limits by listener: error replies (action=error), commands delayed after the soft limit (delayed), sessions closed at the hard limit (closed).',
      labelNames: ['listener', 'action'],
      registers,
    });
    this.spamScans = new Counter({
      name: 'sealpost_spam_scans_total',
      help: 'Messages rspamd scored, by direction (inbound MX, outbound submission) and rspamd action.',
      labelNames: ['direction', 'action'],
      registers,
    });
    this.spamSeconds = new Histogram({
      name: 'sealpost_spam_scan_seconds',
      help: 'How long one rspamd /checkv2 took.',
      buckets: STAGE_BUCKETS,
      registers,
    });
    this.spamErrors = new Counter({
      name: 'sealpost_spam_scan_errors_total',
      help: 'Scans that failed (kind: unreachable, timeout, status, garbage) and what [spam] on_error did (accept, defer).',
      labelNames: ['kind', 'handled'],
      registers,
    });
    this.spamSkips = new Counter({
      name: 'sealpost_spam_scans_skipped_total',
      help: 'Messages not scanned by rule (why=too-big: over [spam] max_scan_bytes).',
      labelNames: ['why'],
      registers,
    });
    this.spamLearns = new Counter({
      name: 'sealpost_spam_learned_total',
      help: 'Messages moved into or out of Junk that rspamd was asked to learn (kind: spam, ham; outcome: learned, failed, skipped, dropped).',
      labelNames: ['kind', 'outcome'],
      registers,
    });
    this.dnsblLookups = new Counter({
      name: 'sealpost_dnsbl_lookups_total',
      help: "DNS queries of a block- or allowlist zone (cache misses) by list (zone) and result: listed (a code in 127.0.0.0/8, before an entry's responses/mask), clear (NXDOMAIN or no A record), timeout, servfail, error, list-error (only 127.255.255.x codes), invalid (an answer outside 127.0.0.0/8).",
      labelNames: ['list', 'result'],
      registers,
    });
    this.dnsblSeconds = new Histogram({
      name: 'sealpost_dnsbl_lookup_seconds',
      help: 'How long one DNSBL/DNSWL query took (cache misses).',
      buckets: STAGE_BUCKETS,
      registers,
    });
    this.dnsblCacheHits = new Counter({
      name: 'sealpost_dnsbl_cache_hits_total',
      help: 'DNSBL/DNSWL look-ups answered from the cache, by list.',
      labelNames: ['list'],
      registers,
    });
    this.dnsblRefusals = new Counter({
      name: 'sealpost_dnsbl_rejections_total',
      help: "Connections or recipients refused because of a listing, by list and action (reject: 5xx, defer: 4xx, score: the listings' total weight reached [spam] dnsbl_reject_score).",
      labelNames: ['list', 'action'],
      registers,
    });
    this.dnsblJunks = new Counter({
      name: 'sealpost_dnsbl_junk_total',
      help: 'Transactions filed as Junk because their listings reached [spam] dnsbl_junk_score, by each list that added weight.',
      labelNames: ['list'],
      registers,
    });
    this.dnsblAllows = new Counter({
      name: 'sealpost_dnsbl_allowlisted_total',
      help: 'Connections whose address an allowlist (DNSWL) lists, so no blocklist applied, by allowlist.',
      labelNames: ['list'],
      registers,
    });
    this.dnsblDisabledGauge = new Gauge({
      name: 'sealpost_dnsbl_list_disabled',
      help: 'Per list: 1 while its test entries show it answers for everything (or refuses our queries) and it is skipped, else 0.',
      labelNames: ['list'],
      registers,
    });
    this.pushNotifications = new Counter({
      name: 'sealpost_imap_push_notifications_total',
      help: 'IMAP IDLE push: mail-store changes this process published to Redis (event=published, publish_failed) and notifications it received from other processes (received).',
      labelNames: ['event'],
      registers,
    });
    this.idleWakeups = new Counter({
      name: 'sealpost_imap_idle_wakeups_total',
      help: 'IMAP IDLE sessions looking at the store, by cause (push: a notification, poll: the fallback timer, resync: the push subscription came back) and result (changed: something to tell the client, unchanged).',
      labelNames: ['cause', 'result'],
      registers,
    });
    this.pushSubscribedGauge = new Gauge({
      name: 'sealpost_imap_push_subscribed',
      help: "1 while this process's IMAP push subscription in Redis is live (IDLE then polls only every [imap] idle_push_poll_ms), else 0.",
      registers,
    });
    this.mxAccept = new Histogram({
      name: 'sealpost_mx_accept_seconds',
      help: 'From the end of DATA to the 250: spool fsync plus the delivery jobs in Redis.',
      buckets: STAGE_BUCKETS,
      registers,
    });
    this.stageSeconds = new Histogram({
      name: 'sealpost_pipeline_stage_seconds',
      help: 'Duration of each finished delivery pipeline stage (resolve, seal, pin, submit, store).',
      labelNames: ['stage'],
      buckets: STAGE_BUCKETS,
      registers,
    });
    this.stageFailures = new Counter({
      name: 'sealpost_pipeline_stage_failures_total',
      help: 'Delivery pipeline stages that threw (the job is retried, or bounced when out of attempts).',
      labelNames: ['stage'],
      registers,
    });
    this.chainSubmit = new Histogram({
      name: 'sealpost_chain_submit_seconds',
      help: 'SendMail from signing to confirmation at the configured commitment.',
      buckets: STAGE_BUCKETS,
      registers,
    });
    this.pinFailures = new Counter({
      name: 'sealpost_pin_failures_total',
      help: 'Failed pins: operator (the pin stage, retried) or recipient (best effort, dropped).',
      labelNames: ['pin'],
      registers,
    });
    this.deliveries = new Counter({
      name: 'sealpost_deliveries_total',
      help: 'Delivery jobs finished by this process: delivered, or failed for good (bounced).',
      labelNames: ['outcome'],
      registers,
    });
    this.unconfirmedFailures = new Counter({
      name: 'sealpost_delivery_unconfirmed_failures_total',
      help: 'Delivery jobs failed for good with a signed SendMail never confirmed: reason=expired (proven not landed; DSN 5.4.7 to the sender) or permanent (a permanent error after signing).',
      labelNames: ['reason'],
      registers,
    });
    this.awaitingProofGauge = new Gauge({
      name: 'sealpost_delivery_awaiting_expiry_proof',
      help: "Delivery jobs of this process waiting for the expiry proof of their signed SendMail (they spend no attempt meanwhile; a failed job's DSN waits for it).",
      registers,
    });
    this.queueReadErrors = new Counter({
      name: 'sealpost_queue_depth_read_errors_total',
      help: 'Scrapes whose queue depth read from Redis failed (the depths are then left out).',
      registers,
    });
    const sources = this.queueSources;
    const readErrors = this.queueReadErrors;
    new Gauge({
      name: 'sealpost_queue_jobs',
      help: 'Jobs per BullMQ queue and state (wait, active, delayed, failed, ...), read from Redis at scrape time.',
      labelNames: ['queue', 'state'],
      registers,
      // Every process reads the same Redis: summing the processes would count each job N times.
      aggregator: 'first',
      async collect() {
        this.reset();
        for (const source of sources) {
          try {
            for (const d of await readQueueDepths(source))
              this.set({ queue: d.queue, state: d.state }, d.jobs);
          } catch {
            readErrors.inc();
          }
        }
      },
    });
  }

  /** Reads the depth of the pipeline's and the spooler's queues under `prefix` at every scrape. */
  watchQueues(redis: Redis, prefix: string, queues?: string[]): void {
    this.queueSources.push({ redis, prefix, queues });
  }

  reply(phase: SmtpPhase, code: number): void {
    this.smtpReplies.inc({ phase, code: String(code) });
  }

  sessionError(listener: string, action: 'error' | 'delayed' | 'closed'): void {
    this.sessionErrors.inc({ listener, action });
  }

  spamScanned(direction: 'inbound' | 'outbound', action: string, seconds: number): void {
    this.spamScans.inc({ direction, action });
    this.spamSeconds.observe(seconds);
  }

  spamError(kind: string, handled: 'accept' | 'defer'): void {
    this.spamErrors.inc({ kind, handled });
  }

  spamSkipped(why: 'too-big'): void {
    this.spamSkips.inc({ why });
  }

  spamLearned(kind: 'spam' | 'ham', outcome: string): void {
    this.spamLearns.inc({ kind, outcome });
  }

  dnsblLookup(list: string, result: string, seconds: number): void {
    this.dnsblLookups.inc({ list, result });
    this.dnsblSeconds.observe(seconds);
  }

  dnsblCacheHit(list: string): void {
    this.dnsblCacheHits.inc({ list });
  }

  dnsblRefused(list: string, action: 'reject' | 'defer' | 'score'): void {
    this.dnsblRefusals.inc({ list, action });
  }

  dnsblJunk(list: string): void {
    this.dnsblJunks.inc({ list });
  }

  dnsblAllowed(list: string): void {
    this.dnsblAllows.inc({ list });
  }

  dnsblDisabled(list: string, disabled: boolean): void {
    this.dnsblDisabledGauge.set({ list }, disabled ? 1 : 0);
  }

  pushNotification(event: 'published' | 'publish_failed' | 'received'): void {
    this.pushNotifications.inc({ event });
  }

  idleWakeup(cause: IdleWakeCause, result: 'changed' | 'unchanged'): void {
    this.idleWakeups.inc({ cause, result });
  }

  pushSubscribed(live: boolean): void {
    this.pushSubscribedGauge.set(live ? 1 : 0);
  }

  accepted(seconds: number): void {
    this.mxAccept.observe(seconds);
  }

  stageDone(stage: StageName, seconds: number): void {
    this.stageSeconds.observe({ stage }, seconds);
    if (stage === 'submit') this.chainSubmit.observe(seconds);
  }

  stageFailed(stage: StageName): void {
    this.stageFailures.inc({ stage });
    if (stage === 'pin') this.pinFailures.inc({ pin: 'operator' });
  }

  recipientPinFailed(): void {
    this.pinFailures.inc({ pin: 'recipient' });
  }

  delivery(outcome: 'delivered' | 'failed'): void {
    this.deliveries.inc({ outcome });
  }

  unconfirmedFailure(reason: UnconfirmedFailureReason): void {
    this.unconfirmedFailures.inc({ reason });
  }

  awaitingProof(jobId: string, waiting: boolean): void {
    if (waiting) this.awaiting.add(jobId);
    else this.awaiting.delete(jobId);
    this.awaitingProofGauge.set(this.awaiting.size);
  }

  /** Mean duration (ms) and count of each finished pipeline stage so far (benchmarks print these). */
  async stageMeans(): Promise<Record<string, { count: number; meanMs: number }>> {
    const sums = new Map<string, { sum: number; count: number }>();
    for (const v of (await this.stageSeconds.get()).values) {
      const stage = String(v.labels.stage ?? '');
      const entry = sums.get(stage) ?? { sum: 0, count: 0 };
      const name = (v as { metricName?: string }).metricName ?? '';
      if (name.endsWith('_sum')) entry.sum = v.value;
      else if (name.endsWith('_count')) entry.count = v.value;
      sums.set(stage, entry);
    }
    const out: Record<string, { count: number; meanMs: number }> = {};
    for (const [stage, { sum, count }] of sums)
      if (count > 0) out[stage] = { count, meanMs: (sum / count) * 1000 };
    return out;
  }

  /** Closes the queue handles (the Redis connections stay with their owners). */
  async close(): Promise<void> {
    await Promise.all(this.queueSources.splice(0).map(closeQueueDepthSource));
  }

  /** The same figures as metric JSON, for summing several processes (src/run/serve/cluster.ts). */
  async snapshot(): Promise<unknown[]> {
    return [...(await this.registry.getMetricsAsJSON()), ...this.extra.flatMap((r) => r.snapshot())];
  }

  /** The whole exposition: these metrics, then the extra registries. */
  async render(): Promise<string> {
    const own = await this.registry.metrics();
    const rest = this.extra.map((r) => r.render()).join('');
    return own.endsWith('\n') || own === '' ? own + rest : `${own}\n${rest}`;
  }
}
