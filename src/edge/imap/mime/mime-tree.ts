// The MIME structure of a message as byte offsets into its raw bytes, so
// FETCH sections (BODY[1.2], BODY[2.HEADER], BODY[1.MIME], …) are cut from
// the exact original bytes. Header values are kept as latin1 strings
// (one char per byte), so whatever 8-bit bytes a header holds come back
// unchanged when written out again.

export interface HeaderField {
  /** Lowercased field name. */
  key: string;
  /** Unfolded value, leading whitespace trimmed (latin1: one char per byte). */
  value: string;
  /** The field's raw lines, folding and line ends included. */
  start: number;
  end: number;
}

export interface MimeNode {
  raw: Buffer;
  /** Start of this part's header block. */
  start: number;
  /** Start of the body: just after the blank line (or `end` when there is none). */
  bodyStart: number;
  end: number;
  headers: HeaderField[];
  type: string;
  subtype: string;
  params: [string, string][];
  children: MimeNode[];
  /** For message/rfc822 parts: the embedded message. */
  message?: MimeNode;
}

const MAX_DEPTH = 12;
const MAX_NODES = 2000;

export function header(node: MimeNode, key: string): string | undefined {
  return node.headers.find((h) => h.key === key)?.value;
}

/** Parses header fields from `start`; returns them and where the body starts. */
export function parseHeaderBlock(
  raw: Buffer,
  start: number,
  end: number,
): { headers: HeaderField[]; bodyStart: number } {
  const headers: HeaderField[] = [];
  let pos = start;
  let current: { start: number; nameEnd: number; key: string } | undefined;
  const finish = (fieldEnd: number) => {
    if (!current) return;
    const text = raw.subarray(current.nameEnd + 1, fieldEnd).toString('latin1');
    headers.push({
      key: current.key,
      value: text
        .replace(/\r?\n(?=[ \t])/g, '')
        .replace(/\r?\n$/, '')
        .trim(),
      start: current.start,
      end: fieldEnd,
    });
    current = undefined;
  };
  while (pos < end) {
    const nl = raw.indexOf(0x0a, pos);
    const lineEnd = nl < 0 || nl >= end ? end : nl + 1;
    const first = raw[pos];
    if (first === 0x0d || first === 0x0a) {
      // The blank line that ends the header block.
      finish(pos);
      return { headers, bodyStart: lineEnd };
    }
    if ((first === 0x20 || first === 0x09) && current) {
      pos = lineEnd;
      continue;
    }
    finish(pos);
    const colon = raw.indexOf(0x3a, pos);
    if (colon > pos && colon < lineEnd) {
      const name = raw.subarray(pos, colon).toString('latin1').trim();
      if (/^[\x21-\x39\x3b-\x7e]+$/.test(name))
        current = { start: pos, nameEnd: colon, key: name.toLowerCase() };
    }
    pos = lineEnd;
  }
  finish(end);
  return { headers, bodyStart: end };
}

/** Splits `value; a=b; c="d e"` into the value and its parameters (names lowercased). */
export function parseParams(value: string): { value: string; params: [string, string][] } {
  const parts: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i] as string;
    if (c === '\\' && quoted && i + 1 < value.length) {
      cur += c + value[++i];
      continue;
    }
    if (c === '"') quoted = !quoted;
    if (c === ';' && !quoted) {
      parts.push(cur);
      cur = '';
      continue;
    }
    cur += c;
  }
  parts.push(cur);
  const params: [string, string][] = [];
  for (const p of parts.slice(1)) {
    const eq = p.indexOf('=');
    if (eq < 1) continue;
    const name = p.slice(0, eq).trim().toLowerCase();
    let v = p.slice(eq + 1).trim();
    if (v.startsWith('"') && v.endsWith('"') && v.length >= 2) v = v.slice(1, -1).replace(/\\(.)/g, '$1');
    if (name) params.push([name, v]);
  }
  return { value: (parts[0] ?? '').trim(), params };
}

interface Budget {
  nodes: number;
}

