// The sealed-object format held in memory: round trips at the chunk
// boundaries, exact bytes, readers and wraps, and every kind of damage
// ending in SealFormatError.
import { randomBytes } from 'node:crypto';
import { Keypair } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CHUNK_SIZE,
  encodeEnvelope,
  generateReaderKeypair,
  openContentKey,
  openSealed,
  openSealedWithWrap,
  parsePreamble,
  type SealEnvelope,
  SealFormatError,
  sealMessage,
  unwrapContentKey,
  WRAP_BYTES,
  walletEncryptionKeypair,
  walletEncryptionPublicKey,
  wrapContentKey,
} from './index.ts';

const ENVELOPE: SealEnvelope = {
  version: 1,
  from: 'alice@remote.example',
  to: 'bob@mail.test',
  receivedAt: 1_700_000_000_123,
};
const ENV_LEN = encodeEnvelope(ENVELOPE).length;
const OVERHEAD = 17;

function bytes(n: number): Uint8Array {
  return new Uint8Array(randomBytes(n));
}

async function sealedFor(raw: Uint8Array, opts: { chunkSize?: number } = {}) {
  const reader = generateReaderKeypair();
  const { sealed, contentKey } = await sealMessage({
    envelope: ENVELOPE,
    raw,
    recipientPublicKey: reader.publicKey,
    ...opts,
  });
  return { reader, sealed, contentKey };
}

async function expectSealError(p: Promise<unknown>, pattern?: RegExp): Promise<SealFormatError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SealFormatError);
  if (pattern) expect((err as Error).message).toMatch(pattern);
  return err as SealFormatError;
}

describe('sealMessage / openSealed round trips', () => {
  const sizes: [string, number][] = [
    ['an empty body', 0],
    ['a 1-byte body', 1],
    ['content of exactly one chunk', DEFAULT_CHUNK_SIZE - ENV_LEN],
    ['content one byte over one chunk', DEFAULT_CHUNK_SIZE - ENV_LEN + 1],
    ['content of exactly two chunks', 2 * DEFAULT_CHUNK_SIZE - ENV_LEN],
    ['a 5 MiB multi-chunk body', 5 * 1024 * 1024],
  ];
  for (const [name, size] of sizes) {
    it(`keeps ${name} byte for byte`, async () => {
      const raw = bytes(size);
      const { reader, sealed } = await sealedFor(raw);
      const chunks = Math.max(1, Math.ceil((ENV_LEN + size) / DEFAULT_CHUNK_SIZE));
      const preamble = parsePreamble(sealed, true);
      expect('need' in preamble).toBe(false);
      // Exact layout: preamble + content + 17 bytes per chunk.
      expect(sealed.length).toBe(10 + WRAP_BYTES + 24 + ENV_LEN + size + chunks * OVERHEAD);
      const opened = await openSealed(sealed, reader);
      expect(opened.envelope).toEqual(ENVELOPE);
      expect(Buffer.from(opened.raw).equals(Buffer.from(raw))).toBe(true);
    });
  }

  it('preserves 8-bit bytes, UTF-8, NUL, CRLF, bare LF and bare CR exactly', async () => {
    const text =
      'From: Ærøskøbing <a@x.example>\r\nSubject: =?utf-8?q?caf=C3=A9?= 日本語\r\n\r\nline one\r\nbare lf\nbare cr\rend\r\n';
    const raw = new Uint8Array([
      ...Buffer.from(text, 'utf8'),
      0x00,
      0xff,
      0xfe,
      0x80,
      0xc3,
      0x28,
      0x0d,
      0x0a,
    ]);
    const { reader, sealed } = await sealedFor(raw);
    const opened = await openSealed(sealed, reader);
    expect(Array.from(opened.raw)).toEqual(Array.from(raw));
  });

  it('keeps envelope fields: the null sender, UTF-8 addresses and the received time', async () => {
    const reader = generateReaderKeypair();
    const envelope: SealEnvelope = { version: 1, from: '', to: 'δοκιμή@mail.test', receivedAt: 0 };
    const { sealed } = await sealMessage({ envelope, raw: bytes(10), recipientPublicKey: reader.publicKey });
    expect((await openSealed(sealed, reader)).envelope).toEqual(envelope);
  });

  it('honours a small chunk size, where the envelope itself spans chunks', async () => {
    const raw = bytes(1000);
    const { reader, sealed } = await sealedFor(raw, { chunkSize: 64 });
    expect(sealed.length).toBe(10 + WRAP_BYTES + 24 + ENV_LEN + 1000 + Math.ceil((ENV_LEN + 1000) / 64) * 17);
    expect(Buffer.from((await openSealed(sealed, reader)).raw).equals(Buffer.from(raw))).toBe(true);
  });

  it('uses the injected random source for the content key and returns it', async () => {
    const reader = generateReaderKeypair();
    const key = bytes(32);
    const { contentKey, sealed } = await sealMessage({
      envelope: ENVELOPE,
      raw: bytes(5),
      recipientPublicKey: reader.publicKey,
      randomBytes: () => Uint8Array.from(key),
    });
    expect(Array.from(contentKey)).toEqual(Array.from(key));
    expect(Array.from(await openContentKey(sealed, reader))).toEqual(Array.from(key));
  });
});

