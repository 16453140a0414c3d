// Per-recipient answers out of nodemailer's replies and errors: the reply
// code, the RFC 3463 status (from the reply when it carries one) and the
// text, for the job's record and the DSN.
import type SMTPConnection from 'nodemailer/lib/smtp-connection';

export interface RcptAnswer {
  rcpt: string;
  /** SMTP reply code; 0 when the connection broke before a reply. */
  code: number;
  /** RFC 3463 status (from the reply when it carries one). */
  status: string;
  response: string;
  /** Delivered: the MX host that said 250. */
  remoteMta?: string;
}

export type SmtpError = Error & {
  code?: string;
  responseCode?: number;
  response?: string;
  command?: string;
  rejectedErrors?: SmtpError[];
  recipient?: string;
};

interface EnvelopeState {
  accepted?: string[];
  rejectedErrors?: SmtpError[];
}

export function statusOf(code: number, response: string): string {
  const m = /^\d{3}[ -](\d\.\d{1,3}\.\d{1,3})\b/.exec(response);
  if (m?.[1] && m[1][0] === String(code)[0]) return m[1];
  if (code >= 500) return '5.0.0';
  if (code >= 200 && code < 400) return '2.0.0';
  return '4.0.0';
}

export function answer(
  rcpt: string,
  code: number | undefined,
  response: string | undefined,
  fallback: string,
): RcptAnswer {
  const text = (response ?? fallback).replace(/[\r\n]+/g, ' ').trim();
  const c = code ?? 0;
  return { rcpt, code: c, status: c ? statusOf(c, text) : '4.4.2', response: text };
}

export function splitRejected(rejected: SmtpError[]): { failed: RcptAnswer[]; deferred: RcptAnswer[] } {
  const failed: RcptAnswer[] = [];
  const deferred: RcptAnswer[] = [];
  for (const r of rejected) {
    const a = answer(r.recipient ?? '', r.responseCode, r.response, r.message);
    (a.code >= 500 ? failed : deferred).push(a);
  }
  return { failed, deferred };
}

/** Per-recipient answers when the transaction ended in an error. */
export function failedTransaction(
  conn: SMTPConnection,
  e: SmtpError,
  all: readonly string[],
): { failed: RcptAnswer[]; deferred: RcptAnswer[] } {
  // nodemailer keeps the envelope's per-recipient replies on the connection.
  const env = (conn as unknown as { _envelope?: EnvelopeState })._envelope || {};
  const rejected = e.rejectedErrors ?? env.rejectedErrors ?? [];
  const individually = new Set(rejected.map((r) => r.recipient));
  const { failed, deferred } = splitRejected(rejected.filter((r) => r.recipient));
  // Everyone else shares the error's fate: the MAIL FROM or DATA reply, or a
  // broken connection (no reply: temporary, the message may be sent again).
  for (const rcpt of all) {
    if (individually.has(rcpt)) continue;
    const a = answer(rcpt, e.responseCode, e.response, `connection lost: ${e.message}`);
    (a.code >= 500 ? failed : deferred).push(a);
  }
  return { failed, deferred };
}
