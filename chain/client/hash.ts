// BLAKE3 hashes the protocol keys accounts on, and the name rules behind them
// (docs/protocol.md: Alias, MailDomain, Email.from_hash / reply_to_hash).
/// <reference path="./punycode.d.ts" />

import { blake3 } from '@noble/hashes/blake3.js';
import bs58 from 'bs58';
import punycode from 'punycode.js';
import { type Key, Remembered, toBase58, utf8 } from './bytes.ts';

/** BLAKE3-256 of the UTF-8 bytes of `s`. */
export function blake3Text(s: string): Uint8Array {
  return blake3(utf8(s));
}

// The MX and the pipeline hash the same domain names and sender addresses
// for every message (PDA seeds, postage gates): the hashes are remembered.
// Callers only read the arrays (seeds, instruction data copies).
const remembered = new Remembered<Uint8Array>(20_000);

/**
 * The frombox / Email `from_hash` (docs/protocol.md "from_hash"): blake3 of
 * the sender wallet's base58 address (direct sends; pass the key or its
 * base58 text) or of the envelope from address (relayed sends; '' for the
 * null sender). An email address is hashed as `local@domain`: the local part
 * byte for byte (local parts are case-sensitive, and a base58 wallet local
 * part would otherwise collide with others), the domain with its A-labels
 * decoded to U-labels and lowercased. The MX's SMTP library (smtp-server,
 * through this same punycode.js) hands addresses over with `xn--` labels
 * already decoded, so decoding here changes nothing it produces; it makes an
 * address typed as `alice@xn--bcher-kva.example` (a CLI, AddStamps for a
 * relayed sender) hash like the mail the MX relays from it.
 */
export function fromHash(from: Key): Uint8Array {
  const s = toBase58(from).trim();
  return remembered.get(`f:${s}`, () => {
    const at = s.lastIndexOf('@');
    if (at < 0) return blake3Text(s);
    return blake3Text(`${s.slice(0, at)}@${fromHashDomain(s.slice(at + 1))}`);
  });
}

function fromHashDomain(domain: string): string {
  const lower = domain.toLowerCase();
  try {
    // Lowercased first so `XN--` labels decode too; lowercased again because
    // Punycode can encode upper-case code points.
    return punycode.toUnicode(lower).toLowerCase();
  } catch {
    // Not decodable Punycode (the MX refuses such an address): hashed as written, lowercased.
    return lower;
  }
}

/** `Email.reply_to_hash` of a reply: blake3 of the parent Email account's base58 address. */
export function replyToHash(parentEmail: Key): Uint8Array {
  return blake3Text(toBase58(parentEmail));
}

/** The Alias PDA seed: blake3 of an already normalized alias. */
export function aliasNameHash(normalizedAlias: string): Uint8Array {
  return blake3Text(normalizedAlias);
}

/** The MailDomain PDA seed: blake3 of the lowercased domain name. */
export function domainNameHash(domain: string): Uint8Array {
  return remembered.get(`d:${domain}`, () => blake3Text(domain.toLowerCase()));
}

const ALIAS_RE = /^[a-z0-9._-]{1,64}$/;
const BASE58_RE = /^[1-9A-HJ-NP-Za-km-z]+$/;

/** True when `s` is a 32-byte key in base58 form (aliases must never look like one). */
export function isBase58Key(s: string): boolean {
  if (s.length < 32 || s.length > 44 || !BASE58_RE.test(s)) return false;
  return bs58.decodeUnsafe(s)?.length === 32;
}

/**
 * True when `s` is a normalized alias: 1..=64 bytes of `a-z 0-9 . _ -`, a
 * dot-atom (no leading, trailing or doubled `.`), and not a base58 key.
 */
export function isNormalizedAlias(s: string): boolean {
  if (!ALIAS_RE.test(s)) return false;
  if (s.startsWith('.') || s.endsWith('.') || s.includes('..')) return false;
  return !isBase58Key(s);
}

/** Lowercases, strips an `@domain` suffix and validates; throws on a name the program would refuse. */
export function normalizeAlias(s: string): string {
  let name = s.trim().toLowerCase();
  const at = name.lastIndexOf('@');
  if (at >= 0) name = name.slice(0, at);
  if (!isNormalizedAlias(name)) throw new Error(`invalid alias: ${JSON.stringify(s)}`);
  return name;
}

const LABEL_RE = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * The program's rule for MailDomain names: lowercase, 1..=253 bytes, labels of
 * `a-z 0-9 -` (1..=63 bytes, no leading/trailing `-`). Single labels
 * (`localhost`) are allowed for development.
 */
export function isValidDomainName(s: string): boolean {
  if (s.length < 1 || s.length > 253) return false;
  for (const label of s.split('.')) if (!LABEL_RE.test(label)) return false;
  return true;
}

/** Lowercases and drops a trailing root dot; throws when the result is not a valid domain name. */
export function normalizeDomain(s: string): string {
  let name = s.trim().toLowerCase();
  if (name.endsWith('.')) name = name.slice(0, -1);
  if (!isValidDomainName(name)) throw new Error(`invalid domain name: ${JSON.stringify(s)}`);
  return name;
}
