// `sealpost mailbox sign-text`: signs a text (a step-up nonce) offline with
// a wallet key. The signed bytes are exactly the UTF-8 bytes given: nothing
// trimmed, prefixed, hashed or newline-added, because the API verifies the
// nonce byte for byte and one extra space makes a different message.
import type { Command } from 'commander';
import { signDetachedBase58 } from '../../../core/keys/ed25519-sign.ts';
import { readKeypairFile } from '../../../core/keys/keypair-file.ts';
import { CliError, EXIT_USAGE } from '../../common.ts';

/** Nonces are short; this only stops `< /dev/zero` from eating memory. */
export const MAX_TEXT_BYTES = 1024 * 1024;

interface SignTextOptions {
  key: string;
  stripNewline?: boolean;
  json?: boolean;
}

const HELP_AFTER = `
The text is signed as its exact UTF-8 bytes. Give it as the argument, or
leave the argument out (or pass "-") to read it from stdin byte for byte.
A trailing newline read from stdin IS signed (so is one inside the
argument); --strip-newline removes exactly one trailing line ending ("\\n",
or "\\r\\n" as one unit) and nothing else: no spaces, no second newline.

Output: the base58 signature alone on stdout, then "signer: <address>" on
stderr. Nothing is sent anywhere; the command contacts no server.

Exit status: 0 signed; 1 the key file is missing, unreadable, malformed
(not a JSON array of 64 integers 0-255), or its public half does not match
its secret half; 2 usage errors (no --key, empty text, text that is not
UTF-8, text over 1 MiB).

Examples:
  $ sealpost mailbox sign-text --key wallet.json "Sealpost step-up nonce: 3f9c…"
  $ curl -s -X POST -H "authorization: Bearer $TOKEN" "$API/v1/auth/step-up" \\
      | jq -j .nonce | sealpost mailbox sign-text --key wallet.json
  $ echo "$NONCE" | sealpost mailbox sign-text --key wallet.json --strip-newline
`;

/** Removes one trailing "\r\n" or "\n"; nothing else. */
export function stripOneNewline(bytes: Uint8Array): Uint8Array {
  const n = bytes.length;
  if (n >= 2 && bytes[n - 2] === 0x0d && bytes[n - 1] === 0x0a) return bytes.subarray(0, n - 2);
  if (n >= 1 && bytes[n - 1] === 0x0a) return bytes.subarray(0, n - 1);
  return bytes;
}

async function readStdin(): Promise<Uint8Array> {
  if (process.stdin.isTTY) {
    process.stderr.write('reading the text from stdin; end it with Ctrl-D (a final Enter is signed too)\n');
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of process.stdin) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : (chunk as Buffer);
    total += buf.length;
    if (total > MAX_TEXT_BYTES) {
      throw new CliError(
        `the text on stdin is over ${MAX_TEXT_BYTES} bytes; a nonce is far shorter`,
        EXIT_USAGE,
      );
    }
    chunks.push(buf);
  }
  return new Uint8Array(Buffer.concat(chunks));
}

function checkText(bytes: Uint8Array, source: string): void {
  if (bytes.length === 0) {
    throw new CliError(`the text ${source} is empty; nothing to sign`, EXIT_USAGE);
  }
  if (bytes.length > MAX_TEXT_BYTES) {
    throw new CliError(
      `the text ${source} is over ${MAX_TEXT_BYTES} bytes; a nonce is far shorter`,
      EXIT_USAGE,
    );
  }
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new CliError(`the text ${source} is not valid UTF-8; sign-text signs text only`, EXIT_USAGE);
  }
}

/** Adds `sign-text [text]` under the `mailbox` command. */
export function registerSignText(mailbox: Command): void {
  mailbox
    .command('sign-text [text]')
    .description(
      'sign a text (e.g. a step-up nonce) with a wallet key, offline: base58 signature on stdout, signer address on stderr',
    )
    .requiredOption('-k, --key <file>', 'wallet keypair file (Solana CLI format: JSON array of 64 numbers)')
    .option('--strip-newline', 'remove exactly one trailing "\\n" (or "\\r\\n") before signing')
    .option('--json', 'print {"signature","signer"} as JSON on stdout instead of the bare signature')
    .addHelpText('after', HELP_AFTER)
    .action(async (text: string | undefined, opts: SignTextOptions) => {
      // Load the key first so a bad key file fails before stdin is consumed.
      const keypair = readKeypairFile(opts.key);
      const fromStdin = text === undefined || text === '-';
      const source = fromStdin ? 'on stdin' : 'argument';
      let bytes = fromStdin ? await readStdin() : new Uint8Array(Buffer.from(text, 'utf8'));
      if (opts.stripNewline) bytes = stripOneNewline(bytes);
      checkText(bytes, source);
      const signature = signDetachedBase58(keypair, bytes);
      if (opts.json) {
        process.stdout.write(`${JSON.stringify({ signature, signer: keypair.address })}\n`);
      } else {
        process.stdout.write(`${signature}\n`);
      }
      process.stderr.write(`signer: ${keypair.address}\n`);
    });
}
