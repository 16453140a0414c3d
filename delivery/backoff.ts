// Retry timing of delivery jobs: exponential from the job's base delay,
// capped at 10 minutes, over 40 attempts — about five and a half hours of
// retries (a chain RPC or pin outage) before the message is bounced.
export const DELIVERY_BACKOFF = 'sealpost-delivery';
export const DELIVERY_ATTEMPTS = 40;
export const DELIVERY_BACKOFF_CAP_MS = 10 * 60_000;

export function deliveryBackoff(
  attemptsMade: number,
  type?: string,
  _err?: Error,
  job?: { opts: { backoff?: unknown } },
): number {
  const base =
    typeof job?.opts.backoff === 'object' && job.opts.backoff !== null && 'delay' in job.opts.backoff
      ? Number((job.opts.backoff as { delay?: number }).delay ?? 2000)
      : 2000;
  if (type !== undefined && type !== DELIVERY_BACKOFF) return base;
  return Math.min(base * 2 ** Math.max(attemptsMade - 1, 0), DELIVERY_BACKOFF_CAP_MS);
}
