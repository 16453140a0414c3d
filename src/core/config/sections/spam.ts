// [spam]: the content filter at the MX (src/mail/spam/, docs/inbound.md "Spam").
// Off by default; with `enabled`, every message is scored by rspamd between
// the end of DATA and the 250, so spam is refused before it is sealed,
// pinned or sent on chain. `dnsbl`/`dnswl` (src/mail/spam/dnsbl.ts) apply
// whenever a list is named, at connect and at RCPT, with or without rspamd.
import * as z from 'zod';
import { parseResponse } from '../../dns/dnsbl-match.ts';
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

// One DNS blocklist (src/mail/spam/dnsbl.ts, docs/config.md `[spam]`).
const blocklistSchema = zoneOrTable(
  z.strictObject({
    zone: dnsName().meta({ description: "The list's DNS zone.", default: '—' }),
    /** What is asked: the client IP (at connect), the envelope sender's domain (RHSBL, at RCPT), or both. */
    check: z
      .array(oneOf(['ip', 'sender']), { error: 'expected an array of "ip" and/or "sender"' })
      .min(1, { error: 'needs "ip", "sender" or both (an empty list checks nothing)' })
      .default(['ip'])
      .meta({
        description:
          '`"ip"`: the client address (IPv4 octets reversed, IPv6 nibbles reversed) at connect. `"sender"`: the MAIL FROM domain (RHSBL, a domain list), asked at MAIL FROM and answered at RCPT. Both may be given.',
      }),
    /** When a client IP listing is answered: the greeting (554/421), or each RCPT (550/450). */
    at: oneOf(['connect', 'rcpt']).default('connect').meta({
      description:
        'When a client-address listing is answered: `"connect"` (the greeting: 554 5.7.1, or 421 4.7.1 for `defer`; the session ends) or `"rcpt"` (each RCPT: 550 5.7.1 / 450 4.7.1, logged with the sender). Sender-domain listings are answered at RCPT.',
    }),
    action: oneOf(['reject', 'defer', 'score']).default('reject').meta({
      description:
        '`"reject"` (5xx), `"defer"` (4xx), or `"score"`: no reply of its own, adds `weight` to the transaction\'s total.',
    }),
    /** Added to the transaction's score when listed under action = "score". */
    weight: weight().default(1).meta({ description: 'What a `score` listing adds (−1000 to 1000).' }),
    responses: responses().meta({
      description:
        'The answers that count as a listing: addresses (`"127.0.0.2"`), ranges (`"127.0.0.2-127.0.0.11"`) and networks (`"127.0.1.0/24"`) inside 127.0.0.0/8. Empty: any answer in 127.0.0.0/8. 127.255.255.x (list errors) and answers outside 127.0.0.0/8 never count.',
    }),
    /** Listed only when the answer's last octet has one of these bits (0: no mask). */
    mask: intBetween(0, 255).default(0).meta({
      description:
        "A bit mask on the answer's last octet (SURBL-style lists): listed when a bit is set. `0`: none. With `responses`, both must match.",
    }),
    /** Reply text when the list has no TXT record for the entry; {ip}, {domain} and {zone} are filled in. */
    reason: text().optional().meta({
      description:
        'Reply text when the list has no TXT record for the entry; `{ip}`, `{domain}` and `{zone}` are filled in.',
    }),
  }),
);

