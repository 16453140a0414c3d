// CID test vectors: each expected string was computed once with
// ipfs-unixfs-importer under the `ipfs add --cid-version=1` settings
// (raw leaves, 256 KiB chunks, balanced layout, 174 links per node) and is
// written here so a change of settings or library shows up as a failure.
import { blake3 } from '@noble/hashes/blake3.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { base58btc } from 'multiformats/bases/base58';
import { CID } from 'multiformats/cid';
import { sha256 } from 'multiformats/hashes/sha2';
import { describe, expect, it } from 'vitest';
import {
  b3Marker,
  CHUNK_SIZE,
  computeCid,
  DAG_PB_CODEC,
  InvalidCidError,
  importUnixfs,
  normalizeCid,
  RAW_CODEC,
} from './cid.ts';

function pattern(length: number): Uint8Array {
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++) out[i] = i % 251;
  return out;
}

const discard = { put: async (cid: CID) => cid };

describe('computeCid', () => {
  it('matches the vectors for single-block inputs', async () => {
    expect(await computeCid(new TextEncoder().encode('hello\n'))).toBe(
      'bafkreicysg23kiwv34eg2d7qweipxwosdo2py4ldv42nbauguluen5v6am',
    );
    expect(await computeCid(new Uint8Array(0))).toBe(
      'bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku',
    );
    // Exactly one chunk: still a single raw block.
    expect(await computeCid(new Uint8Array(CHUNK_SIZE))).toBe(
      'bafkreiekhhjkxu4ztk3tyng3er3ijhg56mb44oe3gwbgquhzu4afrg2ksa',
    );
  });

  it('a single-chunk CID is the raw sha2-256 CID of the bytes', async () => {
    const bytes = pattern(10_000);
    const expected = CID.createV1(RAW_CODEC, await sha256.digest(bytes)).toString();
    expect(await computeCid(bytes)).toBe(expected);
  });

  it('matches the vectors for multi-chunk inputs', async () => {
    expect(await computeCid(new Uint8Array(CHUNK_SIZE + 1))).toBe(
      'bafybeigllfqgfpqydppr6cmv56g7ax4wyhruzswvcefv6j5kj77nzttfki',
    );
    expect(await computeCid(pattern(1024 * 1024))).toBe(
      'bafybeiedpcapwld4tkgtzwahfofgn4wex5ryysf4se6hwpmlrsh4ntnrau',
    );
    expect(await computeCid(new Uint8Array(1024 * 1024))).toBe(
      'bafybeiggzq4ryi7hscq5hzvzcnk4urnxt3asp37dhgvnjilf7exskximla',
    );
  });

  it('builds a second DAG level past 174 chunks (balanced layout)', async () => {
    const bytes = pattern(174 * CHUNK_SIZE + 1);
    expect(await computeCid(bytes)).toBe('bafybeib4y7ghw2rq7bracc4xwtxrbzo7cfvagdpte2tmrkgwl6dyard3cm');
    const imported = await importUnixfs(bytes, discard);
    expect(imported.size).toBe(bytes.byteLength);
    expect(imported.leaves).toHaveLength(175);
    expect(imported.cid.code).toBe(DAG_PB_CODEC);
  });

  it('reports the leaves in file order, whatever the chunking of the input', async () => {
    const bytes = pattern(3 * CHUNK_SIZE + 5);
    const pieces = [bytes.subarray(0, 1000), bytes.subarray(1000, 400_000), bytes.subarray(400_000)];
    const imported = await importUnixfs(pieces, discard);
    expect(imported.cid.toString()).toBe(await computeCid(bytes));
    const expected = await Promise.all(
      [0, 1, 2, 3].map(async (i) =>
        CID.createV1(
          RAW_CODEC,
          await sha256.digest(bytes.subarray(i * CHUNK_SIZE, (i + 1) * CHUNK_SIZE)),
        ).toString(),
      ),
    );
    expect(imported.leaves.map(String)).toEqual(expected);
  });

  it('stores a one-chunk file given in pieces as one raw block, the root itself', async () => {
    const bytes = pattern(CHUNK_SIZE);
    const pieces = [bytes.subarray(0, 7), bytes.subarray(7, 10_000), bytes.subarray(10_000)];
    const put: [string, Uint8Array][] = [];
    const imported = await importUnixfs(pieces, {
      put: async (cid: CID, block: Uint8Array) => {
        put.push([cid.toString(), block]);
        return cid;
      },
    });
    expect(imported.cid.toString()).toBe(CID.createV1(RAW_CODEC, await sha256.digest(bytes)).toString());
    expect(imported.cid.code).toBe(RAW_CODEC);
    expect(imported.size).toBe(CHUNK_SIZE);
    expect(imported.leaves.map(String)).toEqual([imported.cid.toString()]);
    expect(put.map(([cid]) => cid)).toEqual([imported.cid.toString()]);
    expect(Buffer.from(put[0]?.[1] ?? []).equals(Buffer.from(bytes))).toBe(true);
  });
});

describe('b3Marker', () => {
  it('is b3: plus the blake3 hex digest', () => {
    // The blake3 reference vector for empty input.
    expect(b3Marker(new Uint8Array(0))).toBe(
      'b3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262',
    );
    const bytes = pattern(5000);
    expect(b3Marker(bytes)).toBe(`b3:${bytesToHex(blake3(bytes))}`);
    expect(b3Marker(bytes)).toMatch(/^b3:[0-9a-f]{64}$/);
  });
});

describe('normalizeCid', () => {
  it('turns CIDv0 and other bases into CIDv1 base32', () => {
    // `ipfs add` (CIDv0) of 'hello\n': same multihash, dag-pb, now version 1 in base32.
    const v0 = 'QmZULkCELmmk5XNfCgTnCyFgAVxBRBXyDHGGMVoLFLiXEN';
    const out = normalizeCid(v0);
    expect(out).toMatch(/^bafy[a-z2-7]+$/);
    const parsed = CID.parse(out);
    expect(parsed.version).toBe(1);
    expect(parsed.code).toBe(DAG_PB_CODEC);
    expect(parsed.multihash.bytes).toEqual(CID.parse(v0).multihash.bytes);
    const v1 = 'bafkreicysg23kiwv34eg2d7qweipxwosdo2py4ldv42nbauguluen5v6am';
    expect(normalizeCid(v1)).toBe(v1);
    expect(normalizeCid(CID.parse(v1).toString(base58btc))).toBe(v1);
    expect(normalizeCid('zb2rhe5P4gXftAwvA4eXQ5HJwsER2owDyS9sKaQRRVQPn93bA')).toBe(
      'bafkreidon73zkcrwdb5iafqtijxildoonbwnpv7dyd6ef3qdgads2jc4su',
    );
  });

  it('throws InvalidCidError on malformed text', () => {
    for (const bad of [
      '',
      'nope',
      'bafkreinope',
      'Qm123',
      ' bafkreicysg23kiwv34eg2d7qweipxwosdo2py4ldv42nbauguluen5v6am',
      'b3:00',
    ]) {
      expect(() => normalizeCid(bad), bad).toThrow(InvalidCidError);
    }
  });
});
