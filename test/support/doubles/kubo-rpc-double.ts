// Test double for a Kubo node's RPC API (the third-party service behind
// `[ipfs] operator = "kubo"`). Speaks Kubo's wire protocol on a loopback
// port: `POST /api/v0/add` (multipart upload, NDJSON answer with
// Name/Hash/Size), `POST /api/v0/pin/rm`, `POST /api/v0/pin/ls`. CIDs are
// computed for real with ipfs-unixfs-importer under the options the request
// names (cid-version, raw-leaves, chunker size-N), so a wrong option gives a
// wrong CID, as it would against Kubo. Like Kubo, it answers 405 to anything
// but POST and reports command errors as HTTP 500 `{Message, Code, Type}`.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { importer } from 'ipfs-unixfs-importer';
import { fixedSize } from 'ipfs-unixfs-importer/chunker';
import { balanced } from 'ipfs-unixfs-importer/layout';
import { CID } from 'multiformats/cid';

export interface MultipartPart {
  name: string;
  filename: string | null;
  contentType: string | null;
  body: Buffer;
}

/** Parses a multipart/form-data body (RFC 7578); throws on a malformed one. */
export function parseMultipart(contentType: string | undefined, body: Buffer): MultipartPart[] {
  const m = /^multipart\/form-data\s*;.*boundary=(?:"([^"]+)"|([^\s;]+))/i.exec(contentType ?? '');
  const boundary = m?.[1] ?? m?.[2];
  if (!boundary) throw new Error('expected a multipart/form-data body with a boundary');
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: MultipartPart[] = [];
  let pos = body.indexOf(delimiter);
  if (pos !== 0 && pos !== -1 && body.subarray(0, pos).toString().trim() !== '') {
    throw new Error('multipart preamble is not allowed here');
  }
  if (pos === -1) throw new Error('multipart body has no boundary line');
  for (;;) {
    pos += delimiter.length;
    if (body.subarray(pos, pos + 2).toString() === '--') return parts;
    if (body.subarray(pos, pos + 2).toString() !== '\r\n')
      throw new Error('malformed multipart boundary line');
    pos += 2;
    const headerEnd = body.indexOf('\r\n\r\n', pos);
    if (headerEnd === -1) throw new Error('multipart part has no header end');
    const headers = new Map<string, string>();
    for (const line of body.subarray(pos, headerEnd).toString('utf8').split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n'), delimiter]), headerEnd + 4);
    if (next === -1) throw new Error('multipart body is not terminated');
    const disposition = headers.get('content-disposition') ?? '';
    const name = /\bname="([^"]*)"/i.exec(disposition)?.[1];
    if (name === undefined) throw new Error('multipart part has no name');
    const filename = /\bfilename="([^"]*)"/i.exec(disposition)?.[1] ?? null;
    parts.push({
      name,
      filename,
      contentType: headers.get('content-type') ?? null,
      body: body.subarray(headerEnd + 4, next),
    });
    pos = next + 2;
  }
}

