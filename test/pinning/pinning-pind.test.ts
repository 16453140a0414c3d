// The pin daemon over real sockets: pin surface, gateway semantics, auth,
// caps, CORS, concurrency, restart and crash safety.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { CID } from 'multiformats/cid';
import { sha256 } from 'multiformats/hashes/sha2';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { DataDirLockedError } from '../../pinning/pind/lock.ts';
import { type Pind, PindConfigError, type StartPindOptions, startPind } from '../../pinning/pind/server.ts';
import { PindStore } from '../../pinning/pind/store.ts';
import { CHUNK_SIZE, computeCid, DAG_PB_CODEC } from '../../src/mail/cid.ts';
import { tempDir } from '../support/temp-dir.ts';

const running: Pind[] = [];
afterEach(async () => {
  for (const p of running.splice(0)) await p.close();
});

async function pind(opts: Partial<StartPindOptions> = {}): Promise<Pind & { dataDir: string }> {
  const dataDir = opts.dataDir ?? tempDir('sealpost-pind-');
  const p = await startPind({
    dataDir,
    pin: { host: '127.0.0.1', port: 0 },
    maxPinBytes: 4 * 1024 * 1024,
    logger: pino({ level: 'silent' }),
    ...opts,
  });
  running.push(p);
  return Object.assign(p, { dataDir });
}

function pattern(length: number, seed = 0): Uint8Array {
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++) out[i] = (i + seed) % 251;
  return out;
}

