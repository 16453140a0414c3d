// A legacy transaction's wire form, built directly, for the devnet's own
// program deployment: web3.js's Transaction turns each instruction's data
// into base58 and back (quadratic in its length) twice per send and signs in
// JavaScript, so the ~90 one-kilobyte Write transactions of the mail
// program's deployment took over a second of CPU at every devnet start. The
// bytes are the ones web3.js makes for the same transaction (same account
// order); signatures come from node:crypto.
import type { PublicKey, TransactionInstruction } from '@solana/web3.js';
import bs58 from 'bs58';

export interface WireSigner {
  publicKey: PublicKey;
  sign(message: Uint8Array): Uint8Array;
}

function compactU16(n: number): number[] {
  const out: number[] = [];
  let v = n;
  for (;;) {
    const byte = v & 0x7f;
    v >>= 7;
    if (v === 0) {
      out.push(byte);
      return out;
    }
    out.push(byte | 0x80);
  }
}

/** The legacy message of `ixs` with `feePayer`, ordered as web3.js orders its account keys. */
export function legacyMessage(
  feePayer: PublicKey,
  recentBlockhash: string,
  ixs: TransactionInstruction[],
): Uint8Array {
  const metas = new Map<string, { key: PublicKey; signer: boolean; writable: boolean }>();
  const note = (key: PublicKey, signer: boolean, writable: boolean) => {
    const id = key.toBase58();
    const m = metas.get(id);
    if (m) {
      m.signer ||= signer;
      m.writable ||= writable;
    } else metas.set(id, { key, signer, writable });
  };
  for (const ix of ixs) {
    for (const k of ix.keys) note(k.pubkey, k.isSigner, k.isWritable);
    note(ix.programId, false, false);
  }
  const payerId = feePayer.toBase58();
  metas.delete(payerId);
  // web3.js: signers first, then writable first, then by base58 with localeCompare's "en" ordering.
  const rest = [...metas.values()].sort((a, b) => {
    if (a.signer !== b.signer) return a.signer ? -1 : 1;
    if (a.writable !== b.writable) return a.writable ? -1 : 1;
    return a.key.toBase58().localeCompare(b.key.toBase58(), 'en', {
      localeMatcher: 'best fit',
      usage: 'sort',
      sensitivity: 'variant',
      ignorePunctuation: false,
      numeric: false,
      caseFirst: 'lower',
    });
  });
  const keys = [{ key: feePayer, signer: true, writable: true }, ...rest];
  const index = new Map(keys.map((k, i) => [k.key.toBase58(), i]));
  const signed = keys.filter((k) => k.signer);
  const header = [
    signed.length,
    signed.filter((k) => !k.writable).length,
    keys.filter((k) => !k.signer && !k.writable).length,
  ];
  const parts: (number[] | Uint8Array)[] = [header, compactU16(keys.length)];
  for (const k of keys) parts.push(k.key.toBytes());
  parts.push(bs58.decode(recentBlockhash), compactU16(ixs.length));
  for (const ix of ixs) {
    parts.push([index.get(ix.programId.toBase58()) as number], compactU16(ix.keys.length));
    parts.push(ix.keys.map((k) => index.get(k.pubkey.toBase58()) as number));
    parts.push(compactU16(ix.data.length), ix.data);
  }
  return Buffer.concat(parts.map((p) => (p instanceof Uint8Array ? p : Uint8Array.from(p))));
}

/** Signatures (zeros where no signer is given) then the message. */
export function legacyWire(message: Uint8Array, signers: WireSigner[]): Uint8Array {
  const count = message[0] as number;
  if ((message[3] as number) >= 0x80) throw new Error('legacyWire: more than 127 account keys');
  const sigs = new Uint8Array(64 * count);
  // The signing keys are the first `count` account keys, after the header and their count (< 128 keys: one byte).
  for (let i = 0; i < count; i++) {
    const key = message.subarray(4 + 32 * i, 4 + 32 * (i + 1));
    const s = signers.find((x) => Buffer.from(x.publicKey.toBytes()).equals(key));
    if (s) sigs.set(s.sign(message), 64 * i);
  }
  return Buffer.concat([Uint8Array.from(compactU16(count)), sigs, message]);
}
