// pind's gateway: `GET|HEAD /ipfs/{cid}` for every CID pinned here. The file
// is streamed leaf by leaf; `?format=raw` (or `Accept:
// application/vnd.ipld.raw`) answers the root block itself, as a trustless
// gateway does. Content never changes under a CID, so answers are cached
// for a year and revalidated by ETag.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { InvalidCidError, parseCid } from '../../src/mail/cid.ts';
import { methodNotAllowed, sendError } from './http.ts';
import type { PindContext } from './pin-routes.ts';

const IMMUTABLE = 'public, max-age=29030400, immutable';
const RAW_TYPE = 'application/vnd.ipld.raw';

type Format = 'file' | 'raw';

function pickFormat(query: URLSearchParams, accept: string | undefined): Format | { unsupported: string } {
  const format = query.get('format');
  if (format !== null) return format === 'raw' ? 'raw' : { unsupported: format };
  return accept?.toLowerCase().includes(RAW_TYPE) ? 'raw' : 'file';
}

/** RFC 9110 If-None-Match: a list of entity tags (weak ones compare weakly) or `*`. */
function notModified(req: IncomingMessage, etag: string): boolean {
  const header = req.headers['if-none-match'];
  if (!header) return false;
  return header
    .split(',')
    .map((t) => t.trim().replace(/^W\//, ''))
    .some((t) => t === '*' || t === etag);
}

export async function handleIpfs(
  ctx: PindContext,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  query: URLSearchParams,
): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') return methodNotAllowed(res, 'GET, HEAD, OPTIONS');
  const [text = '', ...subpath] = path.slice('/ipfs/'.length).split('/');
  let cid: ReturnType<typeof parseCid>;
  try {
    cid = parseCid(decodeURIComponent(text));
  } catch (err) {
    if (err instanceof InvalidCidError || err instanceof URIError) {
      return sendError(res, 400, 'invalid_cid', `${JSON.stringify(text)} is not a CID`);
    }
    throw err;
  }
  const v1 = cid.toV1().toString();
  if (subpath.some((s) => s !== '')) {
    return sendError(
      res,
      404,
      'not_found',
      'pind serves files by CID only; paths inside a CID are not supported',
    );
  }
  const format = pickFormat(query, req.headers.accept);
  if (typeof format === 'object') {
    return sendError(
      res,
      400,
      'unsupported_format',
      `format ${JSON.stringify(format.unsupported)} is not served; use raw or leave it out`,
    );
  }
  const record = await ctx.store.getPin(v1);
  if (!record) return sendError(res, 404, 'not_found', `${v1} is not pinned here`);

  // The raw block is a different representation from the file bytes (for a
  // multi-block file), so it gets its own ETag, the way IPFS gateways tag it.
  const etag = format === 'raw' ? `"${v1}.raw"` : `"${v1}"`;
  const headers: Record<string, string> = {
    etag,
    'cache-control': IMMUTABLE,
    'x-ipfs-path': `/ipfs/${cid.toString()}`,
    'x-ipfs-roots': v1,
    vary: 'Accept',
  };
  if (notModified(req, etag)) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  headers['x-content-type-options'] = 'nosniff';

  if (format === 'raw') {
    const block = await ctx.store.getBlock(cid);
    if (!block) throw new Error(`root block of pinned ${v1} is missing from the store`);
    res.writeHead(200, {
      ...headers,
      'content-type': RAW_TYPE,
      'content-length': String(block.byteLength),
      'content-disposition': `attachment; filename="${v1}.bin"`,
    });
    res.end(req.method === 'HEAD' ? undefined : block);
    return;
  }

  // Read the first block before answering, so a damaged store gives a clean
  // 500 rather than a cut-off 200 (for most mail bodies it is the only block).
  const blocks = ctx.store.readFile(record);
  const first = req.method === 'HEAD' ? null : await blocks.next();
  res.writeHead(200, {
    ...headers,
    'content-type': 'application/octet-stream',
    'content-length': String(record.size),
  });
  if (first === null || first.done) {
    res.end();
    return;
  }
  if (!res.write(first.value)) await drained(res);
  for await (const chunk of blocks) {
    if (res.destroyed) return;
    if (!res.write(chunk)) await drained(res);
  }
  res.end();
}

/** Waits until the socket takes more, or the client is gone; leaves no listeners behind. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
