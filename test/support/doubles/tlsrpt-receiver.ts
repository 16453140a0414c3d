// An https rua endpoint of a domain that asks for TLS-RPT reports by POST
// (RFC 8460 §5.4): a real HTTPS server on a random loopback port that keeps
// every request it gets and answers with a configurable status.
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';

export interface ReceivedReport {
  path: string;
  contentType: string;
  body: Buffer;
}

export interface TlsrptReceiver {
  port: number;
  readonly received: ReceivedReport[];
  /** Status of later answers (default 200). */
  status: number;
  close(): Promise<void>;
}

export async function startTlsrptReceiver(cert: { key: string; cert: string }): Promise<TlsrptReceiver> {
  const received: ReceivedReport[] = [];
  const state = { status: 200 };
  const server = createServer({ key: cert.key, cert: cert.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST') {
        received.push({
          path: req.url ?? '',
          contentType: String(req.headers['content-type'] ?? ''),
          body: Buffer.concat(chunks),
        });
      }
      res.writeHead(req.method === 'POST' ? state.status : 405).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.address() as AddressInfo).port,
    received,
    get status() {
      return state.status;
    },
    set status(v: number) {
      state.status = v;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
