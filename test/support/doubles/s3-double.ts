// Test double for an S3-compatible IPFS pinning bucket (Filebase-style), the
// third-party service behind the `s3_bucket` provider kind. Speaks the S3
// REST protocol on a loopback port, path-style (`/bucket/key`): PutObject,
// HeadObject, GetObject. Every request must carry a valid AWS Signature V4
// in the Authorization header: the double rebuilds the canonical request,
// derives the signing key from the configured secret and compares — a wrong
// secret gets 403 SignatureDoesNotMatch, an unknown key 403
// InvalidAccessKeyId, an unknown bucket 404 NoSuchBucket, a body that does
// not match its x-amz-content-sha256 / x-amz-checksum-crc32 / Content-MD5
// 400. Like Filebase, it reports the CID of the stored bytes in the
// `x-amz-meta-cid` header of PutObject and HeadObject answers.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { crc32 } from 'node:zlib';
import { readAll, unixfsAdd } from './kubo-rpc-double.ts';

export interface S3Object {
  bytes: Buffer;
  cid: string;
  contentType: string;
  metadata: Record<string, string>;
  lastModified: Date;
}

export interface S3DoubleOptions {
  accessKey: string;
  secretKey: string;
  buckets: string[];
  region?: string;
}

export interface S3Double {
  /** Endpoint URL (the provider's `endpoint`). */
  url: string;
  region: string;
  /** bucket → key → object */
  buckets: Map<string, Map<string, S3Object>>;
  /** Replace to revoke the old secret (signatures made with it then fail). */
  secretKey: string;
  /** `full`: writes fail with 403 QuotaExceeded; `hang`: never answers. */
  mode: 'ok' | 'full' | 'hang';
  /**
   * `v1`: CIDv1 text. `v0-when-possible`: CIDv0 text (Qm…) whenever the root
   * is dag-pb (multi-chunk objects), as some services report it.
   */
  cidForm: 'v1' | 'v0-when-possible';
  /** False: PutObject answers without x-amz-meta-cid (HeadObject still has it). */
  cidOnPut: boolean;
  /** Every request as `METHOD path`, including refused ones. */
  log: string[];
  close(): Promise<void>;
}

class S3Error extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, string> = {},
  ) {
    super(message);
  }
}

const xmlEscape = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function sendError(res: ServerResponse, req: IncomingMessage, err: S3Error): void {
  const fields = Object.entries({ Code: err.code, Message: err.message, ...err.extra })
    .map(([k, v]) => `<${k}>${xmlEscape(v)}</${k}>`)
    .join('');
  const text = `<?xml version="1.0" encoding="UTF-8"?>\n<Error>${fields}<RequestId>${randomBytes(8).toString('hex')}</RequestId></Error>`;
  res.writeHead(err.status, {
    'content-type': 'application/xml',
    'content-length': req.method === 'HEAD' ? '0' : Buffer.byteLength(text),
  });
  res.end(req.method === 'HEAD' ? undefined : text);
}