// One DNS allowlist: a listed client IP skips every blocklist.
const allowlistSchema = zoneOrTable(
  z.strictObject({
    zone: dnsName().meta({ description: "The list's DNS zone." }),
    responses: responses().meta({
      description:
        'The answers that count as a listing, written as for a `dnsbl` table. Empty: any answer in 127.0.0.0/8 but 127.255.255.x (list errors).',
    }),
    mask: intBetween(0, 255).default(0).meta({
      description:
        "A bit mask on the answer's last octet: listed when a bit is set. `0`: none. With `responses`, both must match.",
    }),
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
  enabled: bool().default(false).meta({ description: 'Scan MX mail.' }),
  /** rspamd's normal worker (or proxy in self-scan mode). */
  rspamd_url: httpUrl()
    .default('http://127.0.0.1:11333')
    .meta({ description: "rspamd's normal worker (`/checkv2`)." }),
  /** The controller password (learning), one line. */
  password_file: filePath().optional().meta({
    description:
      'A file whose first line is the controller password (sent as `Password`; learning). `sealpost config check` opens it: missing, unreadable or empty is a problem naming the file while `enabled`, a note otherwise.',
  }),
  /** rspamd's controller (learning from Junk moves: /learnspam, /learnham). */
  controller_url: httpUrl().default('http://127.0.0.1:11334').meta({
    description: "rspamd's controller: `/learnspam` and `/learnham` when mail is moved into or out of Junk.",
  }),
  /** Train rspamd when a wallet holder moves or copies mail into or out of Junk (IMAP). */
  learn_from_junk: bool().default(true).meta({
    description:
      'Train rspamd from IMAP moves and copies into Junk (spam) and out of Junk, except to Trash (ham). Needs a classifier backend in rspamd.',
  }),
  timeout_ms: intBetween(100, 120_000)
    .default(5000)
    .meta({ description: 'One scan, connect to last byte (100–120000).' }),
  /** What a message gets when rspamd is down, slow or answers garbage: accepted unscanned, or 451. */
  on_error: oneOf(['accept', 'defer']).default('accept').meta({
    description:
      'rspamd down, slow or answering garbage: `"accept"` (unscanned) or `"defer"` (451 4.7.1). A warning at most once a minute, a metric each.',
  }),
  /** Larger messages are not scanned (accepted as if rspamd said "no action"). */
  max_scan_bytes: positiveInt()
    .default(20 * 1024 * 1024)
    .meta({
      description:
        "Larger messages are not scanned and are accepted as `no action` (keep ≤ rspamd's `max_message`).",
    }),
  /** Also publish flagged (Junk) mail on chain; false: stored for server-mode readers only. */
  publish_junk: bool().default(false).meta({
    description:
      'Flagged (`add header`/`rewrite subject`) mail is also published on chain; `false`: sealed and filed in Junk for server-mode readers only.',
  }),
  /** Scan mail submitted on 465/587 as outbound, with rspamd's User set. */
  scan_submission: bool().default(false).meta({
    description:
      "Scan mail submitted on 465/587 (and the API's send) as outbound, with rspamd's `User` set: reject → 550 5.7.1, soft reject → 451 4.7.1.",
  }),
  /** DNS blocklists: zones, or tables with per-list checks, actions and weights (docs/config.md). */
  dnsbl: z.array(blocklistSchema, { error: 'expected an array of zones or tables' }).default([]).meta({
    description:
      'Blocklists, in order: a zone string (`"zen.example.net"`: the client IP, refused at the greeting with 554 5.7.1 on any listing code) or a table with the keys below. A listing earlier in the list wins the reply; `reject` outranks `defer`.',
  }),
  /** DNS allowlists: a listed client IP skips every blocklist. */
  dnswl: z.array(allowlistSchema, { error: 'expected an array of zones or tables' }).default([]).meta({
    description:
      'Allowlists: zone strings, or tables with `zone`, `responses`, `mask`. A client IP one of them lists skips every blocklist (address and sender domain); rspamd still scans.',
  }),
  /** One list look-up through `[dns] resolvers`; a list that does not answer in time is skipped. */
  dnsbl_timeout_ms: intBetween(100, 30_000).default(2000).meta({
    description:
      "One look-up through all the resolvers (100–30000); a list that has not answered is skipped for it (fail open). The greeting waits at most this (half as long again for a listed client's TXT).",
  }),
  /** Total weight of "score" listings at which mail is filed as Junk. */
  dnsbl_junk_score: weight().default(1).meta({
    description:
      "Total `weight` of a transaction's `score` listings at which the message is filed as Junk (like rspamd's `add header`; on chain only with `publish_junk`).",
  }),
  /** Total weight of "score" listings at which RCPT is refused with 550 (0: never). */
  dnsbl_reject_score: weight()
    .default(0)
    .meta({ description: 'Total `weight` at which RCPT is refused with 550 5.7.1; `0`: never.' }),
  /** Answers are kept for their TTL, at most this long (0: not kept). */
  dnsbl_cache_secs: intBetween(0, 86_400).default(3600).meta({
    description:
      'Longest an answer is kept, whatever its TTL (0–86400; `0`: every connection asks). Failures are never kept.',
  }),
  /** How often each list's RFC 5782 test entries are asked (also at start). */
  dnsbl_probe_secs: intBetween(1, 86_400).default(600).meta({
    description:
      "How often each zone's RFC 5782 test entries are asked (and at start): a zone that lists 127.0.0.1 answers for everything and is skipped, with a warning and `sealpost_dnsbl_list_disabled` 1, until it behaves.",
  }),
  /** Client networks never looked up (and whose mail no list refuses). */
  dnsbl_skip_networks: z
    .array(ipOrCidr(), { error: 'expected a list of IP addresses or CIDR networks' })
    .default(DEFAULT_DNSBL_SKIP_NETWORKS)
    .meta({
      description:
        'Client addresses and CIDR networks never looked up (and never refused by a list): `["127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "169.254.0.0/16", "::1/128", "fc00::/7", "fe80::/10"]`. Set `[]` to check every client.',
      default: 'loopback, RFC 1918, CGNAT, link-local, ULA',
    }),
});

export type SpamInput = z.output<typeof spamSchema>;
