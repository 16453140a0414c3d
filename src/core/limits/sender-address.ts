// The one canonical form of an envelope sender for the cost guard's
// per-sender windows (docs/cost-guard.md "Sender forms"). Every spelling a
// client can use for the same mailbox maps to one string, so rewriting the
// address never opens a fresh window:
//   - local part: a quoted string is unquoted (`"a.b"` = `a.b`), NFKC-folded
//     (fullwidth `ａ` = `a`), cut at the first `+` (sub-address) or `%`
//     (percent-hack route), and lowercased unless it is a base58 wallet
//     (base58 is case-sensitive); a result that is not a dot-atom is quoted
//     again with the minimal escapes;
//   - domain: src/core/dns/name.ts normalizeDomainName (case, trailing dot, IDN
//     U-label → A-label, fullwidth letters via UTS #46);
//   - address literal (`[1.2.3.4]`, `[IPv6:…]`): the window belongs to the
//     literal IP, whatever the local part: `@[1.2.3.4]`.
// This is deliberately not chain/client/hash.ts fromHash: from_hash is a protocol
// value (frombox seeds, stamps bought for an exact address) that must never
// change; collapsing forms here only makes a window stricter.
import { isIPv4, isIPv6 } from 'node:net';
import { isBase58Key } from '../../../chain/client/index.ts';
import { normalizeDomainName } from '../dns/name.ts';

export interface CanonicalSender {
  /** Canonical local part; '' for an address literal (its window is the IP's). */
  local: string;
  /** Lowercase A-label domain, or a canonical `[1.2.3.4]` / `[IPv6:…]` literal. */
  domain: string;
  /** The local part is a base58 wallet (kept byte for byte). */
  wallet: boolean;
  /** `local@domain`. */
  address: string;
}

// RFC 5322 atext, plus any non-ASCII (RFC 6531 UTF8-non-ascii).
const DOT_ATOM =
  /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~\u0080-\u{10FFFF}-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~\u0080-\u{10FFFF}-]+)*$/u;

function unquote(local: string): string {
  if (local.length >= 2 && local.startsWith('"') && local.endsWith('"'))
    return local.slice(1, -1).replace(/\\(.)/gu, '$1');
  return local;
}

/** Cuts a `+tag` or `%route` suffix, unless nothing would be left before it. */
function stripSuffix(local: string): string {
  const cut = local.search(/[+%]/);
  return cut > 0 ? local.slice(0, cut) : local;
}

function canonicalLocal(raw: string): { local: string; wallet: boolean } {
  const bare = stripSuffix(unquote(raw).normalize('NFKC'));
  const wallet = isBase58Key(bare);
  const local = wallet ? bare : bare.toLowerCase();
  if (DOT_ATOM.test(local)) return { local, wallet };
  return { local: `"${local.replace(/(["\\])/g, '\\$1')}"`, wallet };
}

function canonicalLiteral(inner: string): string {
  const ipv6 = /^ipv6:/i.test(inner) ? inner.slice(5) : undefined;
  if (ipv6 !== undefined && isIPv6(ipv6)) {
    const host = new URL(`http://[${ipv6}]/`).hostname.slice(1, -1);
    // An IPv4-mapped address is the IPv4 sender it maps.
    const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host);
    if (!mapped) return `[IPv6:${host}]`;
    const [hi, lo] = [Number.parseInt(mapped[1] ?? '0', 16), Number.parseInt(mapped[2] ?? '0', 16)];
    return `[${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}]`;
  }
  if (isIPv4(inner)) return `[${inner}]`;
  return `[${inner.toLowerCase()}]`;
}

function canonicalDomain(raw: string): string {
  const name = raw.normalize('NFKC');
  try {
    return normalizeDomainName(name).ascii;
  } catch {
    // Not a host name we would publish (e.g. `_` in a label): still one form per spelling.
    return name.toLowerCase().replace(/\.$/, '');
  }
}

/** The canonical sender; throws when `address` has no local part or no domain. */
export function canonicalSender(address: string): CanonicalSender {
  const at = address.lastIndexOf('@');
  const rawDomain = at < 0 ? '' : address.slice(at + 1).trim();
  const literal = /^\[.*\]$/.test(rawDomain);
  if (at < 0 || rawDomain === '' || (at === 0 && !literal))
    throw new Error(`not a mail address: ${JSON.stringify(address)}`);
  if (literal) {
    const domain = canonicalLiteral(rawDomain.slice(1, -1));
    return { local: '', domain, wallet: false, address: `@${domain}` };
  }
  const { local, wallet } = canonicalLocal(address.slice(0, at));
  const domain = canonicalDomain(rawDomain);
  return { local, domain, wallet, address: `${local}@${domain}` };
}

/** The canonical sender as one string: the `<address>` part of its window key. */
export function normalizeSenderAddress(address: string): string {
  return canonicalSender(address).address;
}
