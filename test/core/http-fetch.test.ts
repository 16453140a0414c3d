import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpFetch } from '../../src/core/net/http-fetch.ts';

describe('httpFetch', () => {
  let server: Server;
  let base = '';
  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        if (req.url === '/slow') return; // never answers
        if (req.url === '/refuse') {
          res.writeHead(422, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: 'no thanks' }));
          return;
        }
        res.writeHead(201, { 'content-type': 'application/json', 'x-seen': String(body.length) });
        res.end(
          JSON.stringify({
            method: req.method,
            type: req.headers['content-type'],
            length: req.headers['content-length'],
            hex: body.toString('hex'),
          }),
        );
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('sends a text or byte body with its headers and reads the status, headers and JSON answer', async () => {
    const f = httpFetch({ timeoutMs: 5000 });
    const bytes = Uint8Array.of(0, 1, 254, 255);
    const res = await f(`${base}/pins`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: bytes,
    });
    expect(res.ok).toBe(true);
    expect(res.status).toBe(201);
    expect(res.headers.get('x-seen')).toBe('4');
    expect(await res.json()).toEqual({
      method: 'POST',
      type: 'application/octet-stream',
      length: '4',
      hex: '0001feff',
    });
    const text = await f(new URL('/rpc', base), { method: 'POST', body: '{"ü":1}' });
    expect(JSON.parse(await text.text())).toMatchObject({
      length: '8',
      hex: Buffer.from('{"ü":1}').toString('hex'),
    });
  });

  it('hands back a refusal as an answer that is not ok, with its body', async () => {
    const res = await httpFetch()(`${base}/refuse`, { method: 'POST', body: 'x' });
    expect(res.ok).toBe(false);
    expect(res.status).toBe(422);
    expect(await res.text()).toBe('{"error":"no thanks"}');
  });

  it('gives up after its timeout, and when the caller aborts', async () => {
    const started = Date.now();
    await expect(
      httpFetch({ timeoutMs: 200 })(`${base}/slow`, { method: 'POST', body: 'x' }),
    ).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(3000);
    const caller = new AbortController();
    const pending = httpFetch()(`${base}/slow`, { method: 'POST', body: 'x', signal: caller.signal });
    caller.abort();
    await expect(pending).rejects.toThrow();
  });

  it('reports a refused connection as an error', async () => {
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    await expect(httpFetch()(`http://127.0.0.1:${port}/`, { method: 'POST', body: '' })).rejects.toThrow(
      /ECONNREFUSED/,
    );
  });
});
