// Legacy transactions written by chain/client/legacy-tx.ts instead of web3.js's
// Transaction (for speed; the devnet's program deployment and the
// pipeline's SendMail batches): web3.js must read back the same fee payer,
// blockhash and instructions, with every given signature valid, and the
// key order must be the one the runtime requires.
import { ed25519 } from '@noble/curves/ed25519.js';
import { Keypair, Message, type PublicKey, Transaction, type TransactionInstruction } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { legacyMessage, legacyWire } from '../../chain/client/legacy-tx.ts';
import { createBuffer, deployWithMaxDataLen, upgrade, writeChunks } from '../../chain/client/loader.ts';
import { signerFromSeed } from '../../chain/devnet/ed25519.ts';
import { programSo } from '../../chain/program/host/world.ts';

/** Every signature of a wire transaction (fewer than 128 signers) is valid over its message bytes, checked with @noble. */
function signaturesValid(wire: Uint8Array): boolean {
  const count = wire[0] as number;
  const message = wire.subarray(1 + 64 * count);
  const keys = Message.from(message).accountKeys;
  return Array.from({ length: count }, (_, i) =>
    ed25519.verify(wire.subarray(1 + 64 * i, 65 + 64 * i), message, (keys[i] as PublicKey).toBytes()),
  ).every(Boolean);
}

const wireSigner = (k: Keypair) => ({
  publicKey: k.publicKey,
  sign: signerFromSeed(k.secretKey.subarray(0, 32)).sign,
});

describe('legacy transaction wire form', () => {
  it('reads back in web3.js as each step of a program deployment, signed and in runtime key order', () => {
    const payer = Keypair.generate();
    const buffer = Keypair.generate();
    const program = Keypair.generate();
    const programId = program.publicKey;
    const blockhash = Keypair.generate().publicKey.toBase58();
    const elf = programSo();
    const p = payer.publicKey;
    const chunks = [...writeChunks(buffer.publicKey, p, elf)];
    const steps: [TransactionInstruction[], Keypair[]][] = [
      [createBuffer({ payer: p, buffer: buffer.publicKey, authority: p, programLen: elf.length }), [buffer]],
      [[chunks[0] as TransactionInstruction], []],
      [[chunks[chunks.length - 1] as TransactionInstruction], []],
      [
        deployWithMaxDataLen({
          payer: p,
          programId,
          buffer: buffer.publicKey,
          authority: p,
          maxDataLen: 2 * elf.length,
        }),
        [program],
      ],
      [[upgrade({ programId, buffer: buffer.publicKey, authority: p, spill: p })], []],
    ];
    for (const [ixs, signers] of steps) {
      const wire = legacyWire(legacyMessage(p, blockhash, ixs), [payer, ...signers].map(wireSigner));
      const tx = Transaction.from(wire);
      expect(tx.feePayer?.equals(p)).toBe(true);
      expect(tx.recentBlockhash).toBe(blockhash);
      expect(signaturesValid(wire)).toBe(true);
      expect(tx.signatures.map((s) => s.publicKey.toBase58())).toEqual(
        [p, ...signers.map((k) => k.publicKey)].map((k) => k.toBase58()),
      );
      expect(tx.instructions.length).toBe(ixs.length);
      tx.instructions.forEach((got, i) => {
        const want = ixs[i] as TransactionInstruction;
        expect(got.programId.equals(want.programId)).toBe(true);
        expect(Buffer.from(got.data).equals(Buffer.from(want.data))).toBe(true);
        // web3.js reads each key's flags back from the header: the union over the transaction.
        expect(got.keys.map((k) => k.pubkey.toBase58())).toEqual(want.keys.map((k) => k.pubkey.toBase58()));
        for (const k of want.keys) {
          const back = got.keys.find((g) => g.pubkey.equals(k.pubkey));
          if (k.isSigner) expect(back?.isSigner).toBe(true);
          if (k.isWritable) expect(back?.isWritable).toBe(true);
        }
      });
      // Runtime order: payer, writable signers, read-only signers, writable, read-only.
      const message = Message.from(wire.subarray(1 + 64 * tx.signatures.length));
      const rank = (i: number) =>
        (message.isAccountSigner(i) ? 0 : 2) + (message.isAccountWritable(i) ? 0 : 1);
      const ranks = message.accountKeys.map((_, i) => rank(i));
      expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
      expect(message.accountKeys[0]?.equals(p)).toBe(true);
    }
  });

  it('writes a compact-u16 key count past 127 keys, and refuses more than 255', () => {
    const payer = Keypair.generate();
    const blockhash = Keypair.generate().publicKey.toBase58();
    const ix = (n: number): TransactionInstruction => ({
      programId: Keypair.generate().publicKey,
      keys: Array.from({ length: n }, () => ({
        pubkey: Keypair.generate().publicKey,
        isSigner: false,
        isWritable: false,
      })),
      data: Buffer.from([1, 2, 3]),
    });
    const wide = [ix(150)];
    const wire = legacyWire(legacyMessage(payer.publicKey, blockhash, wide), [wireSigner(payer)]);
    const tx = Transaction.from(wire);
    expect(signaturesValid(wire)).toBe(true);
    expect(tx.instructions[0]?.keys.length).toBe(150);
    expect(() => legacyMessage(payer.publicKey, blockhash, [ix(300)])).toThrow(/at most 255/);
  });

  it('leaves zeros for a required signature it was not given a key for', () => {
    const payer = Keypair.generate();
    const other = Keypair.generate();
    const blockhash = Keypair.generate().publicKey.toBase58();
    const ixs = createBuffer({
      payer: payer.publicKey,
      buffer: other.publicKey,
      authority: payer.publicKey,
      programLen: 10,
    });
    const wire = legacyWire(legacyMessage(payer.publicKey, blockhash, ixs), [wireSigner(payer)]);
    expect(wire[0]).toBe(2);
    expect(wire.subarray(1, 65).some((b) => b !== 0)).toBe(true);
    expect(wire.subarray(65, 129).every((b) => b === 0)).toBe(true);
  });
});