function parseNode(
  raw: Buffer,
  start: number,
  end: number,
  depth: number,
  defaultType: string,
  budget: Budget,
): MimeNode {
  budget.nodes++;
  const { headers, bodyStart } = parseHeaderBlock(raw, start, end);
  const ct = headers.find((h) => h.key === 'content-type')?.value;
  const parsed = ct ? parseParams(ct) : { value: defaultType, params: [] };
  let [type, subtype] = parsed.value
    .toLowerCase()
    .split('/')
    .map((s) => s.trim());
  if (!type || !subtype || !/^[a-z0-9!#$&^_.+-]+$/.test(type + subtype)) {
    // An unreadable Content-Type counts as the default (RFC 2045 §5.2).
    [type, subtype] = defaultType.split('/');
    parsed.params = ct ? parsed.params : [];
  }
  const node: MimeNode = {
    raw,
    start,
    bodyStart,
    end,
    headers,
    type: type as string,
    subtype: subtype as string,
    params: parsed.params.length || ct ? parsed.params : type === 'text' ? [['charset', 'us-ascii']] : [],
    children: [],
  };
  if (depth >= MAX_DEPTH || budget.nodes >= MAX_NODES) return node;
  const boundary = node.params.find(([k]) => k === 'boundary')?.[1];
  if (node.type === 'multipart' && boundary) {
    const childDefault = node.subtype === 'digest' ? 'message/rfc822' : 'text/plain';
    for (const [s, e] of splitMultipart(raw, bodyStart, end, boundary)) {
      if (budget.nodes >= MAX_NODES) break;
      node.children.push(parseNode(raw, s, e, depth + 1, childDefault, budget));
    }
  } else if (node.type === 'message' && (node.subtype === 'rfc822' || node.subtype === 'global')) {
    node.message = parseNode(raw, bodyStart, end, depth + 1, 'text/plain', budget);
  }
  return node;
}

/** The [start, end) ranges of the parts between `--boundary` delimiter lines. */
export function splitMultipart(raw: Buffer, from: number, to: number, boundary: string): [number, number][] {
  const marker = Buffer.from(`--${boundary}`, 'latin1');
  const ranges: [number, number][] = [];
  let partStart = -1;
  let pos = from;
  while (pos < to) {
    const idx = raw.indexOf(marker, pos);
    if (idx < 0 || idx + marker.length > to) break;
    if (idx !== from && raw[idx - 1] !== 0x0a) {
      pos = idx + 1;
      continue;
    }
    let e = idx + marker.length;
    const close = raw[e] === 0x2d && raw[e + 1] === 0x2d;
    if (close) e += 2;
    while (e < to && (raw[e] === 0x20 || raw[e] === 0x09)) e++;
    if (e < to && raw[e] !== 0x0d && raw[e] !== 0x0a) {
      pos = idx + 1;
      continue;
    }
    if (partStart >= 0) {
      // The line break before a delimiter belongs to the delimiter.
      let pe = idx;
      if (pe > partStart && raw[pe - 1] === 0x0a) pe--;
      if (pe > partStart && raw[pe - 1] === 0x0d) pe--;
      ranges.push([partStart, Math.max(partStart, pe)]);
    }
    if (close) return ranges;
    const nl = raw.indexOf(0x0a, e);
    partStart = nl < 0 || nl >= to ? to : nl + 1;
    pos = partStart;
  }
  if (partStart >= 0) ranges.push([partStart, to]);
  return ranges;
}

export function parseMime(raw: Buffer): MimeNode {
  return parseNode(raw, 0, raw.length, 0, 'text/plain', { nodes: 0 });
}

/** Line count as IMAP reports it: line breaks, plus one for a last line without one. */
export function countLines(raw: Buffer, start: number, end: number): number {
  let n = 0;
  let pos = start;
  for (;;) {
    const nl = raw.indexOf(0x0a, pos);
    if (nl < 0 || nl >= end) break;
    n++;
    pos = nl + 1;
  }
  return pos < end ? n + 1 : n;
}
