// Delivery status notifications (RFC 3464 multipart/report), built with
// nodemailer's MIME tree so encoding and folding are the library's job.
// Used for inbound messages that finally fail and for outbound bounces.
import MimeNode from 'nodemailer/lib/mime-node';

export interface DsnRecipient {
  /** The recipient as given in RCPT TO. */
  finalRecipient: string;
  /** RFC 3464 §2.3.3; `relayed`: handed to a next hop that does not offer DSN (RFC 3461 §6.2.2.2). */
  action: 'failed' | 'delayed' | 'relayed' | 'delivered';
  /** ORCPT as given (`addr-type;address`, decoded); the field is left out without one (RFC 3464 §2.3.1). */
  originalRecipient?: string;
  /** RFC 3463 status, e.g. `5.1.1`. */
  status: string;
  /** Human-readable reason (never secrets). */
  diagnostic?: string;
  remoteMta?: string;
  /** RFC 3464 §2.3.7, for delayed recipients. */
  lastAttemptDate?: Date;
  /** RFC 3464 §2.3.8, for delayed recipients. */
  willRetryUntil?: Date;
}

export interface DsnInput {
  /** Our hostname, for Reporting-MTA and the From address. */
  reportingMta: string;
  /** The envelope sender the report goes to (must not be null). */
  to: string;
  recipients: DsnRecipient[];
  arrivalDate: Date;
  /** The header section of the original message (returned, not the body). */
  originalHeaders: Uint8Array;
  /** The whole original message (RET=FULL): returned as message/rfc822 instead of the headers. */
  originalMessage?: Uint8Array;
  /** Original Message-ID, for In-Reply-To/References when present. */
  originalMessageId?: string;
  queueId: string;
  date?: Date;
  /** ENVID of the original submission (RFC 3461), echoed as Original-Envelope-Id. */
  originalEnvelopeId?: string;
}

/** Returns the header section (up to and without the blank line) of a raw message. */
export function headerSection(raw: Uint8Array, max = 64 * 1024): Uint8Array {
  const buf = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  const crlf = buf.indexOf('\r\n\r\n');
  const lf = buf.indexOf('\n\n');
  const cut = [crlf, lf].filter((i) => i >= 0).sort((a, b) => a - b)[0];
  const end = cut === undefined ? buf.length : cut;
  return buf.subarray(0, Math.min(end, max));
}

function field(name: string, value: string): string {
  // Per-recipient fields must stay on one line each; strip anything that would break the report.
  return `${name}: ${value.replace(/[\r\n]+/g, ' ')}`;
}

export async function buildDsn(input: DsnInput): Promise<Buffer> {
  const failed = input.recipients.some((r) => r.action === 'failed');
  const delayed = input.recipients.some((r) => r.action === 'delayed');
  const returned = input.originalMessage ? 'the whole message' : 'headers only';
  const root = new MimeNode('multipart/report; report-type=delivery-status', {
    hostname: input.reportingMta,
    newline: 'win',
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  root.setHeader({
    From: `Mail Delivery System <MAILER-DAEMON@${input.reportingMta}>`,
    To: input.to,
    Subject: failed
      ? 'Undelivered Mail Returned to Sender'
      : delayed
        ? 'Delayed Mail (still being retried)'
        : 'Successful Mail Delivery Report',
    Date: input.date ?? new Date(),
    'Auto-Submitted': 'auto-replied',
  });
  if (input.originalMessageId) {
    root.setHeader('In-Reply-To', input.originalMessageId);
    root.setHeader('References', input.originalMessageId);
  }

  const words = {
    failed: 'delivery failed permanently',
    delayed: 'delivery delayed',
    relayed: 'relayed to a server that sends no delivery notifications',
    delivered: 'delivered',
  } as const;
  const lines = input.recipients.map(
    (r) =>
      `<${r.finalRecipient}>: ${words[r.action]}` +
      (r.diagnostic ? `\r\n    ${r.diagnostic.replace(/[\r\n]+/g, ' ')}` : ''),
  );
  root
    .createChild('text/plain; charset=utf-8')
    .setContent(
      `This is the mail system at ${input.reportingMta}.\r\n\r\n` +
        (failed
          ? 'Your message could not be delivered to one or more recipients.\r\n'
          : delayed
            ? 'Your message has not been delivered yet; the system keeps trying.\r\n'
            : 'Your message was delivered (or handed on) as you asked to be told.\r\n') +
        `It is attached below (${returned}).\r\n\r\n${lines.join('\r\n')}\r\n`,
    );

  const perMessage = [
    ...(input.originalEnvelopeId ? [field('Original-Envelope-Id', input.originalEnvelopeId)] : []),
    field('Reporting-MTA', `dns; ${input.reportingMta}`),
    field('X-Sealpost-Queue-ID', input.queueId),
    field('Arrival-Date', input.arrivalDate.toUTCString()),
  ];
  const perRecipient = input.recipients.map((r) =>
    [
      field('Final-Recipient', `rfc822; ${r.finalRecipient}`),
      ...(r.originalRecipient ? [field('Original-Recipient', r.originalRecipient)] : []),
      field('Action', r.action),
      field('Status', r.status),
      ...(r.remoteMta ? [field('Remote-MTA', `dns; ${r.remoteMta}`)] : []),
      ...(r.diagnostic ? [field('Diagnostic-Code', `smtp; ${r.diagnostic}`)] : []),
      ...(r.lastAttemptDate ? [field('Last-Attempt-Date', r.lastAttemptDate.toUTCString())] : []),
      ...(r.willRetryUntil ? [field('Will-Retry-Until', r.willRetryUntil.toUTCString())] : []),
    ].join('\r\n'),
  );
  root
    .createChild('message/delivery-status')
    .setContent(`${[perMessage.join('\r\n'), ...perRecipient].join('\r\n\r\n')}\r\n`);
  if (input.originalMessage)
    root.createChild('message/rfc822').setContent(Buffer.from(input.originalMessage));
  else root.createChild('text/rfc822-headers').setContent(Buffer.from(input.originalHeaders));
  return root.build();
}
