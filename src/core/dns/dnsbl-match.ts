// The pure parts of the DNS block- and allowlist checks (./dnsbl.ts,
// docs/inbound.md "DNSBL and DNSWL"): the client address as a query label
// (IPv4 octets reversed, IPv6 nibbles reversed, RFC 5782 §2.1 and §2.4),
// `responses` entries ("127.0.0.2", "127.0.0.2-127.0.0.11", "127.0.0.0/24")
// and what one A answer means for one list. No imports: the config schema
// checks `responses` with the same parser.

/** An inclusive range of IPv4 addresses as unsigned 32-bit numbers. */
export interface ResponseRange {
  from: number;
  to: number;
}

/** Which answers count as a listing: `responses` ranges (any, when empty) and a last-octet bit mask (0: none). */
export interface ResponseFilter {
  ranges: ResponseRange[];
  mask: number;
}

const V4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** An IPv4 address as an unsigned 32-bit number, or undefined. */
export function ipv4Number(s: string): number | undefined {
  const m = V4.exec(s);
  if (!m) return undefined;
  let n = 0;
  for (let i = 1; i <= 4; i++) {
    const part = m[i] ?? '';
    if (part.length > 1 && part.startsWith('0')) return undefined;
    const octet = Number(part);
    if (octet > 255) return undefined;
    n = n * 256 + octet;
  }
  return n;
}

const LOOPBACK_NET = { from: 0x7f000000, to: 0x7fffffff };
/** 127.255.255.0/24: Spamhaus-style error codes ("query refused", "over quota"), never a listing. */
const ERROR_NET = { from: 0x7fffff00, to: 0x7fffffff };

const inRange = (n: number, r: ResponseRange) => n >= r.from && n <= r.to;

/**
 * One `responses` entry: an address, `FIRST-LAST` or `ADDRESS/PREFIX`, all
 * IPv4 inside 127.0.0.0/8 (RFC 5782 §2.3). Throws an "expected …" Error.
 */
export function parseResponse(entry: string): ResponseRange {
  const expected = `expected "127.0.0.2", "127.0.0.2-127.0.0.11" or "127.0.0.0/24" (IPv4 inside 127.0.0.0/8), got ${JSON.stringify(entry)}`;
  let range: ResponseRange | undefined;
  const slash = entry.indexOf('/');
  const dash = entry.indexOf('-');
  if (slash >= 0) {
    const base = ipv4Number(entry.slice(0, slash));
    const bitsText = entry.slice(slash + 1);
    const bits = /^\d{1,2}$/.test(bitsText) ? Number(bitsText) : -1;
    if (base !== undefined && bits >= 8 && bits <= 32) {
      const size = 2 ** (32 - bits);
      const from = base - (base % size);
      range = { from, to: from + size - 1 };
    }
  } else if (dash >= 0) {
    const from = ipv4Number(entry.slice(0, dash).trim());
    const to = ipv4Number(entry.slice(dash + 1).trim());
    if (from !== undefined && to !== undefined && from <= to) range = { from, to };
  } else {
    const n = ipv4Number(entry.trim());
    if (n !== undefined) range = { from: n, to: n };
  }
  if (!range || !inRange(range.from, LOOPBACK_NET) || !inRange(range.to, LOOPBACK_NET))
    throw new Error(expected);
  return range;
}

export function responseFilter(responses: readonly string[], mask: number): ResponseFilter {
  return { ranges: responses.map(parseResponse), mask };
}

/**
 * What the A records a list answered mean:
 *  - `listed`: at least one address in 127.0.0.0/8 (outside the error range)
 *    passes the filter; `codes` are those addresses;
 *  - `invalid`: an address outside 127.0.0.0/8 (a resolver that rewrites
 *    NXDOMAIN, a hijacked zone): not a listing, and the list is probed again;
 *  - `list-error`: only 127.255.255.x codes, the list refusing this query;
 *  - `clear`: listing codes, none of which the filter accepts.
 */
