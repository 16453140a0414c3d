// DNS name normalization for everything an operator or a client types: one
// trailing root dot dropped, case folded, IDN labels turned into punycode
// (and back for display), and the RFC 1035 length limits checked on the
// ASCII form, because that is what goes on the wire and on chain.
import { domainToASCII, domainToUnicode } from 'node:url';

export type DomainNameProblem =
  | 'empty'
  | 'empty_label'
  | 'label_too_long'
  | 'name_too_long'
  | 'invalid_character'
  | 'hyphen_at_label_edge'
  | 'invalid_idn';

export class DomainNameError extends Error {
  constructor(
    readonly input: string,
    readonly problem: DomainNameProblem,
    detail: string,
  ) {
    super(`invalid domain name ${JSON.stringify(input)}: ${detail}`);
    this.name = 'DomainNameError';
  }
}

export interface NormalizedDomain {
  /** Lowercase ASCII (punycode for IDN labels), no trailing dot: the form used in DNS and on chain. */
  ascii: string;
  /** The same name with punycode labels decoded, for display. */
  unicode: string;
}

const MAX_LABEL_OCTETS = 63;
// 255 octets on the wire = 253 characters of dotted text without the root dot.
const MAX_NAME_CHARS = 253;
const LDH = /^[a-z0-9-]+$/;

/**
 * Normalizes a host or domain name. Accepts `Example.ORG.`, `bücher.example`
 * and `xn--bcher-kva.example` alike; throws DomainNameError naming the
 * problem otherwise. Only letter-digit-hyphen labels are accepted (no `_`),
 * since these are names that get MX, A and MailDomain records.
 */
export function normalizeDomainName(input: string): NormalizedDomain {
  let name = input.trim();
  if (name.endsWith('.')) name = name.slice(0, -1);
  if (name === '') throw new DomainNameError(input, 'empty', 'the name is empty');
  // Check the raw labels first: domainToASCII silently accepts some broken
  // input (empty labels) and turns other broken input into '' with no reason.
  const rawLabels = name.split('.');
  if (rawLabels.some((l) => l === ''))
    throw new DomainNameError(input, 'empty_label', 'it contains an empty label (two dots in a row)');
  if (/[\s/\\:@?#%]/.test(name) || /\p{Cc}/u.test(name))
    throw new DomainNameError(
      input,
      'invalid_character',
      'it contains a character not allowed in host names',
    );
  const ascii = domainToASCII(name);
  if (ascii === '')
    throw new DomainNameError(input, 'invalid_idn', 'it is not a valid internationalized name');
  const labels = ascii.split('.');
  for (const label of labels) {
    if (label === '') throw new DomainNameError(input, 'empty_label', 'it contains an empty label');
    if (label.length > MAX_LABEL_OCTETS) {
      throw new DomainNameError(
        input,
        'label_too_long',
        `label "${label.slice(0, 20)}…" is ${label.length} octets; the limit is ${MAX_LABEL_OCTETS}`,
      );
    }
    if (!LDH.test(label))
      throw new DomainNameError(
        input,
        'invalid_character',
        `label "${label}" has characters other than a-z, 0-9 and "-"`,
      );
    if (label.startsWith('-') || label.endsWith('-'))
      throw new DomainNameError(input, 'hyphen_at_label_edge', `label "${label}" starts or ends with "-"`);
  }
  if (ascii.length > MAX_NAME_CHARS) {
    throw new DomainNameError(
      input,
      'name_too_long',
      `the name is ${ascii.length} characters; the limit is ${MAX_NAME_CHARS}`,
    );
  }
  // A punycode label that does not decode (e.g. `xn--zz`) makes the whole
  // unicode form empty.
  const unicode = domainToUnicode(ascii);
  if (unicode === '' || domainToASCII(unicode) !== ascii)
    throw new DomainNameError(input, 'invalid_idn', 'it has a punycode label that does not decode');
  return { ascii, unicode };
}

/** True when `name` equals `zone` or lies below it (both normalized, no trailing dot). */
export function isAtOrBelow(name: string, zone: string): boolean {
  return name === zone || name.endsWith(`.${zone}`);
}

/** The reverse-lookup name of an IPv4 or IPv6 address (`4.3.2.1.in-addr.arpa`). */
export function reverseName(ip: string): string {
  if (ip.includes(':')) {
    const groups = expandIpv6(ip);
    return `${groups.join('').split('').reverse().join('.')}.ip6.arpa`;
  }
  return `${ip.split('.').reverse().join('.')}.in-addr.arpa`;
}

function expandIpv6(ip: string): string[] {
  const [head = '', tail] = ip.split('::');
  const h = head === '' ? [] : head.split(':');
  const t = tail === undefined || tail === '' ? [] : tail.split(':');
  const fill = tail === undefined ? [] : new Array(8 - h.length - t.length).fill('0');
  return [...h, ...fill, ...t].map((g) => g.padStart(4, '0').toLowerCase());
}
