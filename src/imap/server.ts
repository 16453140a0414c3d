// The IMAP listener (docs/imap-pop3.md): implicit TLS (993; dev 1993) or a
// plain port that offers STARTTLS (143, only when configured). Each
// connection is an ImapConnection; at most `maxConnectionsPerIp` at once
// from one address.
import { createServer as createNetServer, type Server, type Socket } from 'node:net';
import { createSecureContext, createServer as createTlsServer, type TLSSocket } from 'node:tls';
import { ImapConnection, type ImapConnectionOptions } from './connection.ts';

export interface ImapServerOptions extends Omit<ImapConnectionOptions, 'startTls'> {
  host: string;
  port: number;
  /** `implicit`: TLS from the first byte; `starttls`: plain, with STARTTLS required before login. */
  tls: 'implicit' | 'starttls';
  cert: string | Buffer;
  key: string | Buffer;
  maxConnectionsPerIp: number;
}

export interface ImapServer {
  port: number;
  /** Stops accepting, says BYE to every session, and waits up to `drainMs` for them to go. */
  close(drainMs?: number): Promise<void>;
}

export async function startImapServer(opts: ImapServerOptions): Promise<ImapServer> {
  const log = opts.logger.child({ component: 'imap', listener: opts.tls });
  const connections = new Set<ImapConnection>();
  const perIp = new Map<string, number>();
  const secureContext = createSecureContext({ cert: opts.cert, key: opts.key, minVersion: 'TLSv1.2' });
  let closing = false;

  const accept = (socket: Socket | TLSSocket, secure: boolean) => {
    const ip = socket.remoteAddress ?? 'unknown';
    const count = (perIp.get(ip) ?? 0) + 1;
    if (closing || count > opts.maxConnectionsPerIp) {
      socket.end(
        closing ? '* BYE Server shutting down\r\n' : '* BYE Too many connections from your address\r\n',
      );
      socket.on('error', () => {});
      return;
    }
    perIp.set(ip, count);
    socket.on('error', () => {});
    const conn = new ImapConnection(
      socket,
      { ...opts, startTls: opts.tls === 'starttls' ? secureContext : undefined },
      secure,
    );
    connections.add(conn);
    socket.once('close', () => {
      connections.delete(conn);
      const left = (perIp.get(ip) ?? 1) - 1;
      if (left <= 0) perIp.delete(ip);
      else perIp.set(ip, left);
    });
    conn.run().catch((err: Error) => log.error({ err: err.message }, 'IMAP session ended with an error'));
  };

  let server: Server;
  if (opts.tls === 'implicit') {
    const tlsServer = createTlsServer({ cert: opts.cert, key: opts.key, minVersion: 'TLSv1.2' }, (s) =>
      accept(s, true),
    );
    tlsServer.on('tlsClientError', (err) => log.debug({ err: err.message }, 'TLS handshake failed'));
    server = tlsServer;
  } else {
    server = createNetServer((s) => accept(s, false));
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;
  log.info({ host: opts.host, port }, 'IMAP listening');

  return {
    port,
    async close(drainMs = 5000) {
      closing = true;
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.all([...connections].map((c) => c.shutdown()));
      const deadline = Date.now() + drainMs;
      while (connections.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      for (const c of connections) c.destroy();
      await stopped;
    },
  };
}
