// MTA-STS policy hosts (https://mta-sts.<domain>/.well-known/mta-sts.txt)
// on one random loopback port, told apart by SNI and Host like virtual
// hosts on a real web server. Each domain gets its own certificate (made by
// the test, normally from a test CA the spooler is told to trust) and its
// own behaviour: serve a policy, answer an HTTP status, serve garbage or the
// wrong content type, or never answer (a timeout). Every request is logged.
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { createSecureContext, type SecureContext } from 'node:tls';

export type PolicyBehaviour =
  | { kind: 'policy'; text: string; contentType?: string }
  | { kind: 'status'; status: number; location?: string }
  | { kind: 'hang' };

export interface MtaStsHost {
  port: number;
  /** Sets what `mta-sts.<domain>` serves, with the certificate it presents. */
  serve(domain: string, behaviour: PolicyBehaviour, cert?: { key: string; cert: string }): void;
  /** Requests seen, as `domain path`. */
  readonly requests: string[];
  close(): Promise<void>;
}

export async function startMtaStsHost(defaultCert: { key: string; cert: string }): Promise<MtaStsHost> {
  const behaviours = new Map<string, PolicyBehaviour>();
  const contexts = new Map<string, SecureContext>();
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer(
    {
      key: defaultCert.key,
      cert: defaultCert.cert,
      SNICallback: (servername, cb) => cb(null, contexts.get(servername.toLowerCase())),
    },
    (req, res) => {
      const host = String(req.headers.host ?? '')
        .replace(/:\d+$/, '')
        .toLowerCase();
      const domain = host.replace(/^mta-sts\./, '');
      requests.push(`${domain} ${req.url}`);
      const b = behaviours.get(domain);
      if (!b || req.url !== '/.well-known/mta-sts.txt') {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
        return;
      }
      if (b.kind === 'hang') return; // never answers
      if (b.kind === 'status') {
        res.writeHead(b.status, b.location ? { location: b.location } : {}).end();
        return;
      }
      res.writeHead(200, { 'content-type': b.contentType ?? 'text/plain; charset=utf-8' }).end(b.text);
    },
  );
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    serve(domain, behaviour, cert) {
      const d = domain.toLowerCase();
      behaviours.set(d, behaviour);
      const pair = cert ?? defaultCert;
      contexts.set(`mta-sts.${d}`, createSecureContext({ key: pair.key, cert: pair.cert }));
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
