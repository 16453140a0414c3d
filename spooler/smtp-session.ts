// One SMTP client session to one address of a remote host, on nodemailer's
// SMTP connection (the protocol handling is the library's). TLS is set up
// as the policy asks and always without the library's own certificate
// check: the policy's check (DANE, WebPKI, or none) runs on the finished
// TLS session, before any envelope command, so every failure can be named
// with its RFC 8460 result type. The caller learns per recipient what the
// remote answered; `onDelivered` runs right after the remote's 250 to the
// message data and before the session is closed, so the hand-off can be
// recorded first (see docs/spooler.md, "exactly once").
import { Readable } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import { trustedCa } from '../src/core/tls/extra-ca.ts';
import { answer, failedTransaction, type RcptAnswer, type SmtpError, splitRejected } from './smtp-replies.ts';

export type { RcptAnswer } from './smtp-replies.ts';

/** `required`: STARTTLS must succeed; `opportunistic`: use it when offered; `none`: never. */
export type TlsMode = 'implicit' | 'required' | 'opportunistic' | 'none';

export interface TlsInfo {
  secure: boolean;
  /** WebPKI verdict of the chain for the host name (only meaningful when secure). */
  authorized: boolean;
  authorizationError?: string;
  /** DER certificates as presented, server certificate first. */
  chain: Buffer[];
  protocol?: string;
  localAddress?: string;
  remoteAddress?: string;
}

export interface PolicyFailure {
  /** RFC 8460 result type. */
  resultType: string;
  reason: string;
}

export type SessionResult =
  /** No transaction was started; another host may be tried. */
  | {
      kind: 'no-session';
      reason: string;
      /** The STARTTLS handshake itself failed (an opportunistic retry in clear text may work). */
      handshakeFailed?: boolean;
      policyFailure?: PolicyFailure;
      tls?: TlsInfo;
    }
  | {
      kind: 'transaction';
      delivered: RcptAnswer[];
      failed: RcptAnswer[];
      deferred: RcptAnswer[];
      tls: TlsInfo;
      /** The server advertised DSN (our NOTIFY/RET/ENVID/ORCPT went with the envelope). */
      dsnOffered?: boolean;
    };

export interface SessionRequest {
  address: string;
  port: number;
  /** Host name: SNI and the WebPKI reference identifier. */
  host: string;
  ehloName: string;
  tls: TlsMode;
  /** Extra CA certificates (PEM) trusted besides the system roots. */
  extraCa?: readonly string[];
  connectTimeoutMs: number;
  commandTimeoutMs: number;
  auth?: { user: string; pass: string };
  /** Checks the TLS session (or its absence); a failure ends the session before MAIL FROM. */
  verify?: (tls: TlsInfo) => PolicyFailure | null;
  from: string;
  to: readonly string[];
  message: Buffer;
  /** RFC 3461 parameters, sent when the server offers DSN. */
  dsn?: EnvelopeDsn;
  /** `dsnOffered`: the server advertised DSN, so NOTIFY went with the recipients. */
  onDelivered(delivered: RcptAnswer[], info: { dsnOffered: boolean }): Promise<void>;
}

export interface EnvelopeDsn {
  notify?: 'NEVER' | ('SUCCESS' | 'FAILURE' | 'DELAY')[];
  envid?: string;
  ret?: 'FULL' | 'HDRS';
  orcpt?: string;
}

function tlsInfo(conn: SMTPConnection): TlsInfo {
  const socket = conn._socket as (TLSSocket & { encrypted?: boolean }) | false | null;
  if (!socket || !conn.secure || !socket.encrypted) {
    return {
      secure: false,
      authorized: false,
      chain: [],
      localAddress: socket ? socket.localAddress : undefined,
      remoteAddress: socket ? socket.remoteAddress : undefined,
    };
  }
  const chain: Buffer[] = [];
  const seen = new Set<string>();
  let cert = socket.getPeerCertificate(true) as {
    raw?: Buffer;
    fingerprint256?: string;
    issuerCertificate?: unknown;
  };
  while (cert?.raw && !seen.has(cert.fingerprint256 ?? '')) {
    seen.add(cert.fingerprint256 ?? '');
    chain.push(cert.raw);
    cert = cert.issuerCertificate as typeof cert;
  }
  return {
    secure: true,
    authorized: socket.authorized,
    authorizationError: socket.authorizationError ? String(socket.authorizationError) : undefined,
    chain,
    protocol: socket.getProtocol() ?? undefined,
    localAddress: socket.localAddress,
    remoteAddress: socket.remoteAddress,
  };
}

