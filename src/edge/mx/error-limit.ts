// Per-session error limits for every smtp-server listener (MX, submission),
// as Postfix's smtpd_soft_error_limit / smtpd_hard_error_limit /
// smtpd_error_sleep_time do it: every 4xx/5xx reply of a session (refused
// MAIL/RCPT/DATA, failed AUTH, syntax errors and bad sequences the library
// answers itself; not 421) is one error. Once a session has made `soft`
// errors, each further command waits `sleepMs` before it is processed, so
// every reply comes that much later; when it reaches `hard` errors the error
// reply is followed by `421 4.7.0 <host> Error: too many errors` and the
// connection is closed. A message accepted with 250 clears the count (errors
// "without delivering mail", as Postfix counts them).
//
// Refusals are logged per session, not per command: one info line when the
// session ends (errors by reply code, the first few refused addresses with
// their reasons, whether it was closed for errors), plus debug lines for
// single refusals that a process-wide budget keeps to a few per second.
//
// The hooks sit in the library's connection prototype (as ../submission/
// smtp-auth-hooks.ts does for AUTH) and act only on servers registered here.
import type { SMTPServer, SMTPServerSession } from 'smtp-server';
import { SMTPConnection } from 'smtp-server/lib/smtp-connection.js';
import type { Logger } from '../../core/log.ts';

export interface ErrorLimits {
  /** Errors after which each command waits `sleepMs`; 0: never delay. */
  soft: number;
  /** Errors at which the session is closed with 421 4.7.0; 0: never. */
  hard: number;
  sleepMs: number;
}

/** `[smtp] soft_error_limit`, `hard_error_limit`, `error_sleep_ms`. */
export function errorLimitsFromConfig(smtp: {
  soft_error_limit: number;
  hard_error_limit: number;
  error_sleep_ms: number;
}): ErrorLimits {
  return { soft: smtp.soft_error_limit, hard: smtp.hard_error_limit, sleepMs: smtp.error_sleep_ms };
}

/** No delays, no disconnects (refusals are still aggregated). */
export const NO_ERROR_LIMITS: ErrorLimits = { soft: 0, hard: 0, sleepMs: 0 };

/** What a listener counts for /metrics: each error, each delayed command, each session closed. */
export interface ErrorLimitMetrics {
  sessionError(listener: string, action: 'error' | 'delayed' | 'closed'): void;
}

export interface ErrorLimitOptions {
  limits: ErrorLimits;
  /** EHLO name, in the 421 text. */
  hostname: string;
  /** `mx`, `submission`, `submissions`: in the summary line and the metric label. */
  listener: string;
  logger: Logger;
  metrics?: ErrorLimitMetrics;
  sleep?: (ms: number) => Promise<void>;
}

/** One refusal a handler decided, with the detail only the handler knows. */
export interface Refusal {
  command: 'mail' | 'rcpt' | 'data' | 'auth';
  address?: string;
  code: number;
  reason: string;
  msgid?: string;
}

interface SessionTally {
  errors: number;
  total: number;
  byCode: Map<string, number>;
  first: Refusal[];
  delayed: number;
  closedForErrors: boolean;
}

/** Refused addresses kept per session for the summary line. */
const FIRST_REFUSALS = 5;
/** Debug lines for single refusals, per process and second. */
const DEBUG_PER_SECOND = 10;

const limiters = new WeakMap<SMTPServer, SessionErrors>();
let installed = false;

function install(): void {
  if (installed) return;
  installed = true;
  const proto = SMTPConnection.prototype;
  const send = proto.send;
  const onCommand = proto._onCommand;

  proto.send = function (
    this: SMTPConnection,
    code: number,
    data?: string | string[] | null,
    context?: string | false,
  ) {
    const guard = limiters.get(this._server);
    if (!guard) return send.call(this, code, data, context);
    if (code === 250 && context === 'DATA_OK') guard.delivered(this.session);
    const closeNow = code >= 400 && code !== 421 && guard.counted(this.session, code, data);
    send.call(this, code, data, context);
    if (closeNow && !this._closing && !this._closed) send.call(this, 421, guard.tooManyErrors());
  };

  proto._onCommand = function (this: SMTPConnection, command: Buffer, callback?: () => void) {
    const guard = limiters.get(this._server);
    const wait = guard?.delayFor(this.session) ?? 0;
    if (!guard || wait <= 0) return onCommand.call(this, command, callback);
    guard
      .pause(wait)
      .then(() => {
        if (this._closing || this._closed) callback?.();
        else onCommand.call(this, command, callback);
      })
      .catch(() => callback?.());
  };
}

