// Shared by the MX and relay paths of a delivery attempt: what an attempt
// takes and yields, and sending over a session with the connection cache.
import type { SpoolerConfig } from '../src/core/config/types.ts';
import type { Logger } from '../src/core/log.ts';
import type { MtaSts } from './mta-sts.ts';
import type { SecureDns } from './secure-dns.ts';
import type { SessionCache } from './session-cache.ts';
import {
  type EnvelopeDsn,
  type RcptAnswer,
  SessionLostError,
  type SessionResult,
  type SmtpSession,
} from './smtp-session.ts';
import type { TlsrptRecorder } from './tlsrpt-store.ts';

export interface Reason {
  status: string;
  diagnostic: string;
  remoteMta?: string;
}

export interface AttemptOutcome {
  delivered: RcptAnswer[];
  failed: Map<string, Reason>;
  deferred: Map<string, Reason>;
}

export interface AttemptDeps {
  dns: SecureDns;
  config: SpoolerConfig;
  mtaSts: MtaSts | null;
  daneInEffect: () => boolean;
  tlsrpt: TlsrptRecorder | null;
  extraCa?: readonly string[];
  relayPassword?: string;
  /** Idle sessions reused across messages; absent: one session per message. */
  sessions?: SessionCache;
  random: () => number;
  now: () => number;
  logger: Logger;
}

export interface AttemptInput {
  domain: string;
  from: string;
  rcpts: readonly string[];
  message: Buffer;
  /** RFC 3461 parameters passed on to a next hop that offers DSN. */
  dsn?: EnvelopeDsn;
  onDelivered(delivered: RcptAnswer[], info: { dsnOffered: boolean }): Promise<void>;
}

const all = (rcpts: readonly string[], reason: Reason) => new Map(rcpts.map((r) => [r, reason]));

export type Transaction = Extract<SessionResult, { kind: 'transaction' }>;

/**
 * A transaction over an idle cached session, when there is a live one.
 * A session left at a transaction boundary goes straight to MAIL FROM (as
 * nodemailer's own pool does); any other gets an RSET first. A session that
 * turns out to be gone before the message went out yields null, and the
 * caller opens a new one.
 */
export async function overCachedSession(
  deps: AttemptDeps,
  input: AttemptInput,
  key: string,
): Promise<Transaction | null> {
  for (;;) {
    const cached = deps.sessions?.take(key);
    if (!cached) return null;
    if (!cached.atBoundary && !(await cached.reset())) {
      cached.close();
      continue;
    }
    try {
      return await keepAfter(deps, key, cached, input, { reused: true });
    } catch (err) {
      if (!(err instanceof SessionLostError)) throw err;
    }
  }
}

/** Sends, then offers the session to the cache (or closes it). */
export async function keepAfter(
  deps: AttemptDeps,
  key: string,
  session: SmtpSession,
  input: AttemptInput,
  opts: { reused?: boolean } = {},
): Promise<Transaction> {
  let result: Transaction;
  try {
    result = await session.send(
      {
        from: input.from,
        to: input.rcpts,
        message: input.message,
        dsn: input.dsn,
        onDelivered: input.onDelivered,
      },
      opts,
    );
  } catch (err) {
    session.close();
    throw err;
  }
  if (deps.sessions) deps.sessions.put(key, session);
  else session.close();
  return result;
}

export function sessionBase(deps: AttemptDeps, address: string, host: string) {
  return {
    address,
    host,
    ehloName: deps.config.hostname,
    extraCa: deps.extraCa,
    connectTimeoutMs: deps.config.connect_timeout_secs * 1000,
    commandTimeoutMs: deps.config.command_timeout_secs * 1000,
  };
}

export function toOutcome(
  r: { delivered: RcptAnswer[]; failed: RcptAnswer[]; deferred: RcptAnswer[] },
  host: string,
): AttemptOutcome {
  const reason = (a: RcptAnswer): Reason => ({
    status: a.status,
    diagnostic: `${host} said: ${a.response}`,
    remoteMta: host,
  });
  return {
    delivered: r.delivered,
    failed: new Map(r.failed.map((a) => [a.rcpt, reason(a)])),
    deferred: new Map(r.deferred.map((a) => [a.rcpt, reason(a)])),
  };
}

export function deferAll(rcpts: readonly string[], reason: Reason): AttemptOutcome {
  return { delivered: [], failed: new Map(), deferred: all(rcpts, reason) };
}

export function failAll(rcpts: readonly string[], reason: Reason): AttemptOutcome {
  return { delivered: [], failed: all(rcpts, reason), deferred: new Map() };
}