describe('recipients and readers', () => {
  it("seals to a wallet's converted ed25519 key and opens with the wallet's secret key", async () => {
    const wallet = Keypair.generate();
    const raw = bytes(300);
    const { sealed } = await sealMessage({
      envelope: ENVELOPE,
      raw,
      recipientPublicKey: walletEncryptionPublicKey(wallet.publicKey.toBytes()),
    });
    const opened = await openSealed(sealed, walletEncryptionKeypair(wallet.secretKey));
    expect(Buffer.from(opened.raw).equals(Buffer.from(raw))).toBe(true);
    await expectSealError(openSealed(sealed, walletEncryptionKeypair(Keypair.generate().secretKey)));
  });

  it('seals to a delegated mailbox key, which the wallet key then cannot open', async () => {
    const wallet = Keypair.generate();
    const mailboxKey = generateReaderKeypair();
    const raw = bytes(50);
    const { sealed } = await sealMessage({
      envelope: ENVELOPE,
      raw,
      recipientPublicKey: mailboxKey.publicKey,
    });
    expect(Buffer.from((await openSealed(sealed, mailboxKey)).raw).equals(Buffer.from(raw))).toBe(true);
    await expectSealError(
      openSealed(sealed, walletEncryptionKeypair(wallet.secretKey)),
      /none of the 1 wrap/,
    );
  });

  it('opens with a separate reader wrap kept apart from the object', async () => {
    const raw = bytes(70_000);
    const { reader: recipient, sealed, contentKey } = await sealedFor(raw);
    const imapReader = generateReaderKeypair();
    const wrap = await wrapContentKey(contentKey, imapReader.publicKey);
    expect(wrap.length).toBe(WRAP_BYTES);
    const opened = await openSealedWithWrap(sealed, wrap, imapReader);
    expect(Buffer.from(opened.raw).equals(Buffer.from(raw))).toBe(true);
    expect(opened.envelope).toEqual(ENVELOPE);
    // The object itself carries only the recipient's wrap.
    await expectSealError(openSealed(sealed, imapReader));
    expect(await openSealed(sealed, recipient)).toBeTruthy();
    // A wrap for someone else, a wrap of another message's key, a damaged wrap.
    await expectSealError(openSealedWithWrap(sealed, wrap, generateReaderKeypair()), /separate wrap/);
    const other = await sealedFor(bytes(5));
    const otherWrap = await wrapContentKey(other.contentKey, imapReader.publicKey);
    await expectSealError(openSealedWithWrap(sealed, otherWrap, imapReader), /authentication/);
    const damaged = Uint8Array.from(wrap);
    damaged[40] = (damaged[40] as number) ^ 1;
    await expectSealError(openSealedWithWrap(sealed, damaged, imapReader));
    await expectSealError(openSealedWithWrap(sealed, wrap.subarray(0, 79), imapReader), /80 bytes/);
    expect(await unwrapContentKey(wrap, generateReaderKeypair())).toBeNull();
  });

  it('puts additional readers in the object when asked, and each of them opens it', async () => {
    const a = generateReaderKeypair();
    const b = generateReaderKeypair();
    const c = generateReaderKeypair();
    const raw = bytes(100);
    const { sealed } = await sealMessage({
      envelope: ENVELOPE,
      raw,
      recipientPublicKey: a.publicKey,
      additionalReaders: [b.publicKey, c.publicKey],
    });
    const preamble = parsePreamble(sealed, true);
    expect('wraps' in preamble && preamble.wraps.length).toBe(3);
    for (const r of [a, b, c]) {
      expect(Buffer.from((await openSealed(sealed, r)).raw).equals(Buffer.from(raw))).toBe(true);
    }
    await expectSealError(openSealed(sealed, generateReaderKeypair()), /none of the 3 wrap/);
  });

  it('refuses unusable keys and envelopes when sealing', async () => {
    const reader = generateReaderKeypair();
    const seal = (over: Partial<Parameters<typeof sealMessage>[0]>) =>
      sealMessage({ envelope: ENVELOPE, raw: bytes(3), recipientPublicKey: reader.publicKey, ...over });
    await expectSealError(seal({ recipientPublicKey: new Uint8Array(32) }), /small-order/);
    await expectSealError(seal({ recipientPublicKey: new Uint8Array(31) }), /32 bytes/);
    await expectSealError(seal({ envelope: { ...ENVELOPE, version: 2 as 1 } }), /version/);
    await expectSealError(seal({ envelope: { ...ENVELOPE, receivedAt: -1 } }), /receivedAt/);
    await expectSealError(seal({ envelope: { ...ENVELOPE, receivedAt: 1.5 } }), /receivedAt/);
    await expectSealError(seal({ envelope: { ...ENVELOPE, from: 'x'.repeat(4097) } }), /envelope.from/);
    await expectSealError(seal({ envelope: { ...ENVELOPE, to: 'bad\ud800' } }), /well-formed/);
    await expectSealError(seal({ chunkSize: 10 }), /chunk size/);
    await expectSealError(seal({ raw: 'text' as unknown as Uint8Array }), /Uint8Array/);
    await expectSealError(
      openSealed(new Uint8Array(0), { publicKey: new Uint8Array(5), secretKey: new Uint8Array(5) }),
    );
  });
});

