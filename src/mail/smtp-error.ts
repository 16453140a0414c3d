// One error type for every SMTP reply the edge sends on purpose. smtp-server
// reads `responseCode` off a rejected callback's error; the enhanced status
// code is part of the text, as RFC 3463 puts it.
export class SmtpReply extends Error {
  readonly responseCode: number;
  constructor(
    code: number,
    readonly enhanced: string,
    text: string,
    readonly reason?: string,
  ) {
    super(`${enhanced} ${text}`);
    this.name = 'SmtpReply';
    this.responseCode = code;
  }

  get temporary(): boolean {
    return this.responseCode >= 400 && this.responseCode < 500;
  }
}

export const replies = {
  relayDenied: () =>
    new SmtpReply(550, '5.7.1', 'Relaying denied: this server only accepts mail for its own domains'),
  noSuchUser: () => new SmtpReply(550, '5.1.1', 'No such mailbox here'),
  // RFC 3463 X.2.1: mailbox disabled, not accepting messages.
  mailboxClosing: () =>
    new SmtpReply(
      550,
      '5.2.1',
      'Mailbox is closing: its owner has asked to close it and it takes no new mail',
    ),
  // RFC 3463 X.1.2: the destination system (domain) does not accept mail.
  domainInactive: (domain: string) =>
    new SmtpReply(550, '5.1.2', `Domain ${domain} has been deactivated and takes no mail here`),
  // Temporary: the domain is in a DomainListing's custody; relaying resumes when the listing closes.
  domainListed: (domain: string) =>
    new SmtpReply(
      451,
      '4.2.0',
      `Domain ${domain} is being transferred on chain and takes no mail until that ends; try again later`,
    ),
  // RFC 3463 X.7.1: delivery not authorized. A relayed SendMail lands only through
  // the MailDomain the mailbox names; a mailbox with no domain takes none.
  relayNotAllowed: (address: string, domain?: string) =>
    domain === undefined
      ? new SmtpReply(
          550,
          '5.7.1',
          `<${address}>: this mailbox has no mail domain; its owner can join one (sealpost mailbox domain set)`,
          'relay not allowed: the mailbox has no mail domain',
        )
      : new SmtpReply(
          550,
          '5.7.1',
          `<${address}>: this mailbox takes relayed mail only through its own domain (${domain}), not through this server`,
          `relay not allowed: the mailbox belongs to ${domain}`,
        ),
  badAddress: (why: string) => new SmtpReply(553, '5.1.3', `Bad address syntax: ${why}`),
  tooManyRecipients: (max: number) =>
    new SmtpReply(452, '4.5.3', `Too many recipients (at most ${max} per message)`),
  lookupFailed: () => new SmtpReply(451, '4.4.3', 'Temporary lookup failure, try again later'),
  queueUnavailable: () => new SmtpReply(451, '4.3.0', 'Mail queue temporarily unavailable, try again later'),
  storageFailed: () => new SmtpReply(452, '4.3.1', 'Insufficient system storage, try again later'),
  tooBig: (max: number) =>
    new SmtpReply(552, '5.3.4', `Message exceeds the fixed maximum message size of ${max} bytes`),
  noRecipients: () => new SmtpReply(554, '5.5.1', 'No valid recipients'),
  shuttingDown: () => new SmtpReply(421, '4.3.2', 'Service shutting down, try again later'),
  tooManyConnections: () =>
    new SmtpReply(421, '4.7.0', 'Too many connections from your address, try again later'),
  rateLimited: (retrySecs: number) =>
    new SmtpReply(451, '4.7.1', `Rate limit exceeded, try again in ${retrySecs} seconds`),
} as const;

/** Anything that is not an SmtpReply is treated as temporary (an unknown failure must not bounce mail). */
export function toSmtpReply(err: unknown): SmtpReply {
  if (err instanceof SmtpReply) return err;
  return new SmtpReply(
    451,
    '4.3.0',
    'Local error in processing, try again later',
    err instanceof Error ? err.message : String(err),
  );
}
