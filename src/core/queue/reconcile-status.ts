// Where the spool reconcile step (delivery/reconcile.ts) leaves its last
// run's summary and running totals in Redis, and how /ready reads them
// (src/core/metrics/health-checks.ts): one key, written by one side, read by
// the other.
import type { Redis } from 'ioredis';

/** The last run's summary fields and the running total of recovered entries. */
export function reconcileStatusKey(prefix: string): string {
  return `${prefix}:spool-reconcile:last`;
}

/** The numbers the last reconcile run recorded, or null before its first run. */
export async function readReconcileStatus(
  redis: Redis,
  prefix: string,
): Promise<Record<string, number> | null> {
  const raw = await redis.hgetall(reconcileStatusKey(prefix));
  if (!raw || Object.keys(raw).length === 0) return null;
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(raw)) out[k] = Number(v);
  return out;
}
