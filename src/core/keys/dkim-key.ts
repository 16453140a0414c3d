// DKIM signing keys: 2048-bit RSA, stored as PEM PKCS#8, and the DNS TXT
// record that publishes the public half (RFC 6376 §3.6.1). Shared by
// `sealpost keygen dkim` and anything that prints DNS records from a key.
import { createPrivateKey, createPublicKey, generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';

export const DKIM_RSA_BITS = 2048;
/** A single character-string in a TXT record holds at most 255 octets. */
export const TXT_STRING_MAX = 255;

const generateKeyPairAsync = promisify(generateKeyPair);

export interface DkimKey {
  /** PEM, PKCS#8 ("BEGIN PRIVATE KEY"). */
  privateKeyPem: string;
  /** DER SubjectPublicKeyInfo: what the record's p= carries, base64. */
  publicKeySpki: Uint8Array;
}

export interface DkimRecord {
  /** Fully qualified owner name without the final dot: `<selector>._domainkey.<domain>`. */
  name: string;
  /** The whole TXT value, `v=DKIM1; k=rsa; p=…`. */
  value: string;
  /** The value split into ≤255-character strings, in order. */
  strings: string[];
  /** One zone-file line: `name. IN TXT "…" "…"`. */
  zoneLine: string;
}

export class DkimNameError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DkimNameError';
  }
}

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;

function checkName(value: string, what: 'domain' | 'selector'): string {
  const name = value.endsWith('.') ? value.slice(0, -1) : value;
  const labels = name.split('.');
  const bad = labels.find((l) => !LABEL.test(l));
  if (name.length === 0 || bad !== undefined) {
    throw new DkimNameError(
      `${what} "${value}" is not a valid DNS name: ` +
        `${bad === undefined || bad === '' ? 'empty label' : `bad label "${bad}"`} ` +
        '(use letters, digits and inner hyphens, labels of 1-63 characters separated by dots)',
    );
  }
  return name;
}

/** Validates and normalizes (domain lowercased, trailing dot removed). */
export function normalizeDkimNames(domain: string, selector: string): { domain: string; selector: string } {
  const d = checkName(domain, 'domain').toLowerCase();
  const s = checkName(selector, 'selector');
  if (`${s}._domainkey.${d}`.length > 253) {
    throw new DkimNameError(`${s}._domainkey.${d} is longer than 253 characters`);
  }
  return { domain: d, selector: s };
}

export async function generateDkimKey(bits = DKIM_RSA_BITS): Promise<DkimKey> {
  const { privateKey, publicKey } = await generateKeyPairAsync('rsa', {
    modulusLength: bits,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { privateKeyPem: privateKey, publicKeySpki: new Uint8Array(publicKey) };
}

/** The SPKI DER of a PEM RSA private key (PKCS#8 or PKCS#1). */
export function dkimPublicKeyFromPem(pem: string): Uint8Array {
  const key = createPrivateKey(pem);
  if (key.asymmetricKeyType !== 'rsa') {
    throw new Error(`DKIM key is ${key.asymmetricKeyType ?? 'unknown'}, expected an RSA private key`);
  }
  return new Uint8Array(createPublicKey(key).export({ type: 'spki', format: 'der' }));
}

/** Splits a TXT value into character-strings of at most `max` characters. */
export function splitTxtValue(value: string, max = TXT_STRING_MAX): string[] {
  const out: string[] = [];
  for (let i = 0; i < value.length; i += max) out.push(value.slice(i, i + max));
  return out.length > 0 ? out : [''];
}

export function dkimRecord(domain: string, selector: string, publicKeySpki: Uint8Array): DkimRecord {
  const names = normalizeDkimNames(domain, selector);
  const name = `${names.selector}._domainkey.${names.domain}`;
  const value = `v=DKIM1; k=rsa; p=${Buffer.from(publicKeySpki).toString('base64')}`;
  // The value holds only base64, letters, "=", ";" and spaces: nothing to escape.
  const strings = splitTxtValue(value);
  const zoneLine = `${name}. IN TXT ${strings.map((s) => `"${s}"`).join(' ')}`;
  return { name, value, strings, zoneLine };
}
