// The TCP/TLS listener the IMAP and POP3 servers share: implicit TLS from the
// first byte or a plain port (the protocol then offers STARTTLS/STLS), at
// most `maxConnectionsPerIp` sessions from one address, and a shutdown that
// asks every session to finish, waits up to a drain time, then cuts the rest.
// The certificate and the per-address cap can be replaced while it runs (a
// reload): new handshakes use the new pair, open sessions keep theirs.
import { createServer as createNetServer, type Server, type Socket } from 'node:net';
import {
  createSecureContext,
  createServer as createTlsServer,
  type SecureContext,
  type TLSSocket,
  type Server as TlsServer,
} from 'node:tls';
import type { Logger } from '../log.ts';

/** One protocol session as the listener drives it. */
export interface ListenedSession {
  run(): Promise<void>;
  /** Ask the session to end (a goodbye line, then close). */
  shutdown(): void | Promise<void>;
  /** Cut the session now. */
  destroy(): void;
}

/** Where and how a listener accepts connections. */
export interface ListenerSetup {
  host: string;
  port: number;
  /** `implicit`: TLS from the first byte; `starttls`: plain, the protocol upgrades before login. */
  tls: 'implicit' | 'starttls';
  cert: string | Buffer;
  key: string | Buffer;
  maxConnectionsPerIp: number;
}

export interface SessionListenerOptions<S extends ListenedSession> extends ListenerSetup {
  /** For logs: `imap`, `pop3`. */
  component: string;
  logger: Logger;
  /** The line sent before closing a connection that is refused (over the limit, or shutting down). */
  refusal: (reason: 'busy' | 'closing') => string;
  /**
   * A session for an accepted socket; `startTls` is set on a plain listener
   * and gives the context current when the client asks for TLS.
   */
  create: (socket: Socket | TLSSocket, secure: boolean, startTls: (() => SecureContext) | undefined) => S;
}

export interface SessionListener {
  port: number;
  /** New handshakes use this pair; throws, changing nothing, when it does not load. */
  setCertificate(pem: { cert: string | Buffer; key: string | Buffer }): void;
  /** A new cap on sessions at once from one address (open sessions stay). */
  setMaxConnectionsPerIp(max: number): void;
  /** Stops accepting, asks every session to end, and waits up to `drainMs` for them to go. */
  close(drainMs?: number): Promise<void>;
}

export async function startSessionListener<S extends ListenedSession>(
  opts: SessionListenerOptions<S>,
): Promise<SessionListener> {
  const log = opts.logger.child({ component: opts.component, listener: opts.tls });
  const name = opts.component.toUpperCase();
  const sessions = new Set<S>();
  const perIp = new Map<string, number>();
  let secureContext = createSecureContext({ cert: opts.cert, key: opts.key, minVersion: 'TLSv1.2' });
  const startTls = opts.tls === 'starttls' ? () => secureContext : undefined;
  let maxConnectionsPerIp = opts.maxConnectionsPerIp;
  let tlsServer: TlsServer | undefined;
  let closing = false;

  const accept = (socket: Socket | TLSSocket, secure: boolean) => {
    socket.on('error', () => {});
    const ip = socket.remoteAddress ?? 'unknown';
    const count = (perIp.get(ip) ?? 0) + 1;
    if (closing || count > maxConnectionsPerIp) {
      socket.end(opts.refusal(closing ? 'closing' : 'busy'));
      return;
    }
    perIp.set(ip, count);
    const session = opts.create(socket, secure, startTls);
    sessions.add(session);
    socket.once('close', () => {
      sessions.delete(session);
      const left = (perIp.get(ip) ?? 1) - 1;
      if (left <= 0) perIp.delete(ip);
      else perIp.set(ip, left);
    });
    session
      .run()
      .catch((err: Error) => log.error({ err: err.message }, `${name} session ended with an error`));
  };

  let server: Server;
  if (opts.tls === 'implicit') {
    tlsServer = createTlsServer({ cert: opts.cert, key: opts.key, minVersion: 'TLSv1.2' }, (s) =>
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
  log.info({ host: opts.host, port }, `${name} listening`);

  return {
    port,
    setCertificate(pem) {
      const options = { cert: pem.cert, key: pem.key, minVersion: 'TLSv1.2' as const };
      // Built first: a pair that does not load throws here, before anything is swapped.
      const next = createSecureContext(options);
      tlsServer?.setSecureContext(options);
      secureContext = next;
    },
    setMaxConnectionsPerIp(max) {
      maxConnectionsPerIp = max;
    },
    async close(drainMs = 5000) {
      closing = true;
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.all([...sessions].map((s) => s.shutdown()));
      const deadline = Date.now() + drainMs;
      while (sessions.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      for (const s of sessions) s.destroy();
      await stopped;
    },
  };
}
