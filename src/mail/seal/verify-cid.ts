// Checks fetched bytes against the content address they were fetched by, so
// a gateway cannot hand a reader another object (even another message sealed
// to the same key). CIDs are recomputed by src/mail/cid.ts, the one place
// that knows the `ipfs add --cid-version=1` settings; `b3:` markers are
// blake3 hex.
import { blake3 } from '@noble/hashes/blake3.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { CID } from 'multiformats/cid';

export type CidCheck = 'match' | 'mismatch' | 'unsupported';

const RAW_CODEC = 0x55;
const DAG_PB_CODEC = 0x70;
const SHA2_256 = 0x12;

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

function equal(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/** 'unsupported' for a CID form these rules do not produce (CIDv0, other hashes) or text that is no CID. */
export async function checkCid(cidText: string, bytes: Uint8Array): Promise<CidCheck> {
  if (cidText.startsWith('b3:')) {
    return cidText.slice(3).toLowerCase() === hex(blake3(bytes)) ? 'match' : 'mismatch';
  }
  let cid: CID;
  try {
    cid = CID.parse(cidText);
  } catch {
    return 'unsupported';
  }
  if (cid.version !== 1 || cid.multihash.code !== SHA2_256) return 'unsupported';
  // A body up to one chunk is a single raw block: its digest is all there is.
  if (cid.code === RAW_CODEC) return equal(cid.multihash.digest, sha256(bytes)) ? 'match' : 'mismatch';
  if (cid.code !== DAG_PB_CODEC) return 'unsupported';
  // Loaded only here: the importer is sizable and most bodies are one raw block.
  const { computeCid } = await import('../cid.ts');
  return CID.parse(await computeCid(bytes)).equals(cid) ? 'match' : 'mismatch';
}