// RFC 3986 unreserved characters stay; everything else is %XX (uppercase).
function uriEncode(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

const sha256Hex = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();

interface ParsedAuth {
  accessKey: string;
  date: string;
  region: string;
  service: string;
  terminal: string;
  signedHeaders: string[];
  signature: string;
}

function parseAuthorization(header: string | undefined): ParsedAuth {
  if (!header) throw new S3Error(403, 'AccessDenied', 'Access Denied');
  const m =
    /^AWS4-HMAC-SHA256\s+Credential=([^/\s]+)\/(\d{8})\/([^/]+)\/([^/]+)\/([^,\s]+),\s*SignedHeaders=([^,\s]+),\s*Signature=([0-9a-f]{64})$/.exec(
      header.trim(),
    );
  if (!m) {
    throw new S3Error(400, 'AuthorizationHeaderMalformed', 'The authorization header is malformed.');
  }
  const [, accessKey = '', date = '', region = '', service = '', terminal = '', signed = '', signature = ''] =
    m;
  return { accessKey, date, region, service, terminal, signedHeaders: signed.split(';'), signature };
}

function canonicalQuery(rawQuery: string): string {
  if (!rawQuery) return '';
  const pairs = rawQuery.split('&').map((kv) => {
    const eq = kv.indexOf('=');
    const k = decodeURIComponent(eq === -1 ? kv : kv.slice(0, eq));
    const v = eq === -1 ? '' : decodeURIComponent(kv.slice(eq + 1).replace(/\+/g, '%20'));
    return [uriEncode(k), uriEncode(v)] as const;
  });
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  return pairs.map(([k, v]) => `${k}=${v}`).join('&');
}

/** Verifies the SigV4 header signature; throws the error S3 would answer. */
function verifySignature(
  req: IncomingMessage,
  rawPath: string,
  rawQuery: string,
  keys: { accessKey: string; secretKey: string; region: string },
): void {
  const auth = parseAuthorization(req.headers.authorization);
  if (auth.accessKey !== keys.accessKey) {
    throw new S3Error(
      403,
      'InvalidAccessKeyId',
      'The AWS Access Key Id you provided does not exist in our records.',
      {
        AWSAccessKeyId: auth.accessKey,
      },
    );
  }
  const amzDate = req.headers['x-amz-date'];
  if (typeof amzDate !== 'string' || !/^\d{8}T\d{6}Z$/.test(amzDate)) {
    throw new S3Error(403, 'AccessDenied', 'AWS authentication requires a valid Date or x-amz-date header');
  }
  if (auth.date !== amzDate.slice(0, 8) || auth.service !== 's3' || auth.terminal !== 'aws4_request') {
    throw new S3Error(
      400,
      'AuthorizationHeaderMalformed',
      'The authorization header credential scope is wrong.',
    );
  }
  if (auth.region !== keys.region) {
    throw new S3Error(
      400,
      'AuthorizationHeaderMalformed',
      `The authorization header is malformed; the region '${auth.region}' is wrong; expecting '${keys.region}'`,
    );
  }
  const when = Date.UTC(
    Number(amzDate.slice(0, 4)),
    Number(amzDate.slice(4, 6)) - 1,
    Number(amzDate.slice(6, 8)),
    Number(amzDate.slice(9, 11)),
    Number(amzDate.slice(11, 13)),
    Number(amzDate.slice(13, 15)),
  );
  if (Math.abs(Date.now() - when) > 15 * 60_000) {
    throw new S3Error(
      403,
      'RequestTimeTooSkewed',
      'The difference between the request time and the current time is too large.',
    );
  }
  for (const required of ['host', 'x-amz-date', 'x-amz-content-sha256']) {
    if (!auth.signedHeaders.includes(required)) {
      throw new S3Error(403, 'AccessDenied', `header ${required} must be signed`);
    }
  }
  const payloadHash = req.headers['x-amz-content-sha256'];
  if (typeof payloadHash !== 'string') {
    throw new S3Error(
      400,
      'InvalidRequest',
      'Missing required header for this request: x-amz-content-sha256',
    );
  }
  const canonicalHeaders = auth.signedHeaders
    .map((name) => {
      const value = req.headersDistinct[name];
      if (value === undefined) throw new S3Error(403, 'AccessDenied', `signed header ${name} is missing`);
      return `${name}:${value.map((v) => v.trim().replace(/\s+/g, ' ')).join(',')}\n`;
    })
    .join('');
  const canonicalRequest = [
    req.method,
    rawPath,
    canonicalQuery(rawQuery),
    canonicalHeaders,
    auth.signedHeaders.join(';'),
    payloadHash,
  ].join('\n');
  const scope = `${auth.date}/${auth.region}/s3/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  const signingKey = hmac(
    hmac(hmac(hmac(`AWS4${keys.secretKey}`, auth.date), auth.region), 's3'),
    'aws4_request',
  );
  const expected = hmac(signingKey, stringToSign);
  if (!timingSafeEqual(expected, Buffer.from(auth.signature, 'hex'))) {
    throw new S3Error(
      403,
      'SignatureDoesNotMatch',
      'The request signature we calculated does not match the signature you provided. Check your key and signing method.',
    );
  }
}

/** Checks the body against every digest the client declared. */
function verifyPayload(req: IncomingMessage, body: Buffer): void {
  const declared = req.headers['x-amz-content-sha256'] as string;
  if (declared.startsWith('STREAMING-')) {
    throw new S3Error(501, 'NotImplemented', 'this double does not accept aws-chunked uploads');
  }
  if (declared !== 'UNSIGNED-PAYLOAD' && declared !== sha256Hex(body)) {
    throw new S3Error(
      400,
      'XAmzContentSHA256Mismatch',
      "The provided 'x-amz-content-sha256' header does not match what was computed.",
    );
  }
  const crc = req.headers['x-amz-checksum-crc32'];
  if (typeof crc === 'string') {
    const actual = Buffer.alloc(4);
    actual.writeUInt32BE(crc32(body));
    if (crc !== actual.toString('base64')) {
      throw new S3Error(400, 'BadDigest', 'The CRC32 you specified did not match the calculated checksum.');
    }
  }
  const md5 = req.headers['content-md5'];
  if (typeof md5 === 'string' && md5 !== createHash('md5').update(body).digest('base64')) {
    throw new S3Error(400, 'BadDigest', 'The Content-MD5 you specified did not match what we received.');
  }
}

export async function startS3Double(opts: S3DoubleOptions): Promise<S3Double> {
  const hanging: ServerResponse[] = [];
  const double: S3Double = {
    url: '',
    region: opts.region ?? 'us-east-1',
    buckets: new Map(opts.buckets.map((b) => [b, new Map()])),
    secretKey: opts.secretKey,
    mode: 'ok',
    cidForm: 'v1',
    cidOnPut: true,
    log: [],
    close: async () => {},
  };

  async function cidOf(bytes: Buffer): Promise<string> {
    const { cid } = await unixfsAdd(bytes, { cidVersion: 1, rawLeaves: true, chunkSize: 262_144 });
    if (double.cidForm === 'v0-when-possible' && cid.code === 0x70 && cid.multihash.code === 0x12) {
      return cid.toV0().toString();
    }
    return cid.toString();
  }

  function objectHeaders(obj: S3Object): Record<string, string> {
    const headers: Record<string, string> = {
      etag: `"${createHash('md5').update(obj.bytes).digest('hex')}"`,
      'last-modified': obj.lastModified.toUTCString(),
      'content-type': obj.contentType,
    };
    for (const [k, v] of Object.entries(obj.metadata)) headers[`x-amz-meta-${k}`] = v;
    headers['x-amz-meta-cid'] = obj.cid;
    return headers;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const rawPath = q === -1 ? url : url.slice(0, q);
    const rawQuery = q === -1 ? '' : url.slice(q + 1);
    double.log.push(`${req.method} ${rawPath}`);
    const body = await readAll(req);
    verifySignature(req, rawPath, rawQuery, {
      accessKey: opts.accessKey,
      secretKey: double.secretKey,
      region: double.region,
    });
    if (double.mode === 'hang') {
      hanging.push(res);
      return;
    }
    const [, bucketName = '', ...keyParts] = rawPath.split('/');
    const bucket = double.buckets.get(decodeURIComponent(bucketName));
    if (!bucket) {
      throw new S3Error(404, 'NoSuchBucket', 'The specified bucket does not exist', {
        BucketName: decodeURIComponent(bucketName),
      });
    }
    const key = decodeURIComponent(keyParts.join('/'));
    if (!key)
      throw new S3Error(501, 'NotImplemented', 'bucket-level operations are not implemented by this double');
    switch (req.method) {
      case 'PUT': {
        verifyPayload(req, body);
        if (double.mode === 'full') {
          throw new S3Error(
            403,
            'QuotaExceeded',
            'The bucket has reached its storage quota; no objects can be added.',
          );
        }
        const metadata: Record<string, string> = {};
        for (const [name, value] of Object.entries(req.headers)) {
          if (name.startsWith('x-amz-meta-') && typeof value === 'string') metadata[name.slice(11)] = value;
        }
        const obj: S3Object = {
          bytes: body,
          cid: await cidOf(body),
          contentType: req.headers['content-type'] ?? 'binary/octet-stream',
          metadata,
          lastModified: new Date(),
        };
        bucket.set(key, obj);
        const answer: Record<string, string> = {
          etag: objectHeaders(obj).etag as string,
          'content-length': '0',
        };
        if (double.cidOnPut) answer['x-amz-meta-cid'] = obj.cid;
        res.writeHead(200, answer);
        res.end();
        return;
      }
      case 'HEAD':
      case 'GET': {
        const obj = bucket.get(key);
        if (!obj) throw new S3Error(404, 'NoSuchKey', 'The specified key does not exist.', { Key: key });
        res.writeHead(200, { ...objectHeaders(obj), 'content-length': String(obj.bytes.byteLength) });
        res.end(req.method === 'HEAD' ? undefined : obj.bytes);
        return;
      }
      default:
        throw new S3Error(
          405,
          'MethodNotAllowed',
          'The specified method is not allowed against this resource.',
        );
    }
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (err instanceof S3Error) sendError(res, req, err);
      else sendError(res, req, new S3Error(500, 'InternalError', String(err)));
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
