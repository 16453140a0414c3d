// Keys: the wallet → X25519 conversion against libsodium's own, reader
// keys, the mailbox key file, and recipientSealKey against a real devnet.
import { ed25519 } from '@noble/curves/ed25519.js';
import { Keypair, PublicKey } from '@solana/web3.js';
import sodium from 'libsodium-wrappers';
import { describe, expect, it } from 'vitest';
import {
  createMailboxInstruction,
  initPostofficeInstruction,
  publishKeyInstruction,
  removeKeyInstruction,
} from '../../chain/client/index.ts';
import {
  formatMailboxKeyFile,
  generateReaderKeypair,
  openSealed,
  parseMailboxKeyFile,
  readerKeypairFromSecret,
  recipientSealKey,
  SealFormatError,
  sealMessage,
  sodiumReady,
  unwrapContentKey,
  walletEncryptionKeypair,
  walletEncryptionPublicKey,
  wrapContentKey,
} from '../../src/mail/seal/index.ts';
import { startTestChain } from '../support/devnet.ts';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

describe('wallet encryption keys', () => {
  it("match libsodium's ed25519 → curve25519 conversion of @solana/web3.js keypairs", async () => {
    await sodiumReady();
    await sodium.ready;
    for (let i = 0; i < 25; i++) {
      const wallet = Keypair.generate();
      const mine = walletEncryptionKeypair(wallet.secretKey);
      expect(hex(mine.secretKey)).toBe(hex(sodium.crypto_sign_ed25519_sk_to_curve25519(wallet.secretKey)));
      expect(hex(mine.publicKey)).toBe(
        hex(sodium.crypto_sign_ed25519_pk_to_curve25519(wallet.publicKey.toBytes())),
      );
      expect(hex(walletEncryptionPublicKey(wallet.publicKey.toBytes()))).toBe(hex(mine.publicKey));
      expect(hex(sodium.crypto_scalarmult_base(mine.secretKey))).toBe(hex(mine.publicKey));
    }
  });

  it('interoperate with libsodium crypto_box_seal directly (a wrap made by libsodium opens here)', async () => {
    await sodium.ready;
    const wallet = Keypair.generate();
    const raw = new TextEncoder().encode('Subject: hi\r\n\r\nhello\r\n');
    const { sealed } = await sealMessage({
      envelope: { version: 1, from: 'a@b.example', to: 'c@d.example', receivedAt: 1 },
      raw,
      recipientPublicKey: sodium.crypto_sign_ed25519_pk_to_curve25519(wallet.publicKey.toBytes()),
    });
    const opened = await openSealed(sealed, {
      publicKey: sodium.crypto_sign_ed25519_pk_to_curve25519(wallet.publicKey.toBytes()),
      secretKey: sodium.crypto_sign_ed25519_sk_to_curve25519(wallet.secretKey),
    });
    expect(Buffer.from(opened.raw).equals(Buffer.from(raw))).toBe(true);
  });

  it('refuse off-curve addresses (PDAs), wrong sizes and mismatched keypair halves', () => {
    const [pda] = PublicKey.findProgramAddressSync(
      [Buffer.from('mailbox')],
      new PublicKey(Keypair.generate().publicKey),
    );
    expect(() => walletEncryptionPublicKey(pda.toBytes())).toThrow(SealFormatError);
    expect(() => walletEncryptionPublicKey(pda.toBytes())).toThrow(/off the curve/);
    expect(() => walletEncryptionPublicKey(new Uint8Array(31))).toThrow(/32 bytes/);
    // The identity point is on the curve but of small order.
    const identity = new Uint8Array(32);
    identity[0] = 1;
    expect(() => walletEncryptionPublicKey(identity)).toThrow(/small-order/);
    expect(() => walletEncryptionKeypair(new Uint8Array(32))).toThrow(/64 bytes/);
    const mixed = new Uint8Array(64);
    mixed.set(Keypair.generate().secretKey.subarray(0, 32), 0);
    mixed.set(Keypair.generate().publicKey.toBytes(), 32);
    expect(() => walletEncryptionKeypair(mixed)).toThrow(/does not match/);
  });

  it('convert with libsodium once it is loaded, agreeing with the birational map and refusing the same points', async () => {
    await sodiumReady();
    for (let i = 0; i < 10; i++) {
      const pub = Keypair.generate().publicKey.toBytes();
      expect(hex(walletEncryptionPublicKey(pub))).toBe(hex(ed25519.utils.toMontgomery(pub)));
    }
    // A prime-order point plus a point of order 8: on the curve, outside the subgroup.
    const torsion = ed25519.Point.fromHex('c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa');
    expect(torsion.multiply(8n).is0()).toBe(true);
    const mixedOrder = ed25519.Point.fromBytes(Keypair.generate().publicKey.toBytes()).add(torsion).toBytes();
    expect(() => walletEncryptionPublicKey(mixedOrder)).toThrow(/small-order/);
    expect(() => walletEncryptionPublicKey(torsion.toBytes())).toThrow(/small-order/);
    // y = p + 1, a second encoding of the identity's y that libsodium would reduce: refused.
    const nonCanonical = new Uint8Array(32).fill(0xff);
    nonCanonical[0] = 0xee;
    nonCanonical[31] = 0x7f;
    expect(() => walletEncryptionPublicKey(nonCanonical)).toThrow(SealFormatError);
    // Answers are cached, and a caller changing the returned bytes does not change the cache.
    const pub = Keypair.generate().publicKey.toBytes();
    const first = walletEncryptionPublicKey(pub);
    first.fill(0);
    expect(hex(walletEncryptionPublicKey(pub))).toBe(hex(ed25519.utils.toMontgomery(pub)));
  });
});

