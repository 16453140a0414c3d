// The submission listeners: 465 (`submissions`, implicit TLS, RFC 8314) and
// 587 (`submission`, STARTTLS, opt-in). Every transaction needs AUTH: PLAIN
// or LOGIN with the account's mail password once the connection is under
// TLS, or SASL EXTERNAL for a peer Sealpost server whose client certificate
// chains to `[smtp] peer_ca_file`. MAIL FROM and RCPT TO get early answers
// (sender ownership, send rate, recipient resolution); at the end of DATA the
// message goes through submitAs, the same hand-off the webmail uses.
import { readFileSync } from 'node:fs';
import type { TLSSocket } from 'node:tls';
import type { Redis } from 'ioredis';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import type { Logger } from '../../core/log.ts';
import type { MailPasswordDeps } from '../../mail/reader-keys/mail-password.ts';
import { replies, SmtpReply, toSmtpReply } from '../../mail/smtp-error.ts';
import { transmissionType } from '../../mail/trace.ts';
import { mailDsnParams, rcptDsnParams } from '../mx/dsn-params.ts';
import {
  type ErrorLimitMetrics,
  type ErrorLimits,
  NO_ERROR_LIMITS,
  SessionErrors,
} from '../mx/error-limit.ts';
import { closeSmtp, listenSmtp, replaceSmtpCertificate } from '../mx/listen.ts';
import { checkedChunks } from '../mx/message-checks.ts';
import { SessionClock } from '../mx/session-limits.ts';
import { type AuthBackoff, authReplies, PasswordAuth } from './password-auth.ts';
import { type PeerCertificate, peerCertificateOf, peerSubmitter } from './peer-certificate.ts';
import { classifyRecipient } from './recipients.ts';
import { ownsAddress, type Submitter } from './sender.ts';
import { collect, dsnRequests, replyFor } from './session-data.ts';
import { enableExternalAuth, requireTlsForAuth } from './smtp-auth-hooks.ts';
import { type SubmitDeps, submitAs } from './submit.ts';
import { SubmitError } from './submit-error.ts';

export interface SubmissionOptions {
  /** `submissions`: implicit TLS (465); `submission`: STARTTLS (587). */
  mode: 'submission' | 'submissions';
  host: string;
  port: number;
  /** Banner and EHLO name: `[smtp] hostname`. */
  hostname: string;
  tls: { certFile: string; keyFile: string };
  /** CA of peer Sealpost servers' client certificates; absent: no SASL EXTERNAL. */
  peerCaFile?: string;
  maxConnectionsPerIp: number;
  /** Connections at once across all addresses (`[smtp] max_connections`); 0 or absent = no cap. */
  maxConnections?: number;
  /** Total time one session may last (`[smtp] max_session_secs`); 0 or absent = unlimited. */
  maxSessionMs?: number;
  socketTimeoutMs: number;
  /** `[smtp]` error limits (src/edge/mx/error-limit.ts); absent: none. */
  errorLimits?: ErrorLimits;
  metrics?: ErrorLimitMetrics;
  submit: SubmitDeps;
  auth: {
    password: MailPasswordDeps;
    redis: Redis;
    /** `[redis] prefix` for the failure windows. */
    prefix: string;
    backoff?: AuthBackoff;
    sleep?: (ms: number) => Promise<void>;
  };
  logger: Logger;
}

export interface SubmissionServer {
  port: number;
  /** Whether client certificates are asked for (`[smtp] peer_ca_file` was set at start). */
  peers: boolean;
  /**
   * A reload's certificate, key and (with `peers`) peer CA bundle
   * (src/run/serve/reload.ts): new handshakes use them, open sessions keep
   * theirs; throws, changing nothing, when they do not load.
   */
  setCertificate(pem: { cert: Buffer; key: Buffer; ca?: Buffer }): void;
  /** A reload's `[smtp] max_connections_per_ip`, for new connections. */
  setLimits(limits: { maxConnectionsPerIp: number }): void;
  /** Stops accepting, lets sessions finish for `drainMs`, then closes the rest. */
  close(drainMs?: number): Promise<void>;
}

export class SubmissionConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SubmissionConfigError';
  }
}

interface SessionState {
  peer?: PeerCertificate | null;
}

function readPem(file: string, key: string, purpose: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new SubmissionConfigError(
      `[smtp] ${key} ${file} is not readable (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): ${purpose}`,
    );
  }
}

