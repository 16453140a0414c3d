// Streaming seal/open over AsyncIterable<Uint8Array>: memory stays bounded
// by the chunk size (plus whatever piece size the caller's source yields),
// and the bytes are exactly those of sealMessage/openSealed.
import { ChunkOpener, ChunkSealer } from './chunks.ts';
import { decodeEnvelope, encodeEnvelope, type SealEnvelope } from './envelope.ts';
import { SealFormatError } from './errors.ts';
import { encodePreamble, fixedPrefix, type Preamble, parsePreamble } from './format.ts';
import type { ReaderKeypair } from './keys.ts';
import { beginSeal, keyFromSeparateWrap, keyFromWraps, type SealOptions } from './seal.ts';
import { loadSodium } from './sodium.ts';

export type ByteSource = AsyncIterable<Uint8Array> | Iterable<Uint8Array>;

export interface SealStreamInput extends SealOptions {
  envelope: SealEnvelope;
  /** The raw RFC 5322 message as a stream of pieces of any size. */
  raw: ByteSource;
  recipientPublicKey: Uint8Array;
}

export interface SealedStream {
  /** The sealed object's bytes; iterate once. */
  sealed: AsyncIterable<Uint8Array>;
  contentKey: Uint8Array;
}

export interface OpenedStream {
  envelope: SealEnvelope;
  /**
   * The raw message. Every piece is authenticated before it is yielded; a
   * truncated or tampered remainder throws SealFormatError while iterating,
   * so treat the message as complete only once the iteration has ended.
   */
  raw: AsyncIterable<Uint8Array>;
}

function checkPiece(piece: unknown): Uint8Array {
  if (!(piece instanceof Uint8Array))
    throw new SealFormatError('the byte source yielded something that is not a Uint8Array');
  return piece;
}

/** Key, wraps and envelope are checked now; the bytes are produced as `sealed` is iterated. */
export async function sealMessageStream(input: SealStreamInput): Promise<SealedStream> {
  const env = encodeEnvelope(input.envelope);
  const { sodium, contentKey, chunkSize, wraps } = await beginSeal(input);
  const key = Uint8Array.from(contentKey);
  async function* produce(): AsyncGenerator<Uint8Array> {
    const sealer = new ChunkSealer(sodium, key, fixedPrefix(chunkSize));
    key.fill(0);
    try {
      yield encodePreamble(chunkSize, wraps, sealer.header);
      const buf = new Uint8Array(chunkSize);
      let fill = 0;
      const take = function* (piece: Uint8Array): Generator<Uint8Array> {
        let off = 0;
        while (off < piece.length) {
          // A full buffer is only pushed once more bytes exist: it is not the last chunk.
          if (fill === chunkSize) {
            yield sealer.push(buf, false);
            fill = 0;
          }
          const n = Math.min(chunkSize - fill, piece.length - off);
          buf.set(piece.subarray(off, off + n), fill);
          fill += n;
          off += n;
        }
      };
      yield* take(env);
      for await (const piece of input.raw) yield* take(checkPiece(piece));
      yield sealer.push(buf.subarray(0, fill), true);
      buf.fill(0);
    } finally {
      sealer.close();
    }
  }
  return { sealed: produce(), contentKey };
}

/** Pulls exact byte counts out of an async iterable of pieces. */
class ByteQueue {
  private readonly it: AsyncIterator<Uint8Array> | Iterator<Uint8Array>;
  private pieces: Uint8Array[] = [];
  private size = 0;
  private ended = false;

  constructor(source: ByteSource) {
    this.it =
      Symbol.asyncIterator in source
        ? (source as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]()
        : (source as Iterable<Uint8Array>)[Symbol.iterator]();
  }

  get available(): number {
    return this.size;
  }

  /** Reads until at least `n` bytes are buffered or the source ends. */
  async fill(n: number): Promise<void> {
    while (this.size < n && !this.ended) {
      const next = await this.it.next();
      if (next.done) this.ended = true;
      else if (checkPiece(next.value).length > 0) {
        this.pieces.push(next.value);
        this.size += next.value.length;
      }
    }
  }

