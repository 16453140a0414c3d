// Reading sealed bodies from a gateway: the CID check (raw single-block and
// chunked dag-pb CIDs, b3: markers) and fetchSealedBody against a real HTTP
// server on loopback standing in for the gateway.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { blake3 } from '@noble/hashes/blake3.js';
import { importer } from 'ipfs-unixfs-importer';
import { CID } from 'multiformats/cid';
import * as rawCodec from 'multiformats/codecs/raw';
import { sha256 } from 'multiformats/hashes/sha2';
import { afterEach, describe, expect, it } from 'vitest';
import { checkCid, fetchSealedBody, GatewayError } from '../../src/mail/seal/index.ts';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

async function rawCid(bytes: Uint8Array): Promise<string> {
  return CID.create(1, rawCodec.code, await sha256.digest(bytes)).toString();
}

/** The importer with its own defaults (the `ipfs add --cid-version=1` settings). */
async function importerCid(bytes: Uint8Array): Promise<string> {
  let cid: CID | undefined;
  for await (const e of importer([{ content: bytes }], { put: async (c: CID) => c })) cid = e.cid;
  return String(cid);
}

function pattern(n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (i * 31 + (i >> 8)) & 0xff;
  return out;
}

type Handler = (path: string, res: import('node:http').ServerResponse) => void;

async function gateway(handler: Handler): Promise<string> {
  const server = createServer((req, res) => handler(req.url ?? '', res));
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('checkCid', () => {
  it('matches the published CIDv1 of "hello world\\n" and raw CIDs of single-block bodies', async () => {
    const hello = new TextEncoder().encode('hello world\n');
    expect(await checkCid('bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4', hello)).toBe(
      'match',
    );
    const body = pattern(100_000);
    expect(await checkCid(await rawCid(body), body)).toBe('match');
    expect(await checkCid(await importerCid(body), body)).toBe('match');
    const changed = Uint8Array.from(body);
    changed[5] = (changed[5] as number) ^ 1;
    expect(await checkCid(await rawCid(body), changed)).toBe('mismatch');
  });

  it('agrees with the pinning CID vectors for chunked bodies', async () => {
    // Vectors from src/mail/cid.test.ts (ipfs add --cid-version=1 settings).
    expect(
      await checkCid('bafybeigllfqgfpqydppr6cmv56g7ax4wyhruzswvcefv6j5kj77nzttfki', new Uint8Array(262_145)),
    ).toBe('match');
    expect(
      await checkCid(
        'bafybeiggzq4ryi7hscq5hzvzcnk4urnxt3asp37dhgvnjilf7exskximla',
        new Uint8Array(1024 * 1024),
      ),
    ).toBe('match');
    expect(
      await checkCid('bafkreiekhhjkxu4ztk3tyng3er3ijhg56mb44oe3gwbgquhzu4afrg2ksa', new Uint8Array(262_144)),
    ).toBe('match');
    expect(
      await checkCid(
        'bafybeiggzq4ryi7hscq5hzvzcnk4urnxt3asp37dhgvnjilf7exskximla',
        new Uint8Array(1024 * 1024 - 1),
      ),
    ).toBe('mismatch');
  });

  it('recomputes chunked (dag-pb) CIDs for bodies over 256 KiB', async () => {
    for (const size of [256 * 1024 + 1, 3 * 1024 * 1024 + 17]) {
      const body = pattern(size);
      const cid = await importerCid(body);
      expect(cid.startsWith('bafybei')).toBe(true);
      expect(await checkCid(cid, body)).toBe('match');
      expect(await checkCid(cid, body.subarray(0, size - 1))).toBe('mismatch');
    }
  });

  it('checks b3: markers and reports forms it cannot recompute', async () => {
    const body = pattern(1000);
    const marker = `b3:${Buffer.from(blake3(body)).toString('hex')}`;
    expect(await checkCid(marker, body)).toBe('match');
    expect(await checkCid(marker, body.subarray(1))).toBe('mismatch');
    expect(await checkCid('QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o', body)).toBe('unsupported');
    expect(await checkCid('not a cid', body)).toBe('unsupported');
  });
});

describe('fetchSealedBody', () => {
  it('fetches /ipfs/{cid} and checks it', async () => {
    const body = pattern(70_000);
    const cid = await rawCid(body);
    const seen: string[] = [];
    const url = await gateway((path, res) => {
      seen.push(path);
      if (path === `/ipfs/${cid}`) res.end(Buffer.from(body));
      else res.writeHead(404).end('{"error":"not found"}');
    });
    const got = await fetchSealedBody(`${url}/`, cid);
    expect(got.cidCheck).toBe('match');
    expect(Buffer.from(got.bytes).equals(Buffer.from(body))).toBe(true);
    expect(seen).toEqual([`/ipfs/${cid}`]);
  });

  it('refuses bytes that do not match the CID, 404s, oversize bodies and silent gateways', async () => {
    const body = pattern(5000);
    const cid = await rawCid(body);
    const liar = await gateway((_p, res) => res.end(Buffer.from(pattern(5001))));
    await expect(fetchSealedBody(liar, cid)).rejects.toThrow(/do not match the CID/);
    const empty = await gateway((_p, res) => res.writeHead(404).end());
    const notFound = await fetchSealedBody(empty, cid).catch((e: unknown) => e);
    expect(notFound).toBeInstanceOf(GatewayError);
    expect((notFound as GatewayError).status).toBe(404);
    const big = await gateway((_p, res) => res.end(Buffer.from(body)));
    await expect(fetchSealedBody(big, cid, { maxBytes: 4999 })).rejects.toThrow(/over the 4999-byte limit/);
    const chunked = await gateway((_p, res) => {
      res.write(Buffer.from(body.subarray(0, 3000)));
      res.end(Buffer.from(body.subarray(3000)));
    });
    await expect(fetchSealedBody(chunked, cid, { maxBytes: 4000 })).rejects.toThrow(
      /over the 4000-byte limit/,
    );
    expect((await fetchSealedBody(chunked, cid)).cidCheck).toBe('match');
    const silent = await gateway(() => {});
    await expect(fetchSealedBody(silent, cid, { timeoutMs: 300 })).rejects.toThrow(/no answer in 0.3 s/);
    await expect(fetchSealedBody('http://127.0.0.1:1', cid)).rejects.toBeInstanceOf(GatewayError);
  });
});