describe('reader keys and the mailbox key file', () => {
  it('generates X25519 pairs (with an injectable random source) that libsodium agrees with', async () => {
    await sodium.ready;
    const a = generateReaderKeypair();
    const b = generateReaderKeypair();
    expect(hex(a.secretKey)).not.toBe(hex(b.secretKey));
    expect(hex(sodium.crypto_scalarmult_base(a.secretKey))).toBe(hex(a.publicKey));
    const fixed = generateReaderKeypair((n) => new Uint8Array(n).fill(7));
    expect(hex(fixed.publicKey)).toBe(hex(sodium.crypto_scalarmult_base(new Uint8Array(32).fill(7))));
    expect(() => readerKeypairFromSecret(new Uint8Array(16))).toThrow(SealFormatError);
  });

  it('writes and reads the mailbox key file in its three accepted forms', () => {
    const reader = generateReaderKeypair();
    const text = formatMailboxKeyFile(reader);
    expect(JSON.parse(text)).toHaveLength(64);
    const parsed = parseMailboxKeyFile(text, 'mk.json');
    expect(hex(parsed.publicKey)).toBe(hex(reader.publicKey));
    expect(hex(parsed.secretKey)).toBe(hex(reader.secretKey));
    const short = parseMailboxKeyFile(JSON.stringify([...reader.secretKey]), 'mk32.json');
    expect(hex(short.publicKey)).toBe(hex(reader.publicKey));
    // A Solana CLI keypair file used as a delegated key: its X25519 form.
    const wallet = Keypair.generate();
    const asSolana = parseMailboxKeyFile(JSON.stringify([...wallet.secretKey]), 'delegate.json');
    expect(hex(asSolana.publicKey)).toBe(hex(walletEncryptionPublicKey(wallet.publicKey.toBytes())));
  });

  it('names the file and the problem for bad mailbox key files', () => {
    const reader = generateReaderKeypair();
    const bad = (text: string, pattern: RegExp) => {
      expect(() => parseMailboxKeyFile(text, 'bad.json')).toThrow(SealFormatError);
      expect(() => parseMailboxKeyFile(text, 'bad.json')).toThrow(pattern);
    };
    bad('not json', /bad\.json: not JSON/);
    bad('{"a":1}', /array of 64/);
    bad(JSON.stringify(new Array(63).fill(1)), /array of 64/);
    bad(JSON.stringify([...new Array(63).fill(1), 256]), /integer 0-255/);
    bad(JSON.stringify([...reader.secretKey, ...generateReaderKeypair().publicKey]), /neither/);
    expect(() =>
      formatMailboxKeyFile({ publicKey: generateReaderKeypair().publicKey, secretKey: reader.secretKey }),
    ).toThrow(/belong together/);
  });
});