export class SessionErrors {
  private readonly tallies = new WeakMap<SMTPServerSession, SessionTally>();
  private readonly log: Logger;
  private readonly sleep: (ms: number) => Promise<void>;
  private debugSecond = 0;
  private debugLeft = DEBUG_PER_SECOND;
  private debugSuppressed = 0;

  /** Registers `server`: from now on its sessions are counted, slowed and closed as `limits` say. */
  constructor(
    server: SMTPServer,
    private readonly opts: ErrorLimitOptions,
  ) {
    install();
    limiters.set(server, this);
    this.log = opts.logger.child({ component: 'smtp-errors', listener: opts.listener });
    this.sleep = opts.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  private tally(session: SMTPServerSession): SessionTally {
    let t = this.tallies.get(session);
    if (!t) {
      t = { errors: 0, total: 0, byCode: new Map(), first: [], delayed: 0, closedForErrors: false };
      this.tallies.set(session, t);
    }
    return t;
  }

  /** Counts one error reply; true when it reaches the hard limit (the session is to be closed). */
  counted(session: SMTPServerSession, code: number, text: string | string[] | null | undefined): boolean {
    const t = this.tally(session);
    t.errors++;
    t.total++;
    const line = Array.isArray(text) ? (text[0] ?? '') : (text ?? '');
    const enhanced = /^[45]\.\d{1,3}\.\d{1,3}\b/.exec(line)?.[0];
    const key = enhanced ? `${code} ${enhanced}` : String(code);
    t.byCode.set(key, (t.byCode.get(key) ?? 0) + 1);
    this.opts.metrics?.sessionError(this.opts.listener, 'error');
    const { hard } = this.opts.limits;
    if (hard <= 0 || t.errors < hard) return false;
    t.closedForErrors = true;
    this.opts.metrics?.sessionError(this.opts.listener, 'closed');
    return true;
  }

  /** A message was accepted: the session starts over with no errors. */
  delivered(session: SMTPServerSession): void {
    const t = this.tallies.get(session);
    if (t) t.errors = 0;
  }

  /** How long the next command of `session` waits (0: not at all). */
  delayFor(session: SMTPServerSession): number {
    const { soft, sleepMs } = this.opts.limits;
    const t = this.tallies.get(session);
    if (!t || soft <= 0 || sleepMs <= 0 || t.errors < soft) return 0;
    t.delayed++;
    this.opts.metrics?.sessionError(this.opts.listener, 'delayed');
    return sleepMs;
  }

  pause(ms: number): Promise<void> {
    return this.sleep(ms);
  }

  tooManyErrors(): string {
    return `4.7.0 ${this.opts.hostname} Error: too many errors`;
  }

  /** Records the detail of a refusal for the summary line (and maybe one debug line). */
  refused(session: SMTPServerSession, refusal: Refusal): void {
    const t = this.tally(session);
    if (t.first.length < FIRST_REFUSALS) t.first.push(refusal);
    if (!this.log.isLevelEnabled('debug')) return;
    const second = Math.floor(Date.now() / 1000);
    if (second !== this.debugSecond) {
      this.debugSecond = second;
      this.debugLeft = DEBUG_PER_SECOND;
    }
    if (this.debugLeft <= 0) {
      this.debugSuppressed++;
      return;
    }
    this.debugLeft--;
    const suppressed = this.debugSuppressed;
    this.debugSuppressed = 0;
    this.log.debug(
      { ip: session.remoteAddress, ...refusal, ...(suppressed ? { suppressed } : {}) },
      `${refusal.command} refused`,
    );
  }

  /** The session ended: one summary line if it made any errors. Call from onClose. */
  closed(session: SMTPServerSession): void {
    const t = this.tallies.get(session);
    this.tallies.delete(session);
    if (!t || t.total === 0) return;
    this.log.info(
      {
        ip: session.remoteAddress,
        session: session.id,
        errors: t.total,
        replies: Object.fromEntries(t.byCode),
        refused: t.first.map((r) => ({
          command: r.command,
          ...(r.address !== undefined ? { address: r.address } : {}),
          code: r.code,
          reason: r.reason,
          ...(r.msgid ? { msgid: r.msgid } : {}),
        })),
        ...(t.delayed ? { delayed: t.delayed } : {}),
        ...(t.closedForErrors ? { closed: 'too many errors' } : {}),
      },
      'session errors',
    );
  }
}