/**
 * A reused session broke before a byte of the message went out (the remote
 * closed an idle connection): nothing was delivered, so the message can go
 * over a new session at once.
 */
export class SessionLostError extends Error {
  constructor(reason: string) {
    super(`cached session lost before the message was sent: ${reason}`);
    this.name = 'SessionLostError';
  }
}

type NoSession = Extract<SessionResult, { kind: 'no-session' }>;
type Transaction = Extract<SessionResult, { kind: 'transaction' }>;

/**
 * An open, verified SMTP session that can carry several transactions (the
 * connection cache hands it from one message to the next).
 */
export class SmtpSession {
  private dead = false;
  /**
   * The last transaction ended with the data accepted (or an RSET went
   * through): the session is at a transaction boundary (RFC 5321 §4.1.1.4)
   * and the next MAIL FROM needs no RSET first.
   */
  private boundary = false;
  /** Transactions carried so far. */
  uses = 0;
  readonly openedAt = Date.now();

  private constructor(
    private readonly conn: SMTPConnection,
    readonly tls: TlsInfo,
    /** The MX host name, as failures name it (the delivery log's relay, the DSN's Remote-MTA). */
    readonly relay: string,
  ) {
    conn.on('end', () => {
      this.dead = true;
    });
    conn.on('error', () => {
      this.dead = true;
    });
  }

  /** Connects, sets TLS up as asked, and runs the policy's check on the result. */
  static async open(
    req: Omit<SessionRequest, 'from' | 'to' | 'message' | 'onDelivered'>,
  ): Promise<SmtpSession | NoSession> {
    const conn = new SMTPConnection({
      host: req.address,
      port: req.port,
      secure: req.tls === 'implicit',
      servername: req.host,
      name: req.ehloName,
      requireTLS: req.tls === 'required',
      opportunisticTLS: req.tls === 'opportunistic',
      ignoreTLS: req.tls === 'none',
      connectionTimeout: req.connectTimeoutMs,
      greetingTimeout: req.connectTimeoutMs,
      socketTimeout: req.commandTimeoutMs,
      allowInternalNetworkInterfaces: true,
      logger: false,
      tls: {
        // The policy's own check runs on the finished session (verify below).
        rejectUnauthorized: false,
        servername: req.host,
        minVersion: 'TLSv1.2',
        ...(trustedCa(req.extraCa) ? { ca: trustedCa(req.extraCa) } : {}),
      },
    });
    let lastError: SmtpError | undefined;
    conn.on('error', (err: SmtpError) => {
      lastError = err;
    });
    try {
      await new Promise<void>((resolve, reject) => {
        conn.once('connect', () => resolve());
        conn.once('error', reject);
        conn.once('end', () => reject(lastError ?? new Error('connection closed during setup')));
        conn.connect();
      });
    } catch (err) {
      const e = err as SmtpError;
      conn.close();
      const handshakeFailed = e.code === 'ETLS' && !e.response;
      const notOffered = e.code === 'ETLS' && Boolean(e.response);
      return {
        kind: 'no-session',
        reason: e.response ? `${e.message}: ${e.response}` : e.message,
        handshakeFailed,
        policyFailure: notOffered
          ? { resultType: 'starttls-not-supported', reason: `STARTTLS refused: ${e.response}` }
          : handshakeFailed
            ? { resultType: 'validation-failure', reason: `TLS handshake failed: ${e.message}` }
            : undefined,
      };
    }
    const tls = tlsInfo(conn);
    const failure = req.verify?.(tls) ?? null;
    if (failure) {
      conn.quit();
      return { kind: 'no-session', reason: failure.reason, policyFailure: failure, tls };
    }
    const session = new SmtpSession(conn, tls, req.host);
    if (req.auth) {
      const auth = req.auth;
      try {
        await new Promise<void>((resolve, reject) =>
          conn.login({ user: auth.user, pass: auth.pass }, (err) => (err ? reject(err) : resolve())),
        );
      } catch (err) {
        const e = err as SmtpError;
        session.close();
        return { kind: 'no-session', reason: `authentication failed: ${e.response ?? e.message}`, tls };
      }
    }
    return session;
  }

