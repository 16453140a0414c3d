// The MX listener: smtp-server configured for inbound mail from the world.
// It accepts RCPT only for local domains and recipients that resolve on
// chain, applies the postage gate, and answers 250 only after acceptMessage
// has the message on disk and its jobs in Redis.
import { readFileSync } from 'node:fs';
import { SMTPServer, type SMTPServerAddress, type SMTPServerSession } from 'smtp-server';
import {
  type AcceptDeps,
  acceptMessage,
  ClientGoneError,
  StorageFailedReply,
} from '../../../delivery/intake/accept.ts';
import { type CostGuard, type Reservation, senderLabel } from '../../core/limits/cost-guard.ts';
import { ipBucketKey } from '../../core/limits/redis-keys.ts';
import type { WindowLimiter } from '../../core/limits/window.ts';
import type { Logger } from '../../core/log.ts';
import { newMessageId, withContext } from '../../core/log.ts';
import type { SmtpMetrics, SmtpPhase } from '../../core/metrics/types.ts';
import type { ChainView } from '../../mail/chain-view.ts';
import {
  postageGate,
  type RecipientPolicy,
  type ResolvedRecipient,
  resolveRecipient,
} from '../../mail/recipients.ts';
import { replies, SmtpReply, toSmtpReply } from '../../mail/smtp-error.ts';
import { type DnsblChecker, withListings } from '../../mail/spam/dnsbl.ts';
import type { SpamFact, SpamFilter } from '../../mail/spam/filter.ts';
import { noAuthResults } from '../../mail/trace.ts';
import { refuseDsnParams } from './dsn-params.ts';
import { type ErrorLimits, NO_ERROR_LIMITS, SessionErrors } from './error-limit.ts';
import { closeSmtp, listenSmtp, replaceSmtpCertificate } from './listen.ts';
import { checkedChunks } from './message-checks.ts';
import type { ReverseNameLookup } from './reverse-name.ts';
import type { SenderAuth, SenderEvaluation, SpfOutcome } from './sender-auth.ts';
import { SessionClock } from './session-limits.ts';
import { sessionTrace } from './session-trace.ts';

export interface MxOptions {
  host: string;
  port: number;
  hostname: string;
  policy: RecipientPolicy;
  maxMessageBytes: number;
  maxRecipients: number;
  maxConnectionsPerIp: number;
  /** Connections at once across all addresses (`[smtp] max_connections`); 0 or absent = no cap. */
  maxConnections?: number;
  /** Total time one session may last (`[smtp] max_session_secs`); 0 or absent = unlimited. */
  maxSessionMs?: number;
  socketTimeoutMs: number;
  tls?: { certFile: string; keyFile: string };
  chain: ChainView;
  accept: AcceptDeps;
  logger: Logger;
  /** Per-IP connection rate (shared through Redis by every MX); absent means none. */
  connectionRate?: { limiter: WindowLimiter; prefix: string; perMinute: number };
  /** SPF / dmarc-lite checks; absent means none. */
  senderAuth?: SenderAuth;
  /** The client's forward-confirmed reverse name for the Received field, started at connect; absent: "unknown". */
  reverseName?: ReverseNameLookup;
  /** Receives every sender evaluation (stored with its source IP, pruned by retention). */
  onEvaluation?: (e: SenderEvaluation) => void;
  /** How to buy stamps, shown in the gated-first-contact reply. */
  stampHelpUrl?: string;
  /** Chain-publication windows and the authority balance floor (docs/cost-guard.md); absent means none. */
  costGuard?: CostGuard;
  /** Replies by phase and code, and the accept latency, for /metrics. */
  metrics?: SmtpMetrics;
  /** `[smtp] soft_error_limit` / `hard_error_limit` / `error_sleep_ms` (./error-limit.ts); absent: none. */
  errorLimits?: ErrorLimits;
  /** `[spam]`: rspamd's verdict on the received bytes before the 250 (src/mail/spam/filter.ts); absent: none. */
  spam?: SpamFilter;
  /** `[spam] dnsbl`/`dnswl`: verdicts at the greeting and at RCPT (src/mail/spam/dnsbl.ts); absent: none. */
  dnsbl?: DnsblChecker;
  now?: () => number;
}

