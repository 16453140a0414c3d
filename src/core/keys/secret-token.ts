// Random secrets kept as text files: the admin bearer token and the JWT
// signing secret. Text (hex or base64url) rather than raw bytes so the file
// means the same whether a reader takes its bytes or its trimmed string.
import { randomBytes } from 'node:crypto';
import { writeSecretFile } from './keypair-file.ts';

export const SECRET_TOKEN_BYTES = 32;
export const TOKEN_FORMATS = ['hex', 'base64url'] as const;
export type TokenFormat = (typeof TOKEN_FORMATS)[number];

export function isTokenFormat(value: string): value is TokenFormat {
  return (TOKEN_FORMATS as readonly string[]).includes(value);
}

/** 32 random bytes as text: 64 hex digits or 43 base64url characters. */
export function generateSecretToken(
  format: TokenFormat = 'hex',
  random: (n: number) => Uint8Array = (n) => new Uint8Array(randomBytes(n)),
): string {
  return Buffer.from(random(SECRET_TOKEN_BYTES)).toString(format);
}

/**
 * Writes `token` (plus a final newline when `newline`) with mode 0600.
 * Without `force` an existing file is left alone (FileExistsError); with it
 * the file is replaced atomically, so a reader never sees half a token.
 */
export function writeSecretTokenFile(
  path: string,
  token: string,
  opts: { force?: boolean; newline?: boolean } = {},
): void {
  writeSecretFile(path, opts.newline ? `${token}\n` : token, { force: opts.force });
}
