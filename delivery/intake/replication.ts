// Waiting for Redis replicas before the 250. With Redis replication
// (Sentinel, or a replica behind one URL) a write is acknowledged by the
// master before any replica has it; a failover in that moment promotes a
// replica without the jobs the MX just queued. `[redis] wait_replicas`
// (default 1 with `sentinels`, else 0) makes the group commit send WAIT
// after its MULTI, so the 250 goes out once that many replicas hold the
// jobs. A WAIT that times out (`wait_timeout_ms`) still answers 250 — the
// jobs are on the master and the spool holds the message, which the spool
// reconcile re-queues if a failover loses them — and is counted and logged.
import type { RedisConfig } from '../../src/core/config/types.ts';
import type { MetricsRegistry } from '../../src/core/limits/metrics.ts';
import type { Logger } from '../../src/core/log.ts';

export interface Replication {
  /** Replicas that must acknowledge a batch's MULTI before its 250s. */
  replicas: number;
  timeoutMs: number;
  /** Told when fewer replicas acknowledged in time. */
  onShort?: (acknowledged: number, wanted: number) => void;
}

/** The replication wait `[redis]` asks for (none when 0 replicas). */
export function replicationOf(
  redis: Pick<RedisConfig, 'sentinels' | 'wait_replicas' | 'wait_timeout_ms'>,
  logger?: Logger,
  registry?: MetricsRegistry,
): Replication | undefined {
  const replicas = redis.wait_replicas ?? (redis.sentinels ? 1 : 0);
  if (replicas <= 0) return undefined;
  const short = registry?.counter(
    'sealpost_mx_replication_short_total',
    'MX batches whose jobs fewer Redis replicas acknowledged within [redis] wait_timeout_ms than [redis] wait_replicas asks (answered 250 anyway; the spool reconcile covers a failover).',
  );
  let lastLog = Number.NEGATIVE_INFINITY;
  return {
    replicas,
    timeoutMs: redis.wait_timeout_ms ?? 1000,
    onShort: (acknowledged, wanted) => {
      short?.inc();
      if (Date.now() - lastLog < 60_000) return;
      lastLog = Date.now();
      logger?.warn(
        { acknowledged, wanted, timeout_ms: redis.wait_timeout_ms ?? 1000 },
        'Redis replicas did not acknowledge queued mail in time ([redis] wait_replicas); a failover now would leave it to the spool reconcile',
      );
    },
  };
}
