// The envelope that precedes the raw message inside the encrypted content
// (docs/sealing.md "Content"): length-prefixed, so the raw RFC 5322 bytes
// that follow are kept byte for byte with no escaping.
import { SealFormatError } from './errors.ts';

export interface SealEnvelope {
  version: 1;
  /** SMTP envelope sender (MAIL FROM), "" for the null sender. */
  from: string;
  /** SMTP envelope recipient (RCPT TO) this copy was delivered for. */
  to: string;
  /** When the server accepted the message, unix milliseconds. */
  receivedAt: number;
}

export const ENVELOPE_VERSION = 1;
/** Far above any SMTP path (RFC 5321 allows 256 octets); keeps the envelope small. */
export const MAX_ADDRESS_BYTES = 4096;
const FIXED = 1 + 8;

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function addressBytes(field: 'from' | 'to', value: unknown): Uint8Array {
  if (typeof value !== 'string') throw new SealFormatError(`envelope.${field} must be a string`);
  const bytes = encoder.encode(value);
  // A lone surrogate would be replaced by U+FFFD and not come back as given.
  if (decoder.decode(bytes) !== value)
    throw new SealFormatError(`envelope.${field} is not well-formed Unicode`);
  if (bytes.length > MAX_ADDRESS_BYTES) {
    throw new SealFormatError(`envelope.${field} is ${bytes.length} bytes; at most ${MAX_ADDRESS_BYTES}`);
  }
  return bytes;
}

export function encodeEnvelope(envelope: SealEnvelope): Uint8Array {
  if (envelope?.version !== ENVELOPE_VERSION) {
    throw new SealFormatError(`envelope.version must be ${ENVELOPE_VERSION}`);
  }
  const { receivedAt } = envelope;
  if (!Number.isSafeInteger(receivedAt) || receivedAt < 0) {
    throw new SealFormatError('envelope.receivedAt must be a non-negative integer (unix milliseconds)');
  }
  const from = addressBytes('from', envelope.from);
  const to = addressBytes('to', envelope.to);
  const out = new Uint8Array(FIXED + 2 + from.length + 2 + to.length);
  const view = new DataView(out.buffer);
  out[0] = ENVELOPE_VERSION;
  view.setBigUint64(1, BigInt(receivedAt), true);
  view.setUint16(FIXED, from.length, true);
  out.set(from, FIXED + 2);
  view.setUint16(FIXED + 2 + from.length, to.length, true);
  out.set(to, FIXED + 4 + from.length);
  return out;
}

type Read = { value: string; end: number } | { need: number };

function readAddress(field: string, bytes: Uint8Array, at: number): Read {
  if (bytes.length < at + 2) return { need: at + 2 };
  const len = (bytes[at] as number) | ((bytes[at + 1] as number) << 8);
  if (len > MAX_ADDRESS_BYTES)
    throw new SealFormatError(`sealed envelope: ${field} length ${len} is too long`);
  const end = at + 2 + len;
  if (bytes.length < end) return { need: end };
  try {
    return { value: decoder.decode(bytes.subarray(at + 2, end)), end };
  } catch {
    throw new SealFormatError(`sealed envelope: ${field} is not UTF-8`);
  }
}

/**
 * Decodes the envelope at the start of the content. Returns `{ need }` (the
 * prefix length required to go on) while `bytes` is too short; throws
 * SealFormatError for a malformed envelope, or a short one when `complete`.
 */
export function decodeEnvelope(
  bytes: Uint8Array,
  complete: boolean,
): { envelope: SealEnvelope; length: number } | { need: number } {
  const short = (need: number) => {
    if (complete) throw new SealFormatError('sealed content is too short for its envelope');
    return { need };
  };
  if (bytes.length < 1) return short(FIXED + 2);
  if (bytes[0] !== ENVELOPE_VERSION) {
    throw new SealFormatError(`unsupported sealed envelope version ${bytes[0]}`);
  }
  if (bytes.length < FIXED) return short(FIXED + 2);
  const receivedAt = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getBigUint64(1, true);
  if (receivedAt > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new SealFormatError('sealed envelope: received time is out of range');
  }
  const from = readAddress('from', bytes, FIXED);
  if ('need' in from) return short(from.need);
  const to = readAddress('to', bytes, from.end);
  if ('need' in to) return short(to.need);
  return {
    envelope: { version: ENVELOPE_VERSION, from: from.value, to: to.value, receivedAt: Number(receivedAt) },
    length: to.end,
  };
}