describe('damaged sealed objects', () => {
  // Three chunks with a 1 KiB chunk size keep the byte-by-byte sweeps quick.
  const CHUNK = 1024;

  async function fixture() {
    const raw = bytes(3 * CHUNK - ENV_LEN - 100);
    const { reader, sealed } = await sealedFor(raw, { chunkSize: CHUNK });
    const preambleLen = 10 + WRAP_BYTES + 24;
    return { reader, sealed, raw, preambleLen };
  }

  it('rejects a flipped byte anywhere: magic, version, chunk size, wrap count, wrap, stream header, each chunk', async () => {
    const { reader, sealed, preambleLen } = await fixture();
    const positions = [
      0,
      3,
      4,
      5,
      8,
      9,
      10,
      50,
      89,
      90,
      113,
      preambleLen,
      preambleLen + CHUNK,
      sealed.length - 1,
    ];
    for (let i = 0; i < 40; i++) positions.push(Math.floor(Math.random() * sealed.length));
    for (const at of positions) {
      const copy = Uint8Array.from(sealed);
      copy[at] = (copy[at] as number) ^ 0x01;
      await expectSealError(openSealed(copy, reader));
    }
  });

  it('names what is wrong with the header', async () => {
    const { reader, sealed } = await fixture();
    const bad = (mutate: (b: Uint8Array) => void) => {
      const copy = Uint8Array.from(sealed);
      mutate(copy);
      return openSealed(copy, reader);
    };
    await expectSealError(
      bad((b) => {
        b[0] = 0x50;
      }),
      /not a sealed object/,
    );
    await expectSealError(
      bad((b) => {
        b[4] = 2;
      }),
      /unsupported sealed format version 2/,
    );
    await expectSealError(
      bad((b) => {
        b[9] = 0;
      }),
      /no wraps/,
    );
    await expectSealError(
      bad((b) => {
        b.set([0, 0, 0, 0x40], 5);
      }),
      /chunk size/,
    );
    await expectSealError(
      openSealed(Uint8Array.from(Buffer.from('Hello, not sealed at all')), reader),
      /magic/,
    );
  });

  it('rejects truncation at every length, including exactly at chunk boundaries', async () => {
    const { reader, sealed, preambleLen } = await fixture();
    const boundary1 = preambleLen + CHUNK + OVERHEAD;
    const boundary2 = boundary1 + CHUNK + OVERHEAD;
    await expectSealError(openSealed(sealed.subarray(0, boundary1), reader), /truncated/);
    await expectSealError(openSealed(sealed.subarray(0, boundary2), reader), /truncated/);
    await expectSealError(openSealed(sealed.subarray(0, preambleLen), reader), /truncated/);
    await expectSealError(openSealed(sealed.subarray(0, 7), reader), /truncated/);
    for (let len = 0; len < sealed.length; len += 37) {
      await expectSealError(openSealed(sealed.subarray(0, len), reader));
    }
    await expectSealError(openSealed(sealed.subarray(0, sealed.length - 1), reader));
  });

  it('rejects extra bytes after the final chunk, dropped or reordered chunks', async () => {
    const { reader, sealed, preambleLen } = await fixture();
    const full = CHUNK + OVERHEAD;
    const concat = (...parts: Uint8Array[]) => Uint8Array.from(Buffer.concat(parts));
    const pre = sealed.subarray(0, preambleLen);
    const c0 = sealed.subarray(preambleLen, preambleLen + full);
    const c1 = sealed.subarray(preambleLen + full, preambleLen + 2 * full);
    const c2 = sealed.subarray(preambleLen + 2 * full);
    await expectSealError(openSealed(concat(sealed, Uint8Array.of(0)), reader));
    await expectSealError(openSealed(concat(sealed, c2), reader));
    await expectSealError(openSealed(concat(pre, c0, c2), reader));
    await expectSealError(openSealed(concat(pre, c1, c0, c2), reader));
    await expectSealError(openSealed(concat(pre, c0, c0, c1, c2), reader));
    // A chunk from another object under another key.
    const other = await sealedFor(bytes(3 * CHUNK), { chunkSize: CHUNK });
    await expectSealError(
      openSealed(
        concat(pre, c0, other.sealed.subarray(preambleLen + full, preambleLen + 2 * full), c2),
        reader,
      ),
    );
  });

  it('survives random garbage and random corruption without any other error', async () => {
    const { reader, sealed } = await fixture();
    for (let i = 0; i < 100; i++) {
      const copy = Uint8Array.from(sealed);
      const flips = 1 + Math.floor(Math.random() * 4);
      for (let f = 0; f < flips; f++)
        copy[Math.floor(Math.random() * copy.length)] = Math.floor(Math.random() * 256);
      if (Buffer.from(copy).equals(Buffer.from(sealed))) continue;
      await expectSealError(openSealed(copy, reader));
    }
    for (const len of [0, 1, 9, 10, 100, 5000]) await expectSealError(openSealed(bytes(len), reader));
  });
});