  get alive(): boolean {
    return !this.dead;
  }

  /** Whether the next transaction can start without an RSET. */
  get atBoundary(): boolean {
    return this.boundary && !this.dead;
  }

  /** RSET before reusing an idle session: false means it is gone (open a new one). */
  async reset(): Promise<boolean> {
    if (this.dead) return false;
    const ok = await new Promise<boolean>((resolve) => this.conn.reset((err) => resolve(!err)));
    this.boundary = ok;
    return ok;
  }

  /**
   * One transaction. `onDelivered` runs right after the 250 to the data; if
   * it throws, the error propagates and nothing is reported as deferred.
   */
  async send(
    req: Pick<SessionRequest, 'from' | 'to' | 'message' | 'onDelivered' | 'dsn'>,
    opts: { reused?: boolean } = {},
  ): Promise<Transaction> {
    this.uses++;
    this.boundary = false;
    let info: SMTPConnection.SentMessageInfo;
    // The library adds the parameters only when the server advertised DSN (RFC 3461 §5.2).
    const dsnOffered = this.offersDsn();
    const dsn = req.dsn && {
      ...(req.dsn.notify ? { notify: req.dsn.notify === 'NEVER' ? 'NEVER' : req.dsn.notify.join(',') } : {}),
      ...(req.dsn.envid ? { envid: req.dsn.envid } : {}),
      ...(req.dsn.ret ? { ret: req.dsn.ret } : {}),
      ...(req.dsn.orcpt ? { orcpt: req.dsn.orcpt } : {}),
    };
    const envelope = {
      from: req.from,
      to: [...req.to],
      ...(dsn && Object.keys(dsn).length > 0 ? { dsn } : {}),
    };
    // The library pipes the body only after the remote's 354, so an unread
    // stream proves that no byte of the message went out.
    const body = new Readable({
      read() {
        this.push(req.message);
        this.push(null);
      },
    });
    try {
      info = await new Promise<SMTPConnection.SentMessageInfo>((resolve, reject) =>
        this.conn.send(envelope as SMTPConnection.Envelope, body, (err, result) =>
          err ? reject(err) : resolve(result as SMTPConnection.SentMessageInfo),
        ),
      );
    } catch (err) {
      const e = err as SmtpError;
      if (opts.reused && !e.responseCode && !body.readableDidRead) {
        this.close();
        throw new SessionLostError(e.message);
      }
      const answers = failedTransaction(this.conn, e, req.to);
      // A refused transaction leaves a usable session; a broken one does not.
      if (!e.responseCode) this.close();
      return { kind: 'transaction', delivered: [], ...answers, tls: this.tls, dsnOffered };
    }
    const delivered = info.accepted.map((rcpt) => ({
      ...answer(rcpt, 250, info.response, '250 OK'),
      remoteMta: this.relay,
    }));
    this.boundary = true;
    await req.onDelivered(delivered, { dsnOffered });
    return {
      kind: 'transaction',
      ...splitRejected((info.rejectedErrors ?? []) as SmtpError[]),
      delivered,
      tls: this.tls,
      dsnOffered,
    };
  }

  /** Whether the server's EHLO answer listed DSN (the library keeps the list it parsed). */
  private offersDsn(): boolean {
    const ext = (this.conn as unknown as { _supportedExtensions?: string[] })._supportedExtensions;
    return Array.isArray(ext) && ext.includes('DSN');
  }

  /** QUIT, then drop the socket if the server does not close it soon. */
  close(): void {
    if (!this.dead) this.conn.quit();
    this.dead = true;
    const timer = setTimeout(() => this.conn.close(), 2000);
    timer.unref();
    this.conn.once('end', () => clearTimeout(timer));
  }
}