async function post(url: string, body: Uint8Array, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}/pins`, {
    method: 'POST',
    headers: { 'content-type': 'application/octet-stream', ...headers },
    body: body as Uint8Array<ArrayBuffer>,
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => d.name);
}

const SIZES = { small: 5_000, multiChunk: 300_000, overMiB: 1_300_000 } as const;

describe('pind pin surface and gateway', () => {
  it('pins small and multi-chunk bodies under the CID computeCid gives, and serves them back', async () => {
    const p = await pind();
    for (const [label, size] of Object.entries(SIZES)) {
      const bytes = pattern(size, size);
      const cid = await computeCid(bytes);
      const pinned = await post(p.pinUrl, bytes);
      expect(pinned.status, label).toBe(201);
      expect(pinned.body).toEqual({ cid, size });
      expect(pinned.headers.get('location')).toBe(`/pins/${cid}`);

      const status = await fetch(`${p.pinUrl}/pins/${cid}`);
      expect(status.status).toBe(200);
      expect(await status.json()).toMatchObject({ cid, size, pinned: true });

      const res = await fetch(`${p.gatewayUrl}/ipfs/${cid}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/octet-stream');
      expect(res.headers.get('content-length')).toBe(String(size));
      expect(res.headers.get('etag')).toBe(`"${cid}"`);
      expect(res.headers.get('cache-control')).toBe('public, max-age=29030400, immutable');
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(Buffer.from(await res.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true);
    }
  });

  it('answers HEAD, If-None-Match with 304, and a CIDv0 path for a dag-pb root', async () => {
    const p = await pind();
    const bytes = pattern(SIZES.overMiB);
    const { body } = await post(p.pinUrl, bytes);
    const cid = body.cid as string;

    const head = await fetch(`${p.gatewayUrl}/ipfs/${cid}`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(bytes.byteLength));
    expect((await head.arrayBuffer()).byteLength).toBe(0);

    for (const inm of [`"${cid}"`, `W/"${cid}"`, `"other", "${cid}"`, '*']) {
      const again = await fetch(`${p.gatewayUrl}/ipfs/${cid}`, { headers: { 'if-none-match': inm } });
      expect(again.status, inm).toBe(304);
      expect(again.headers.get('etag')).toBe(`"${cid}"`);
      expect(again.headers.get('cache-control')).toContain('immutable');
    }
    const stale = await fetch(`${p.gatewayUrl}/ipfs/${cid}`, { headers: { 'if-none-match': '"other"' } });
    expect(stale.status).toBe(200);
    await stale.arrayBuffer();

    const v0 = CID.parse(cid).toV0().toString();
    const viaV0 = await fetch(`${p.gatewayUrl}/ipfs/${v0}`);
    expect(viaV0.status).toBe(200);
    expect(viaV0.headers.get('etag')).toBe(`"${cid}"`);
    expect((await viaV0.arrayBuffer()).byteLength).toBe(bytes.byteLength);
  });

  it('serves the single block with ?format=raw or Accept: application/vnd.ipld.raw', async () => {
    const p = await pind();
    const small = pattern(1000);
    const smallCid = (await post(p.pinUrl, small)).body.cid as string;
    const raw = await fetch(`${p.gatewayUrl}/ipfs/${smallCid}?format=raw`);
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-type')).toBe('application/vnd.ipld.raw');
    expect(raw.headers.get('etag')).toBe(`"${smallCid}.raw"`);
    expect(Buffer.from(await raw.arrayBuffer()).equals(Buffer.from(small))).toBe(true);

    // For a multi-block file the block is the dag-pb root; it hashes to the CID.
    const big = pattern(SIZES.multiChunk);
    const bigCid = CID.parse((await post(p.pinUrl, big)).body.cid as string);
    const root = await fetch(`${p.gatewayUrl}/ipfs/${bigCid}`, {
      headers: { accept: 'application/vnd.ipld.raw' },
    });
    expect(root.headers.get('content-type')).toBe('application/vnd.ipld.raw');
    const block = new Uint8Array(await root.arrayBuffer());
    expect(block.byteLength).toBeLessThan(1000);
    expect(CID.createV1(DAG_PB_CODEC, await sha256.digest(block)).equals(bigCid)).toBe(true);
  });

  it('streams a many-block file to a slow reader', async () => {
    const p = await pind({ maxPinBytes: 16 * 1024 * 1024 });
    const bytes = pattern(12 * 1024 * 1024 + 5, 11);
    const cid = (await post(p.pinUrl, bytes)).body.cid as string;
    const received = await new Promise<Buffer>((resolve, reject) => {
      const req = request(`${p.gatewayUrl}/ipfs/${cid}`, (res) => {
        const chunks: Buffer[] = [];
        // Stall the reader so the daemon has to wait for the socket to drain.
        res.pause();
        setTimeout(() => res.resume(), 300);
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(Buffer.concat(chunks)));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
    expect(received.byteLength).toBe(bytes.byteLength);
    expect(received.equals(Buffer.from(bytes))).toBe(true);
  });

  it('answers unknown, malformed and unsupported requests with JSON errors', async () => {
    const p = await pind();
    const unknown = await computeCid(pattern(10, 99));
    const notFound = await fetch(`${p.gatewayUrl}/ipfs/${unknown}`);
    expect(notFound.status).toBe(404);
    expect(notFound.headers.get('content-type')).toContain('application/json');
    expect(await notFound.json()).toEqual({ error: 'not_found', message: `${unknown} is not pinned here` });
    expect((await fetch(`${p.pinUrl}/pins/${unknown}`)).status).toBe(404);

    for (const path of ['/ipfs/not-a-cid', '/ipfs/bafkreinope', '/pins/Qm123']) {
      const res = await fetch(`${p.gatewayUrl}${path}`);
      expect(res.status, path).toBe(400);
      expect(await res.json()).toMatchObject({ error: 'invalid_cid' });
    }
    const cid = (await post(p.pinUrl, pattern(100))).body.cid as string;
    const fmt = await fetch(`${p.gatewayUrl}/ipfs/${cid}?format=car`);
    expect(fmt.status).toBe(400);
    expect(await fmt.json()).toMatchObject({ error: 'unsupported_format' });
    const sub = await fetch(`${p.gatewayUrl}/ipfs/${cid}/inner/path`);
    expect(sub.status).toBe(404);
    await sub.arrayBuffer();
    const other = await fetch(`${p.gatewayUrl}/elsewhere`);
    expect(other.status).toBe(404);
    expect(await other.json()).toMatchObject({ error: 'not_found' });
    const put = await fetch(`${p.gatewayUrl}/ipfs/${cid}`, { method: 'PUT', body: 'x' });
    expect(put.status).toBe(405);
    await put.arrayBuffer();
  });

  it('never releases a pin over HTTP', async () => {
    const p = await pind();
    const cid = (await post(p.pinUrl, pattern(100))).body.cid as string;
    const del = await fetch(`${p.pinUrl}/pins/${cid}`, { method: 'DELETE' });
    expect(del.status).toBe(405);
    expect(((await del.json()) as { message: string }).message).toContain('sealpost pind rm');
    expect((await fetch(`${p.gatewayUrl}/ipfs/${cid}`)).status).toBe(200);
  });

  it('sends CORS headers on every route and answers preflights', async () => {
    const p = await pind({ authToken: 'secret-token' });
    const pre = await fetch(`${p.pinUrl}/pins`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://webmail.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    expect(pre.headers.get('access-control-allow-methods')).toContain('POST');
    expect(pre.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');
    const denied = await fetch(`${p.pinUrl}/pins`, { method: 'POST', body: 'x' });
    expect(denied.headers.get('access-control-allow-origin')).toBe('*');
    await denied.arrayBuffer();
    const missing = await fetch(`${p.gatewayUrl}/ipfs/${await computeCid(pattern(3))}`);
    expect(missing.headers.get('access-control-allow-origin')).toBe('*');
    expect(missing.headers.get('access-control-expose-headers')).toContain('ETag');
    await missing.arrayBuffer();
  });

  it('requires the bearer token on the pin surface only', async () => {
    const p = await pind({ authToken: 'secret-token' });
    const bytes = pattern(2000);
    for (const headers of [
      {} as Record<string, string>,
      { authorization: 'Bearer wrong-token' },
      { authorization: 'secret-token' },
    ]) {
      const res = await post(p.pinUrl, bytes, headers);
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('unauthorized');
      expect(res.headers.get('www-authenticate')).toContain('Bearer');
    }
    const ok = await post(p.pinUrl, bytes, { authorization: 'Bearer secret-token' });
    expect(ok.status).toBe(201);
    const cid = ok.body.cid as string;
    expect((await fetch(`${p.pinUrl}/pins/${cid}`)).status).toBe(401);
    const status = await fetch(`${p.pinUrl}/pins/${cid}`, {
      headers: { authorization: 'Bearer secret-token' },
    });
    expect(status.status).toBe(200);
    // Reads of content stay public: it is content-addressed and sealed.
    expect((await fetch(`${p.gatewayUrl}/ipfs/${cid}`)).status).toBe(200);
  });

  it('refuses to start on a non-loopback bind without a token', async () => {
    const dataDir = tempDir('sealpost-pind-');
    for (const opts of [
      { pin: { host: '0.0.0.0', port: 0 } },
      { pin: { host: '::', port: 0 } },
      { pin: { host: '127.0.0.1', port: 0 }, gateway: { host: '0.0.0.0', port: 0 } },
    ]) {
      await expect(pind({ dataDir, ...opts })).rejects.toThrow(PindConfigError);
      await expect(pind({ dataDir, ...opts })).rejects.toThrow(
        /not a loopback address, without an auth token/,
      );
    }
    expect(files(dataDir)).toEqual([]);
    const withToken = await pind({ dataDir, pin: { host: '0.0.0.0', port: 0 }, authToken: 't0ken' });
    const port = new URL(withToken.pinUrl).port;
    const res = await post(`http://127.0.0.1:${port}`, pattern(10), { authorization: 'Bearer t0ken' });
    expect(res.status).toBe(201);
  });

  it('rejects bodies over max_pin_bytes with 413 and stores nothing', async () => {
    const p = await pind({ maxPinBytes: 100_000 });
    const over = await post(p.pinUrl, pattern(100_001));
    expect(over.status).toBe(413);
    expect(over.body).toEqual({
      error: 'payload_too_large',
      message: 'body exceeds max_pin_bytes (100000 bytes)',
    });

    // Chunked upload without a length: counted while reading.
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 30; i++) controller.enqueue(pattern(10_000, i));
        controller.close();
      },
    });
    const chunked = await fetch(`${p.pinUrl}/pins`, {
      method: 'POST',
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(413);
    await chunked.arrayBuffer();

    // A client that asks first (Expect: 100-continue) is refused before it sends.
    const early = await new Promise<{ status: number; continued: boolean }>((resolve, reject) => {
      const url = new URL(p.pinUrl);
      let continued = false;
      const req = request({
        host: url.hostname,
        port: url.port,
        method: 'POST',
        path: '/pins',
        headers: { 'content-length': '5000000', expect: '100-continue' },
      });
      req.on('continue', () => {
        continued = true;
      });
      req.on('response', (res) => {
        res.resume();
        resolve({ status: res.statusCode ?? 0, continued });
        req.destroy();
      });
      req.on('error', reject);
      req.flushHeaders();
    });
    expect(early).toEqual({ status: 413, continued: false });

    expect((await post(p.pinUrl, pattern(100_000))).status).toBe(201);
    expect(files(join(p.dataDir, 'pins'))).toHaveLength(1);
  });

  it('rejects empty bodies and multipart forms', async () => {
    const p = await pind();
    const empty = await post(p.pinUrl, new Uint8Array(0));
    expect(empty.status).toBe(400);
    expect(empty.body.error).toBe('empty_body');
    const form = new FormData();
    form.append('file', new Blob(['hello']), 'hello.txt');
    const multipart = await fetch(`${p.pinUrl}/pins`, { method: 'POST', body: form });
    expect(multipart.status).toBe(415);
    expect(await multipart.json()).toMatchObject({ error: 'unsupported_media_type' });
    expect(files(join(p.dataDir, 'pins'))).toEqual([]);
    expect(files(join(p.dataDir, 'blocks'))).toEqual([]);
  });

  it('stores nothing for an upload cut off half-way', async () => {
    const p = await pind();
    const url = new URL(p.pinUrl);
    await new Promise<void>((resolve) => {
      const req = request({
        host: url.hostname,
        port: url.port,
        method: 'POST',
        path: '/pins',
        headers: { 'content-length': '600000' },
      });
      req.on('error', () => resolve());
      req.write(Buffer.from(pattern(300_000)), () => {
        setTimeout(() => {
          req.destroy();
          resolve();
        }, 50);
      });
    });
    // The daemon is still healthy and holds no trace of the upload.
    expect((await post(p.pinUrl, pattern(10))).status).toBe(201);
    expect(files(join(p.dataDir, 'pins'))).toHaveLength(1);
    expect(files(join(p.dataDir, 'blocks'))).toHaveLength(1);
  });

  it('pins the same bytes concurrently without damage', async () => {
    const p = await pind();
    const bytes = pattern(SIZES.overMiB, 7);
    const cid = await computeCid(bytes);
    const answers = await Promise.all(Array.from({ length: 16 }, () => post(p.pinUrl, bytes)));
    for (const a of answers) expect(a).toMatchObject({ status: 201, body: { cid, size: bytes.byteLength } });
    const names = files(p.dataDir);
    expect(names.filter((n) => n.endsWith('.tmp'))).toEqual([]);
    expect(names.filter((n) => n.endsWith('.json'))).toEqual([`${cid}.json`]);
    // One file per leaf (4 full, 1 partial) plus the root.
    expect(names.filter((n) => n.endsWith('.data'))).toHaveLength(
      Math.ceil(bytes.byteLength / CHUNK_SIZE) + 1,
    );
    const back = await fetch(`${p.gatewayUrl}/ipfs/${cid}`);
    expect(Buffer.from(await back.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true);
  });

  it('keeps every pin across a restart and locks its data directory', async () => {
    const dataDir = tempDir('sealpost-pind-');
    const first = await pind({ dataDir });
    await expect(pind({ dataDir })).rejects.toThrow(DataDirLockedError);
    const bodies = [pattern(10, 1), pattern(SIZES.multiChunk, 2), pattern(SIZES.overMiB, 3)];
    const cids: string[] = [];
    for (const b of bodies) cids.push((await post(first.pinUrl, b)).body.cid as string);
    await first.close();
    running.splice(running.indexOf(first), 1);

    const second = await pind({ dataDir });
    for (const [i, cid] of cids.entries()) {
      const res = await fetch(`${second.gatewayUrl}/ipfs/${cid}`);
      expect(res.status).toBe(200);
      expect(Buffer.from(await res.arrayBuffer()).equals(Buffer.from(bodies[i] as Uint8Array))).toBe(true);
    }
  });

  it('splits the roles across two listeners', async () => {
    const p = await pind({ gateway: { host: '127.0.0.1', port: 0 } });
    expect(p.gatewayUrl).not.toBe(p.pinUrl);
    const cid = (await post(p.pinUrl, pattern(50))).body.cid as string;
    expect((await fetch(`${p.gatewayUrl}/ipfs/${cid}`)).status).toBe(200);
    const pinSide = await fetch(`${p.pinUrl}/ipfs/${cid}`);
    expect(pinSide.status).toBe(404);
    expect(((await pinSide.json()) as { message: string }).message).toContain('pin surface');
    const gatewaySide = await fetch(`${p.gatewayUrl}/pins`, { method: 'POST', body: 'x' });
    expect(gatewaySide.status).toBe(404);
    await gatewaySide.arrayBuffer();
  });

  it('answers 500, not a cut-off body, when a pinned block went missing', async () => {
    const p = await pind();
    const bytes = pattern(2000);
    const cid = (await post(p.pinUrl, bytes)).body.cid as string;
    const store = await PindStore.open(p.dataDir);
    rmSync(store.blockPath(CID.parse(cid)).file);
    const res = await fetch(`${p.gatewayUrl}/ipfs/${cid}`);
    expect(res.status).toBe(500);
    expect(await res.json()).toMatchObject({ error: 'internal' });
  });
});

describe('pind store admin', () => {
  it('removes a pin and sweeps only the blocks no other pin uses', async () => {
    const dataDir = tempDir('sealpost-pind-');
    const p = await pind({ dataDir });
    // Two bodies sharing their first 256 KiB leaf.
    const shared = pattern(262_144);
    const a = Buffer.concat([shared, Buffer.from(pattern(1000, 1))]);
    const b = Buffer.concat([shared, Buffer.from(pattern(2000, 2))]);
    const cidA = (await post(p.pinUrl, a)).body.cid as string;
    const cidB = (await post(p.pinUrl, b)).body.cid as string;
    await p.close();
    running.splice(running.indexOf(p), 1);

    const store = await PindStore.open(dataDir);
    expect(await store.removePin(cidA)).toBe(true);
    expect(await store.removePin(cidA)).toBe(false);
    const swept = await store.gc();
    // A's root and its own tail leaf go; the shared leaf stays for B.
    expect(swept).toEqual({ removedBlocks: 2, keptBlocks: 3, removedTemp: 0 });

    const again = await pind({ dataDir });
    expect((await fetch(`${again.gatewayUrl}/ipfs/${cidA}`)).status).toBe(404);
    const res = await fetch(`${again.gatewayUrl}/ipfs/${cidB}`);
    expect(Buffer.from(await res.arrayBuffer()).equals(b)).toBe(true);
  });
});
