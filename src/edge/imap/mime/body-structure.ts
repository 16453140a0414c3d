// FETCH BODY and BODYSTRUCTURE (RFC 3501 §7.4.2). BODYSTRUCTURE adds the
// extension data (md5, disposition, language, location; for multiparts the
// parameters too).
import { list, nstr, type Piece } from '../protocol/format.ts';
import { envelope } from './envelope.ts';
import { countLines, header, type MimeNode, parseParams } from './mime-tree.ts';

const bytes = (s: string) => Buffer.from(s, 'latin1');
const nval = (s: string | undefined) => nstr(s === undefined || s === '' ? null : bytes(s));

function paramList(params: [string, string][]): Piece[] {
  if (params.length === 0) return ['NIL'];
  return list(params.flatMap(([k, v]) => [nstr(bytes(k)), nstr(bytes(v))]));
}

function disposition(node: MimeNode): Piece[] {
  const value = header(node, 'content-disposition');
  if (!value) return ['NIL'];
  const d = parseParams(value);
  if (!d.value) return ['NIL'];
  return list([nstr(bytes(d.value.toLowerCase())), paramList(d.params)]);
}

function language(node: MimeNode): Piece[] {
  const value = header(node, 'content-language');
  if (!value) return ['NIL'];
  const langs = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return langs.length === 0 ? ['NIL'] : list(langs.map((l) => nstr(bytes(l))));
}

export function bodyStructure(node: MimeNode, extended: boolean): Piece[] {
  if (node.type === 'multipart' && node.children.length > 0) {
    const items: Piece[] = [];
    for (const child of node.children) items.push(...bodyStructure(child, extended));
    items.push(' ', ...nstr(node.subtype));
    if (extended) {
      items.push(' ', ...paramList(node.params), ' ', ...disposition(node), ' ', ...language(node));
      items.push(' ', ...nval(header(node, 'content-location')));
    }
    return ['(', ...items, ')'];
  }
  const size = node.end - node.bodyStart;
  const fields: Piece[][] = [
    nstr(node.type),
    nstr(node.subtype),
    paramList(node.params),
    nval(header(node, 'content-id')),
    nval(header(node, 'content-description')),
    nstr((header(node, 'content-transfer-encoding') || '7bit').toLowerCase()),
    [String(size)],
  ];
  if (node.type === 'message' && node.message) {
    fields.push(envelope(node.message), bodyStructure(node.message, extended), [
      String(countLines(node.raw, node.bodyStart, node.end)),
    ]);
  } else if (node.type === 'text') {
    fields.push([String(countLines(node.raw, node.bodyStart, node.end))]);
  }
  if (extended) {
    fields.push(
      nval(header(node, 'content-md5')),
      disposition(node),
      language(node),
      nval(header(node, 'content-location')),
    );
  }
  return list(fields);
}
