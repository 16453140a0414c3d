// The trace facts of one MX transaction (src/mail/trace.ts `MxTrace`), read
// from smtp-server's session at the end of DATA.
import type { TLSSocket } from 'node:tls';
import type { SMTPServerSession } from 'smtp-server';
import { type MxTrace, transmissionType } from '../../mail/trace.ts';

type Cipher = ReturnType<TLSSocket['getCipher']>;

export function sessionTrace(
  session: SMTPServerSession,
  facts: { by: string; reverseName?: string; authResults: string; spfPassDomain?: string },
): MxTrace {
  // smtp-server's typings call it TlsOptions; it holds the socket's getCipher().
  const cipher = (session.secure ? session.tlsOptions : undefined) as Cipher | false | undefined;
  const args = (session.envelope.mailFrom ? session.envelope.mailFrom.args : {}) as Record<string, unknown>;
  return {
    helo: session.hostNameAppearsAs || '',
    ...(facts.reverseName ? { reverseName: facts.reverseName } : {}),
    ip: session.remoteAddress,
    by: facts.by,
    protocol: transmissionType({
      ehlo: session.openingCommand === 'EHLO',
      tls: session.secure,
      auth: Boolean(session.user),
      utf8: args.SMTPUTF8 === true,
    }),
    ...(cipher ? { tls: { version: cipher.version, cipher: cipher.name } } : {}),
    authResults: facts.authResults,
    ...(facts.spfPassDomain ? { spfPassDomain: facts.spfPassDomain } : {}),
  };
}
