// A legacy Solana transaction's wire form, written directly: web3.js's
// Transaction turns every key (and, for each instruction, its data) into
// base58 and back several times per send and signs in JavaScript. Used by
// the delivery pipeline's SendMail batches and by the devnet's own program
// deployment. The layout is Solana's: a compact-u16 signature count, the
// signatures, then the message (header, account keys, recent blockhash,
// instructions). Keys are ordered as the runtime requires: the fee payer,
// the other signers (writable, then read-only), then the rest (writable,
// then read-only), each group in the order the instructions name them.
import type { PublicKey, TransactionInstruction } from '@solana/web3.js';
import bs58 from 'bs58';

/** A key that signs: its public half and a detached ed25519 signature of a message. */
export interface WireSigner {
  publicKey: PublicKey | Uint8Array;
  sign(message: Uint8Array): Uint8Array;
}

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

const bytesOf = (key: PublicKey | Uint8Array): Uint8Array =>
  key instanceof Uint8Array ? key : key.toBytes();

/** The legacy message of `instructions`, paid by `feePayer`. */
export function legacyMessage(
  feePayer: PublicKey | Uint8Array,
  recentBlockhash: string,
  instructions: TransactionInstruction[],
): Buffer {
  const metas = new Map<string, Meta>();
  const add = (key: PublicKey | Uint8Array, signer: boolean, writable: boolean) => {
    const bytes = bytesOf(key);
    const id = Buffer.from(bytes).toString('latin1');
    const m = metas.get(id);
    if (m) {
      m.signer ||= signer;
      m.writable ||= writable;
    } else metas.set(id, { bytes, signer, writable });
  };
  add(feePayer, true, true);
  for (const ix of instructions) {
    for (const k of ix.keys) add(k.pubkey, k.isSigner, k.isWritable);
    add(ix.programId, false, false);
  }
  // A stable sort: the payer stays first among the writable signers.
  const rank = (m: Meta) => (m.signer ? 0 : 2) + (m.writable ? 0 : 1);
  const keys = [...metas.entries()].sort((a, b) => rank(a[1]) - rank(b[1]));
  if (keys.length > 255)
    throw new Error(`a legacy transaction holds at most 255 account keys, not ${keys.length}`);
  const index = new Map(keys.map(([id], i) => [id, i]));
  const at = (key: PublicKey) => index.get(Buffer.from(key.toBytes()).toString('latin1')) as number;
  const head: number[] = [
    keys.filter(([, m]) => m.signer).length,
    keys.filter(([, m]) => m.signer && !m.writable).length,
    keys.filter(([, m]) => !m.signer && !m.writable).length,
  ];
  shortVec(keys.length, head);
  const parts: Uint8Array[] = [
    Uint8Array.from(head),
    ...keys.map(([, m]) => m.bytes),
    bs58.decode(recentBlockhash),
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
  return Buffer.concat(parts);
}

/** How many signatures a legacy message needs: its header's first byte. */
export function requiredSignatures(message: Uint8Array): number {
  return message[0] as number;
}

/** The message's signer keys, in signature order. */
function signerKeys(message: Uint8Array): Uint8Array[] {
  // The key count is a compact-u16 after the 3-byte header.
  let offset = 3;
  let shift = 0;
  for (;;) {
    const byte = message[offset++] as number;
    shift += 7;
    if ((byte & 0x80) === 0 || shift > 14) break;
  }
  return Array.from({ length: requiredSignatures(message) }, (_, i) =>
    message.subarray(offset + 32 * i, offset + 32 * (i + 1)),
  );
}

/** The signed transaction: every signature the signers give (zeros for a signer not given), then the message. */
export function legacyWire(message: Uint8Array, signers: WireSigner[]): Buffer {
  const keys = signerKeys(message);
  const sigs = new Uint8Array(64 * keys.length);
  keys.forEach((key, i) => {
    const s = signers.find((x) => Buffer.from(bytesOf(x.publicKey)).equals(key));
    if (s) sigs.set(s.sign(message), 64 * i);
  });
  const count: number[] = [];
  shortVec(keys.length, count);
  return Buffer.concat([Uint8Array.from(count), sigs, message]);
}
