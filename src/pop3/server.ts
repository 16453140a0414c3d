// The POP3 listener (docs/imap-pop3.md): implicit TLS (995; dev 1995) or a
// plain port that offers STLS (110, only when configured).
import { createServer as createNetServer, type Server, type Socket } from 'node:net';
import { createSecureContext, createServer as createTlsServer, type TLSSocket } from 'node:tls';
import { Pop3Session, type Pop3SessionOptions } from './session.ts';

export interface Pop3ServerOptions extends Omit<Pop3SessionOptions, 'startTls'> {
  host: string;
  port: number;
  tls: 'implicit' | 'starttls';
  cert: string | Buffer;
  key: string | Buffer;
  maxConnectionsPerIp: number;
}

export interface Pop3Server {
  port: number;
  close(drainMs?: number): Promise<void>;
}

export async function startPop3Server(opts: Pop3ServerOptions): Promise<Pop3Server> {
  const log = opts.logger.child({ component: 'pop3', listener: opts.tls });
  const sessions = new Set<Pop3Session>();
  const perIp = new Map<string, number>();
  const secureContext = createSecureContext({ cert: opts.cert, key: opts.key, minVersion: 'TLSv1.2' });
  let closing = false;

  const accept = (socket: Socket | TLSSocket, secure: boolean) => {
    const ip = socket.remoteAddress ?? 'unknown';
    const count = (perIp.get(ip) ?? 0) + 1;
    socket.on('error', () => {});
    if (closing || count > opts.maxConnectionsPerIp) {
      socket.end(
        closing
          ? '-ERR [SYS/TEMP] Server shutting down\r\n'
          : '-ERR [IN-USE] Too many connections from your address\r\n',
      );
      return;
    }
    perIp.set(ip, count);
    const session = new Pop3Session(
      socket,
      { ...opts, startTls: opts.tls === 'starttls' ? secureContext : undefined },
      secure,
    );
    sessions.add(session);
    socket.once('close', () => {
      sessions.delete(session);
      const left = (perIp.get(ip) ?? 1) - 1;
      if (left <= 0) perIp.delete(ip);
      else perIp.set(ip, left);
    });
    session.run().catch((err: Error) => log.error({ err: err.message }, 'POP3 session ended with an error'));
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
  log.info({ host: opts.host, port }, 'POP3 listening');

  return {
    port,
    async close(drainMs = 5000) {
      closing = true;
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sessions) s.close('-ERR [SYS/TEMP] Server shutting down');
      const deadline = Date.now() + drainMs;
      while (sessions.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      for (const s of sessions) s.destroy();
      await stopped;
    },
  };
}
