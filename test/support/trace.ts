// Delivered mail carries trace fields on top of the message as sent
// (docs/inbound.md "Trace fields"): Return-Path, and for MX mail
// Authentication-Results and Received. Tests that check the rest of the
// bytes are exact take that block off first.
const TRACE = new Set(['return-path', 'authentication-results', 'received']);

/** Splits the leading block of trace fields off a delivered message. */
export function splitTrace(delivered: string): { trace: string[]; message: string } {
  const trace: string[] = [];
  let at = 0;
  for (;;) {
    const colon = delivered.indexOf(':', at);
    const name = colon > at ? delivered.slice(at, colon).toLowerCase() : '';
    if (!TRACE.has(name)) break;
    // The field runs to the first CRLF not followed by whitespace (folding).
    let end = delivered.indexOf('\r\n', colon);
    while (end >= 0 && /[ \t]/.test(delivered[end + 2] ?? '')) end = delivered.indexOf('\r\n', end + 2);
    if (end < 0) break;
    trace.push(delivered.slice(at, end));
    at = end + 2;
  }
  return { trace, message: delivered.slice(at) };
}

/** The message as sent, checking that delivery put a Return-Path on top. */
export function withoutTrace(delivered: string): string {
  const { trace, message } = splitTrace(delivered);
  if (!trace[0]?.startsWith('Return-Path: <'))
    throw new Error(`no Return-Path on top of ${delivered.slice(0, 80)}`);
  return message;
}
