// `[chain] min_authority_lamports = "auto"`: the balance floor is an hour of
// the deployment's peak spend. Publications counted by one cost guard are
// seen by another (two MX processes share Redis), a transaction that did not
// end in a 250 gives its count back, the peak is the busiest clock hour of
// the week, and the floor follows it against a real devnet balance.
import { randomBytes } from 'node:crypto';
import { SystemProgram } from '@solana/web3.js';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { messageCostLamports } from '../../delivery/priority-fee.ts';
import { AUTO_FLOOR_MINIMUM_LAMPORTS, BalanceGuard } from '../../src/core/limits/balance-guard.ts';
import { CostGuard, publicationLimitsFromConfig } from '../../src/core/limits/cost-guard.ts';
import { costGuardMetrics, MetricsRegistry } from '../../src/core/limits/metrics.ts';
import { PublicationHistory } from '../../src/core/limits/publication-history.ts';
import { publicationHourKey } from '../../src/core/limits/redis-keys.ts';
import { startTestChain } from '../support/devnet.ts';

const HOUR = 3_600_000;
const redis = new Redis('redis://127.0.0.1:6379', { lazyConnect: false });
const prefixes: string[] = [];
afterAll(() => redis.quit());

afterEach(async () => {
  for (const p of prefixes.splice(0)) {
    const keys = await redis.keys(`${p}:*`);
    if (keys.length) await redis.del(...keys);
  }
});

function prefix(): string {
  const p = `test-floor-${randomBytes(4).toString('hex')}`;
  prefixes.push(p);
  return p;
}

const limits = publicationLimitsFromConfig({
  sender_messages: 0,
  sender_window_secs: 3600,
  recipient_messages: 10_000,
  recipient_window_secs: 3600,
  overall_messages: 10_000,
  overall_window_secs: 3600,
  null_sender_messages: 0,
  null_sender_window_secs: 3600,
});

/** Lets the fire-and-forget counter writes reach Redis. */
async function settled(): Promise<void> {
  await redis.ping();
  await new Promise((r) => setTimeout(r, 20));
}

describe('the publication history', () => {
  it('counts reservations across guards, gives back released ones, and reports the busiest hour of the week', async () => {
    const p = prefix();
    let now = Date.parse('2026-11-20T10:15:00Z');
    const clock = () => now;
    const guard = () =>
      new CostGuard({
        redis,
        prefix: p,
        limits,
        localDomains: ['mail.example'],
        history: new PublicationHistory(redis, p, undefined, clock),
        now: clock,
      });
    const [a, b] = [guard(), guard()];
    const history = new PublicationHistory(redis, p, undefined, clock);
    const held = [];
    for (let i = 0; i < 7; i++) {
      const r = await (i % 2 ? a : b).reserve('someone@remote.example', `wallet${i}`);
      if (!r.ok) throw new Error('reserve refused');
      held.push(r.reservation);
    }
    // Two recipients of a transaction that ended without a 250.
    await a.release(held.slice(0, 2));
    await settled();
    expect(await history.peakHour()).toBe(5);

    // A later, quieter hour does not lower the peak; a busier one raises it.
    now += 3 * HOUR;
    for (let i = 0; i < 3; i++) await a.reserve('someone@remote.example', `later${i}`);
    await settled();
    expect(await history.peakHour()).toBe(5);
    await redis.set(publicationHourKey(p, Math.floor(now / HOUR) - 100), '40');
    expect(await history.peakHour()).toBe(40);

    // An hour older than the week's look-back no longer counts, and its key expires by itself.
    now += 7 * 24 * HOUR;
    expect(await history.peakHour()).toBe(0);
    const ttl = await redis.ttl(publicationHourKey(p, Math.floor(Date.parse('2026-11-20T10:15:00Z') / HOUR)));
    expect(ttl).toBeGreaterThan(7 * 24 * 3600);
    expect(ttl).toBeLessThanOrEqual(8 * 24 * 3600);
  });
});

describe('an "auto" balance floor', () => {
  it('is the minimum on a quiet deployment and an hour of peak spend on a busy one, against the real balance', async () => {
    const chain = await startTestChain();
    const authority = await chain.funded(1);
    const sink = await chain.funded(1);
    const p = prefix();
    const history = new PublicationHistory(redis, p);
    const registry = new MetricsRegistry();
    const metrics = costGuardMetrics(registry);
    const perMessage = Number(messageCostLamports({ maxLamports: 100_000n }));
    const guard = new BalanceGuard({
      read: () => chain.connection.getBalance(authority.publicKey, 'confirmed'),
      minLamports: 0,
      perMessageLamports: perMessage,
      auto: { peakHour: () => history.peakHour(), refreshMs: 0 },
      intervalMs: 60_000,
      logger: pino({ level: 'silent' }),
      metrics,
    });
    await guard.refresh();
    // Quiet: 1 SOL is far above the 0.05 SOL minimum.
    expect(guard.minLamports).toBe(AUTO_FLOOR_MINIMUM_LAMPORTS);
    expect(guard.floorLamports).toBe(AUTO_FLOOR_MINIMUM_LAMPORTS + perMessage);
    expect(guard.check()).toEqual({ ok: true });
    expect(metrics.floor.get()).toBe(AUTO_FLOOR_MINIMUM_LAMPORTS + perMessage);

    // A peak hour of 400 publications needs 400 messages' worth: more than 1 SOL.
    await redis.set(publicationHourKey(p, Math.floor(Date.now() / HOUR) - 5), '400');
    await guard.refresh();
    expect(guard.peakHourMessages).toBe(400);
    expect(metrics.peakHour.get()).toBe(400);
    expect(guard.minLamports).toBe(400 * perMessage);
    const check = guard.check();
    expect(check.ok).toBe(false);
    if (!check.ok) {
      expect(check.minLamports).toBe(401 * perMessage);
      expect(check.lamports).toBe(1_000_000_000);
    }
    expect(metrics.low.get()).toBe(1);

    // Funded to an hour of that peak, mail is accepted again.
    await chain.send(
      [
        SystemProgram.transfer({
          fromPubkey: sink.publicKey,
          toPubkey: authority.publicKey,
          lamports: 200_000_000,
        }),
      ],
      [sink],
    );
    await guard.refresh();
    expect(guard.check()).toEqual({ ok: true });
    expect(metrics.low.get()).toBe(0);
  }, 60_000);
});
