// Sealing and opening whole messages held in memory. The streaming variants
// (stream.ts) write and read the same bytes.
import { ChunkOpener, ChunkSealer } from './chunks.ts';
import { decodeEnvelope, encodeEnvelope, type SealEnvelope } from './envelope.ts';
import { SealFormatError } from './errors.ts';
import {
  CHUNK_OVERHEAD,
  CONTENT_KEY_BYTES,
  checkChunkSize,
  DEFAULT_CHUNK_SIZE,
  encodePreamble,
  fixedPrefix,
  type Preamble,
  parsePreamble,
} from './format.ts';
import {
  defaultRandomBytes,
  type RandomBytes,
  type ReaderKeypair,
  unwrapContentKey,
  wrapContentKey,
} from './keys.ts';
import { loadSodium, type Sodium } from './sodium.ts';

export interface SealOptions {
  /** More readers to wrap the content key for, in the object itself (the IPFS copy carries only the recipient's). */
  additionalReaders?: Uint8Array[];
  /** Plaintext bytes per chunk; default 64 KiB. */
  chunkSize?: number;
  /** Source of the content key; default the platform's CSPRNG. */
  randomBytes?: RandomBytes;
}

export interface SealMessageInput extends SealOptions {
  envelope: SealEnvelope;
  /** The exact RFC 5322 message bytes. */
  raw: Uint8Array;
  /** X25519 key of the recipient: the MailboxKey, or the wallet's converted key (recipientSealKey). */
  recipientPublicKey: Uint8Array;
}

export interface Sealed {
  sealed: Uint8Array;
  /** The 32-byte content key, for separate reader wraps (wrapContentKey); wipe it after use. */
  contentKey: Uint8Array;
}

export interface Opened {
  envelope: SealEnvelope;
  raw: Uint8Array;
}

/** Content key and preamble bytes both variants start from. */
export async function beginSeal(
  opts: SealOptions & { recipientPublicKey: Uint8Array },
): Promise<{ sodium: Sodium; contentKey: Uint8Array; chunkSize: number; wraps: Uint8Array[] }> {
  const chunkSize = opts.chunkSize ?? DEFAULT_CHUNK_SIZE;
  checkChunkSize(chunkSize);
  const sodium = await loadSodium();
  const contentKey = (opts.randomBytes ?? defaultRandomBytes)(CONTENT_KEY_BYTES);
  if (contentKey.length !== CONTENT_KEY_BYTES)
    throw new SealFormatError('randomBytes returned the wrong length');
  const readers = [opts.recipientPublicKey, ...(opts.additionalReaders ?? [])];
  const wraps: Uint8Array[] = [];
  for (const pk of readers) wraps.push(await wrapContentKey(contentKey, pk));
  return { sodium, contentKey, chunkSize, wraps };
}

export async function sealMessage(input: SealMessageInput): Promise<Sealed> {
  if (!(input?.raw instanceof Uint8Array)) throw new SealFormatError('raw must be a Uint8Array');
  const env = encodeEnvelope(input.envelope);
  const { sodium, contentKey, chunkSize, wraps } = await beginSeal(input);
  const raw = input.raw;
  const total = env.length + raw.length;
  const chunks = Math.max(1, Math.ceil(total / chunkSize));
  const sealer = new ChunkSealer(sodium, contentKey, fixedPrefix(chunkSize));
  try {
    const preamble = encodePreamble(chunkSize, wraps, sealer.header);
    const out = new Uint8Array(preamble.length + total + chunks * CHUNK_OVERHEAD);
    out.set(preamble, 0);
    let at = preamble.length;
    for (let i = 0; i < chunks; i++) {
      const start = i * chunkSize;
      const end = Math.min(start + chunkSize, total);
      const cipher = sealer.push(contentRange(env, raw, start, end), i === chunks - 1);
      out.set(cipher, at);
      at += cipher.length;
    }
    return { sealed: out, contentKey };
  } finally {
    sealer.close();
  }
}

/** Bytes [start, end) of env ‖ raw, copying only when the range crosses into env. */
function contentRange(env: Uint8Array, raw: Uint8Array, start: number, end: number): Uint8Array {
  if (start >= env.length) return raw.subarray(start - env.length, end - env.length);
  const out = new Uint8Array(end - start);
  const fromEnv = env.subarray(start, Math.min(end, env.length));
  out.set(fromEnv, 0);
  if (end > env.length) out.set(raw.subarray(0, end - env.length), fromEnv.length);
  return out;
}

function preambleOf(sealed: Uint8Array): Preamble {
  if (!(sealed instanceof Uint8Array)) throw new SealFormatError('a sealed object must be a Uint8Array');
  return parsePreamble(sealed, true) as Preamble;
}

/** The content key from the first wrap in the preamble that opens for `reader`. */
export async function keyFromWraps(wraps: Uint8Array[], reader: ReaderKeypair): Promise<Uint8Array> {
  for (const wrap of wraps) {
    const key = await unwrapContentKey(wrap, reader);
    if (key) return key;
  }
  throw new SealFormatError(
    `none of the ${wraps.length} wrap(s) opens with this key: the message is sealed to another key, or its header is damaged`,
  );
}

export async function keyFromSeparateWrap(wrap: Uint8Array, reader: ReaderKeypair): Promise<Uint8Array> {
  const key = await unwrapContentKey(wrap, reader);
  if (!key)
    throw new SealFormatError('the separate wrap does not open with this key (wrong key or damaged wrap)');
  return key;
}

/** The content key of a sealed object, for a reader who holds one of its wraps (e.g. to make a new reader wrap). */
export async function openContentKey(sealed: Uint8Array, reader: ReaderKeypair): Promise<Uint8Array> {
  return keyFromWraps(preambleOf(sealed).wraps, reader);
}

/** Opens a sealed object with a reader key that one of its wraps is for. */
export async function openSealed(sealed: Uint8Array, reader: ReaderKeypair): Promise<Opened> {
  const preamble = preambleOf(sealed);
  return decryptBody(sealed, preamble, await keyFromWraps(preamble.wraps, reader));
}

/** Opens a sealed object with a wrap kept apart from it (an operator-kept reader's). */
export async function openSealedWithWrap(
  sealed: Uint8Array,
  wrap: Uint8Array,
  reader: ReaderKeypair,
): Promise<Opened> {
  const preamble = preambleOf(sealed);
  return decryptBody(sealed, preamble, await keyFromSeparateWrap(wrap, reader));
}

async function decryptBody(sealed: Uint8Array, preamble: Preamble, key: Uint8Array): Promise<Opened> {
  const sodium = await loadSodium();
  const body = sealed.subarray(preamble.length);
  const opener = new ChunkOpener(sodium, key, preamble.streamHeader, preamble.fixed, preamble.chunkSize);
  try {
    if (body.length === 0)
      throw new SealFormatError('sealed object is truncated: no content after the header');
    const full = opener.fullChunkBytes;
    const chunks = Math.ceil(body.length / full);
    const plain = new Uint8Array(Math.max(0, body.length - chunks * CHUNK_OVERHEAD));
    let written = 0;
    for (let at = 0; at < body.length; at += full) {
      const end = Math.min(at + full, body.length);
      const { message } = opener.pull(body.subarray(at, end), end === body.length);
      plain.set(message, written);
      written += message.length;
    }
    const head = decodeEnvelope(plain, true) as { envelope: SealEnvelope; length: number };
    return { envelope: head.envelope, raw: plain.subarray(head.length) };
  } finally {
    opener.close();
    key.fill(0);
  }
}
