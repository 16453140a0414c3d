// The MX's SpamFilter from `[spam]` (docs/config.md), or undefined when off.
import { readFileSync } from 'node:fs';
import type { SpamConfig } from '../config/types.ts';
import type { Logger } from '../log.ts';
import type { SpamMetrics } from '../metrics/types.ts';
import { SpamFilter } from './filter.ts';

export function spamFilterFromConfig(
  config: SpamConfig,
  logger: Logger,
  metrics?: SpamMetrics,
): SpamFilter | undefined {
  if (!config.enabled) return undefined;
  const password = config.password_file ? readFileSync(config.password_file, 'utf8').trim() : undefined;
  return new SpamFilter({
    url: config.rspamd_url,
    timeoutMs: config.timeout_ms,
    onError: config.on_error,
    maxScanBytes: config.max_scan_bytes,
    publishJunk: config.publish_junk,
    password: password || undefined,
    logger: logger.child({ component: 'spam' }),
    metrics,
  });
}
