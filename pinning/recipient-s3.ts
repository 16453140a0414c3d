// s3_bucket: an S3-compatible pinning bucket (Filebase-style). PutObject with
// SigV4 under the object key = the expected CID; the service pins the bytes
// and reports their CID in the `x-amz-meta-cid` response header. When a
// service leaves that header off the PUT answer, HeadObject reads it from the
// object's metadata. Either form (CIDv0 or v1) is normalized to CIDv1.
import { HeadObjectCommand, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { DEFAULT_S3_ENDPOINT, type S3BucketProvider } from '../src/contracts/pin-provider.ts';
import { PinProviderError, type PinResult } from '../src/contracts/pinner.ts';
import { normalizeCid } from '../src/mail/cid.ts';
import { Deadline, isPermanentStatus } from './http-util.ts';

/** A fixed choice, or a rule per endpoint URL. */
export type S3PathStyle = boolean | ((endpoint: URL) => boolean);

// Filebase (and most S3-compatible services) expect this region in the
// signature scope; it is not a provider field in the reference.
const SIGNING_REGION = 'us-east-1';
const CID_HEADER = 'x-amz-meta-cid';

/** Path-style everywhere except AWS itself, which prefers virtual-hosted buckets. */
export function defaultPathStyle(endpoint: URL): boolean {
  return !/(^|\.)amazonaws\.com$/i.test(endpoint.hostname);
}

export function createS3Pin(
  cfg: S3BucketProvider,
  o: { timeoutMs: number; forcePathStyle?: S3PathStyle },
): (bytes: Uint8Array, opts: { expectedCid: string; signal?: AbortSignal }) => Promise<PinResult> {
  const endpoint = new URL(cfg.endpoint ?? DEFAULT_S3_ENDPOINT);
  const rule = o.forcePathStyle ?? defaultPathStyle;
  const forcePathStyle = typeof rule === 'function' ? rule(endpoint) : rule;
  return async (bytes, opts) => {
    // One client per pin: nothing idles between the (rare) deliveries to a
    // recipient, and destroy() closes its sockets.
    const client = new S3Client({
      endpoint: endpoint.toString(),
      region: SIGNING_REGION,
      credentials: { accessKeyId: cfg.access_key, secretAccessKey: cfg.secret_key },
      forcePathStyle,
      // The deadline below bounds the whole pin; SDK retries would only eat it.
      maxAttempts: 1,
      requestHandler: { connectionTimeout: o.timeoutMs, requestTimeout: o.timeoutMs },
    });
    const d = new Deadline(o.timeoutMs, opts.signal);
    const abortSignal = d.signal;
    try {
      const put = new PutObjectCommand({
        Bucket: cfg.bucket,
        Key: opts.expectedCid,
        Body: bytes,
        ContentLength: bytes.byteLength,
        ContentType: 'application/octet-stream',
      });
      let headerCid: string | undefined;
      put.middlewareStack.add(
        (next) => async (args) => {
          const out = await next(args);
          const headers = (out.response as { headers?: Record<string, string | undefined> }).headers;
          headerCid = headers?.[CID_HEADER];
          return out;
        },
        { step: 'deserialize', name: 'sealpostReadCidHeader' },
      );
      await client.send(put, { abortSignal });
      if (!headerCid) {
        const head = await client.send(new HeadObjectCommand({ Bucket: cfg.bucket, Key: opts.expectedCid }), {
          abortSignal,
        });
        headerCid = head.Metadata?.cid;
      }
      if (!headerCid) {
        throw new PinProviderError(
          's3_bucket',
          null,
          `bucket reported no CID (${CID_HEADER}) for the object`,
        );
      }
      try {
        return { cid: normalizeCid(headerCid), size: bytes.byteLength };
      } catch {
        throw new PinProviderError('s3_bucket', null, `bucket reported a malformed CID ${headerCid}`);
      }
    } catch (err) {
      throw s3Error(err, d);
    } finally {
      client.destroy();
    }
  };
}

function s3Error(err: unknown, d: Deadline): Error {
  if (err instanceof PinProviderError) return err;
  const late = d.timeoutMessage(err);
  if (late) return new PinProviderError('s3_bucket', null, late);
  if (err instanceof S3ServiceException) {
    const status = err.$metadata.httpStatusCode ?? null;
    const code = err.name && err.name !== 'Error' ? err.name : 'error';
    return new PinProviderError(
      's3_bucket',
      status,
      `${code}: ${err.message}`,
      status !== null && isPermanentStatus(status),
    );
  }
  if (err instanceof Error && (err.name === 'AbortError' || d.caller?.aborted)) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new PinProviderError('s3_bucket', null, `request failed: ${message}`);
}
