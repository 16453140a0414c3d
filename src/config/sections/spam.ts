// [spam]: the content filter at the MX (src/spam/, docs/inbound.md "Spam").
// Off by default; with `enabled`, every message is scored by rspamd between
// the end of DATA and the 250, so spam is refused before it is sealed,
// pinned or sent on chain. `dnsbl`/`dnswl` (src/spam/dnsbl.ts) apply
// whenever a list is named, at connect and at RCPT, with or without rspamd.
import * as z from 'zod';
import { parseResponse } from '../../spam/dnsbl-match.ts';
import {
  bool,
  dnsName,
  filePath,
  httpUrl,
  intBetween,
  ipOrCidr,
  oneOf,
  positiveInt,
  text,
} from '../fields.ts';

const weight = () =>
  z
    .number({ error: 'expected a number' })
    .min(-1000, { error: 'expected a number from -1000 to 1000' })
    .max(1000, { error: 'expected a number from -1000 to 1000' });

/** `responses`: which A answers count as a listing (empty: any 127.0.0.0/8 answer but 127.255.255.x). */
const responses = () =>
  z
    .array(
      text().superRefine((v, ctx) => {
        try {
          parseResponse(v);
        } catch (err) {
          ctx.addIssue({ code: 'custom', message: (err as Error).message });
        }
      }),
      { error: 'expected an array of strings such as "127.0.0.2", "127.0.0.2-127.0.0.11", "127.0.0.0/24"' },
    )
    .default([]);

/** A list given as a bare string is its zone with every other key at its default. */
const zoneOrTable = <T extends z.ZodType>(table: T) =>
  z.preprocess((v) => (typeof v === 'string' ? { zone: v } : v), table);

// One DNS blocklist (src/spam/dnsbl.ts, docs/config.md `[spam]`).
const blocklistSchema = zoneOrTable(
  z.strictObject({
    zone: dnsName(),
    /** What is asked: the client IP (at connect), the envelope sender's domain (RHSBL, at RCPT), or both. */
    check: z
      .array(oneOf(['ip', 'sender']), { error: 'expected an array of "ip" and/or "sender"' })
      .min(1, { error: 'needs "ip", "sender" or both (an empty list checks nothing)' })
      .default(['ip']),
    /** When a client IP listing is answered: the greeting (554/421), or each RCPT (550/450). */
    at: oneOf(['connect', 'rcpt']).default('connect'),
    action: oneOf(['reject', 'defer', 'score']).default('reject'),
    /** Added to the transaction's score when listed under action = "score". */
    weight: weight().default(1),
    responses: responses(),
    /** Listed only when the answer's last octet has one of these bits (0: no mask). */
    mask: intBetween(0, 255).default(0),
    /** Reply text when the list has no TXT record for the entry; {ip}, {domain} and {zone} are filled in. */
    reason: text().optional(),
  }),
);

// One DNS allowlist: a listed client IP skips every blocklist.
const allowlistSchema = zoneOrTable(
  z.strictObject({
    zone: dnsName(),
    responses: responses(),
    mask: intBetween(0, 255).default(0),
  }),
);

/** Networks never looked up: loopback, RFC 1918, CGNAT, link-local, IPv6 ULA (no public list holds them). */
export const DEFAULT_DNSBL_SKIP_NETWORKS = [
  '127.0.0.0/8',
  '10.0.0.0/8',
  '172.16.0.0/12',
  '192.168.0.0/16',
  '100.64.0.0/10',
  '169.254.0.0/16',
  '::1/128',
  'fc00::/7',
  'fe80::/10',
];

export const spamSchema = z.strictObject({
  enabled: bool().default(false),
  /** rspamd's normal worker (or proxy in self-scan mode). */
  rspamd_url: httpUrl().default('http://127.0.0.1:11333'),
  /** The controller password (learning), one line. */
  password_file: filePath().optional(),
  /** rspamd's controller (learning from Junk moves: /learnspam, /learnham). */
  controller_url: httpUrl().default('http://127.0.0.1:11334'),
  /** Train rspamd when a wallet holder moves or copies mail into or out of Junk (IMAP). */
  learn_from_junk: bool().default(true),
  timeout_ms: intBetween(100, 120_000).default(5000),
  /** What a message gets when rspamd is down, slow or answers garbage: accepted unscanned, or 451. */
  on_error: oneOf(['accept', 'defer']).default('accept'),
  /** Larger messages are not scanned (accepted as if rspamd said "no action"). */
  max_scan_bytes: positiveInt().default(20 * 1024 * 1024),
  /** Also publish flagged (Junk) mail on chain; false: stored for server-mode readers only. */
  publish_junk: bool().default(false),
  /** Scan mail submitted on 465/587 as outbound, with rspamd's User set. */
  scan_submission: bool().default(false),
  /** DNS blocklists: zones, or tables with per-list checks, actions and weights (docs/config.md). */
  dnsbl: z.array(blocklistSchema, { error: 'expected an array of zones or tables' }).default([]),
  /** DNS allowlists: a listed client IP skips every blocklist. */
  dnswl: z.array(allowlistSchema, { error: 'expected an array of zones or tables' }).default([]),
  /** One list look-up through `[dns] resolvers`; a list that does not answer in time is skipped. */
  dnsbl_timeout_ms: intBetween(100, 30_000).default(2000),
  /** Total weight of "score" listings at which mail is filed as Junk. */
  dnsbl_junk_score: weight().default(1),
  /** Total weight of "score" listings at which RCPT is refused with 550 (0: never). */
  dnsbl_reject_score: weight().default(0),
  /** Answers are kept for their TTL, at most this long (0: not kept). */
  dnsbl_cache_secs: intBetween(0, 86_400).default(3600),
  /** How often each list's RFC 5782 test entries are asked (also at start). */
  dnsbl_probe_secs: intBetween(1, 86_400).default(600),
  /** Client networks never looked up (and whose mail no list refuses). */
  dnsbl_skip_networks: z
    .array(ipOrCidr(), { error: 'expected a list of IP addresses or CIDR networks' })
    .default(DEFAULT_DNSBL_SKIP_NETWORKS),
});

export type SpamInput = z.output<typeof spamSchema>;