  /** The first `n` buffered bytes as one array, removed when `consume`. */
  read(n: number, consume: boolean): Uint8Array {
    const len = Math.min(n, this.size);
    const first = this.pieces[0];
    let out: Uint8Array;
    if (first && first.length >= len) out = first.subarray(0, len);
    else {
      out = new Uint8Array(len);
      let at = 0;
      for (const p of this.pieces) {
        if (at >= len) break;
        const part = p.subarray(0, len - at);
        out.set(part, at);
        at += part.length;
      }
    }
    if (consume) this.drop(len);
    return out;
  }

  private drop(n: number): void {
    this.size -= n;
    while (n > 0) {
      const p = this.pieces[0] as Uint8Array;
      if (p.length <= n) {
        this.pieces.shift();
        n -= p.length;
      } else {
        this.pieces[0] = p.subarray(n);
        n = 0;
      }
    }
  }

  async close(): Promise<void> {
    this.pieces = [];
    this.size = 0;
    if (!this.ended) await this.it.return?.();
  }
}

async function readPreamble(q: ByteQueue): Promise<Preamble> {
  let want = 10;
  for (;;) {
    await q.fill(want);
    // fill stops short of `want` only when the source has ended.
    const parsed = parsePreamble(q.read(want, false), q.available < want);
    if (!('need' in parsed)) {
      q.read(parsed.length, true);
      return parsed;
    }
    want += parsed.need;
  }
}

/**
 * Opens a sealed stream. Resolves once the header is read, a key opened and
 * the envelope decrypted; the raw message then streams through `raw`.
 * Pass `opts.wrap` to open with a wrap kept apart from the object.
 */
export async function openSealedStream(
  sealed: ByteSource,
  reader: ReaderKeypair,
  opts: { wrap?: Uint8Array } = {},
): Promise<OpenedStream> {
  const q = new ByteQueue(sealed);
  let opener: ChunkOpener | undefined;
  try {
    const preamble = await readPreamble(q);
    // The wraps are views into queue memory; copy before the queue moves on.
    const wraps = preamble.wraps.map((w) => Uint8Array.from(w));
    const key = opts.wrap ? await keyFromSeparateWrap(opts.wrap, reader) : await keyFromWraps(wraps, reader);
    const sodium = await loadSodium();
    opener = new ChunkOpener(
      sodium,
      key,
      Uint8Array.from(preamble.streamHeader),
      Uint8Array.from(preamble.fixed),
      preamble.chunkSize,
    );
    key.fill(0);
    const o = opener;
    const nextChunk = async (): Promise<Uint8Array> => {
      const full = o.fullChunkBytes;
      await q.fill(full + 1);
      if (q.available === 0)
        throw new SealFormatError('sealed object is truncated: the stream ends without its final chunk');
      const cipher = q.read(full, true);
      return o.pull(cipher, q.available === 0).message;
    };

    // The envelope may span chunks when the chunk size is small.
    let head = new Uint8Array(0);
    let decoded: { envelope: SealEnvelope; length: number } | undefined;
    while (!decoded) {
      const message = await nextChunk();
      const joined = new Uint8Array(head.length + message.length);
      joined.set(head, 0);
      joined.set(message, head.length);
      head = joined;
      const r = decodeEnvelope(head, o.done);
      if (!('need' in r)) decoded = r;
    }
    const rest = head.subarray(decoded.length);
    async function* body(): AsyncGenerator<Uint8Array> {
      try {
        if (rest.length > 0) yield rest;
        while (!o.done) {
          const message = await nextChunk();
          if (message.length > 0) yield message;
        }
      } finally {
        o.close();
        await q.close();
      }
    }
    return { envelope: decoded.envelope, raw: body() };
  } catch (err) {
    opener?.close();
    await q.close();
    throw err;
  }
}