export function classifyAnswer(
  addresses: readonly string[],
  filter: ResponseFilter,
): { kind: 'listed' | 'clear' | 'invalid' | 'list-error'; codes: string[] } {
  const numbers = addresses.map((a) => ({ a, n: ipv4Number(a) }));
  const outside = numbers.filter(({ n }) => n === undefined || !inRange(n, LOOPBACK_NET));
  if (outside.length > 0) return { kind: 'invalid', codes: outside.map(({ a }) => a) };
  const errors = numbers.filter(({ n }) => inRange(n as number, ERROR_NET));
  const codes = numbers.filter(({ n }) => !inRange(n as number, ERROR_NET));
  const matching = codes.filter(({ n }) => matches(n as number, filter));
  if (matching.length > 0) return { kind: 'listed', codes: matching.map(({ a }) => a) };
  if (codes.length === 0 && errors.length > 0) return { kind: 'list-error', codes: errors.map(({ a }) => a) };
  return { kind: 'clear', codes: codes.map(({ a }) => a) };
}

function matches(n: number, filter: ResponseFilter): boolean {
  if (filter.ranges.length > 0 && !filter.ranges.some((r) => inRange(n, r))) return false;
  if (filter.mask !== 0 && (n & 0xff & filter.mask) === 0) return false;
  return true;
}

/** True when every address is a 127.255.255.x error code. */
export function onlyErrorCodes(addresses: readonly string[]): boolean {
  return (
    addresses.length > 0 &&
    addresses.every((a) => {
      const n = ipv4Number(a);
      return n !== undefined && inRange(n, ERROR_NET);
    })
  );
}

/** The eight 16-bit groups of an IPv6 address (an embedded IPv4 tail and a zone id allowed), or undefined. */
function ipv6Groups(input: string): number[] | undefined {
  let s = input.toLowerCase();
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  let tail: number[] = [];
  const lastColon = s.lastIndexOf(':');
  if (s.slice(lastColon + 1).includes('.')) {
    const v4 = ipv4Number(s.slice(lastColon + 1));
    if (v4 === undefined) return undefined;
    tail = [Math.floor(v4 / 65536), v4 % 65536];
    // "::ffff:1.2.3.4" leaves "::ffff:", "1::1.2.3.4" leaves "1::": drop a lone trailing colon.
    s = s.slice(0, lastColon + 1);
    if (s.endsWith(':') && !s.endsWith('::')) s = s.slice(0, -1);
  }
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const parse = (part: string) => (part === '' ? [] : part.split(':'));
  const head = parse(halves[0] ?? '');
  const rest = halves.length === 2 ? parse(halves[1] ?? '') : [];
  const groups: number[] = [];
  for (const g of [...head, ...rest]) {
    if (!/^[0-9a-f]{1,4}$/.test(g)) return undefined;
  }
  const explicit = head.length + rest.length + tail.length;
  if (halves.length === 1 && explicit !== 8) return undefined;
  if (halves.length === 2 && explicit > 7) return undefined;
  groups.push(...head.map((g) => Number.parseInt(g, 16)));
  if (halves.length === 2) for (let i = explicit; i < 8; i++) groups.push(0);
  groups.push(...rest.map((g) => Number.parseInt(g, 16)), ...tail);
  return groups.length === 8 ? groups : undefined;
}

/**
 * The client address as the MX should check it: IPv4 as is, an IPv4-mapped
 * IPv6 address (`::ffff:192.0.2.1`, a dual-stack listener) as its IPv4
 * address, other IPv6 in full lowercase form; undefined when it is neither.
 */
export function clientAddress(remote: string): { ip: string; family: 'ipv4' | 'ipv6' } | undefined {
  if (ipv4Number(remote) !== undefined) return { ip: remote, family: 'ipv4' };
  const groups = ipv6Groups(remote);
  if (!groups) return undefined;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const hi = groups[6] ?? 0;
    const lo = groups[7] ?? 0;
    return { ip: `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`, family: 'ipv4' };
  }
  return { ip: groups.map((g) => g.toString(16).padStart(4, '0')).join(':'), family: 'ipv6' };
}

/** The label a list is asked under: `2.0.0.127` for 127.0.0.2, 32 reversed nibbles for IPv6 (RFC 5782 §2.4). */
export function queryLabel(ip: string): string {
  if (ipv4Number(ip) !== undefined) return ip.split('.').reverse().join('.');
  const groups = ipv6Groups(ip);
  if (!groups) throw new Error(`not an IP address: ${ip}`);
  return groups
    .map((g) => g.toString(16).padStart(4, '0'))
    .join('')
    .split('')
    .reverse()
    .join('.');
}

/** TXT text fit for a reply line: printable ASCII, one line, at most 200 characters. */
export function replySafe(s: string | undefined): string | undefined {
  if (!s) return undefined;
  const clean = s
    .replace(/[^\x20-\x7e]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 200);
  return clean || undefined;
}
