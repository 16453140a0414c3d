// POP3's multi-line form of a message: byte-stuffed lines (RFC 1939 §3: a
// line starting with "." gets another "."), ending in CRLF before the
// terminating ".", and TOP's cut (header, blank line, first n body lines).

/** The message byte-stuffed, in pieces (no copy of the whole message). */
export function* dotStuff(raw: Buffer): Generator<Buffer> {
  const dot = Buffer.from('.');
  if (raw[0] === 0x2e) yield dot;
  let start = 0;
  for (;;) {
    const idx = raw.indexOf('\n.', start);
    if (idx < 0) break;
    yield raw.subarray(start, idx + 1);
    yield dot;
    start = idx + 1;
  }
  if (start < raw.length) yield raw.subarray(start);
  if (raw.length === 0 || raw[raw.length - 1] !== 0x0a) yield Buffer.from('\r\n');
}

/** The header block, the blank line, and the first `lines` lines of the body. */
export function topOf(raw: Buffer, lines: number): Buffer {
  let end = raw.indexOf('\r\n\r\n');
  let sep = 4;
  const lf = raw.indexOf('\n\n');
  if (end < 0 || (lf >= 0 && lf < end)) {
    end = lf;
    sep = 2;
  }
  if (end < 0) return raw;
  let pos = end + sep;
  for (let i = 0; i < lines && pos < raw.length; i++) {
    const nl = raw.indexOf(0x0a, pos);
    pos = nl < 0 ? raw.length : nl + 1;
  }
  return raw.subarray(0, pos);
}
