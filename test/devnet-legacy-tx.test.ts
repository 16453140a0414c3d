// The devnet deploys its programs with transactions built by
// chain/devnet/legacy-tx.ts instead of web3.js's Transaction (for speed):
// the bytes must be the ones web3.js makes, signatures included.
import { Keypair, Transaction, type TransactionInstruction } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { signerFromSeed } from '../chain/devnet/ed25519.ts';
import { legacyMessage, legacyWire } from '../chain/devnet/legacy-tx.ts';
import { createBuffer, deployWithMaxDataLen, upgrade, writeChunks } from '../chain/program/loader.ts';
import { programSo } from '../chain/program/world.ts';

const wireSigner = (k: Keypair) => ({
  publicKey: k.publicKey,
  sign: signerFromSeed(k.secretKey.subarray(0, 32)).sign,
});

describe('legacy transaction wire form', () => {
  it('is byte for byte what web3.js serializes for each step of a program deployment', () => {
    const payer = Keypair.generate();
    const buffer = Keypair.generate();
    const programId = Keypair.generate().publicKey;
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
        [],
      ],
      [[upgrade({ programId, buffer: buffer.publicKey, authority: p, spill: p })], []],
    ];
    for (const [ixs, signers] of steps) {
      const tx = new Transaction({ feePayer: p, recentBlockhash: blockhash }).add(...ixs);
      tx.partialSign(payer, ...signers);
      const expected = tx.serialize({ requireAllSignatures: false, verifySignatures: false });
      const wire = legacyWire(legacyMessage(p, blockhash, ixs), [payer, ...signers].map(wireSigner));
      expect(Buffer.from(wire).toString('hex')).toBe(expected.toString('hex'));
    }
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
