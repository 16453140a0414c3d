// The secretstream layer shared by the buffer and streaming variants, so
// both frame chunks identically: every chunk carries exactly chunkSize
// plaintext bytes except the last, which carries 1..chunkSize and the FINAL
// tag. Chunk 0 authenticates the preamble's fixed bytes as associated data.
import { SealFormatError } from './errors.ts';
import { CHUNK_OVERHEAD, CONTENT_KEY_BYTES, STREAM_HEADER_BYTES } from './format.ts';
import { releaseStreamState, type Sodium, type StreamState } from './sodium.ts';

export class ChunkSealer {
  readonly header: Uint8Array;
  private readonly state: StreamState;
  private first = true;
  private closed = false;

  constructor(
    private readonly sodium: Sodium,
    key: Uint8Array,
    private readonly fixed: Uint8Array,
  ) {
    const init = sodium.crypto_secretstream_xchacha20poly1305_init_push(key);
    this.state = init.state;
    this.header = init.header;
  }

  push(plain: Uint8Array, final: boolean): Uint8Array {
    if (this.closed) throw new Error('sealer already finished');
    const s = this.sodium;
    const tag = final
      ? s.crypto_secretstream_xchacha20poly1305_TAG_FINAL
      : s.crypto_secretstream_xchacha20poly1305_TAG_MESSAGE;
    const out = s.crypto_secretstream_xchacha20poly1305_push(
      this.state,
      plain,
      this.first ? this.fixed : null,
      tag,
    );
    this.first = false;
    if (final) this.close();
    return out;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    releaseStreamState(this.sodium, this.state);
  }
}

export class ChunkOpener {
  private readonly state: StreamState;
  private index = 0;
  private finished = false;
  private closed = false;

  constructor(
    private readonly sodium: Sodium,
    key: Uint8Array,
    header: Uint8Array,
    private readonly fixed: Uint8Array,
    readonly chunkSize: number,
  ) {
    if (key.length !== CONTENT_KEY_BYTES || header.length !== STREAM_HEADER_BYTES) {
      throw new SealFormatError('sealed object: bad stream header');
    }
    this.state = sodium.crypto_secretstream_xchacha20poly1305_init_pull(header, key);
  }

  /** Ciphertext bytes of a full (non-final) chunk. */
  get fullChunkBytes(): number {
    return this.chunkSize + CHUNK_OVERHEAD;
  }

  get done(): boolean {
    return this.finished;
  }

  /**
   * Decrypts the next chunk. `atEnd` says whether the input ends right after
   * it. Enforces the framing: a full-size non-final chunk must be followed
   * by more; the final chunk must end the input; nothing is accepted after it.
   */
  pull(cipher: Uint8Array, atEnd: boolean): { message: Uint8Array; final: boolean } {
    if (this.finished) throw new SealFormatError('sealed object: data after the final chunk');
    if (cipher.length < CHUNK_OVERHEAD || cipher.length > this.fullChunkBytes) {
      throw new SealFormatError(
        `sealed object truncated or malformed: chunk ${this.index} has ${cipher.length} bytes`,
      );
    }
    const s = this.sodium;
    let res: { message: Uint8Array; tag: number } | false;
    try {
      res = s.crypto_secretstream_xchacha20poly1305_pull(
        this.state,
        cipher,
        this.index === 0 ? this.fixed : null,
      );
    } catch {
      res = false;
    }
    if (!res) {
      this.close();
      throw new SealFormatError(
        `sealed object failed authentication at chunk ${this.index} (tampered, truncated or not for this key)`,
      );
    }
    const final = res.tag === s.crypto_secretstream_xchacha20poly1305_TAG_FINAL;
    if (!final && res.tag !== s.crypto_secretstream_xchacha20poly1305_TAG_MESSAGE) {
      this.close();
      throw new SealFormatError(`sealed object: unexpected stream tag ${res.tag} at chunk ${this.index}`);
    }
    this.index++;
    if (final && !atEnd) {
      this.close();
      throw new SealFormatError('sealed object: data after the final chunk');
    }
    if (!final && (atEnd || cipher.length !== this.fullChunkBytes)) {
      this.close();
      throw new SealFormatError('sealed object is truncated: the stream ends without its final chunk');
    }
    if (final) {
      this.finished = true;
      this.close();
    }
    return { message: res.message, final };
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    releaseStreamState(this.sodium, this.state);
  }
}
