// The MX's spam decision (docs/inbound.md "Spam"), between the end of DATA
// and the 250, on the bytes already received: rspamd's action becomes an
// SMTP reply or a verdict the delivery carries.
//   reject                       → 550 5.7.1 (rspamd's message, if any): nothing kept
//   soft reject, greylist        → 451 4.7.1
//   add header, rewrite subject  → accepted, X-Spam-* fields, filed in Junk
//                                  (on chain only with `[spam] publish_junk`)
//   no action                    → accepted as without the filter
// rspamd down, slow or answering garbage → `[spam] on_error`: accepted
// unscanned, or 451 4.7.1; one log line a minute at most, a metric each time.
// Messages over `max_scan_bytes` are not scanned (accepted as "no action"),
// by rule and counted.

import type { SpamFact } from '../../contracts/inbound-jobs.ts';
import type { Logger } from '../../core/log.ts';
import type { SpamMetrics } from '../../core/metrics/types.ts';
import { SmtpReply } from '../smtp-error.ts';
import { RspamdClient, type ScanFailure, type ScanRequest, type ScanResult } from './rspamd.ts';

export type { SpamFact };

export interface SpamFilterOptions {
  url: string;
  timeoutMs: number;
  onError: 'accept' | 'defer';
  maxScanBytes: number;
  publishJunk: boolean;
  password?: string;
  logger: Logger;
  metrics?: SpamMetrics;
  now?: () => number;
}

export type SpamDecision =
  /** Not scanned (too big, or rspamd failed under on_error=accept). */
  | { kind: 'unscanned'; why: 'too-big' | 'error' }
  | { kind: 'accept'; fact: SpamFact }
  | { kind: 'junk'; fact: SpamFact };

const ERROR_LOG_INTERVAL_MS = 60_000;

export class SpamFilter {
  readonly client: RspamdClient;
  private lastErrorLog = Number.NEGATIVE_INFINITY;
  private suppressed = 0;
  private readonly now: () => number;

  constructor(private readonly opts: SpamFilterOptions) {
    this.client = new RspamdClient({ url: opts.url, timeoutMs: opts.timeoutMs, password: opts.password });
    this.now = opts.now ?? Date.now;
  }

  /** The decision for one message; throws the SmtpReply that refuses it. */
  async decide(req: ScanRequest, direction: 'inbound' | 'outbound' = 'inbound'): Promise<SpamDecision> {
    if (req.message.length > this.opts.maxScanBytes) {
      this.opts.metrics?.spamSkipped('too-big');
      return { kind: 'unscanned', why: 'too-big' };
    }
    let result: ScanResult;
    try {
      result = await this.client.check(req);
    } catch (err) {
      const failure = err as ScanFailure;
      const kind = failure.name === 'ScanFailure' ? failure.kind : 'unreachable';
      this.opts.metrics?.spamError(kind, this.opts.onError);
      this.logError(kind, (err as Error).message, req.queueId);
      if (this.opts.onError === 'defer') {
        throw new SmtpReply(
          451,
          '4.7.1',
          'Content scanner unavailable, try again later',
          `spam scan failed (${kind}): ${(err as Error).message}`,
        );
      }
      return { kind: 'unscanned', why: 'error' };
    }
    this.opts.metrics?.spamScanned(direction, result.action, result.seconds);
    const junk = result.action === 'add header' || result.action === 'rewrite subject';
    const fact: SpamFact = {
      action: result.action,
      score: round2(result.score),
      required: round2(result.requiredScore),
      symbols: result.symbols.slice(0, 40).map((s) => `${s.name}(${round2(s.score)})`),
      junk,
      publish: !junk || this.opts.publishJunk,
    };
    const summary = `spam ${result.action} score=${fact.score}/${fact.required} [${fact.symbols.slice(0, 8).join(' ')}]`;
    if (result.action === 'reject') {
      const text = safeReplyText(result.smtpMessage) ?? 'Message rejected as spam';
      throw new SmtpReply(550, '5.7.1', text, summary);
    }
    if (result.action === 'soft reject' || result.action === 'greylist') {
      const text =
        safeReplyText(result.smtpMessage) ??
        (result.action === 'greylist' ? 'Greylisted, try again later' : 'Try again later');
      throw new SmtpReply(451, '4.7.1', text, summary);
    }
    return junk ? { kind: 'junk', fact } : { kind: 'accept', fact };
  }

  private logError(kind: string, message: string, queueId: string): void {
    const at = this.now();
    if (at - this.lastErrorLog < ERROR_LOG_INTERVAL_MS) {
      this.suppressed++;
      return;
    }
    this.lastErrorLog = at;
    const suppressed = this.suppressed;
    this.suppressed = 0;
    this.opts.logger.warn(
      { kind, err: message, msgid: queueId, onError: this.opts.onError, suppressed, rspamd: this.opts.url },
      `spam scan failed (${kind}); messages are ${this.opts.onError === 'defer' ? 'deferred with 451' : 'accepted unscanned'} until rspamd answers`,
    );
  }
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}

/** rspamd's message as reply text: printable ASCII, one line, bounded. */
function safeReplyText(s: string | undefined): string | undefined {
  if (!s) return undefined;
  const clean = s
    .replace(/[^\x20-\x7e]/g, ' ')
    .trim()
    .slice(0, 200);
  return clean || undefined;
}

/** The X-Spam-* fields written on top of a flagged (or scanned) delivered copy. */
export function spamFields(fact: SpamFact, hostname: string): string {
  const flagged = fact.junk || fact.action === 'reject';
  const symbols = fact.symbols.join(',\r\n\t') || 'none';
  return (
    `X-Spam-Status: ${flagged ? 'Yes' : 'No'}, score=${fact.score} required=${fact.required} action="${fact.action}" scanner=${fact.scanner ?? 'rspamd'} at ${hostname}\r\n` +
    `X-Spam-Score: ${fact.score}\r\n` +
    (flagged ? 'X-Spam-Flag: YES\r\n' : '') +
    `X-Spam-Symbols: ${symbols}\r\n`
  );
}
