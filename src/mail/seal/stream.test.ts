// The streaming variants: same bytes as the buffer variants (each opens the
// other's output), bounded memory, and damage found while streaming.
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  type ByteSource,
  encodeEnvelope,
  generateReaderKeypair,
  openSealed,
  openSealedStream,
  type SealEnvelope,
  SealFormatError,
  sealMessage,
  sealMessageStream,
  wrapContentKey,
} from './index.ts';

const ENVELOPE: SealEnvelope = {
  version: 1,
  from: 'carol@remote.example',
  to: 'dan@mail.test',
  receivedAt: 1_712_345_678_901,
};
const CHUNK = 64 * 1024;

function bytes(n: number): Uint8Array {
  return new Uint8Array(randomBytes(n));
}

/** Splits bytes into pieces of varying sizes (1 byte up to 3 chunks). */
function* pieces(
  data: Uint8Array,
  sizes = [1, 7, 1000, CHUNK - 3, CHUNK, 3 * CHUNK + 5, 17],
): Generator<Uint8Array> {
  let at = 0;
  let i = 0;
  while (at < data.length) {
    const n = sizes[i++ % sizes.length] as number;
    yield data.subarray(at, at + n);
    at += n;
  }
}

async function collect(source: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const p of source) parts.push(p);
  return Uint8Array.from(Buffer.concat(parts));
}

async function sealStream(raw: Uint8Array, source: ByteSource = pieces(raw)) {
  const reader = generateReaderKeypair();
  const { sealed, contentKey } = await sealMessageStream({
    envelope: ENVELOPE,
    raw: source,
    recipientPublicKey: reader.publicKey,
  });
  return { reader, sealed: await collect(sealed), contentKey };
}

async function expectStreamError(open: () => Promise<unknown>, pattern?: RegExp): Promise<void> {
  const err = await open().then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SealFormatError);
  if (pattern) expect((err as Error).message).toMatch(pattern);
}

const readAll = async (sealed: ByteSource, reader: ReturnType<typeof generateReaderKeypair>) => {
  const opened = await openSealedStream(sealed, reader);
  return { envelope: opened.envelope, raw: await collect(opened.raw) };
};

