// DKIM signing (RFC 6376, rsa-sha256, relaxed/relaxed) of mail this server
// originates: submitted mail (the submission path calls `sign`) and the
// spooler's own DSNs and TLS-RPT reports. Mail that arrived at the MX is
// never passed here. Keys come from `[[spooler.dkim]]`; they are read and
// checked once, when the signer is created, so a bad key stops start-up
// instead of failing mail later.
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dkimSign } from 'mailauth';
import type { DkimKeyConfig } from '../core/config/types.ts';

export const DKIM_MIN_RSA_BITS = 2048;

export class DkimKeyError extends Error {
  constructor(
    readonly keyFile: string,
    detail: string,
  ) {
    super(`DKIM key ${keyFile}: ${detail}`);
    this.name = 'DkimKeyError';
  }
}

export interface DkimSigner {
  /**
   * Prepends a DKIM-Signature for every `[[spooler.dkim]]` entry of the
   * From domain (or, when it has none, of its closest parent domain, which
   * DMARC's relaxed alignment accepts). Without a matching key the message
   * comes back unchanged.
   */
  sign(raw: Buffer, fromDomain: string): Promise<Buffer>;
  /** The `d=` domain `sign` would use for `fromDomain`, or null when none is configured. */
  signingDomain(fromDomain: string): string | null;
}

export interface DkimSignerOptions {
  /** Signature time (`t=`); the clock is injectable for tests. */
  now?: () => number;
}

interface LoadedKey {
  domain: string;
  selector: string;
  pem: string;
}

function loadKey(entry: DkimKeyConfig): LoadedKey {
  let pem: string;
  try {
    pem = readFileSync(entry.key_file, 'utf8');
  } catch (err) {
    throw new DkimKeyError(
      entry.key_file,
      `cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  let key: KeyObject;
  try {
    // Accepts both "BEGIN PRIVATE KEY" (PKCS#8) and "BEGIN RSA PRIVATE KEY" (PKCS#1).
    key = createPrivateKey(pem);
  } catch {
    throw new DkimKeyError(entry.key_file, 'is not a PEM private key (PKCS#8 or PKCS#1)');
  }
  if (key.asymmetricKeyType !== 'rsa') {
    throw new DkimKeyError(
      entry.key_file,
      `is a ${key.asymmetricKeyType ?? 'unknown'} key; rsa-sha256 needs RSA`,
    );
  }
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < DKIM_MIN_RSA_BITS) {
    throw new DkimKeyError(
      entry.key_file,
      `is ${bits}-bit RSA; at least ${DKIM_MIN_RSA_BITS} bits are required`,
    );
  }
  return {
    domain: entry.domain.toLowerCase().replace(/\.$/, ''),
    selector: entry.selector,
    pem: key.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

export function createDkimSigner(
  entries: readonly DkimKeyConfig[],
  opts: DkimSignerOptions = {},
): DkimSigner {
  const keys = entries.map(loadKey);
  const now = opts.now ?? Date.now;

  const keysFor = (fromDomain: string): LoadedKey[] => {
    let name = fromDomain.toLowerCase().replace(/\.$/, '');
    while (name.includes('.')) {
      const found = keys.filter((k) => k.domain === name);
      if (found.length > 0) return found;
      name = name.slice(name.indexOf('.') + 1);
    }
    return [];
  };

  return {
    signingDomain(fromDomain) {
      return keysFor(fromDomain)[0]?.domain ?? null;
    },
    async sign(raw, fromDomain) {
      const matching = keysFor(fromDomain);
      if (matching.length === 0) return raw;
      const [first] = matching as [LoadedKey, ...LoadedKey[]];
      const result = await dkimSign(raw, {
        signingDomain: first.domain,
        selector: first.selector,
        privateKey: first.pem,
        algorithm: 'rsa-sha256',
        canonicalization: 'relaxed/relaxed',
        signTime: new Date(now()),
        signatureData: matching.map((k) => ({
          signingDomain: k.domain,
          selector: k.selector,
          privateKey: k.pem,
          algorithm: 'rsa-sha256',
          canonicalization: 'relaxed/relaxed',
        })),
      });
      if (result.errors.length > 0) {
        throw new Error(`DKIM signing failed: ${result.errors.map((e) => e.message).join('; ')}`);
      }
      return Buffer.concat([Buffer.from(result.signatures, 'latin1'), raw]);
    },
  };
}
