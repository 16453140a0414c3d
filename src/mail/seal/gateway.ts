// Fetching a sealed body from an IPFS gateway (`GET {gateway}/ipfs/{cid}`)
// for a reader: size-capped, time-limited, and checked against the CID so a
// gateway cannot substitute another object. Browser-safe (fetch only).
import { type CidCheck, checkCid } from './verify-cid.ts';

export class GatewayError extends Error {
  constructor(
    message: string,
    /** HTTP status when the gateway answered, else null. */
    readonly status: number | null = null,
  ) {
    super(message);
    this.name = 'GatewayError';
  }
}

export interface FetchSealedOptions {
  /** Largest body accepted; default 64 MiB. */
  maxBytes?: number;
  /** Default 30 s. */
  timeoutMs?: number;
  fetch?: typeof globalThis.fetch;
}

export interface FetchedSealed {
  bytes: Uint8Array;
  /** 'match', or 'unsupported' when the CID's form cannot be recomputed here (mismatches throw). */
  cidCheck: Exclude<CidCheck, 'mismatch'>;
}

export async function fetchSealedBody(
  gatewayUrl: string,
  cid: string,
  opts: FetchSealedOptions = {},
): Promise<FetchedSealed> {
  const maxBytes = opts.maxBytes ?? 64 * 1024 * 1024;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const url = `${gatewayUrl.replace(/\/+$/, '')}/ipfs/${encodeURIComponent(cid)}`;
  let res: Response;
  try {
    res = await (opts.fetch ?? globalThis.fetch)(url, { signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    const e = err as Error;
    const why =
      e.name === 'TimeoutError'
        ? `no answer in ${timeoutMs / 1000} s`
        : ((e.cause as Error)?.message ?? e.message);
    throw new GatewayError(`could not fetch ${url}: ${why}`);
  }
  if (!res.ok) {
    await res.body?.cancel();
    const hint = res.status === 404 ? ' (the gateway does not hold this CID)' : '';
    throw new GatewayError(`gateway answered ${res.status} for ${url}${hint}`, res.status);
  }
  const bytes = await readCappedBody(
    res,
    maxBytes,
    () => new GatewayError(`the sealed body at ${url} is over the ${maxBytes}-byte limit`),
  );
  const check = await checkCid(cid, bytes);
  if (check === 'mismatch')
    throw new GatewayError(`the bytes from ${url} do not match the CID; refusing them`);
  return { bytes, cidCheck: check };
}

/**
 * A response body read whole, refusing (with `tooBig()`) one over `maxBytes`
 * by its content-length or as it streams in. Shared by every reader of sealed
 * bodies (gateway and the operator's store through the account API).
 */
export async function readCappedBody(
  res: Response,
  maxBytes: number,
  tooBig: () => Error,
): Promise<Uint8Array> {
  if (Number(res.headers.get('content-length') ?? 0) > maxBytes) {
    await res.body?.cancel();
    throw tooBig();
  }
  const parts: Uint8Array[] = [];
  let size = 0;
  const reader = res.body?.getReader();
  while (reader) {
    const next = await reader.read();
    if (next.done) break;
    size += next.value.length;
    if (size > maxBytes) {
      await reader.cancel();
      throw tooBig();
    }
    parts.push(next.value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    bytes.set(p, at);
    at += p.length;
  }
  return bytes;
}