export interface MxServer {
  port: number;
  /**
   * A reload's STARTTLS certificate (src/run/serve/reload.ts): new handshakes use
   * it, open sessions keep theirs; throws, changing nothing, when it does not
   * load. A listener without STARTTLS ignores it.
   */
  setCertificate(pem: { cert: Buffer; key: Buffer }): void;
  /** A reload's `[smtp] max_connections_per_ip` and `connections_per_ip_per_minute`, for new connections. */
  setLimits(limits: { maxConnectionsPerIp: number; connectionsPerIpPerMinute: number }): void;
  /** Stops accepting, lets sessions finish for `drainMs`, then closes the rest with 421. */
  close(drainMs?: number): Promise<void>;
}

interface SessionState {
  msgid: string;
  recipients: ResolvedRecipient[];
  spf?: SpfOutcome;
  /** The Authentication-Results value computed at the end of DATA. */
  authResults?: string;
  /** Cost-guard units held for this transaction's recipients: kept by the 250, refunded otherwise. */
  reservations?: Reservation[];
  /** rspamd's (or the DNSBL score's) verdict on a flagged message (Junk), carried by its delivery jobs. */
  spam?: SpamFact;
}

export async function startMx(opts: MxOptions): Promise<MxServer> {
  const now = opts.now ?? Date.now;
  const perIp = new Map<string, number>();
  const counted = new WeakSet<SMTPServerSession>();
  const state = new WeakMap<SMTPServerSession, SessionState>();
  const reverseNames = new WeakMap<SMTPServerSession, Promise<string | undefined>>();
  let closing = false;
  const log = opts.logger.child({ component: 'mx' });

  const sessionState = (session: SMTPServerSession): SessionState => {
    let s = state.get(session);
    if (!s) {
      s = { msgid: newMessageId(), recipients: [] };
      state.set(session, s);
    }
    return s;
  };

  const tls = opts.tls
    ? { key: readFileSync(opts.tls.keyFile), cert: readFileSync(opts.tls.certFile) }
    : undefined;

  const clock = new SessionClock({
    maxSessionMs: opts.maxSessionMs ?? 0,
    logger: log,
    hostname: opts.hostname,
  });
  const server = new SMTPServer({
    name: opts.hostname,
    banner: 'Sealpost ESMTP',
    size: opts.maxMessageBytes,
    rejectOversized: true,
    authOptional: true,
    disabledCommands: tls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    hideSTARTTLS: !tls,
    ...(tls ?? {}),
    disableReverseLookup: true,
    socketTimeout: opts.socketTimeoutMs,
    closeTimeout: 5000,
    ...(opts.maxConnections ? { maxClients: opts.maxConnections } : {}),
    logger: false,

    onConnect(session, done) {
      const callback = (reply?: SmtpReply) => {
        opts.metrics?.reply('connect', reply ? reply.responseCode : 220);
        // The Received field's reverse name: looked up while the client talks.
        if (!reply && opts.reverseName) reverseNames.set(session, opts.reverseName(session.remoteAddress));
        done(reply);
      };
      if (closing) return callback(replies.shuttingDown());
      const ip = session.remoteAddress;
      const count = (perIp.get(ip) ?? 0) + 1;
      if (count > opts.maxConnectionsPerIp) return callback(replies.tooManyConnections());
      perIp.set(ip, count);
      counted.add(session);
      clock.start(session);
      // DNSBL/DNSWL look-ups run beside the rate check; both answer before the greeting.
      const listed = opts.dnsbl ? opts.dnsbl.connect(session) : Promise.resolve(undefined);
      const rate = opts.connectionRate;
      const rateOk =
        !rate || rate.perMinute <= 0
          ? Promise.resolve(true)
          : rate.limiter
              .take([
                { key: ipBucketKey(rate.prefix, ip, 'mx-connect'), limit: rate.perMinute, windowMs: 60_000 },
              ])
              .then(
                (r) => r.ok,
                // Redis trouble must not close the door: acceptance answers 4xx on its own if Redis is gone.
                () => true,
              );
      void Promise.all([rateOk, listed]).then(([ok, reply]) =>
        callback(ok ? reply : replies.tooManyConnections()),
      );
    },

    onClose(session) {
      clock.stop(session);
      // Only sessions that were counted at connect give their place back.
      if (counted.delete(session)) {
        const ip = session.remoteAddress;
        const count = (perIp.get(ip) ?? 1) - 1;
        if (count <= 0) perIp.delete(ip);
        else perIp.set(ip, count);
      }
      releaseReservations(state.get(session));
      state.delete(session);
      errors.closed(session);
    },

    onMailFrom(address, session, done) {
      const callback = (reply?: SmtpReply) => done(tally('mail', reply));
      // DSN is not offered here (docs/inbound.md): RET/ENVID are refused, not ignored.
      const dsnRefused = refuseDsnParams(address.args, 'MAIL');
      if (dsnRefused) return callback(dsnRefused);
      // A new transaction on the same connection gets a fresh message id.
      releaseReservations(state.get(session));
      const s: SessionState = { msgid: newMessageId(), recipients: [] };
      state.set(session, s);
      opts.dnsbl?.mailFrom(session, address.address);
      const balance = opts.costGuard?.checkBalance();
      if (balance && !balance.ok) {
        const reason = `authority balance low (${balance.lamports} lamports)`;
        errors.refused(session, { command: 'mail', address: address.address, code: 451, reason });
        return callback(new SmtpReply(451, '4.3.2', 'Not accepting new mail now, try again later'));
      }
      const auth = opts.senderAuth;
      if (!auth || auth.mode === 'none') return callback();
      const input = {
        ip: session.remoteAddress,
        helo: session.hostNameAppearsAs ?? '',
        mailFrom: address.address,
      };
      auth
        .checkMailFrom(input)
        .then((outcome) => {
          s.spf = outcome;
          if (outcome.reply) {
            record(input, { spf: outcome.result, disposition: outcome.reply.temporary ? 'defer' : 'reject' });
            return callback(outcome.reply);
          }
          if (auth.mode === 'spf') record(input, { spf: outcome.result, disposition: 'accept' });
          callback();
        })
        .catch((err: Error) => {
          log.warn({ err: err.message }, 'SPF check failed');
          callback(new SmtpReply(451, '4.7.24', 'Temporary SPF validation error, try again later'));
        });
    },

    onRcptTo(address: SMTPServerAddress, session, done) {
      const callback = (reply?: SmtpReply) => done(tally('rcpt', reply));
      const dsnRefused = refuseDsnParams(address.args, 'RCPT');
      if (dsnRefused) return callback(dsnRefused);
      const s = sessionState(session);
      if (s.recipients.length >= opts.maxRecipients)
        return callback(replies.tooManyRecipients(opts.maxRecipients));
      const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
      // DNSBL verdicts due at RCPT come before any chain lookup; a Junk verdict rides on the transaction.
      (opts.dnsbl ? opts.dnsbl.rcpt(session, from) : Promise.resolve(undefined))
        .then((listings) => {
          if (listings && !s.spam) s.spam = listings;
          return rcpt(address.address, from);
        })
        .then(async (recipient) => {
          const guard = opts.costGuard;
          if (guard) {
            const held = await guard.reserve(from, recipient.wallet);
            if (!held.ok) {
              const reason = `cost guard: ${held.reason} window full (${held.key}), sender ${senderLabel(from)}`;
              throw Object.assign(replies.rateLimited(held.retryAfterSecs), { reason });
            }
            s.reservations = [...(s.reservations ?? []), held.reservation];
          }
          s.recipients.push(recipient);
          callback();
        })
        .catch((err) => {
          const reply = toSmtpReply(err);
          const reason = reply.reason ?? reply.message;
          errors.refused(session, {
            command: 'rcpt',
            address: address.address,
            code: reply.responseCode,
            reason,
            msgid: s.msgid,
          });
          callback(reply);
        });
    },

    onData(stream, session, done) {
      const dataEnd = { at: 0 };
      stream.once('end', () => {
        dataEnd.at = performance.now();
      });
      const callback = (reply: SmtpReply | null, text?: string) => {
        tally('data', reply ?? undefined);
        if (!reply) opts.metrics?.accepted((performance.now() - (dataEnd.at || performance.now())) / 1000);
        done(reply, text);
      };
      const s = sessionState(session);
      const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
      const mlog = withContext(log, { msgid: s.msgid });
      if (s.recipients.length === 0) {
        stream.resume();
        stream.once('end', () => callback(replies.noRecipients()));
        return;
      }
      acceptMessage(opts.accept, {
        msgid: s.msgid,
        from,
        recipients: s.recipients,
        remoteIp: session.remoteAddress,
        receivedAt: now(),
        verify: messageChecks(session, s, from),
        trace: async () => ({
          ...sessionTrace(session, {
            by: opts.hostname,
            reverseName: await reverseNames.get(session),
            authResults: s.authResults ?? noAuthResults(opts.hostname),
            spfPassDomain: s.spf?.result === 'pass' ? s.spf.domain : undefined,
          }),
          ...(s.spam ? { spam: s.spam } : {}),
        }),
        // Stopping early (too big, disk error) must not destroy the SMTP data
        // stream: it has to run to the end of DATA before the reply is sent.
        source: checkedChunks(stream.iterator({ destroyOnReturn: false })),
        maxBytes: opts.maxMessageBytes,
      })
        .then(({ size }) => {
          if (stream.sizeExceeded) throw replies.tooBig(opts.maxMessageBytes);
          const spam = s.spam ? { spam: s.spam.action, score: s.spam.score, junk: s.spam.junk } : {};
          mlog.info({ from, rcpts: s.recipients.map((r) => r.address), size, ...spam }, 'message accepted');
          // The 250 commits the cost-guard units taken at RCPT.
          s.reservations = undefined;
          callback(null, `2.0.0 Ok: queued as ${s.msgid}`);
        })
        .catch((err) => {
          // Drain whatever the client still sends so the reply lands after DATA ends.
          stream.resume();
          releaseReservations(s);
          if (err instanceof ClientGoneError) {
            // Nobody to answer, nothing kept: a disconnect, not a storage problem.
            mlog.info({ from, rcpts: s.recipients.length }, 'client disconnected during DATA; nothing kept');
            return;
          }
          const reply = toSmtpReply(err);
          if (err instanceof StorageFailedReply) {
            mlog.error(
              { code: reply.responseCode, reason: reply.message, errno: err.code, syscall: err.syscall },
              `message refused: the spool write failed${err.code ? ` (${err.code})` : ''}`,
            );
          } else
            mlog.warn({ code: reply.responseCode, reason: reply.reason ?? reply.message }, 'message refused');
          if (stream.readableEnded) callback(reply);
          else stream.once('end', () => callback(reply));
        });
    },
  });
  clock.attach(server);

  /** Counts a reply (none: the 250 the callback sends) by its phase and code, and passes it on. */
  function tally(phase: SmtpPhase, reply: SmtpReply | undefined): SmtpReply | undefined {
    opts.metrics?.reply(phase, reply ? reply.responseCode : 250);
    return reply;
  }

  /** Refunds the units of a transaction that ends without a 250. */
  function releaseReservations(s: SessionState | undefined): void {
    const held = s?.reservations;
    if (!s || !held?.length || !opts.costGuard) return;
    s.reservations = undefined;
    opts.costGuard
      .release(held)
      .catch((err: Error) => log.warn({ err: err.message }, 'could not refund cost-guard windows'));
  }

  function record(
    input: { ip: string; helo: string; mailFrom: string },
    rest: Omit<SenderEvaluation, 'at' | 'sourceIp' | 'helo' | 'mailFrom'>,
  ): void {
    opts.onEvaluation?.({
      at: now(),
      sourceIp: input.ip,
      helo: input.helo,
      mailFrom: input.mailFrom,
      ...rest,
    });
  }

  /**
   * The checks on the received bytes before any job is queued: DKIM/DMARC
   * (below) and the spam scan, run side by side; a DMARC refusal is answered
   * before a spam verdict. Neither runs inside the group commit.
   */
  function messageChecks(session: SMTPServerSession, s: SessionState, from: string) {
    const dmarc = dmarcCheck(session, s, from);
    const filter = opts.spam;
    if (!filter) return dmarc;
    return async (message: Buffer) => {
      const scan = (async () => {
        const cipher = sessionTrace(session, { by: opts.hostname, authResults: '' }).tls;
        const decision = await filter.decide({
          message,
          ip: session.remoteAddress,
          helo: session.hostNameAppearsAs || undefined,
          hostname: await reverseNames.get(session),
          from,
          rcpts: s.recipients.map((r) => r.address),
          queueId: s.msgid,
          ...(cipher ? { tls: cipher } : {}),
        });
        if (decision.kind === 'junk') s.spam = withListings(decision.fact, s.spam);
      })();
      const [d, sp] = await Promise.allSettled([dmarc ? dmarc(message) : Promise.resolve(), scan]);
      if (d.status === 'rejected') throw d.reason;
      if (sp.status === 'rejected') throw sp.reason;
    };
  }

  /**
   * DKIM and DMARC on the spooled bytes before any job is queued (every mode
   * but none): the Authentication-Results value, and under dmarc-lite the refusal.
   */
  function dmarcCheck(session: SMTPServerSession, s: SessionState, from: string) {
    const auth = opts.senderAuth;
    if (!auth || auth.mode === 'none') return undefined;
    return async (message: Buffer) => {
      const input = { ip: session.remoteAddress, helo: session.hostNameAppearsAs ?? '', mailFrom: from };
      let result: Awaited<ReturnType<SenderAuth['checkMessage']>>;
      try {
        result = await auth.checkMessage({ ...input, message, spf: s.spf });
      } catch (err) {
        throw Object.assign(
          new SmtpReply(451, '4.7.5', 'Temporary sender verification failure, try again later'),
          {
            reason: (err as Error).message,
          },
        );
      }
      s.authResults = result.authResults;
      if (result.error) log.warn({ msgid: s.msgid, err: result.error.message }, 'DKIM verification failed');
      // Under spf the evaluation was recorded at MAIL FROM.
      if (auth.mode !== 'dmarc-lite') return;
      record(input, {
        spf: s.spf?.result ?? 'none',
        ...result.evaluation,
        disposition: result.reply ? 'reject' : 'accept',
      });
      if (result.reply) throw result.reply;
    };
  }

  async function rcpt(address: string, from: string): Promise<ResolvedRecipient> {
    let resolved: Awaited<ReturnType<typeof resolveRecipient>>;
    let gate: Awaited<ReturnType<typeof postageGate>>;
    try {
      resolved = await resolveRecipient(address, opts.policy, opts.chain, from);
      if (!resolved.ok) {
        if (resolved.reason === 'not-local') throw replies.relayDenied();
        if (resolved.reason === 'bad-address') throw replies.badAddress(resolved.detail ?? 'invalid');
        if (resolved.reason === 'closing') throw replies.mailboxClosing();
        if (resolved.reason === 'domain-inactive') throw replies.domainInactive(resolved.detail ?? '');
        if (resolved.reason === 'domain-listed') throw replies.domainListed(resolved.detail ?? '');
        if (resolved.reason === 'relay-not-allowed') throw replies.relayNotAllowed(address, resolved.detail);
        throw replies.noSuchUser();
      }
      gate = await postageGate(from, resolved.recipient, opts.chain);
    } catch (err) {
      if (err instanceof SmtpReply) throw err;
      throw Object.assign(replies.lookupFailed(), { reason: (err as Error).message });
    }
    if (!gate.ok) {
      const help = opts.stampHelpUrl ? ` See ${opts.stampHelpUrl}` : '';
      throw new SmtpReply(
        550,
        '5.7.1',
        `Recipient ${resolved.recipient.wallet} asks first-contact senders for postage of ${gate.requiredPostage} lamports per message: ` +
          `buy a stamp toward this wallet for your sender address (AddStamps for blake3 of it; stamps a wallet buys ` +
          `for itself pay only for its own direct sends) and send again.${help}`,
        'postage required',
      );
    }
    return resolved.recipient;
  }

  const errors = new SessionErrors(server, {
    limits: opts.errorLimits ?? NO_ERROR_LIMITS,
    hostname: opts.hostname,
    listener: 'mx',
    logger: opts.logger,
    metrics: opts.metrics,
  });
  server.on('error', (err) => log.warn({ err: err.message }, 'smtp error'));
  const port = await listenSmtp(server, opts.host, opts.port);
  log.info({ host: opts.host, port, tls: Boolean(tls) }, 'MX listening');

  return {
    port,
    setCertificate(pem) {
      if (tls) replaceSmtpCertificate(server, pem);
    },
    // The hooks read these from opts at each connection.
    setLimits(limits) {
      opts.maxConnectionsPerIp = limits.maxConnectionsPerIp;
      if (opts.connectionRate) opts.connectionRate.perMinute = limits.connectionsPerIpPerMinute;
    },
    async close(drainMs = 5000) {
      closing = true;
      await closeSmtp(server, drainMs);
    },
  };
}
