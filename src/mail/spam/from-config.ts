// The MX's SpamFilter from `[spam]` (docs/config.md), or undefined when off.
import { readFileSync } from 'node:fs';
import type { SpamConfig } from '../../core/config/types.ts';
import type { Logger } from '../../core/log.ts';
import type { SpamMetrics } from '../../core/metrics/types.ts';
import { SpamFilter } from './filter.ts';
import { SpamLearner } from './learn.ts';
import { RspamdClient } from './rspamd.ts';

export function spamFilterFromConfig(
  config: SpamConfig,
  logger: Logger,
  metrics?: SpamMetrics,
): SpamFilter | undefined {
  if (!config.enabled) return undefined;
  const password = controllerPassword(config);
  return new SpamFilter({
    url: config.rspamd_url,
    timeoutMs: config.timeout_ms,
    onError: config.on_error,
    maxScanBytes: config.max_scan_bytes,
    publishJunk: config.publish_junk,
    password,
    logger: logger.child({ component: 'spam' }),
    metrics,
  });
}

/**
 * The learner IMAP moves into and out of Junk train (src/mail/spam/learn.ts), on
 * rspamd's controller (`[spam] controller_url`, the same password), or
 * undefined when `[spam]` is off or `learn_from_junk = false`.
 */
export function spamLearnerFromConfig(
  config: SpamConfig,
  logger: Logger,
  metrics?: { spamLearned(kind: 'spam' | 'ham', outcome: string): void },
): SpamLearner | undefined {
  if (!config.enabled || !config.learn_from_junk) return undefined;
  const password = controllerPassword(config);
  return new SpamLearner({
    client: new RspamdClient({
      url: config.controller_url,
      timeoutMs: config.timeout_ms,
      password,
    }),
    logger: logger.child({ component: 'spam-learn' }),
    metrics,
    maxBytes: config.max_scan_bytes,
  });
}

/** `[spam] password_file`'s first line, or undefined (no file, or an empty one). */
function controllerPassword(config: SpamConfig): string | undefined {
  const password = config.password_file ? readFileSync(config.password_file, 'utf8').trim() : '';
  return password || undefined;
}
