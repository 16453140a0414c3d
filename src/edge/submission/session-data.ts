// Small pieces of the SMTP edge of submission: the DATA bytes in memory,
// the RFC 3461 requests of the envelope, and the reply for any error.
import type { SMTPServerSession } from 'smtp-server';
import { replies, SmtpReply, toSmtpReply } from '../../mail/smtp-error.ts';
import { mailDsnParams, rcptDsnParams } from '../mx/dsn-params.ts';
import type { DsnNotify, SubmitInput } from './submit.ts';
import { SubmitError, submitErrorReply } from './submit-error.ts';

/** ENVID and RET of MAIL FROM, NOTIFY and ORCPT of each RCPT TO that had them (checked at the command). */
export function dsnRequests(session: SMTPServerSession): SubmitInput['dsn'] {
  const notify: Record<string, DsnNotify> = {};
  const orcpt: Record<string, string> = {};
  for (const r of session.envelope.rcptTo) {
    const values = r.dsn?.notify;
    if (values && values.length > 0) {
      notify[r.address] = values.includes('NEVER') ? 'NEVER' : (values as Exclude<DsnNotify, 'NEVER'>);
    }
    const o = rcptDsnParams(r.args);
    if (!(o instanceof SmtpReply) && o.orcpt) orcpt[r.address] = o.orcpt;
  }
  const m = mailDsnParams(session.envelope.mailFrom ? session.envelope.mailFrom.args : undefined);
  const envid = m instanceof SmtpReply ? undefined : m.envid;
  const ret = session.envelope.dsn?.ret;
  return {
    ...(envid ? { envid } : {}),
    ...(ret === 'FULL' || ret === 'HDRS' ? { ret } : {}),
    notify,
    ...(Object.keys(orcpt).length > 0 ? { orcpt } : {}),
  };
}

export function replyFor(err: unknown): SmtpReply {
  if (err instanceof SubmitError) return submitErrorReply(err);
  return toSmtpReply(err);
}

/** The whole message in memory (submission size is bounded by max_message_bytes). */
export async function collect(source: AsyncIterable<Uint8Array>, maxBytes: number): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of source) {
    size += chunk.length;
    if (size > maxBytes) throw replies.tooBig(maxBytes);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
