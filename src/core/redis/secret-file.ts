// A password kept in its own file (`[redis] password_file`,
// `sentinel_password_file`): the first line, without its line end. Read by
// the config check (so a bad file names its key) and by every client made.
import { readFileSync } from 'node:fs';

export function readSecretFile(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new Error(`cannot read ${file} (${e.code ?? e.message})`);
  }
  const secret = text.split(/\r?\n/, 1)[0] ?? '';
  if (secret === '') throw new Error(`${file} is empty (expected the password on its first line)`);
  return secret;
}
