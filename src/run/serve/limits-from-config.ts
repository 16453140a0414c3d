// Builds the MX's cost guard from the config: the publication windows of
// `[limits]` on the MX's Redis connection and the balance guard polling the
// authority's balance against `[chain] min_authority_lamports` (a fixed
// floor, or "auto": an hour of the peak spend the publication history saw).
import type { Connection, PublicKey } from '@solana/web3.js';
import type { Redis } from 'ioredis';
import { messageCostLamports } from '../../../delivery/priority-fee.ts';
import type { Config } from '../../core/config/index.ts';
import { BalanceGuard } from '../../core/limits/balance-guard.ts';
import { CostGuard, publicationLimitsFromConfig } from '../../core/limits/cost-guard.ts';
import { costGuardMetrics, type MetricsRegistry } from '../../core/limits/metrics.ts';
import { PublicationHistory } from '../../core/limits/publication-history.ts';
import type { Logger } from '../../core/log.ts';

export interface CostGuardParts {
  config: Config;
  redis: Redis;
  connection: Connection;
  authority: PublicKey;
  /** Resolves local sender aliases (the MX's cached chain view). */
  resolveAlias: (normalizedAlias: string) => Promise<string | null>;
  logger: Logger;
  metrics: MetricsRegistry;
}

export interface RunningCostGuard {
  guard: CostGuard;
  balance: BalanceGuard;
  stop(): void;
}

export async function startCostGuard(parts: CostGuardParts): Promise<RunningCostGuard> {
  const { config } = parts;
  const metrics = costGuardMetrics(parts.metrics);
  const history = new PublicationHistory(parts.redis, config.redis.prefix, parts.logger);
  const floor = config.chain.min_authority_lamports;
  const balance = new BalanceGuard({
    read: () => parts.connection.getBalance(parts.authority, config.chain.commitment),
    minLamports: floor === 'auto' ? 0 : floor,
    ...(floor === 'auto' ? { auto: { peakHour: () => history.peakHour() } } : {}),
    // The last message accepted above the floor can still be paid at the highest priority fee allowed.
    perMessageLamports: Number(
      messageCostLamports({ maxLamports: BigInt(config.chain.max_priority_fee_lamports ?? 0) }),
    ),
    intervalMs: config.limits.balance_check_secs * 1000,
    logger: parts.logger,
    metrics,
  });
  await balance.start();
  const guard = new CostGuard({
    redis: parts.redis,
    prefix: config.redis.prefix,
    limits: publicationLimitsFromConfig(config.limits),
    localDomains: config.smtp.local_domains,
    resolveAlias: parts.resolveAlias,
    balance,
    history,
    metrics,
  });
  return { guard, balance, stop: () => balance.stop() };
}
