// Self-signed certificates for `sealpost dev` and for tests (real TLS with
// certificates made on the spot). Production uses the operator's own
// certificate files; nothing here is used when they exist.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { generate } from 'selfsigned';
import { writeSecretFile } from '../keys/keypair-file.ts';

export interface CertificatePair {
  cert: string;
  key: string;
}

export async function createSelfSignedCert(
  hostnames: string[],
  opts: { days?: number; ca?: CertificatePair; isCa?: boolean } = {},
): Promise<CertificatePair> {
  const [first = 'localhost'] = hostnames;
  const notAfter = new Date(Date.now() + (opts.days ?? 365) * 86_400_000);
  const result = await generate([{ name: 'commonName', value: first }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notAfterDate: notAfter,
    ...(opts.ca ? { ca: { key: opts.ca.key, cert: opts.ca.cert } } : {}),
    extensions: [
      { name: 'basicConstraints', cA: Boolean(opts.isCa) },
      opts.isCa
        ? { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true }
        : { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      ...(opts.isCa
        ? []
        : [
            {
              name: 'subjectAltName' as const,
              altNames: hostnames.map((h) =>
                /^[\d.]+$|:/.test(h) ? { type: 7 as const, ip: h } : { type: 2 as const, value: h },
              ),
            },
          ]),
    ],
  } as Parameters<typeof generate>[1]);
  return { cert: result.cert, key: result.private };
}

/** Writes a self-signed certificate for `hostnames` unless both files exist. */
export async function ensureSelfSignedFiles(
  certFile: string,
  keyFile: string,
  hostnames: string[],
): Promise<boolean> {
  if (existsSync(certFile) && existsSync(keyFile)) return false;
  const pair = await createSelfSignedCert(hostnames);
  mkdirSync(dirname(certFile), { recursive: true });
  mkdirSync(dirname(keyFile), { recursive: true });
  writeSecretFile(keyFile, pair.key);
  writeFileSync(certFile, pair.cert, { mode: 0o644 });
  return true;
}
