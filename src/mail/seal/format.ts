// The sealed object's preamble (docs/sealing.md "Layout"): magic, format
// version, chunk size, the wraps, the secretstream header. Pure byte work,
// no libsodium, so it parses before the module has loaded.
import { SealFormatError } from './errors.ts';

/** "SPSL": Sealpost sealed. */
export const MAGIC = Uint8Array.of(0x53, 0x50, 0x53, 0x4c);
export const FORMAT_VERSION = 1;
/** Plaintext bytes per secretstream chunk that writers use. */
export const DEFAULT_CHUNK_SIZE = 64 * 1024;
/** Readers refuse chunk sizes outside this range: it bounds their memory. */
export const MIN_CHUNK_SIZE = 64;
export const MAX_CHUNK_SIZE = 16 * 1024 * 1024;
export const CONTENT_KEY_BYTES = 32;
export const X25519_KEY_BYTES = 32;
/** crypto_box_seal of a 32-byte content key: 32 ephemeral pk + 16 MAC + 32. */
export const WRAP_BYTES = 80;
export const MAX_WRAPS = 255;
/** crypto_secretstream_xchacha20poly1305_HEADERBYTES */
export const STREAM_HEADER_BYTES = 24;
/** crypto_secretstream_xchacha20poly1305_ABYTES: per-chunk overhead. */
export const CHUNK_OVERHEAD = 17;
/** magic + version + chunk size: authenticated as the first chunk's associated data. */
export const FIXED_BYTES = 9;
/** FIXED_BYTES + wrap count. */
const WRAPS_OFFSET = 10;

export interface Preamble {
  version: number;
  chunkSize: number;
  /** Each WRAP_BYTES long (views into the parsed bytes). */
  wraps: Uint8Array[];
  /** The first FIXED_BYTES bytes: associated data of chunk 0. */
  fixed: Uint8Array;
  streamHeader: Uint8Array;
  /** Where the first ciphertext chunk starts. */
  length: number;
}

export function preambleLength(wrapCount: number): number {
  return WRAPS_OFFSET + wrapCount * WRAP_BYTES + STREAM_HEADER_BYTES;
}

export function checkChunkSize(chunkSize: number): void {
  if (!Number.isInteger(chunkSize) || chunkSize < MIN_CHUNK_SIZE || chunkSize > MAX_CHUNK_SIZE) {
    throw new SealFormatError(
      `chunk size must be an integer ${MIN_CHUNK_SIZE}..${MAX_CHUNK_SIZE}, got ${chunkSize}`,
    );
  }
}

/** Magic, version and chunk size: the bytes chunk 0 authenticates. */
export function fixedPrefix(chunkSize: number): Uint8Array {
  checkChunkSize(chunkSize);
  const out = new Uint8Array(FIXED_BYTES);
  out.set(MAGIC, 0);
  out[4] = FORMAT_VERSION;
  new DataView(out.buffer).setUint32(5, chunkSize, true);
  return out;
}

export function encodePreamble(chunkSize: number, wraps: Uint8Array[], streamHeader: Uint8Array): Uint8Array {
  if (wraps.length < 1 || wraps.length > MAX_WRAPS) {
    throw new SealFormatError(`a sealed object carries 1..${MAX_WRAPS} wraps, got ${wraps.length}`);
  }
  if (streamHeader.length !== STREAM_HEADER_BYTES) throw new SealFormatError('bad stream header length');
  const out = new Uint8Array(preambleLength(wraps.length));
  out.set(fixedPrefix(chunkSize), 0);
  out[FIXED_BYTES] = wraps.length;
  wraps.forEach((w, i) => {
    if (w.length !== WRAP_BYTES) throw new SealFormatError(`a wrap is ${WRAP_BYTES} bytes, got ${w.length}`);
    out.set(w, WRAPS_OFFSET + i * WRAP_BYTES);
  });
  out.set(streamHeader, WRAPS_OFFSET + wraps.length * WRAP_BYTES);
  return out;
}

/**
 * Parses the preamble at the start of `bytes`. Returns the number of bytes
 * still needed when `bytes` is a prefix too short to tell (streaming
 * readers call again with more); throws SealFormatError when it cannot be a
 * sealed object, or when `complete` says no more bytes will come.
 */
export function parsePreamble(bytes: Uint8Array, complete: boolean): Preamble | { need: number } {
  const short = (need: number) => {
    if (complete)
      throw new SealFormatError(`truncated sealed object: ${bytes.length} bytes, header incomplete`);
    return { need };
  };
  const head = Math.min(bytes.length, MAGIC.length);
  for (let i = 0; i < head; i++) {
    if (bytes[i] !== MAGIC[i]) throw new SealFormatError('not a sealed object (bad magic bytes)');
  }
  if (bytes.length < WRAPS_OFFSET) return short(WRAPS_OFFSET - bytes.length);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = bytes[4] as number;
  if (version !== FORMAT_VERSION) {
    throw new SealFormatError(
      `unsupported sealed format version ${version} (this reader knows ${FORMAT_VERSION})`,
    );
  }
  const chunkSize = view.getUint32(5, true);
  checkChunkSize(chunkSize);
  const count = bytes[9] as number;
  if (count === 0) throw new SealFormatError('sealed object carries no wraps');
  const length = preambleLength(count);
  if (bytes.length < length) return short(length - bytes.length);
  const wraps: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    const at = WRAPS_OFFSET + i * WRAP_BYTES;
    wraps.push(bytes.subarray(at, at + WRAP_BYTES));
  }
  const headerAt = WRAPS_OFFSET + count * WRAP_BYTES;
  return {
    version,
    chunkSize,
    wraps,
    fixed: bytes.subarray(0, FIXED_BYTES),
    streamHeader: bytes.subarray(headerAt, headerAt + STREAM_HEADER_BYTES),
    length,
  };
}
