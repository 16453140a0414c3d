// Failure kinds of the pipeline. A PermanentDeliveryError ends the job
// (BullMQ UnrecoverableError semantics) and leads to a bounce; anything else
// is temporary and retried with backoff.
import { UnrecoverableError } from 'bullmq';

export class PermanentDeliveryError extends UnrecoverableError {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(`${code}: ${message}`);
    this.name = 'PermanentDeliveryError';
  }
}

/**
 * Not a failure: look again later without spending an attempt — a submitted
 * transaction that may still land, or a recipient whose lease another send holds.
 */
export class PendingError extends Error {
  constructor(
    message: string,
    /** When to look again. */
    readonly retryAfterMs = 2000,
  ) {
    super(message);
    this.name = 'PendingError';
  }
}

/**
 * A PendingError of its own kind: a signed SendMail whose expiry is not
 * proven yet (the job waits, spends no attempt, and is counted in
 * `sealpost_delivery_awaiting_expiry_proof`).
 */
export class UnprovenExpiryError extends PendingError {
  constructor(
    readonly signature: string,
    retryAfterMs = 1000,
  ) {
    super(`SendMail ${signature}: its expiry is not proven yet`, retryAfterMs);
    this.name = 'UnprovenExpiryError';
  }
}

/**
 * A sent transaction was not seen before its blockhash expired (by a status
 * read that does not prove it did not land): submit.ts settles it with the
 * full proof (docs/inbound.md "Exactly once") before anything is re-signed.
 */
export class ExpiredError extends Error {
  constructor(
    readonly signature: string,
    message = `transaction ${signature} not seen before its blockhash expired`,
  ) {
    super(message);
    this.name = 'ExpiredError';
  }
}
