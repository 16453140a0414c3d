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
