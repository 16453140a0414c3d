// A price cut to `[chain] max_priority_fee_lamports` is not silent: each is
// counted, and a warning naming what was wanted and what the cap allows is
// logged at most once a minute.
import { Connection, Keypair } from '@solana/web3.js';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { resolvePriorityFee } from '../chain/client/compute-budget.ts';
import { MetricsRegistry } from '../src/core/limits/metrics.ts';
import { reportingCaps } from './priority-fee.ts';

describe('reportingCaps', () => {
  it('counts every capped price and warns once a minute', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
    const registry = new MetricsRegistry();
    // A fixed price never asks the node; the connection is never used.
    const conn = new Connection('http://127.0.0.1:9');
    const policy = reportingCaps(
      { mode: 'fixed', microLamports: 100_000n, maxLamports: 1_000n },
      logger,
      registry,
    );
    const keys = [Keypair.generate().publicKey];
    // 20,000 CU at 100,000 µlamports is 2,000 lamports: over the 1,000 cap, so 50,000 µlamports.
    expect(await resolvePriorityFee(conn, policy, keys, 0, 20_000)).toBe(50_000n);
    expect(await resolvePriorityFee(conn, policy, keys, 0, 20_000)).toBe(50_000n);
    // Under the cap: no report.
    expect(await resolvePriorityFee(conn, policy, keys, 0, 5_000)).toBe(100_000n);
    expect(registry.render()).toContain('sealpost_priority_fee_capped_total 2');
    const warned = lines.filter((l) => String(l.msg).startsWith('priority fee capped'));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({
      level: 40,
      wanted_micro_lamports_per_cu: '100000',
      cap_micro_lamports_per_cu: '50000',
      unit_limit: 20_000,
      wanted_lamports: '2000',
      max_priority_fee_lamports: '1000',
    });
  });
});
