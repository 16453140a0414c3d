// A legacy Solana transaction signed by its fee payer alone, written
// directly: web3.js's Transaction.sign/serialize turn every key into base58
// several times and sign in JavaScript (about 9 ms for a four-SendMail
// batch); this compiles the message once and signs through node:crypto
// (src/keys/ed25519-sign.ts). Server only. The wire format is Solana's: a
// compact-u16 signature count, the signatures, then the message (header,
// account keys, recent blockhash, instructions).
import type { PublicKey, TransactionInstruction } from '@solana/web3.js';
import bs58 from 'bs58';
import { signDetached } from '../../src/keys/ed25519-sign.ts';
import { type Keypair as KeyFile, keypairFromSeed } from '../../src/keys/keypair-file.ts';

interface Meta {
  bytes: Uint8Array;
  signer: boolean;
  writable: boolean;
}

function shortVec(n: number, out: number[]): void {
  let rest = n;
  for (;;) {
    const byte = rest & 0x7f;
    rest >>= 7;
    if (rest === 0) {
      out.push(byte);
      return;
    }
    out.push(byte | 0x80);
  }
}

/** Signed wire bytes and the signature (base58) of `instructions`, paid and signed by `payer`. */
export function signLegacy(
  payer: KeyFile,
  instructions: TransactionInstruction[],
  blockhash: string,
): { raw: Buffer; signature: string } {
  const metas = new Map<string, Meta>();
  const add = (key: PublicKey | Uint8Array, signer: boolean, writable: boolean) => {
    const bytes = key instanceof Uint8Array ? key : key.toBytes();
    const id = Buffer.from(bytes).toString('latin1');
    const m = metas.get(id);
    if (m) {
      m.signer ||= signer;
      m.writable ||= writable;
    } else metas.set(id, { bytes, signer, writable });
  };
  add(payer.publicKey, true, true);
  for (const ix of instructions) {
    for (const k of ix.keys) add(k.pubkey, k.isSigner, k.isWritable);
    add(ix.programId, false, false);
  }
  // Payer first, then signers (writable, read-only), then the rest (writable, read-only).
  const rank = (m: Meta) => (m.signer ? 0 : 2) + (m.writable ? 0 : 1);
  const keys = [...metas.entries()].sort((a, b) => rank(a[1]) - rank(b[1]));
  const signers = keys.filter(([, m]) => m.signer).length;
  if (signers !== 1) throw new Error(`signLegacy signs for the fee payer only, not ${signers} signers`);
  const index = new Map(keys.map(([id], i) => [id, i]));
  const at = (key: PublicKey) => index.get(Buffer.from(key.toBytes()).toString('latin1')) as number;
  const head: number[] = [
    signers,
    keys.filter(([, m]) => m.signer && !m.writable).length,
    keys.filter(([, m]) => !m.signer && !m.writable).length,
  ];
  shortVec(keys.length, head);
  const parts: Uint8Array[] = [
    Uint8Array.from(head),
    ...keys.map(([, m]) => m.bytes),
    bs58.decode(blockhash),
  ];
  const tail: number[] = [];
  shortVec(instructions.length, tail);
  parts.push(Uint8Array.from(tail));
  for (const ix of instructions) {
    const ixHead: number[] = [at(ix.programId)];
    shortVec(ix.keys.length, ixHead);
    for (const k of ix.keys) ixHead.push(at(k.pubkey));
    shortVec(ix.data.length, ixHead);
    parts.push(Uint8Array.from(ixHead), ix.data);
  }
  const message = Buffer.concat(parts);
  const signature = signDetached(payer, message);
  return { raw: Buffer.concat([Uint8Array.of(1), signature, message]), signature: bs58.encode(signature) };
}

/** The keypair-file form of a web3.js keypair's secret key (checked against its public half when signing). */
export function keyFileOf(secretKey: Uint8Array): KeyFile {
  return keypairFromSeed(secretKey.subarray(0, 32));
}
