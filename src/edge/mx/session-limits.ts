// Limits on whole SMTP sessions, shared by the MX and submission listeners:
// a total time per session (`[smtp] max_session_secs`), so a client that
// trickles one byte before every idle timeout cannot hold a connection for
// hours, and a cap on connections across all addresses
// (`[smtp] max_connections`, smtp-server's maxClients: it also counts
// sockets still in their TLS handshake or PROXY header), beyond which a new
// connection gets 421. The per-address cap stays in each server's onConnect.
import type { SMTPServer, SMTPServerSession } from 'smtp-server';
import type { Logger } from '../../core/log.ts';

export interface SessionLimitOptions {
  /** Total time a session may last; 0 = unlimited. */
  maxSessionMs: number;
  logger: Logger;
  hostname: string;
}

/** The connection object smtp-server keeps per session (what its own timeouts use). */
interface Connection {
  id: string;
  send(code: number, data?: string): void;
  close(): void;
}

/** Starts and stops the per-session timers of one server. */
export class SessionClock {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private server: SMTPServer | undefined;

  constructor(private readonly opts: SessionLimitOptions) {}

  /** The server whose connections the clock closes (set once it exists). */
  attach(server: SMTPServer): void {
    this.server = server;
  }

  /** From onConnect, once the session is admitted. */
  start(session: SMTPServerSession): void {
    if (this.opts.maxSessionMs <= 0) return;
    const timer = setTimeout(() => this.expire(session), this.opts.maxSessionMs);
    timer.unref();
    this.timers.set(session.id, timer);
  }

  /** From onClose. */
  stop(session: SMTPServerSession): void {
    const timer = this.timers.get(session.id);
    if (timer) clearTimeout(timer);
    this.timers.delete(session.id);
  }

  private expire(session: SMTPServerSession): void {
    this.timers.delete(session.id);
    const connections = (this.server as unknown as { connections?: Set<Connection> } | undefined)
      ?.connections;
    const connection = [...(connections ?? [])].find((c) => c.id === session.id);
    if (!connection) return;
    this.opts.logger.info(
      { session: session.id, ip: session.remoteAddress, secs: Math.round(this.opts.maxSessionMs / 1000) },
      'session time limit reached, closing the connection',
    );
    connection.send(421, `4.4.2 ${this.opts.hostname} Session time limit reached, closing connection`);
    connection.close();
  }
}
