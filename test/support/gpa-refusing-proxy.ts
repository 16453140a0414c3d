// A JSON-RPC proxy in front of a devnet that refuses getProgramAccounts the
// way restrictive providers do, and logs every method it is asked (batches
// too), so a test can say what a server path costs in RPC calls.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RpcLog {
  url: string;
  /** Methods asked, in order (getProgramAccounts included, though refused). */
  calls: string[];
  /** Calls of `method` (with `first` as its first parameter when given, e.g. an address). */
  count(method: string, first?: string): number;
  reset(): void;
  close(): Promise<void>;
}

export async function startGpaRefusingProxy(upstream: string): Promise<RpcLog> {
  const calls: string[] = [];
  const firsts: unknown[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        res.writeHead(400).end();
        return;
      }
      const list = (Array.isArray(parsed) ? parsed : [parsed]) as {
        id?: unknown;
        method?: string;
        params?: unknown[];
      }[];
      for (const r of list) {
        calls.push(String(r.method));
        firsts.push(r.params?.[0]);
      }
      const refused = list.find((r) => r.method === 'getProgramAccounts');
      if (refused) {
        const error = {
          jsonrpc: '2.0',
          id: refused.id ?? null,
          error: { code: -32010, message: 'getProgramAccounts is not available on this endpoint' },
        };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(Array.isArray(parsed) ? list.map((r) => ({ ...error, id: r.id })) : error));
        return;
      }
      try {
        const up = await fetch(upstream, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
        res.writeHead(up.status, { 'content-type': 'application/json' });
        res.end(Buffer.from(await up.arrayBuffer()));
      } catch {
        res.writeHead(502).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    count: (method, first) =>
      calls.filter((m, i) => m === method && (first === undefined || firsts[i] === first)).length,
    reset: () => {
      calls.length = 0;
      firsts.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
