import { describe, expect, it } from 'vitest';
import { DELIVERY_ATTEMPTS, DELIVERY_BACKOFF, DELIVERY_BACKOFF_CAP_MS, deliveryBackoff } from './backoff.ts';

describe('delivery backoff', () => {
  const job = { opts: { backoff: { type: DELIVERY_BACKOFF, delay: 2000 } } };
  it('doubles from the base delay and stops growing at the cap', () => {
    expect([1, 2, 3, 4].map((n) => deliveryBackoff(n, DELIVERY_BACKOFF, undefined, job))).toEqual([
      2000, 4000, 8000, 16000,
    ]);
    expect(deliveryBackoff(30, DELIVERY_BACKOFF, undefined, job)).toBe(DELIVERY_BACKOFF_CAP_MS);
  });
  it('rides out hours of outage before a bounce', () => {
    let total = 0;
    for (let n = 1; n < DELIVERY_ATTEMPTS; n++) total += deliveryBackoff(n, DELIVERY_BACKOFF, undefined, job);
    expect(total / 3_600_000).toBeGreaterThan(5);
    expect(total / 3_600_000).toBeLessThan(7);
  });
});
