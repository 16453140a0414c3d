// [spam]: the content filter at the MX (src/spam/, docs/inbound.md "Spam").
// Off by default; with `enabled`, every message is scored by rspamd between
// the end of DATA and the 250, so spam is refused before it is sealed,
// pinned or sent on chain.
import * as z from 'zod';
import { bool, filePath, httpUrl, intBetween, oneOf, positiveInt } from '../fields.ts';

export const spamSchema = z.strictObject({
  enabled: bool().default(false),
  /** rspamd's normal worker (or proxy in self-scan mode). */
  rspamd_url: httpUrl().default('http://127.0.0.1:11333'),
  /** The controller password (learning), one line. */
  password_file: filePath().optional(),
  timeout_ms: intBetween(100, 120_000).default(5000),
  /** What a message gets when rspamd is down, slow or answers garbage: accepted unscanned, or 451. */
  on_error: oneOf(['accept', 'defer']).default('accept'),
  /** Larger messages are not scanned (accepted as if rspamd said "no action"). */
  max_scan_bytes: positiveInt().default(20 * 1024 * 1024),
  /** Also publish flagged (Junk) mail on chain; false: stored for server-mode readers only. */
  publish_junk: bool().default(false),
  /** Scan mail submitted on 465/587 as outbound, with rspamd's User set. */
  scan_submission: bool().default(false),
});

export type SpamInput = z.output<typeof spamSchema>;