function submitterOf(session: SMTPServerSession): Submitter {
  return session.user as Submitter;
}

export async function startSubmission(opts: SubmissionOptions): Promise<SubmissionServer> {
  const log = opts.logger.child({ component: 'submission', mode: opts.mode });
  const deps = opts.submit;
  const tls = {
    key: readPem(opts.tls.keyFile, 'tls_key_file', 'submission needs a TLS key'),
    cert: readPem(opts.tls.certFile, 'tls_cert_file', 'submission needs a TLS certificate'),
  };
  const peerCa = opts.peerCaFile
    ? readPem(opts.peerCaFile, 'peer_ca_file', 'the CA of peer servers’ client certificates')
    : undefined;
  const passwords = new PasswordAuth({
    password: opts.auth.password,
    policy: deps.policy,
    chain: deps.chain,
    redis: opts.auth.redis,
    prefix: opts.auth.prefix,
    backoff: opts.auth.backoff,
    sleep: opts.auth.sleep,
  });
  const perIp = new Map<string, number>();
  const state = new Map<string, SessionState>();
  let closing = false;
  // Sessions counted against their address at connect (a refused one gives back nothing at close).
  const counted = new Set<string>();
  const clock = new SessionClock({
    maxSessionMs: opts.maxSessionMs ?? 0,
    logger: log,
    hostname: opts.hostname,
  });

  const server = new SMTPServer({
    name: opts.hostname,
    banner: 'Sealpost ESMTP submission',
    size: deps.maxMessageBytes,
    secure: opts.mode === 'submissions',
    ...tls,
    minVersion: 'TLSv1.2',
    // Ask for a client certificate only where peers are configured; an untrusted
    // one does not end the handshake, it just cannot be used for EXTERNAL.
    ...(peerCa ? { ca: peerCa, requestCert: true, rejectUnauthorized: false } : {}),
    authMethods: peerCa ? ['PLAIN', 'LOGIN', 'EXTERNAL'] : ['PLAIN', 'LOGIN'],
    authOptional: false,
    authRequiredMessage: '5.7.0 Authentication required',
    // RFC 3461 NOTIFY/RET/ENVID/ORCPT are handed to the spooler, which writes the DSNs.
    hideDSN: false,
    disableReverseLookup: true,
    socketTimeout: opts.socketTimeoutMs,
    closeTimeout: 5000,
    ...(opts.maxConnections ? { maxClients: opts.maxConnections } : {}),
    logger: false,

    onConnect(session, callback) {
      if (closing) return callback(replies.shuttingDown());
      const ip = session.remoteAddress;
      const count = (perIp.get(ip) ?? 0) + 1;
      if (count > opts.maxConnectionsPerIp) return callback(replies.tooManyConnections());
      perIp.set(ip, count);
      counted.add(session.id);
      clock.start(session);
      callback();
    },

    onSecure(socket, session, callback) {
      if (peerCa) state.set(session.id, { peer: peerCertificateOf(socket as TLSSocket) });
      callback();
    },

    onClose(session) {
      clock.stop(session);
      if (counted.delete(session.id)) {
        const ip = session.remoteAddress;
        const count = (perIp.get(ip) ?? 1) - 1;
        if (count <= 0) perIp.delete(ip);
        else perIp.set(ip, count);
      }
      state.delete(session.id);
      errors.closed(session);
    },

    onAuth(auth, session, callback) {
      const login = auth.username ?? '';
      // PLAIN with an authorization identity other than the login would be acting for someone else.
      if (auth.method === 'PLAIN' && auth.authzid && auth.authcid && auth.authzid !== auth.authcid) {
        return callback(authReplies.invalid());
      }
      if (auth.method !== 'PLAIN' && auth.method !== 'LOGIN') return callback(authReplies.invalid());
      passwords
        .verify(session.remoteAddress, login, auth.password ?? '')
        .then((wallet) => {
          log.info({ ip: session.remoteAddress, wallet, method: auth.method }, 'authenticated');
          const user: Submitter = { kind: 'account', wallet };
          callback(null, { user });
        })
        .catch((err: unknown) => {
          const reply = toSmtpReply(err);
          log.info({ ip: session.remoteAddress, code: reply.responseCode }, 'authentication refused');
          callback(reply);
        });
    },

    onMailFrom(address, session, callback) {
      const dsn = mailDsnParams(address.args);
      if (dsn instanceof SmtpReply) return callback(dsn);
      const submitter = submitterOf(session);
      mailFrom(submitter, address.address)
        .then(() => callback())
        .catch((err: unknown) => callback(replyFor(err)));
    },

    onRcptTo(address, session, callback) {
      const dsn = rcptDsnParams(address.args);
      if (dsn instanceof SmtpReply) return callback(dsn);
      if (session.envelope.rcptTo.length >= deps.maxRecipients) {
        return callback(replies.tooManyRecipients(deps.maxRecipients));
      }
      const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
      classifyRecipient(deps, from, address.address)
        .then(() => callback())
        .catch((err: unknown) => {
          const reply = replyFor(err);
          const reason = reply.reason ?? reply.message;
          errors.refused(session, {
            command: 'rcpt',
            address: address.address,
            code: reply.responseCode,
            reason,
          });
          callback(reply);
        });
    },

    onData(stream, session, callback) {
      const submitter = submitterOf(session);
      const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
      const recipients = session.envelope.rcptTo.map((r) => r.address);
      collect(checkedChunks(stream.iterator({ destroyOnReturn: false })), deps.maxMessageBytes)
        .then((raw) => {
          if (stream.sizeExceeded) throw replies.tooBig(deps.maxMessageBytes);
          return submitAs(deps, submitter, {
            raw,
            envelopeFrom: from,
            recipients,
            remoteIp: session.remoteAddress,
            protocol: transmissionType({
              ehlo: session.openingCommand === 'EHLO',
              tls: session.secure,
              auth: Boolean(session.user),
            }),
            dsn: dsnRequests(session),
          });
        })
        .then((result) => callback(null, `2.0.0 Ok: queued as ${result.msgid}`))
        .catch((err: unknown) => {
          // Drain whatever the client still sends so the reply lands after DATA ends.
          stream.resume();
          const reply = replyFor(err);
          log.info({ code: reply.responseCode, reason: reply.reason ?? reply.message }, 'message refused');
          if (stream.readableEnded) callback(reply);
          else stream.once('end', () => callback(reply));
        });
    },
  });
  clock.attach(server);

  async function mailFrom(submitter: Submitter, address: string): Promise<void> {
    if (address === '' && submitter.kind !== 'peer') {
      throw new SubmitError('sender_not_owned', 'The null sender <> is not available to accounts');
    }
    if (address !== '' && !(await ownsAddress(submitter, address, deps.policy, deps.chain))) {
      throw new SubmitError('sender_not_owned', `Sender address <${address}> is not yours to use`);
    }
    if (submitter.kind === 'account') {
      const room = await deps.sendRate.peek(submitter.wallet);
      if (!room.ok) {
        throw new SubmitError(
          'rate_limited',
          `Send rate limit of ${room.limit} messages per ${room.window} reached, try again in ${room.retryAfterSecs} seconds`,
        );
      }
    }
  }

  if (peerCa) {
    enableExternalAuth(server, async (session, authzid) => {
      const decided = peerSubmitter(state.get(session.id)?.peer ?? null, authzid);
      if (typeof decided === 'string') {
        log.info({ ip: session.remoteAddress, why: decided }, 'EXTERNAL refused');
        throw new SmtpReply(535, '5.7.8', 'Authentication credentials invalid', decided);
      }
      log.info({ ip: session.remoteAddress, peer: decided.name }, 'peer authenticated');
      return decided;
    });
  }
  requireTlsForAuth(server);

  const errors = new SessionErrors(server, {
    limits: opts.errorLimits ?? NO_ERROR_LIMITS,
    hostname: opts.hostname,
    listener: opts.mode,
    logger: opts.logger,
    metrics: opts.metrics,
  });
  server.on('error', (err) => log.warn({ err: err.message }, 'smtp error'));
  const port = await listenSmtp(server, opts.host, opts.port);
  log.info({ host: opts.host, port, peers: Boolean(peerCa) }, 'submission listening');

  return {
    port,
    peers: Boolean(peerCa),
    setCertificate(pem) {
      replaceSmtpCertificate(server, peerCa && pem.ca ? pem : { cert: pem.cert, key: pem.key });
    },
    // onConnect reads it from opts at each connection.
    setLimits(limits) {
      opts.maxConnectionsPerIp = limits.maxConnectionsPerIp;
    },
    async close(drainMs = 5000) {
      closing = true;
      await closeSmtp(server, drainMs);
    },
  };
}
