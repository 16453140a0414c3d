// The one error every DNS lookup helper throws, and the server address type.

export interface DnsServer {
  host: string;
  port: number;
}

/** nxdomain: the name does not exist; nodata: it exists without that type; the rest are resolver failures. */
export type DnsFailureKind = 'nxdomain' | 'nodata' | 'servfail' | 'timeout' | 'refused' | 'other';

export class DnsLookupError extends Error {
  constructor(
    readonly lookupName: string,
    readonly kind: DnsFailureKind,
    detail: string,
  ) {
    super(`DNS lookup of ${lookupName} failed (${kind}): ${detail}`);
    this.name = 'DnsLookupError';
  }

  /** True when the answer was authoritative "nothing there", not a failure to get an answer. */
  get isNegative(): boolean {
    return this.kind === 'nxdomain' || this.kind === 'nodata';
  }
}