describe("libsodium's randomness", () => {
  it('stays fresh past many pool refills: distinct keys and ephemeral wraps that open', async () => {
    await sodiumReady();
    // 32 random bytes per key, one pool word per byte: 200 keys refill the 1,024-word pool several times.
    const keys = Array.from({ length: 200 }, () =>
      hex(sodium.crypto_secretstream_xchacha20poly1305_keygen()),
    );
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).not.toContain('00'.repeat(32));
    const reader = generateReaderKeypair();
    const contentKey = sodium.crypto_secretstream_xchacha20poly1305_keygen();
    const wraps = await Promise.all(
      Array.from({ length: 50 }, () => wrapContentKey(contentKey, reader.publicKey)),
    );
    expect(new Set(wraps.map(hex)).size).toBe(wraps.length);
    for (const wrap of wraps)
      expect(hex((await unwrapContentKey(wrap, reader)) ?? new Uint8Array())).toBe(hex(contentKey));
  });
});

describe('recipientSealKey on a devnet', () => {
  it('picks the wallet key until a MailboxKey is published, then the published key, and back after removal', async () => {
    const chain = await startTestChain();
    const admin = await chain.funded();
    await chain.send(
      [
        initPostofficeInstruction({
          programId: chain.programId,
          admin: admin.publicKey,
          upgradeAuthority: chain.upgradeAuthority.publicKey,
          delegateAddress: admin.publicKey,
          stampFeeLamports: 0n,
          settlementSurchargeLamports: 0n,
        }),
      ],
      [admin, chain.upgradeAuthority],
    );
    const bob = await chain.funded();
    await chain.send([createMailboxInstruction({ programId: chain.programId, owner: bob.publicKey })], [bob]);

    const byWallet = await recipientSealKey(chain.connection, chain.programId, bob.publicKey);
    expect(byWallet.source).toBe('wallet');
    expect(hex(byWallet.publicKey)).toBe(hex(walletEncryptionKeypair(bob.secretKey).publicKey));
    // Base58 strings work as well as PublicKeys.
    expect((await recipientSealKey(chain.connection, chain.programId, bob.publicKey.toBase58())).source).toBe(
      'wallet',
    );

    const delegated = generateReaderKeypair();
    await chain.send(
      [
        publishKeyInstruction({
          programId: chain.programId,
          owner: bob.publicKey,
          pubKey: new PublicKey(delegated.publicKey),
        }),
      ],
      [bob],
    );
    const byMailboxKey = await recipientSealKey(chain.connection, chain.programId, bob.publicKey);
    expect(byMailboxKey.source).toBe('mailbox_key');
    expect(hex(byMailboxKey.publicKey)).toBe(hex(delegated.publicKey));

    // Sealing to what it returns opens with the delegated key only.
    const raw = new TextEncoder().encode('Subject: delegated\r\n\r\nok\r\n');
    const { sealed } = await sealMessage({
      envelope: {
        version: 1,
        from: 'x@y.example',
        to: `${bob.publicKey.toBase58()}@mail.test`,
        receivedAt: Date.now(),
      },
      raw,
      recipientPublicKey: byMailboxKey.publicKey,
    });
    expect(Buffer.from((await openSealed(sealed, delegated)).raw).equals(Buffer.from(raw))).toBe(true);
    await expect(openSealed(sealed, walletEncryptionKeypair(bob.secretKey))).rejects.toBeInstanceOf(
      SealFormatError,
    );

    await chain.send([removeKeyInstruction({ programId: chain.programId, owner: bob.publicKey })], [bob]);
    expect((await recipientSealKey(chain.connection, chain.programId, bob.publicKey)).source).toBe('wallet');
  });
});
