// A recipient's own pin provider: adds a copy of each sealed body at a
// hosted pinning service (JWT), an S3-compatible pinning bucket, or a pin
// daemon the recipient runs. The CID the provider reports must equal the one
// computed locally (content addressing); a different one is logged as an
// error and returned as a PinProviderError.

import { DEFAULT_REMOTE_ENDPOINT, type PinProviderConfig } from '../src/contracts/pin-provider.ts';
import { PinProviderError, type PinResult, type RecipientPinner } from '../src/contracts/pinner.ts';
import type { Logger } from '../src/core/log.ts';
import { createLogger } from '../src/core/log.ts';
import { normalizeCid } from '../src/mail/cid.ts';
import { DEFAULT_PIN_TIMEOUT_MS, type FetchFn } from './http-util.ts';
import { postToPind } from './operator.ts';
import { pinToHosted } from './recipient-hosted.ts';
import { createS3Pin, type S3PathStyle } from './recipient-s3.ts';

export interface RecipientPinnerOptions {
  /** HTTP client for hosted_jwt and remote (default: global fetch). */
  fetch?: FetchFn;
  /** Budget for one pin, every request included (default 60 s). */
  timeoutMs?: number;
  logger?: Logger;
  /**
   * s3_bucket: path-style addressing (`https://host/bucket/key`) instead of
   * virtual-hosted (`https://bucket.host/key`). Default: virtual-hosted only
   * for AWS endpoints, path-style everywhere else (works with every
   * S3-compatible service and with IP/loopback endpoints).
   */
  s3ForcePathStyle?: S3PathStyle;
}

type PinFn = (
  bytes: Uint8Array,
  opts: { expectedCid: string; name?: string; signal?: AbortSignal },
) => Promise<PinResult>;

export function createRecipientPinner(
  cfg: PinProviderConfig,
  opts: RecipientPinnerOptions = {},
): RecipientPinner {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_PIN_TIMEOUT_MS;
  const fetchFn = opts.fetch ?? fetch;
  const logger = opts.logger ?? createLogger({ name: 'pinning' });
  let pin: PinFn;
  switch (cfg.kind) {
    case 'hosted_jwt':
      pin = (bytes, o) => pinToHosted(cfg, bytes, { ...o, fetch: fetchFn, timeoutMs });
      break;
    case 's3_bucket':
      pin = createS3Pin(cfg, { timeoutMs, forcePathStyle: opts.s3ForcePathStyle });
      break;
    case 'remote':
      pin = (bytes, o) =>
        postToPind('remote', cfg.endpoint ?? DEFAULT_REMOTE_ENDPOINT, bytes, {
          authToken: cfg.auth_token,
          fetch: fetchFn,
          timeoutMs,
          signal: o.signal,
        });
      break;
    default:
      throw new Error(`unknown pin provider kind ${JSON.stringify((cfg as { kind: unknown }).kind)}`);
  }
  const kind = cfg.kind;
  return {
    kind,
    async pin(bytes, o) {
      const expected = normalizeCid(o.expectedCid);
      const result = await pin(bytes, { ...o, expectedCid: expected });
      if (result.cid !== expected) {
        logger.error(
          { provider: kind, expected_cid: expected, provider_cid: result.cid, size: bytes.byteLength },
          'pin provider reported a CID different from the locally computed one',
        );
        throw new PinProviderError(kind, null, `provider reported CID ${result.cid}, expected ${expected}`);
      }
      return result;
    },
  };
}
