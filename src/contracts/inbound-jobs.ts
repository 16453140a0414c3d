// Queue names and job payloads of the inbound pipeline. Jobs carry
// references (spool key, wallet, envelope), never message bodies; each
// finished stage writes its result into `stages` so a retry resumes there.

export const QUEUE_DELIVER = 'deliver';
/**
 * Parent of the delivery jobs of a message with several recipients: removes
 * the raw spool file once all are done. A one-recipient message has no
 * parent; its delivery job removes the file itself (DeliverJobData.removesSpool).
 */
export const QUEUE_SPOOL = 'spool';
export const QUEUE_RECIPIENT_PIN = 'recipient-pin';
/** DSNs waiting for the outbound spooler. */
export const QUEUE_OUTBOUND = 'outbound';

export interface Envelope {
  /** MAIL FROM; '' is the null sender. */
  from: string;
  /** RCPT TO as given. */
  to: string;
}

export interface StageResults {
  /** resolve: the X25519 key the body is sealed to and where it came from. */
  resolve?: { publicKey: string; source: 'mailbox_key' | 'wallet'; noIpfs: boolean };
  /** seal: the sealed body in the blob store. */
  seal?: { blobKey: string; size: number; wraps: { readerId: string; wrap: string }[] };
  /** pin: the CID (operator pin) or the b3: marker under no_ipfs. */
  pin?: { cid: string; pinned: boolean };
  /** submit: recorded before sending, so a retry asks the chain first. */
  submit?: {
    signature: string;
    index: string;
    emailAddress: string;
    lastValidBlockHeight: number;
    /** The signed transaction (base64), resent as is while its blockhash is valid. */
    tx: string;
    /** Set when the transaction carries several jobs' SendMails: how many, and this job's instruction. */
    batch?: { size: number; position: number };
    /** Instructions before the SendMails (the compute budget): a failed instruction's index minus this is the position. */
    ixOffset?: number;
    /**
     * The lowest index any signing of this job was built at: a re-sign first
     * searches the recipient's Email accounts from here to mail_count for this
     * CID (delivery/stages/submit.ts). Absent on records written before it: `index`.
     */
    since?: string;
    /** How many transactions this job has signed (1 for the first). */
    round?: number;
    confirmed?: boolean;
  };
  /** store: the message row. */
  store?: { messageId: string };
  /** recipient-pin: whether a best-effort job was queued (never awaited). */
  recipientPin?: { queued: boolean };
}

export interface DeliverJobData {
  msgid: string;
  spoolKey: string;
  envelope: Envelope;
  wallet: string;
  form: 'wallet' | 'alias' | 'postmaster';
  receivedAt: number;
  size: number;
  remoteIp: string;
  /**
   * MX mail: the session facts for the Received and Authentication-Results
   * fields written at delivery. Absent for submitted mail and for jobs
   * queued before it existed (those get Return-Path only).
   */
  trace?: MxTrace;
  /**
   * Set on the only delivery job of a one-recipient message (queued without
   * a spool-cleanup parent): the job removes `spoolKey` itself once its copy
   * is stored, or once it finally fails (after its DSN). Absent: a parent
   * removes it (several recipients, or jobs queued before this existed).
   */
  removesSpool?: true;
  /**
   * Written when the job failed for good with a signed SendMail never
   * confirmed (delivery/pipeline.ts): why, when, the signature, and whether
   * the sender's DSN was queued then (an operator retry never sends a second).
   */
  /**
   * Out of attempts while its signed SendMail may still land: the job waits
   * (delayed, no attempt spent) and only re-reads the expiry proof until it
   * is settled (delivery/pipeline.ts). `error` is the last attempt's.
   */
  exhausted?: { error: string; at: number };
  finalFailure?: {
    reason: 'expired' | 'permanent';
    at: number;
    signature: string;
    error: string;
    dsn: 'queued' | 'null-sender' | 'none';
    status?: string;
  };
  stages: StageResults;
}

export interface SpoolJobData {
  msgid: string;
  spoolKey: string;
}

export interface RecipientPinJobData {
  msgid: string;
  wallet: string;
  blobKey: string;
  cid: string;
}

/** Releases of the operator's pin (admin sweep, message deletion). Drained only where the chain pipeline runs. */
export const QUEUE_UNPIN = 'unpin';
/** DeleteMail for Email accounts this deployment published (closes the account on chain). */
export const QUEUE_DELETE_MAIL = 'delete-mail';

export interface UnpinJobData {
  cid: string;
  wallet: string;
  messageId: string;
}

export interface DeleteMailJobData {
  wallet: string;
  /** base58 address of the Email account. */
  emailAddress: string;
  messageId: string;
  /**
   * The DeleteMail signed for it, written into the job before it is sent: a
   * retry settles it (delivery/cleanup.ts) before signing another.
   */
  sent?: { signature: string; lastValidBlockHeight: number; tx: string; round: number };
  /**
   * Queued by the rent-recovery sweep (delivery/rent-recovery.ts): once the
   * account is closed the copy's row records it (rent_recovered_at), and the
   * account's lamports as the sweep read them are counted as recovered.
   */
  rentRecovery?: { lamports: number };
}

/** A message waiting for the outbound spooler (DSNs from the pipeline, submitted mail). */
export interface OutboundJobData {
  msgid: string;
  /** Envelope sender; '' for a DSN. */
  from: string;
  to: string[];
  /** Blob store key of the raw RFC 5322 message. */
  blobKey: string;
  /** `report`: a TLS-RPT report the spooler sends (DKIM-signed at intake like DSNs). */
  kind: 'dsn' | 'submission' | 'report';
  createdAt: number;
  /**
   * RFC 3461 requests from submission: NOTIFY (absent: failures and delays),
   * ENVID (decoded), RET, and ORCPT (`addr-type;address`, decoded) shared by
   * every recipient of the job.
   */
  dsn?: {
    notify?: 'NEVER' | ('SUCCESS' | 'FAILURE' | 'DELAY')[];
    envid?: string;
    ret?: 'FULL' | 'HDRS';
    orcpt?: string;
  };
}

/** What the MX saw of the SMTP session, carried in each delivery job. */
export interface MxTrace {
  /** The EHLO/HELO argument as the client gave it. */
  helo: string;
  /** The client's forward-confirmed reverse DNS name; absent when there is none ("unknown"). */
  reverseName?: string;
  /** The client's IP address. */
  ip: string;
  /** Our `[smtp] hostname` at receipt. */
  by: string;
  /** RFC 3848 / RFC 6531 `with` word (`transmissionType`). */
  protocol: string;
  /** Set when the session used TLS. */
  tls?: { version: string; cipher: string };
  /** Value of the Authentication-Results field: `<authserv-id>; <results>`. */
  authResults: string;
  /** The MAIL FROM domain when SPF passed for it (the attested-sender check needs it). */
  spfPassDomain?: string;
  /** rspamd's verdict when the message was scanned and flagged (src/mail/spam/filter.ts): X-Spam-* fields, Junk. */
  spam?: SpamFact;
}

/** What the delivery of a flagged or scanned message carries (src/mail/trace.ts MxTrace.spam). */
export interface SpamFact {
  action: string;
  score: number;
  required: number;
  /** `NAME(score)`, highest first, at most 40. */
  symbols: string[];
  /** Filed in the recipient's Junk folder. */
  junk: boolean;
  /** Published on chain (false: stored for server-mode readers only). */
  publish: boolean;
  /** Who gave the verdict, for X-Spam-Status (absent: rspamd; "dnsbl": the DNS blocklists alone, src/mail/spam/dnsbl.ts). */
  scanner?: string;
}
