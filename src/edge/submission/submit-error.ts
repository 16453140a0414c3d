// The one error submitMessage throws. Each code is stable so the SMTP edge
// and an HTTP route (webmail "compose through the server") can each map it
// to their own reply without parsing text.
import { SmtpReply } from '../../mail/smtp-error.ts';

export type SubmitErrorCode =
  /** MAIL FROM or a header From address is not the sender's own. */
  | 'sender_not_owned'
  /** A send-rate window of the account is full; `retryAfterSecs` says when it opens. */
  | 'rate_limited'
  /** The message exceeds [smtp] max_message_bytes. */
  | 'too_big'
  /** The recipient list is empty. */
  | 'no_recipients'
  /** A recipient is not an address, or a local address names no mailbox. */
  | 'bad_recipient'
  /**
   * Local recipients ask first-contact senders for postage this sender has no
   * stamp for; `detail.postage` names every one of them, nothing was queued.
   */
  | 'postage_required'
  /** The bytes cannot be carried as they are (bare CR/LF, NUL, long lines, no single From). */
  | 'bad_message'
  /** The outbound content scan (`[spam] scan_submission`) refused the message as spam. */
  | 'spam'
  /** The outbound content scan asked to try later (rspamd's soft reject or greylist, or rspamd down under on_error = "defer"). */
  | 'spam_deferred'
  /** Storage, queue or chain lookups failed; nothing was queued, try again later. */
  | 'unavailable';

/** A local recipient whose mailbox asks this sender for postage it has no stamp for. */
export interface PostageHold {
  /** The recipient address as given. */
  address: string;
  /** The wallet it names (base58). */
  wallet: string;
  /** Lamports per message the recipient asks of this sender. */
  requiredPostage: bigint;
}

export interface SubmitErrorDetail {
  recipient?: string;
  address?: string;
  retryAfterSecs?: number;
  /** `postage_required`: every recipient held for postage (the others passed). */
  postage?: PostageHold[];
}

export class SubmitError extends Error {
  constructor(
    readonly code: SubmitErrorCode,
    message: string,
    readonly detail: SubmitErrorDetail = {},
  ) {
    super(message);
    this.name = 'SubmitError';
  }

  /** Whether trying the same submission later may succeed. */
  get temporary(): boolean {
    return this.code === 'rate_limited' || this.code === 'unavailable' || this.code === 'spam_deferred';
  }
}

/** The SMTP reply for a SubmitError (RFC 3463 enhanced codes in the text, as the MX does). */
export function submitErrorReply(err: SubmitError): SmtpReply {
  switch (err.code) {
    case 'sender_not_owned':
      return new SmtpReply(553, '5.7.1', err.message, err.code);
    case 'rate_limited':
      return new SmtpReply(451, '4.7.1', err.message, err.code);
    case 'too_big':
      return new SmtpReply(552, '5.3.4', err.message, err.code);
    case 'no_recipients':
      return new SmtpReply(554, '5.5.1', err.message, err.code);
    case 'bad_recipient':
      return new SmtpReply(550, '5.1.1', err.message, err.code);
    case 'postage_required':
      return new SmtpReply(550, '5.7.1', err.message, err.code);
    case 'bad_message':
      return new SmtpReply(554, '5.6.0', err.message, err.code);
    case 'spam':
      return new SmtpReply(550, '5.7.1', err.message, err.code);
    case 'spam_deferred':
      return new SmtpReply(451, '4.7.1', err.message, err.code);
    case 'unavailable':
      return new SmtpReply(451, '4.3.0', err.message, err.code);
  }
}
