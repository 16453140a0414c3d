// The mail host's certificate and key ([smtp] tls_cert_file / tls_key_file),
// read and checked as one pair before any listener is given them: at a
// reload (src/run/serve/reload.ts) a file that does not load must leave every
// listener on the pair it has, so everything that can go wrong is found
// here first — unreadable files, no PEM certificate, a key that does not
// parse, a key that does not belong to the certificate — and reported with
// the file and the config key it came from.
import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';

/** What a TLS listener is given: the PEM chain, the key and, for client certificates, a CA bundle. */
export interface TlsPem {
  cert: Buffer;
  key: Buffer;
  ca?: Buffer;
}

export interface CertificateFiles {
  certFile: string;
  keyFile: string;
}

export interface ServerCertificate extends TlsPem {
  files: CertificateFiles;
  /** SHA-256 of the leaf certificate, colon-separated hex (as `openssl x509 -fingerprint -sha256` prints it). */
  fingerprint256: string;
  /** The leaf's notAfter, ISO 8601. */
  validTo: string;
  /** The leaf's subject on one line, e.g. `CN=mx.example.org`. */
  subject: string;
}

/** A file of the pair that cannot be used; `key` is the config key naming it. */
export class CertificateError extends Error {
  constructor(
    readonly key: string,
    readonly file: string,
    readonly problem: string,
  ) {
    super(`[${key.split('.')[0]}] ${key.split('.').slice(1).join('.')} ${file}: ${problem}`);
    this.name = 'CertificateError';
  }
}

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

function readOrThrow(key: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const problem =
      code === 'ENOENT'
        ? 'does not exist'
        : code === 'EACCES'
          ? 'is not readable by this user (permission denied)'
          : code === 'EISDIR'
            ? 'is a directory, not a file'
            : `cannot be read (${code ?? (err as Error).message})`;
    throw new CertificateError(key, file, problem);
  }
}

/** Keys of the config the pair comes from, for the messages. */
export interface CertificateKeys {
  cert: string;
  key: string;
}

const SMTP_KEYS: CertificateKeys = { cert: 'smtp.tls_cert_file', key: 'smtp.tls_key_file' };

/**
 * Reads the pair and checks it the way a TLS listener will use it; throws
 * CertificateError naming the file and the problem.
 */
export function loadServerCertificate(
  files: CertificateFiles,
  keys: CertificateKeys = SMTP_KEYS,
): ServerCertificate {
  const cert = readOrThrow(keys.cert, files.certFile);
  const key = readOrThrow(keys.key, files.keyFile);
  const blocks = cert.toString('utf8').match(PEM_CERT) ?? [];
  const [first] = blocks;
  if (!first)
    throw new CertificateError(
      keys.cert,
      files.certFile,
      'holds no PEM certificate ("-----BEGIN CERTIFICATE-----")',
    );
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(first);
    for (const block of blocks.slice(1)) new X509Certificate(block);
  } catch (err) {
    throw new CertificateError(
      keys.cert,
      files.certFile,
      `holds a certificate that does not parse (${(err as Error).message})`,
    );
  }
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    throw new CertificateError(keys.key, files.keyFile, 'is not a PEM private key');
  }
  if (!leaf.checkPrivateKey(privateKey))
    throw new CertificateError(
      keys.key,
      files.keyFile,
      `does not match the certificate in ${files.certFile} (${keys.cert})`,
    );
  try {
    createSecureContext({ cert, key });
  } catch (err) {
    throw new CertificateError(
      keys.key,
      files.keyFile,
      `does not load with the certificate in ${files.certFile} (${(err as Error).message})`,
    );
  }
  return {
    cert,
    key,
    files,
    fingerprint256: leaf.fingerprint256,
    validTo: new Date(leaf.validTo).toISOString(),
    subject: leaf.subject.split('\n').join(', '),
  };
}

/** A CA bundle for client certificates (`[smtp] peer_ca_file`): at least one PEM certificate, each parsing. */
export function loadCaBundle(key: string, file: string): Buffer {
  const bytes = readOrThrow(key, file);
  const blocks = bytes.toString('utf8').match(PEM_CERT) ?? [];
  if (blocks.length === 0)
    throw new CertificateError(key, file, 'holds no PEM certificate ("-----BEGIN CERTIFICATE-----")');
  blocks.forEach((block, i) => {
    try {
      new X509Certificate(block);
    } catch {
      throw new CertificateError(key, file, `certificate ${i + 1} is not a valid X.509 certificate`);
    }
  });
  return bytes;
}
