// Training rspamd from what wallet holders do (issue: "a wallet holder moving
// a message into or out of Junk trains rspamd"), as Dovecot's IMAPSieve
// learn scripts or Stalwart's spam training do: a message moved or copied into
// Junk is learned as spam (`/learnspam` on rspamd's controller), one moved or
// copied out of Junk into any folder but Trash as ham (`/learnham`).
// Learning never delays the reader's answer: the IMAP command has already
// succeeded when its messages are queued here, a small bounded queue in the
// process is drained one message at a time, and a full queue or an rspamd
// that is down costs a counted, rate-limited log line, never an error to the
// reader. rspamd answering 208 ("already learned") is a success; 204 (it
// learned nothing: too few tokens, or no classifier storage) is counted as
// skipped.
import type { Logger } from '../../core/log.ts';
import { type RspamdClient, ScanFailure } from './rspamd.ts';

export type LearnKind = 'spam' | 'ham';
export type LearnOutcome = 'learned' | 'failed' | 'skipped' | 'dropped';

export interface SpamLearnerOptions {
  client: Pick<RspamdClient, 'learn'>;
  logger?: Logger;
  /** `sealpost_spam_learned_total{kind,outcome}` (src/core/metrics/sealpost-metrics.ts). */
  metrics?: { spamLearned(kind: LearnKind, outcome: LearnOutcome): void };
  /** Messages waiting at most; more are dropped (counted). Default 200. */
  maxQueue?: number;
  /** Messages larger than this are not learned (rspamd's own limit is about 50 MB). */
  maxBytes?: number;
}

interface Task {
  kind: LearnKind;
  message: () => Promise<Buffer>;
}

/** One log line per minute at most for a failing controller. */
const LOG_EVERY_MS = 60_000;

export class SpamLearner {
  private readonly queue: Task[] = [];
  private draining: Promise<void> | null = null;
  private lastLog = 0;
  private closed = false;
  /** Outcomes so far (tests, logs). */
  readonly stats = { learned: 0, failed: 0, dropped: 0, skipped: 0 };

  constructor(private readonly opts: SpamLearnerOptions) {}

  /**
   * Queues messages for learning; `message` opens one when its turn comes
   * (the plaintext is read only then, and only once).
   */
  submit(kind: LearnKind, messages: (() => Promise<Buffer>)[]): void {
    const max = this.opts.maxQueue ?? 200;
    for (const message of messages) {
      if (this.closed || this.queue.length >= max) {
        this.stats.dropped++;
        this.opts.metrics?.spamLearned(kind, 'dropped');
        this.warn({ kind }, 'spam learning queue is full; a message was not learned');
        continue;
      }
      this.queue.push({ kind, message });
    }
    this.draining ??= this.drain().finally(() => {
      this.draining = null;
    });
  }

  /** Resolves when everything queued so far was tried (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.draining) await this.draining;
  }

  /** Stops taking work; waits for what is queued. */
  async close(): Promise<void> {
    this.closed = true;
    await this.settled();
  }

  private async drain(): Promise<void> {
    for (let task = this.queue.shift(); task; task = this.queue.shift()) {
      let outcome: Exclude<LearnOutcome, 'dropped'>;
      try {
        const raw = await task.message();
        if (raw.length > (this.opts.maxBytes ?? 20 * 1024 * 1024)) outcome = 'skipped';
        else {
          outcome = await this.opts.client.learn(task.kind, raw);
        }
      } catch (err) {
        outcome = 'failed';
        const kind = err instanceof ScanFailure ? err.kind : 'open';
        this.warn(
          { kind: task.kind, failure: kind, err: (err as Error).message },
          `rspamd did not learn a message as ${task.kind}`,
        );
      }
      this.stats[outcome]++;
      this.opts.metrics?.spamLearned(task.kind, outcome);
    }
  }

  private warn(fields: Record<string, unknown>, message: string): void {
    const now = Date.now();
    if (now - this.lastLog < LOG_EVERY_MS) return;
    this.lastLog = now;
    this.opts.logger?.warn(fields, message);
  }
}

/** What a move or copy between these folders teaches, by their special use (RFC 6154). */
export function learnKindOf(from: string | undefined, to: string | undefined): LearnKind | null {
  const junk = '\\Junk';
  if (to === junk && from !== junk) return 'spam';
  if (from === junk && to !== junk && to !== '\\Trash') return 'ham';
  return null;
}
