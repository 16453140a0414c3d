// BODY[section]<partial> (RFC 3501 §6.4.5): which bytes of the message a
// section names. Part numbers walk multiparts and embedded messages;
// HEADER, HEADER.FIELDS (…), HEADER.FIELDS.NOT (…), TEXT apply to the whole
// message or to an embedded message/rfc822 part; MIME to a part's own
// header block.
import { ImapSyntaxError } from '../protocol/tokens.ts';
import type { MimeNode } from './mime-tree.ts';

export type SectionKind = 'all' | 'header' | 'fields' | 'fields-not' | 'text' | 'mime';

export interface SectionSpec {
  path: number[];
  kind: SectionKind;
  fields: string[];
  /** How the response names it, e.g. `1.HEADER.FIELDS (SUBJECT)`. */
  label: string;
}

const MAX_PATH = 32;

export function parseSection(inner: string): SectionSpec {
  const text = inner.trim();
  const m = /^((?:[1-9]\d{0,5}\.?)*)(.*)$/s.exec(text);
  const pathText = (m?.[1] ?? '').replace(/\.$/, '');
  const rest = (m?.[2] ?? '').trim();
  const path = pathText ? pathText.split('.').map(Number) : [];
  if (path.length > MAX_PATH) throw new ImapSyntaxError('section part path too deep');
  if (pathText && m?.[1] && !m[1].endsWith('.') && rest)
    throw new ImapSyntaxError(`invalid section [${inner}]`);
  const upper = rest.toUpperCase();
  if (upper === '') return { path, kind: 'all', fields: [], label: pathText };
  const label = (suffix: string) => (pathText ? `${pathText}.${suffix}` : suffix);
  if (upper === 'HEADER') return { path, kind: 'header', fields: [], label: label('HEADER') };
  if (upper === 'TEXT') return { path, kind: 'text', fields: [], label: label('TEXT') };
  if (upper === 'MIME') {
    if (path.length === 0) throw new ImapSyntaxError('MIME needs a part number');
    return { path, kind: 'mime', fields: [], label: label('MIME') };
  }
  const f = /^HEADER\.FIELDS(\.NOT)?\s*\(([^()]*)\)$/i.exec(rest);
  if (f) {
    const fields = (f[2] as string).split(/\s+/).filter(Boolean);
    if (fields.length === 0) throw new ImapSyntaxError('HEADER.FIELDS needs at least one field name');
    for (const name of fields) {
      if (!/^[\x21-\x39\x3b-\x7e]+$/.test(name))
        throw new ImapSyntaxError(`invalid header field name ${name}`);
    }
    const upperFields = fields.map((x) => x.toUpperCase());
    const kind = f[1] ? 'fields-not' : 'fields';
    return {
      path,
      kind,
      fields: fields.map((x) => x.toLowerCase()),
      label: label(`HEADER.FIELDS${f[1] ? '.NOT' : ''} (${upperFields.join(' ')})`),
    };
  }
  throw new ImapSyntaxError(`invalid section [${inner}]`);
}

/** The node a part path names, or null when the message has no such part. */
function resolve(root: MimeNode, path: number[]): MimeNode | null {
  let node = root;
  for (const [i, n] of path.entries()) {
    // Inside an embedded message, numbering continues in that message.
    const scope = i > 0 && node.type === 'message' && node.message ? node.message : node;
    if (scope.type === 'multipart' && scope.children.length > 0) {
      const child = scope.children[n - 1];
      if (!child) return null;
      node = child;
    } else {
      if (n !== 1) return null;
      node = scope;
    }
  }
  return node;
}

function headerFields(node: MimeNode, keep: (key: string) => boolean): Buffer {
  const out: Buffer[] = [];
  for (const h of node.headers) if (keep(h.key)) out.push(node.raw.subarray(h.start, h.end));
  out.push(Buffer.from('\r\n'));
  return Buffer.concat(out);
}

/** The section's bytes; empty when the message has no such part (RFC 3501 answers "" then). */
export function extractSection(root: MimeNode, spec: SectionSpec): Buffer {
  const node = resolve(root, spec.path);
  if (!node) return Buffer.alloc(0);
  const raw = node.raw;
  if (spec.kind === 'all') {
    return spec.path.length === 0
      ? raw.subarray(root.start, root.end)
      : raw.subarray(node.bodyStart, node.end);
  }
  if (spec.kind === 'mime') return raw.subarray(node.start, node.bodyStart);
  // HEADER/TEXT of a part: only message/rfc822 parts have them.
  let msg: MimeNode = node;
  if (spec.path.length > 0) {
    if (!node.message) return Buffer.alloc(0);
    msg = node.message;
  }
  if (spec.kind === 'header') return raw.subarray(msg.start, msg.bodyStart);
  if (spec.kind === 'text') return raw.subarray(msg.bodyStart, msg.end);
  const set = new Set(spec.fields);
  return headerFields(msg, spec.kind === 'fields' ? (k) => set.has(k) : (k) => !set.has(k));
}