export function readAll(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export interface AddSettings {
  cidVersion: 0 | 1;
  rawLeaves: boolean;
  chunkSize: number;
}

/** The CID and cumulative DAG size Kubo reports for `bytes` under these settings. */
export async function unixfsAdd(bytes: Uint8Array, s: AddSettings): Promise<{ cid: CID; size: bigint }> {
  const sink = { put: async (cid: CID) => cid };
  let root: { cid: CID; size: bigint } | undefined;
  for await (const entry of importer([{ content: bytes }], sink, {
    cidVersion: s.cidVersion,
    rawLeaves: s.rawLeaves,
    reduceSingleLeafToSelf: true,
    chunker: fixedSize({ chunkSize: s.chunkSize }),
    layout: balanced({ maxChildrenPerNode: 174 }),
  })) {
    root = entry;
  }
  if (!root) throw new Error('importer produced nothing');
  return root;
}

export interface KuboRpcDouble {
  /** Base URL to give kubo-rpc-client (`http://127.0.0.1:PORT`). */
  url: string;
  /** Recursively pinned roots (CIDv1 text) → file size. */
  pins: Map<string, number>;
  /** Every add call's query string, for assertions on what the client asked for. */
  addRequests: URLSearchParams[];
  /** `hang`: accept requests and never answer (to exercise client deadlines). */
  mode: 'ok' | 'hang';
  close(): Promise<void>;
}

class KuboError extends Error {}

function sendKuboError(res: ServerResponse, message: string): void {
  const text = `${JSON.stringify({ Message: message, Code: 0, Type: 'error' })}\n`;
  res.writeHead(500, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function boolArg(q: URLSearchParams, name: string, fallback: boolean): boolean {
  const v = q.get(name);
  if (v === null || v === '') return fallback;
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw new KuboError(`Could not convert value '${v}' to type 'bool' (for option '-${name}')`);
}

function addSettings(q: URLSearchParams): AddSettings {
  const version = q.get('cid-version') ?? '0';
  if (version !== '0' && version !== '1') throw new KuboError(`unknown CID version: ${version}`);
  const cidVersion = Number(version) as 0 | 1;
  // As in Kubo: CIDv1 implies raw leaves unless raw-leaves is given.
  const rawLeaves = boolArg(q, 'raw-leaves', cidVersion === 1);
  if (cidVersion === 0 && rawLeaves) throw new KuboError('CIDv0 only supports dag-pb leaves');
  const chunker = q.get('chunker') ?? 'size-262144';
  const m = /^size-(\d+)$/.exec(chunker);
  if (!m) throw new KuboError(`unrecognized chunker option: ${chunker} (this double supports size-N only)`);
  const chunkSize = Number(m[1]);
  if (chunkSize <= 0 || chunkSize > 2 * 1024 * 1024)
    throw new KuboError(`chunker size ${chunkSize} out of range`);
  const hash = q.get('hash');
  if (hash !== null && hash !== 'sha2-256')
    throw new KuboError(`this double only hashes sha2-256, asked ${hash}`);
  return { cidVersion, rawLeaves, chunkSize };
}

/** `port`: listen there (a test can start the double where a client already points); default any free port. */
export async function startKuboRpcDouble(opts: { port?: number } = {}): Promise<KuboRpcDouble> {
  const pins = new Map<string, number>();
  const addRequests: URLSearchParams[] = [];
  const hanging: ServerResponse[] = [];
  const double: KuboRpcDouble = {
    url: '',
    pins,
    addRequests,
    mode: 'ok',
    close: async () => {},
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://double');
    if (!url.pathname.startsWith('/api/v0/')) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('404 page not found\n');
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { 'content-type': 'text/plain', allow: 'POST' });
      res.end('405 - Method Not Allowed\n');
      return;
    }
    const body = await readAll(req);
    if (double.mode === 'hang') {
      hanging.push(res);
      return;
    }
    const q = url.searchParams;
    switch (url.pathname) {
      case '/api/v0/add': {
        addRequests.push(q);
        const settings = addSettings(q);
        const pin = boolArg(q, 'pin', true);
        const parts = parseMultipart(req.headers['content-type'], body);
        if (parts.length === 0) throw new KuboError('no files given');
        const lines: string[] = [];
        for (const part of parts) {
          if (part.contentType === 'application/x-directory') {
            throw new KuboError('this double does not add directories');
          }
          const { cid, size } = await unixfsAdd(part.body, settings);
          const hash = cid.toString();
          if (pin) pins.set(cid.toV1().toString(), part.body.byteLength);
          const name = part.filename ? decodeURIComponent(part.filename) : hash;
          lines.push(JSON.stringify({ Name: name, Hash: hash, Size: String(size) }));
        }
        const text = `${lines.join('\n')}\n`;
        res.writeHead(200, {
          'content-type': 'application/json',
          'x-chunked-output': '1',
          'x-stream-output': '1',
          'content-length': Buffer.byteLength(text),
        });
        res.end(text);
        return;
      }
      case '/api/v0/pin/rm':
      case '/api/v0/pin/ls': {
        const args = q.getAll('arg');
        if (args.length === 0) throw new KuboError('argument "ipfs-path" is required');
        const keys: string[] = [];
        for (const arg of args) {
          let cid: CID;
          try {
            cid = CID.parse(arg.replace(/^\/ipfs\//, ''));
          } catch {
            throw new KuboError(`invalid path "${arg}": invalid cid`);
          }
          const key = cid.toV1().toString();
          if (!pins.has(key)) {
            throw new KuboError(
              url.pathname.endsWith('rm') ? 'not pinned or pinned indirectly' : `path '${arg}' is not pinned`,
            );
          }
          keys.push(cid.toString());
          if (url.pathname.endsWith('rm')) pins.delete(key);
        }
        const answer = url.pathname.endsWith('rm')
          ? { Pins: keys }
          : { Keys: Object.fromEntries(keys.map((k) => [k, { Type: 'recursive', Name: '' }])) };
        const text = `${JSON.stringify(answer)}\n`;
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.end(text);
        return;
      }
      default:
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('404 page not found\n');
    }
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) =>
      sendKuboError(res, err instanceof Error ? err.message : String(err)),
    );
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  double.url = `http://127.0.0.1:${port}`;
  double.close = () =>
    new Promise<void>((resolve) => {
      for (const res of hanging.splice(0)) res.destroy();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return double;
}
