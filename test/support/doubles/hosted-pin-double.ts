// Test double for a hosted pinning service with a Pinata-style API (the
// third-party service behind the `hosted_jwt` provider kind). Speaks its
// wire protocol on a loopback port: `POST /pinning/pinFileToIPFS`, multipart
// with a `file` part plus optional `pinataOptions` / `pinataMetadata` JSON
// parts and a `network` field, `Authorization: Bearer <JWT>`; answers
// `{IpfsHash, PinSize, Timestamp, isDuplicate}`. The CID is computed for
// real under the requested cidVersion. Strict like the service: a JWT other
// than the current one gets 401, malformed uploads 400. Tests can switch it
// into failure modes: 500, hang (no answer), quota full, or a wrong CID.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseMultipart, readAll, unixfsAdd } from './kubo-rpc-double.ts';

export type HostedPinMode = 'ok' | 'error' | 'hang' | 'quota' | 'wrong-cid';

export interface HostedUpload {
  cid: string;
  bytes: Buffer;
  name: string | null;
  network: string;
  cidVersion: 0 | 1;
}

export interface HostedPinDouble {
  /** The API base URL (the provider's `api_url`). */
  url: string;
  /** The JWT it accepts now; replace it to revoke the old one. */
  jwt: string;
  mode: HostedPinMode;
  /** Accepted uploads, in order. */
  uploads: HostedUpload[];
  /** Requests seen, including refused ones. */
  requests: number;
  close(): Promise<void>;
}

class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    readonly details: string,
  ) {
    super(details);
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

function parseJsonPart(name: string, text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  try {
    const v = JSON.parse(text) as unknown;
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new ApiError(400, 'INVALID_REQUEST', `${name} must be a JSON object`);
}

export async function startHostedPinDouble(opts: { jwt: string }): Promise<HostedPinDouble> {
  const hanging: ServerResponse[] = [];
  const double: HostedPinDouble = {
    url: '',
    jwt: opts.jwt,
    mode: 'ok',
    uploads: [],
    requests: 0,
    close: async () => {},
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    double.requests++;
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/pinning/pinFileToIPFS')
      throw new ApiError(404, 'NOT_FOUND', `no route ${req.method} ${path}`);
    if (req.method !== 'POST') throw new ApiError(405, 'METHOD_NOT_ALLOWED', 'use POST');
    const auth = req.headers.authorization ?? '';
    if (auth !== `Bearer ${double.jwt}`) {
      req.resume();
      throw new ApiError(401, 'INVALID_CREDENTIALS', 'Invalid/expired credentials');
    }
    const body = await readAll(req);
    if (double.mode === 'hang') {
      hanging.push(res);
      return;
    }
    if (double.mode === 'error') throw new ApiError(500, 'INTERNAL_SERVER_ERROR', 'something broke upstream');
    if (double.mode === 'quota') {
      throw new ApiError(403, 'PAYMENT_REQUIRED', 'storage quota reached: upgrade the plan or unpin files');
    }
    let parts: ReturnType<typeof parseMultipart>;
    try {
      parts = parseMultipart(req.headers['content-type'], body);
    } catch (err) {
      throw new ApiError(400, 'INVALID_REQUEST', (err as Error).message);
    }
    const byName = new Map(parts.map((p) => [p.name, p]));
    const file = byName.get('file');
    if (!file || file.filename === null)
      throw new ApiError(400, 'INVALID_REQUEST', 'a "file" part is required');
    if (file.body.byteLength === 0) throw new ApiError(400, 'INVALID_REQUEST', 'file is empty');
    const options = parseJsonPart('pinataOptions', byName.get('pinataOptions')?.body.toString('utf8'));
    const metadata = parseJsonPart('pinataMetadata', byName.get('pinataMetadata')?.body.toString('utf8'));
    const version = options.cidVersion ?? 0;
    if (version !== 0 && version !== 1)
      throw new ApiError(400, 'INVALID_REQUEST', 'cidVersion must be 0 or 1');
    const network = byName.get('network')?.body.toString('utf8') ?? 'public';
    if (network !== 'public' && network !== 'private') {
      throw new ApiError(400, 'INVALID_REQUEST', 'network must be "public" or "private"');
    }
    const { cid, size } = await unixfsAdd(file.body, {
      cidVersion: version,
      rawLeaves: version === 1,
      chunkSize: 262_144,
    });
    let hash = cid.toString();
    // A misbehaving service: reports the CID of other bytes.
    if (double.mode === 'wrong-cid')
      hash = (
        await unixfsAdd(Buffer.from('not your bytes'), { cidVersion: 1, rawLeaves: true, chunkSize: 262_144 })
      ).cid.toString();
    const isDuplicate = double.uploads.some((u) => u.cid === hash);
    double.uploads.push({
      cid: hash,
      bytes: file.body,
      name: typeof metadata.name === 'string' ? metadata.name : null,
      network,
      cidVersion: version,
    });
    sendJson(res, 200, {
      IpfsHash: hash,
      PinSize: Number(size),
      Timestamp: new Date().toISOString(),
      isDuplicate,
    });
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (err instanceof ApiError)
        sendJson(res, err.status, { error: { reason: err.reason, details: err.details } });
      else sendJson(res, 500, { error: { reason: 'INTERNAL_SERVER_ERROR', details: String(err) } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
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
