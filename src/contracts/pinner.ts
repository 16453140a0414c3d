// The narrow interfaces of pinning. Implementations live beside this file and
// import only these types; callers (the delivery pipeline, the account API,
// the admin sweep) depend on nothing else of pinning but its factories.

export interface PinResult {
  /** CIDv1 (base32) string, equal to `ipfs add --cid-version=1` of the bytes. */
  cid: string;
  size: number;
}

/** The operator's pin: authoritative, its CID is what the chain records. */
export interface Pinner {
  readonly kind: string;
  /** Pin the bytes; resolves with their CID once they are durably held. */
  pin(bytes: Uint8Array, opts?: { signal?: AbortSignal }): Promise<PinResult>;
  /** Release a CID this operator pinned. Releasing an unknown CID is not an error. */
  release(cid: string, opts?: { signal?: AbortSignal }): Promise<void>;
}

/**
 * A recipient's own pin provider. Only ever adds pins (the server never
 * releases a recipient's copy); failures are reported to the caller, which
 * logs and drops them.
 */
export interface RecipientPinner {
  readonly kind: 'hosted_jwt' | 's3_bucket' | 'remote';
  pin(
    bytes: Uint8Array,
    opts: { expectedCid: string; name?: string; signal?: AbortSignal },
  ): Promise<PinResult>;
}

/** A provider answered, but refused or failed (status, reason); never includes credentials. */
export class PinProviderError extends Error {
  constructor(
    readonly provider: string,
    readonly status: number | null,
    message: string,
    readonly permanent = false,
  ) {
    super(`${provider}: ${message}`);
    this.name = 'PinProviderError';
  }
}
