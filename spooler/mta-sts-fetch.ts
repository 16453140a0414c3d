// HTTPS fetch of an MTA-STS policy (RFC 8461 §3.3): GET
// https://mta-sts.<domain>/.well-known/mta-sts.txt with a WebPKI-valid
// certificate for that name, no redirects, a 200 answer of type text/plain,
// a size cap and one deadline for the whole exchange. Each failure carries
// the RFC 8460 result type it is reported as.
import { request } from 'node:https';
import { trustedCa } from '../src/core/tls/extra-ca.ts';

export type StsFailureType = 'sts-policy-fetch-error' | 'sts-policy-invalid' | 'sts-webpki-invalid';

export class StsFetchError extends Error {
  /** The TCP connection itself failed: another address of the host may work. */
  connectFailed = false;
  constructor(
    readonly type: StsFailureType,
    message: string,
  ) {
    super(message);
    this.name = 'StsFetchError';
  }
}

export interface StsFetchOptions {
  /** Addresses of `mta-sts.<domain>`, tried in order while connections fail. */
  addresses: readonly string[];
  /** 443 in production; tests serve the policy elsewhere. */
  port: number;
  /** Extra trusted CA certificates (PEM) on top of the system roots. */
  extraCa?: readonly string[];
  timeoutMs: number;
  maxBytes: number;
}

export const STS_POLICY_PATH = '/.well-known/mta-sts.txt';

// OpenSSL/Node verification codes that mean "the certificate is not valid
// WebPKI for this name", as opposed to "could not talk to the host".
const CERT_ERRORS = new Set([
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
  'CERT_REVOKED',
  'INVALID_CA',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

export async function fetchStsPolicyText(domain: string, opts: StsFetchOptions): Promise<string> {
  if (opts.addresses.length === 0) {
    throw new StsFetchError('sts-policy-fetch-error', `mta-sts.${domain} has no address`);
  }
  const deadline = Date.now() + opts.timeoutMs;
  let last: StsFetchError | undefined;
  for (const address of opts.addresses) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    try {
      return await fetchOnce(domain, address, { ...opts, timeoutMs: left });
    } catch (err) {
      last = err as StsFetchError;
      // Only a refused or unreachable address moves on to the next one.
      if (!(err instanceof StsFetchError && err.connectFailed)) throw err;
    }
  }
  throw last ?? new StsFetchError('sts-policy-fetch-error', `fetching the policy of ${domain} timed out`);
}

function fetchOnce(domain: string, address: string, opts: StsFetchOptions): Promise<string> {
  const servername = `mta-sts.${domain}`;
  return new Promise((resolve, reject) => {
    let settled = false;
    const done = (err: StsFetchError | null, text?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      if (err) reject(err);
      else resolve(text as string);
    };
    const req = request(
      {
        host: address,
        port: opts.port,
        path: STS_POLICY_PATH,
        method: 'GET',
        servername,
        headers: {
          host: opts.port === 443 ? servername : `${servername}:${opts.port}`,
          accept: 'text/plain',
        },
        ca: trustedCa(opts.extraCa),
        rejectUnauthorized: true,
        agent: false,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        if (status !== 200) {
          res.resume();
          // RFC 8461 §3.3: redirects are not followed.
          return done(new StsFetchError('sts-policy-fetch-error', `policy host answered HTTP ${status}`));
        }
        const type = String(res.headers['content-type'] ?? '')
          .split(';')[0]
          ?.trim()
          .toLowerCase();
        if (type !== 'text/plain') {
          res.resume();
          return done(
            new StsFetchError(
              'sts-policy-invalid',
              `policy served as ${JSON.stringify(type || 'nothing')}, not text/plain`,
            ),
          );
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > opts.maxBytes) {
            done(new StsFetchError('sts-policy-invalid', `policy is larger than ${opts.maxBytes} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => {
          const text = new TextDecoder('utf-8', { fatal: true });
          try {
            done(null, text.decode(Buffer.concat(chunks)));
          } catch {
            done(new StsFetchError('sts-policy-invalid', 'policy is not UTF-8 text'));
          }
        });
        res.on('error', (err) => done(new StsFetchError('sts-policy-fetch-error', err.message)));
      },
    );
    const timer = setTimeout(
      () =>
        done(
          new StsFetchError('sts-policy-fetch-error', `policy fetch timed out after ${opts.timeoutMs} ms`),
        ),
      opts.timeoutMs,
    );
    req.on('error', (err: NodeJS.ErrnoException) => {
      const code = err.code ?? '';
      if (CERT_ERRORS.has(code)) {
        return done(new StsFetchError('sts-webpki-invalid', `policy host certificate: ${code}`));
      }
      const e = new StsFetchError('sts-policy-fetch-error', `policy host: ${code || err.message}`);
      e.connectFailed = code === 'ECONNREFUSED' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH';
      done(e);
    });
    req.end();
  });
}
