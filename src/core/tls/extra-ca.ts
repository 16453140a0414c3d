// `[tls] extra_ca_file`: a PEM bundle of CA certificates trusted on top of
// Node's default roots (a private CA for relay peers, MTA-STS policy hosts
// and remote MX hosts; docs/config.md). Read and checked once, at config
// load, so a missing or malformed bundle stops start-up with its name.
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';

const PEM_CERT = /-----BEGIN CERTIFICATE-----\r?\n[\s\S]*?-----END CERTIFICATE-----/g;

export class ExtraCaError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExtraCaError';
  }
}

/** The certificates of the bundle, one PEM string each; throws ExtraCaError naming the problem. */
export function readExtraCa(file: string): string[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ExtraCaError(
      code === 'ENOENT'
        ? `file not found: ${file}`
        : code === 'EISDIR'
          ? `${file} is a directory, expected a PEM file`
          : `cannot read ${file}: ${code ?? (err as Error).message}`,
    );
  }
  const blocks = text.match(PEM_CERT) ?? [];
  if (blocks.length === 0) {
    throw new ExtraCaError(
      `${file} holds no PEM certificate (expected "-----BEGIN CERTIFICATE-----" blocks)`,
    );
  }
  blocks.forEach((pem, i) => {
    try {
      new X509Certificate(pem);
    } catch {
      throw new ExtraCaError(`${file}: certificate ${i + 1} is not a valid X.509 certificate`);
    }
  });
  return blocks;
}

/** The `ca` option for a TLS connection: the default roots plus the extra CAs; undefined when there are none. */
export function trustedCa(extra: readonly string[] | undefined): string[] | undefined {
  return extra && extra.length > 0 ? [...rootCertificates, ...extra] : undefined;
}