describe('streaming seal and open', () => {
  for (const size of [0, 1, CHUNK - 40, CHUNK, 5 * 1024 * 1024 + 3]) {
    it(`interoperates with the buffer variants for a ${size}-byte body`, async () => {
      const raw = bytes(size);
      // stream → buffer
      const s = await sealStream(raw);
      const opened = await openSealed(s.sealed, s.reader);
      expect(opened.envelope).toEqual(ENVELOPE);
      expect(Buffer.from(opened.raw).equals(Buffer.from(raw))).toBe(true);
      // buffer → stream, fed in awkward piece sizes
      const reader = generateReaderKeypair();
      const b = await sealMessage({ envelope: ENVELOPE, raw, recipientPublicKey: reader.publicKey });
      // Same framing: identical length for identical content.
      expect(b.sealed.length).toBe(s.sealed.length);
      const streamed = await readAll(pieces(b.sealed), reader);
      expect(streamed.envelope).toEqual(ENVELOPE);
      expect(Buffer.from(streamed.raw).equals(Buffer.from(raw))).toBe(true);
      // stream → stream
      const again = await readAll(pieces(s.sealed, [CHUNK + 17]), s.reader);
      expect(Buffer.from(again.raw).equals(Buffer.from(raw))).toBe(true);
    });
  }

  it('reads Node streams on both sides (Buffer pieces) and keeps CRLF bytes', async () => {
    const raw = new Uint8Array(Buffer.from('Subject: x\r\n\r\nbody\r\n.\r\n\xff'.repeat(20_000), 'latin1'));
    const reader = generateReaderKeypair();
    const { sealed } = await sealMessageStream({
      envelope: ENVELOPE,
      raw: Readable.from(Buffer.from(raw), { objectMode: false }),
      recipientPublicKey: reader.publicKey,
    });
    const opened = await openSealedStream(Readable.from(sealed), reader);
    expect(Buffer.from(await collect(opened.raw)).equals(Buffer.from(raw))).toBe(true);
  });

  it('opens with a separate wrap', async () => {
    const raw = bytes(200_000);
    const s = await sealStream(raw);
    const imap = generateReaderKeypair();
    const wrap = await wrapContentKey(s.contentKey, imap.publicKey);
    const opened = await openSealedStream(pieces(s.sealed), imap, { wrap });
    expect(Buffer.from(await collect(opened.raw)).equals(Buffer.from(raw))).toBe(true);
    await expectStreamError(() => openSealedStream(pieces(s.sealed), imap), /none of the 1 wrap/);
  });

  it('seals lazily: the source is read only a chunk ahead of the output', async () => {
    const reader = generateReaderKeypair();
    let produced = 0;
    const total = 50 * CHUNK;
    async function* source() {
      while (produced < total) {
        produced += 4096;
        yield new Uint8Array(4096);
      }
    }
    const { sealed } = await sealMessageStream({
      envelope: ENVELOPE,
      raw: source(),
      recipientPublicKey: reader.publicKey,
    });
    const it = sealed[Symbol.asyncIterator]();
    const preamble = await it.next();
    expect(preamble.value?.length).toBe(10 + 80 + 24);
    let max = 0;
    for (let i = 0; i < 5; i++) {
      const chunk = await it.next();
      expect(chunk.value?.length).toBe(CHUNK + 17);
      // By the time chunk i is out, at most one more chunk (plus one piece) was read.
      expect(produced).toBeLessThanOrEqual((i + 2) * CHUNK + 4096);
      max = Math.max(max, chunk.value?.length ?? 0);
    }
    await it.return?.();
    expect(max).toBe(CHUNK + 17);
  });

  it('opens lazily: the sealed input is read only a chunk ahead of the message', async () => {
    const raw = bytes(40 * CHUNK);
    const reader = generateReaderKeypair();
    const { sealed } = await sealMessage({ envelope: ENVELOPE, raw, recipientPublicKey: reader.publicKey });
    let consumed = 0;
    async function* source() {
      for (const p of pieces(sealed, [1000])) {
        consumed += p.length;
        yield p;
      }
    }
    const opened = await openSealedStream(source(), reader);
    expect(consumed).toBeLessThanOrEqual(114 + 2 * (CHUNK + 17) + 1000);
    const it = opened.raw[Symbol.asyncIterator]();
    let got = 0;
    for (let i = 0; i < 10; i++) {
      const next = await it.next();
      got += next.value?.length ?? 0;
      expect(consumed - got).toBeLessThanOrEqual(114 + 3 * (CHUNK + 17) + 1000);
    }
    await it.return?.();
  });

  it('throws SealFormatError while streaming a truncated, extended or tampered object', async () => {
    const raw = bytes(5 * CHUNK);
    const s = await sealStream(raw);
    const full = CHUNK + 17;
    const pre = 114;
    // Cut exactly at a chunk boundary: every chunk so far is authentic, the end is missing.
    await expectStreamError(
      () => readAll(pieces(s.sealed.subarray(0, pre + 2 * full)), s.reader),
      /truncated/,
    );
    await expectStreamError(() => readAll(pieces(s.sealed.subarray(0, pre + 2 * full + 100)), s.reader));
    await expectStreamError(() => readAll(pieces(s.sealed.subarray(0, pre + 5)), s.reader), /truncated/);
    await expectStreamError(() => readAll(pieces(s.sealed.subarray(0, pre)), s.reader), /truncated/);
    await expectStreamError(() => readAll(pieces(s.sealed.subarray(0, 50)), s.reader), /truncated/);
    // Bytes glued to a short final chunk break its authentication; after a full-size one they are extra.
    await expectStreamError(
      () => readAll(pieces(Buffer.concat([s.sealed, Uint8Array.of(1)])), s.reader),
      /chunk 5/,
    );
    const exact = await sealStream(bytes(CHUNK - encodeEnvelope(ENVELOPE).length));
    expect(exact.sealed.length).toBe(pre + full);
    await expectStreamError(
      () => readAll(pieces(Buffer.concat([exact.sealed, Uint8Array.of(1)])), exact.reader),
      /after the final/,
    );
    const tampered = Uint8Array.from(s.sealed);
    tampered[pre + 3 * full + 10] = (tampered[pre + 3 * full + 10] as number) ^ 0x80;
    await expectStreamError(() => readAll(pieces(tampered), s.reader), /chunk 3/);
    await expectStreamError(
      () => readAll([new TextEncoder().encode('GET / HTTP/1.1\r\n')], s.reader),
      /magic/,
    );
    await expectStreamError(() => readAll([], s.reader), /truncated/);
  });

  it('delivers authentic pieces before it finds a truncation, then throws', async () => {
    const raw = bytes(4 * CHUNK);
    const s = await sealStream(raw);
    const opened = await openSealedStream(pieces(s.sealed.subarray(0, 114 + 3 * (CHUNK + 17))), s.reader);
    const got: Uint8Array[] = [];
    const err = await (async () => {
      for await (const p of opened.raw) got.push(p);
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SealFormatError);
    const prefix = Buffer.concat(got);
    expect(prefix.length).toBeGreaterThan(0);
    expect(prefix.equals(Buffer.from(raw.subarray(0, prefix.length)))).toBe(true);
  });

  it('refuses a source that yields something other than bytes', async () => {
    const reader = generateReaderKeypair();
    const { sealed } = await sealMessageStream({
      envelope: ENVELOPE,
      raw: ['text' as unknown as Uint8Array],
      recipientPublicKey: reader.publicKey,
    });
    await expectStreamError(() => collect(sealed), /not a Uint8Array/);
  });
});
