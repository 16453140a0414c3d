// The operator's pin: authoritative, its CID goes on chain. Two backends:
// Sealpost's own pin daemon (pind, plain HTTP) or a Kubo node's RPC API.

import { type Pinner, PinProviderError, type PinResult } from '../src/contracts/pinner.ts';
import type { IpfsConfig } from '../src/core/config/types.ts';
import { normalizeCid, parseCid } from '../src/mail/cid.ts';
import { DEFAULT_PIN_TIMEOUT_MS, Deadline, expectOk, type FetchFn, transportError } from './http-util.ts';
import { createKuboPinner } from './operator-kubo.ts';

export interface OperatorPinnerOptions {
  /** HTTP client for the pind backend (default: global fetch). */
  fetch?: FetchFn;
  /** Budget for one pin or release call (default 60 s). */
  timeoutMs?: number;
}

export function createOperatorPinner(ipfs: IpfsConfig, opts: OperatorPinnerOptions = {}): Pinner {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_PIN_TIMEOUT_MS;
  const backend =
    ipfs.operator === 'kubo'
      ? createKuboPinner(ipfs.kubo_rpc_url, { timeoutMs })
      : createPindPinner(ipfs.pind_url, {
          authToken: ipfs.pind_auth_token,
          fetch: opts.fetch ?? fetch,
          timeoutMs,
        });
  return {
    kind: backend.kind,
    // [ipfs] max_pin_bytes is the server's own cap, checked before any upload.
    pin: async (bytes, o) => {
      if (bytes.byteLength > ipfs.max_pin_bytes) {
        throw new PinProviderError(
          backend.kind,
          null,
          `${bytes.byteLength} bytes exceed [ipfs] max_pin_bytes (${ipfs.max_pin_bytes})`,
          true,
        );
      }
      return backend.pin(bytes, o);
    },
    release: (cid, o) => backend.release(cid, o),
  };
}

/** Parses pind's `201 {cid, size}` answer; shared with the `remote` recipient provider. */
export function parsePindAnswer(provider: string, body: unknown, expectedSize: number): PinResult {
  const obj = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  if (typeof obj.cid !== 'string') throw new PinProviderError(provider, null, 'answer carries no "cid"');
  let cid: string;
  try {
    cid = normalizeCid(obj.cid);
  } catch {
    throw new PinProviderError(provider, null, `answer carries a malformed CID ${JSON.stringify(obj.cid)}`);
  }
  if (obj.size !== expectedSize) {
    throw new PinProviderError(provider, null, `pinned ${String(obj.size)} bytes, sent ${expectedSize}`);
  }
  return { cid, size: expectedSize };
}

/** `POST {pinUrl}/pins` with the raw bytes; the optional bearer token is pind's `auth_token`. */
export async function postToPind(
  provider: string,
  pinUrl: string,
  bytes: Uint8Array,
  o: { authToken?: string; fetch: FetchFn; timeoutMs: number; signal?: AbortSignal },
): Promise<PinResult> {
  const headers: Record<string, string> = { 'content-type': 'application/octet-stream' };
  if (o.authToken) headers.authorization = `Bearer ${o.authToken}`;
  const d = new Deadline(o.timeoutMs, o.signal);
  try {
    const res = await o.fetch(new URL('pins', withSlash(pinUrl)), {
      method: 'POST',
      headers,
      // Never a SharedArrayBuffer here; the DOM typings cannot know that.
      body: bytes as Uint8Array<ArrayBuffer>,
      signal: d.signal,
    });
    await expectOk(provider, res);
    return parsePindAnswer(provider, await res.json(), bytes.byteLength);
  } catch (err) {
    throw transportError(provider, err, d);
  }
}

/** Base URLs may carry a path prefix (a reverse proxy); resolve `pins` below it. */
function withSlash(url: string): string {
  return url.endsWith('/') ? url : `${url}/`;
}

function createPindPinner(
  pinUrl: string,
  o: { authToken?: string; fetch: FetchFn; timeoutMs: number },
): Pinner {
  return {
    kind: 'pind',
    pin: (bytes, opts) => postToPind('pind', pinUrl, bytes, { ...o, signal: opts?.signal }),
    // pind never releases pins over HTTP (the reference's policy: removal is
    // the pin operator's local decision, `sealpost pind rm`). Releasing is
    // therefore a no-op here; the CID is still checked so callers with a
    // corrupt record hear about it.
    release: async (cid) => {
      parseCid(cid);
    },
  };
}
