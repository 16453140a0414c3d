// The one place that spells Redis key names outside BullMQ's own queues.
// Every writer (API rate limits, login and step-up challenges, wallet leases,
// the chain-publication windows of the cost guard) and the admin sweep that
// removes a wallet's keys build names here, so a layout change cannot leave
// keys the sweep no longer finds. Layout: docs/api.md "Redis keys".
import { normalizeSenderAddress } from './sender-address.ts';

export { normalizeSenderAddress };

/** Scopes of rate windows. `wallet` windows belong to one wallet and go with its account. */
export type RateScope = 'ip' | 'wallet';

// Glob metacharacters would widen a SCAN pattern beyond one wallet.
function assertPatternSafe(value: string, what: string): void {
  if (/[*?[\]\\]/.test(value) || value === '') throw new Error(`${what} is not usable in a key pattern`);
}

/**
 * One fixed rate window: `<prefix>:rl:<scope>:<subject>:<bucket>:<window start ms>`.
 * `bucket` names the limit (e.g. `api`, `auth`) so limits do not share counters.
 */
export function rateWindowKey(
  prefix: string,
  scope: RateScope,
  subject: string,
  bucket: string,
  windowStart: number,
): string {
  return `${prefix}:rl:${scope}:${subject}:${bucket}:${windowStart}`;
}

/**
 * A rolling window of one wallet (no window start in the name: the value is
 * the window's own state, see src/core/limits/window.ts):
 * `<prefix>:rl:wallet:<wallet>:<bucket>`. Matches `walletRateWindowPattern`,
 * so the sweep removes it with the account.
 */
export function walletWindowKey(prefix: string, wallet: string, bucket: string): string {
  return `${prefix}:rl:wallet:${wallet}:${bucket}`;
}

/** SCAN pattern of every rate window of one wallet. */
export function walletRateWindowPattern(prefix: string, wallet: string): string {
  assertPatternSafe(wallet, 'wallet');
  return `${prefix}:rl:wallet:${wallet}:*`;
}

/** A lease held on behalf of a wallet: `<prefix>:lease:<wallet>:<name>`. */
export function walletLeaseKey(prefix: string, wallet: string, name: string): string {
  return `${prefix}:lease:${wallet}:${name}`;
}

/** SCAN pattern of every lease of one wallet. */
export function walletLeasePattern(prefix: string, wallet: string): string {
  assertPatternSafe(wallet, 'wallet');
  return `${prefix}:lease:${wallet}:*`;
}

/** Per-sender chain-publication window: `<prefix>:pubwin:sender:<canonical sender>` (./sender-address.ts). */
export function senderPublicationWindowKey(prefix: string, address: string): string {
  return `${prefix}:pubwin:sender:${normalizeSenderAddress(address)}`;
}

/** The deployment-wide window of null-envelope-sender messages (never swept). */
export function nullSenderPublicationWindowKey(prefix: string): string {
  return `${prefix}:pubwin:null`;
}

/** The deployment-wide window of every chain publication the MX accepts (never swept). */
export function overallPublicationWindowKey(prefix: string): string {
  return `${prefix}:pubwin:all`;
}

/**
 * When a wallet's account was last deleted (Unix ms), kept for one token
 * lifetime: session tokens issued up to then are refused, so a token from
 * before the deletion cannot act for a later account of the same wallet.
 */
export function accountDeletedKey(prefix: string, wallet: string): string {
  return `${prefix}:auth:deleted:${wallet}`;
}

/** Used login challenges of a wallet (sorted set: `<window>:<generation>` → expiry ms; src/edge/api/auth/challenges.ts). */
export function loginChallengeKey(prefix: string, wallet: string): string {
  return `${prefix}:auth:login:${wallet}`;
}

/** The wallet's one outstanding step-up challenge (JSON `{nonce, exp}`). */
export function stepUpChallengeKey(prefix: string, wallet: string): string {
  return `${prefix}:auth:stepup:${wallet}`;
}

/** A per-IP token bucket (e.g. the MX's connection rate): `<prefix>:rl:ip:<ip>:<bucket>`. */
export function ipBucketKey(prefix: string, ip: string, bucket: string): string {
  return `${prefix}:rl:ip:${ip}:${bucket}`;
}

/**
 * Pub/sub channel of account-state changes (message: the wallet). Every API
 * process drops its cached session state and pin-provider status of that
 * wallet on receipt (src/edge/api/account-state-cache.ts).
 */
export function accountChangeChannel(prefix: string): string {
  return `${prefix}:api:account-changed`;
}

/**
 * Pub/sub channel of mail-store changes (message: JSON `{w, m?, o}` — the
 * wallet, the mailbox ids, the publishing process's random token). Every
 * process serving IMAP wakes that wallet's IDLE sessions on receipt
 * (src/edge/imap/push.ts).
 */
export function mailChangeChannel(prefix: string): string {
  return `${prefix}:imap:mail-changed`;
}

/**
 * Chain publications the MX accepted in one clock hour (a counter, kept 8
 * days; src/core/limits/publication-history.ts): `<prefix>:pubhist:<hour>`, the
 * hour as whole hours since the Unix epoch. Deployment-wide, never swept.
 */
export function publicationHourKey(prefix: string, hour: number): string {
  return `${prefix}:pubhist:${hour}`;
}
