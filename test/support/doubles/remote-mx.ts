// A remote mail server for the outbound spooler's tests: smtp-server on a
// random loopback port, with or without STARTTLS (certificate made by the
// test), recording every message it accepts and every TLS session it sees.
// Faults are scripted per recipient or per message: 4xx/5xx at RCPT or at
// the end of DATA, a connection dropped in the middle of DATA, a greeting
// held back (a slow domain).
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';

export interface ReceivedMessage {
  from: string;
  to: string[];
  raw: Buffer;
  secure: boolean;
  servername?: string;
  /** RFC 3461 parameters as received (with `dsn: true`): RET/ENVID of MAIL, NOTIFY/ORCPT per RCPT. */
  dsn?: { ret?: string; envid?: string; rcpt: { address: string; notify?: string[]; orcpt?: string }[] };
}

export interface Reply {
  code: number;
  message: string;
}

export interface RemoteMxOptions {
  /** Loopback address to listen on (default 127.0.0.1); several MX hosts share one port on different addresses. */
  host?: string;
  /** Default: a random free port. */
  port?: number;
  /** PEM pair for STARTTLS; absent: STARTTLS is not offered. */
  tls?: { key: string; cert: string };
  /** Answer for RCPT TO per lowercased address (default 250). */
  rcpt?: (address: string) => Reply | null;
  /** Answer at the end of DATA for the n-th message (0-based; default 250). */
  data?: (n: number, msg: ReceivedMessage) => Reply | null;
  /** Drop the connection in the middle of the n-th message's data (0-based count of DATA commands). */
  dropMidData?: (n: number) => boolean;
  /** Drop the connection, unanswered, at the n-th MAIL FROM (0-based, counted over all sessions). */
  dropAtMailFrom?: (n: number) => boolean;
  /** Hold the 220 greeting back until this settles (a slow or tarpitting server). */
  greetingGate?: () => Promise<void>;
  /** Close a connection idle for this long (smtp-server's socketTimeout). */
  idleTimeoutMs?: number;
  /** Advertise DSN (smtp-server parses the RFC 3461 parameters); default: not offered. */
  dsn?: boolean;
  /** Called after a message was answered 250 (the answer is on the wire). */
  onAccepted?: (msg: ReceivedMessage) => void;
}

export interface RemoteMx {
  host: string;
  port: number;
  /** Messages answered 250. */
  readonly accepted: ReceivedMessage[];
  /** Every DATA seen, whatever the answer. */
  readonly seen: ReceivedMessage[];
  /** Sessions opened (count) and how many were upgraded to TLS. */
  readonly stats: { connections: number; secure: number; mailFrom: number; open: number; maxOpen: number };
  close(): Promise<void>;
}

interface LiveConnection {
  session: { id: string };
  _socket: { destroy(): void };
}

function smtpError(reply: Reply): Error & { responseCode: number } {
  return Object.assign(new Error(reply.message), { responseCode: reply.code });
}

export async function startRemoteMx(opts: RemoteMxOptions = {}): Promise<RemoteMx> {
  const accepted: ReceivedMessage[] = [];
  const seen: ReceivedMessage[] = [];
  const stats = { connections: 0, secure: 0, mailFrom: 0, open: 0, maxOpen: 0 };
  let dataCount = 0;
  const server = new SMTPServer({
    secure: false,
    ...(opts.tls ? { key: opts.tls.key, cert: opts.tls.cert } : { disabledCommands: ['STARTTLS'] }),
    authOptional: true,
    logger: false,
    ...(opts.idleTimeoutMs ? { socketTimeout: opts.idleTimeoutMs } : {}),
    banner: 'remote test MX',
    hideDSN: !opts.dsn,
    onConnect(_session, cb) {
      stats.connections++;
      stats.open++;
      stats.maxOpen = Math.max(stats.maxOpen, stats.open);
      if (opts.greetingGate) void opts.greetingGate().then(() => cb());
      else cb();
    },
    onClose() {
      stats.open--;
    },
    onSecure(_socket, _session, cb) {
      stats.secure++;
      cb();
    },
    onMailFrom(_address, session, cb) {
      const n = stats.mailFrom++;
      if (opts.dropAtMailFrom?.(n)) {
        // The remote is gone before it answers: no reply, nothing of the message read.
        const conns = (server as unknown as { connections: Set<LiveConnection> }).connections;
        [...conns].find((c) => c.session.id === session.id)?._socket.destroy();
        return;
      }
      cb();
    },
    onRcptTo(address, _session, cb) {
      const reply = opts.rcpt?.(address.address.toLowerCase());
      if (reply && reply.code >= 400) return cb(smtpError(reply));
      cb();
    },
    onData(stream, session: SMTPServerSession, cb) {
      const n = dataCount++;
      const chunks: Buffer[] = [];
      let dropped = false;
      stream.on('data', (c: Buffer) => {
        if (chunks.length === 0 && opts.dropMidData?.(n)) {
          dropped = true;
          // The connection dies while the message is still coming in.
          const conns = (server as unknown as { connections: Set<LiveConnection> }).connections;
          [...conns].find((c2) => c2.session.id === session.id)?._socket.destroy();
        }
        chunks.push(c);
      });
      stream.on('end', () => {
        if (dropped) return;
        const msg: ReceivedMessage = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks),
          secure: session.secure,
          servername: session.servername || undefined,
          ...(opts.dsn
            ? {
                dsn: {
                  ret: session.envelope.dsn?.ret ?? undefined,
                  envid: session.envelope.dsn?.envid ?? undefined,
                  rcpt: session.envelope.rcptTo.map((r) => ({
                    address: r.address,
                    notify: r.dsn?.notify,
                    orcpt: r.dsn?.orcpt,
                  })),
                },
              }
            : {}),
        };
        seen.push(msg);
        const reply = opts.data?.(n, msg);
        if (reply && reply.code >= 400) return cb(smtpError(reply));
        accepted.push(msg);
        cb();
        opts.onAccepted?.(msg);
      });
    },
  });
  server.on('error', () => {});
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    (server as unknown as { server: { once(e: string, f: (err: Error) => void): void } }).server.once(
      'error',
      reject,
    );
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const port = ((server as unknown as { server: { address(): AddressInfo } }).server.address() as AddressInfo)
    .port;
  return {
    host,
    port,
    accepted,
    seen,
    stats,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
