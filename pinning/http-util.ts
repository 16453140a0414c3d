// Small helpers the HTTP-speaking pinners share: a deadline on every outbound
// call, and turning a refusal into a PinProviderError with the provider's own
// reason (never the credentials we sent).
import { PinProviderError } from '../src/contracts/pinner.ts';

export type FetchFn = typeof fetch;

/** Default budget for one outbound pin call. */
export const DEFAULT_PIN_TIMEOUT_MS = 60_000;

function isTimeout(err: unknown): boolean {
  return err instanceof Error && err.name === 'TimeoutError';
}

/** One call's budget: our own timer plus whatever signal the caller passed. */
export class Deadline {
  readonly signal: AbortSignal;
  private readonly timer: AbortSignal;

  constructor(
    readonly timeoutMs: number,
    readonly caller?: AbortSignal,
  ) {
    this.timer = AbortSignal.timeout(timeoutMs);
    this.signal = caller ? AbortSignal.any([caller, this.timer]) : this.timer;
  }

  /** The message for a failure caused by a deadline firing, or null when it was not one. */
  timeoutMessage(err: unknown): string | null {
    if (this.timer.aborted) return `no answer within ${this.timeoutMs} ms`;
    if (this.caller?.aborted)
      return isTimeout(this.caller.reason) ? "no answer within the caller's deadline" : null;
    return isTimeout(err) ? `no answer within ${this.timeoutMs} ms` : null;
  }
}

/**
 * Wraps a failure that happened before an answer arrived (connect refused,
 * deadline) so callers see one error type with the provider name. A caller's
 * plain abort (not a timeout) passes through as is.
 */
export function transportError(provider: string, err: unknown, d: Deadline): Error {
  if (err instanceof PinProviderError) return err;
  const late = d.timeoutMessage(err);
  if (late) return new PinProviderError(provider, null, late);
  if (err instanceof Error && (err.name === 'AbortError' || d.caller?.aborted)) return err;
  const cause = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : err;
  return new PinProviderError(provider, null, `request failed: ${String(cause)}`);
}

/** Statuses where trying again later can help; everything else 4xx is permanent. */
export function isPermanentStatus(status: number): boolean {
  return status >= 400 && status < 500 && status !== 408 && status !== 425 && status !== 429;
}

/** Reads a short reason from an error response: JSON `error`/`message`/`reason` fields or the text. */
export async function errorReason(res: Response): Promise<string> {
  let text = '';
  try {
    text = await res.text();
  } catch {
    return `HTTP ${res.status}`;
  }
  try {
    const body = JSON.parse(text) as unknown;
    const reason = pickReason(body);
    if (reason) return `HTTP ${res.status}: ${reason}`;
  } catch {
    // not JSON; fall through to the text
  }
  const short = text.trim().slice(0, 200);
  return short ? `HTTP ${res.status}: ${short}` : `HTTP ${res.status}`;
}

function pickReason(body: unknown): string | null {
  if (typeof body === 'string') return body;
  if (typeof body !== 'object' || body === null) return null;
  const obj = body as Record<string, unknown>;
  const parts: string[] = [];
  for (const key of ['error', 'reason', 'message', 'details', 'Message']) {
    const v = obj[key];
    if (typeof v === 'string' && v) parts.push(v);
    else if (typeof v === 'object' && v !== null) {
      const nested = pickReason(v);
      if (nested) parts.push(nested);
    }
  }
  return parts.length ? parts.join(': ') : null;
}

/** Fails with a PinProviderError unless the response is 2xx. */
export async function expectOk(provider: string, res: Response): Promise<void> {
  if (res.ok) return;
  const reason = await errorReason(res);
  throw new PinProviderError(provider, res.status, reason, isPermanentStatus(res.status));
}
