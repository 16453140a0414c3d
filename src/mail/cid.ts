// Content identifiers, computed locally exactly the way `ipfs add
// --cid-version=1` does it: UnixFS file, fixed 256 KiB chunks, raw leaves,
// balanced DAG with at most 174 links per node, CIDv1 base32. Also the `b3:`
// marker that stands in for a CID when a mailbox opted out of IPFS.
//
// Runs in Node and in the browser (the webmail verifies fetched bodies with
// it): no `node:` imports here.
import { blake3 } from '@noble/hashes/blake3.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import {
  type ImportContent,
  type ImporterOptions,
  importer,
  type WritableStorage,
} from 'ipfs-unixfs-importer';
import { fixedSize } from 'ipfs-unixfs-importer/chunker';
import { balanced, type FileLayout } from 'ipfs-unixfs-importer/layout';
import { CID } from 'multiformats/cid';
import { sha256 } from 'multiformats/hashes/sha2';

/** Kubo's default chunk size (`--chunker=size-262144`). */
export const CHUNK_SIZE = 262_144;
/** Kubo's balanced-layout fan-out. */
export const MAX_LINKS_PER_NODE = 174;

export const RAW_CODEC = 0x55;
export const DAG_PB_CODEC = 0x70;

export interface UnixfsImport {
  /** The root CID (CIDv1). */
  cid: CID;
  /** File size in bytes. */
  size: number;
  /** The leaf blocks in file order (raw CIDs; the root itself for a single-chunk file). */
  leaves: CID[];
}

/**
 * Imports one file with the `ipfs add --cid-version=1` settings, writing every
 * block through `storage`. Returns the root, the file size and the leaves in
 * order, so a store can stream the file back without decoding dag-pb.
 */
export async function importUnixfs(
  content: ImportContent,
  storage: WritableStorage,
  opts: { signal?: AbortSignal } = {},
): Promise<UnixfsImport> {
  const whole = singleChunk(content);
  if (whole) {
    // One chunk is one raw block, and the root is that block (raw leaves,
    // reduceSingleLeafToSelf): its CID is the raw sha2-256 CID of the bytes.
    // The importer would make the same block with far more work per call.
    const cid = CID.createV1(RAW_CODEC, await sha256.digest(whole));
    opts.signal?.throwIfAborted();
    await storage.put(cid, whole);
    return { cid, size: whole.byteLength, leaves: [cid] };
  }
  const leaves: CID[] = [];
  let size = 0;
  const inner = balanced({ maxChildrenPerNode: MAX_LINKS_PER_NODE });
  // The layout sees the leaves in file order (the importer hashes them in
  // parallel but hands them over in sequence); record them on the way through.
  const layout: FileLayout = (source, reduce) =>
    inner(
      (async function* () {
        for await (const leaf of source) {
          leaves.push(leaf.cid);
          size += Number(leaf.size);
          yield leaf;
        }
      })(),
      reduce,
    );
  const options: ImporterOptions = {
    cidVersion: 1,
    rawLeaves: true,
    reduceSingleLeafToSelf: true,
    chunker: fixedSize({ chunkSize: CHUNK_SIZE }),
    layout,
  };
  let root: { cid: CID; size: bigint } | undefined;
  for await (const entry of importer([{ content }], storage, options)) {
    opts.signal?.throwIfAborted();
    root = entry;
  }
  if (!root) throw new Error('importer produced no root');
  return { cid: root.cid, size, leaves };
}

/** The content's bytes when it is given whole (bytes, or an array of byte chunks) and fits one chunk. */
function singleChunk(content: ImportContent): Uint8Array | undefined {
  if (content instanceof Uint8Array) return content.byteLength <= CHUNK_SIZE ? content : undefined;
  if (!Array.isArray(content)) return undefined;
  let size = 0;
  for (const chunk of content) {
    if (!(chunk instanceof Uint8Array)) return undefined;
    size += chunk.byteLength;
  }
  if (size > CHUNK_SIZE) return undefined;
  if (content.length === 1) return content[0] as Uint8Array;
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of content as Uint8Array[]) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

// Blocks are discarded: only the root CID matters here, and keeping them would
// double the memory held for a large body.
const discard: WritableStorage = { put: async (cid) => cid };

/** CIDv1 (base32) of the bytes, equal to `ipfs add --cid-version=1`. */
export async function computeCid(bytes: Uint8Array): Promise<string> {
  const { cid } = await importUnixfs(bytes, discard);
  return cid.toString();
}

/** The local-only marker for no_ipfs mail: `b3:` + 64 lowercase hex chars of blake3. */
export function b3Marker(bytes: Uint8Array): string {
  return `b3:${bytesToHex(blake3(bytes))}`;
}

/** Thrown for text that is not a CID. */
export class InvalidCidError extends Error {
  constructor(readonly input: string) {
    super(`not a valid CID: ${JSON.stringify(input.length > 100 ? `${input.slice(0, 100)}…` : input)}`);
    this.name = 'InvalidCidError';
  }
}

/** Parses CIDv0 or CIDv1 text (base32, base36 or base58btc); throws InvalidCidError. */
export function parseCid(text: string): CID {
  // Real CIDs are well under 512 characters and never contain whitespace.
  if (typeof text !== 'string' || text.length === 0 || text.length > 512 || /\s/.test(text)) {
    throw new InvalidCidError(String(text));
  }
  try {
    return CID.parse(text);
  } catch {
    throw new InvalidCidError(text);
  }
}

/** CIDv0 or CIDv1 text in, canonical CIDv1 base32 text out; throws InvalidCidError on malformed input. */
export function normalizeCid(text: string): string {
  return parseCid(text).toV1().toString();
}
