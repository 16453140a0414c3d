// `sealpost mailbox sign-tx`: the offline half of `--sign-offline`. On the
// machine that holds the wallet key (air-gapped, no server, no RPC) it reads
// the unsigned transaction a `--sign-offline` command printed, shows what it
// is about to sign (fee payer, blockhash, each instruction decoded), refuses
// a transaction whose fee payer is not the key's wallet or that asks for
// other signers, signs the message and prints the signature, or with
// --signed-tx the whole signed transaction, for `sealpost mailbox submit`.
import { Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import type { Command } from 'commander';
import { signDetachedBase58 } from '../../../core/keys/ed25519-sign.ts';
import { readKeypairFile } from '../../../core/keys/keypair-file.ts';
import { CliError, EXIT_USAGE } from '../../common.ts';
import { instructionJson } from './mailbox-tx.ts';

/** A transaction is at most 1,232 bytes; its base64 (or the --json document around it) far less than this. */
const MAX_INPUT_BYTES = 256 * 1024;

interface SignTxOptions {
  key: string;
  signedTx?: boolean;
  json?: boolean;
}

const HELP_AFTER = `
Give the unsigned transaction as the argument, or leave it out (or pass "-")
to read it from stdin: either the base64 "unsigned transaction" a
--sign-offline command printed, or that command's whole --json output (its
"unsigned_tx" is used). Nothing is sent anywhere; the command contacts no
server and no RPC node.

Before signing, the transaction is described on stderr: fee payer, recent
blockhash, and each instruction as the mail program's decoder reads it. It is
refused (exit 1, nothing signed) when its fee payer is not the key's wallet,
when it asks for a second signer, or when it carries signatures already.

Output: the base58 signature on stdout (for mailbox submit --tx … --signature
…), or with --signed-tx the signed transaction in base64 (for mailbox submit
--signed-tx …); --json prints {"signature","signer","signed_tx"}.

Examples:
  $ sealpost mailbox create --wallet 7xKX…q3 --sign-offline --json > unsigned.json
  (offline) $ sealpost mailbox sign-tx --key wallet.json --signed-tx < unsigned.json > signed.b64
  $ sealpost mailbox submit --signed-tx "$(cat signed.b64)"
`;

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY)
    process.stderr.write('reading the unsigned transaction from stdin; end it with Ctrl-D\n');
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of process.stdin) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : (chunk as Buffer);
    total += buf.length;
    if (total > MAX_INPUT_BYTES)
      throw new CliError('the input on stdin is too large for a transaction', EXIT_USAGE);
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The base64 transaction in the input: bare, or the `unsigned_tx` of a --sign-offline --json document. */
export function unsignedTxOf(input: string): string {
  const text = input.trim();
  if (text.startsWith('{')) {
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (err) {
      throw new CliError(
        `the input looks like JSON but does not parse: ${(err as Error).message}`,
        EXIT_USAGE,
      );
    }
    const tx = (doc as { unsigned_tx?: unknown }).unsigned_tx;
    if (typeof tx !== 'string')
      throw new CliError(
        'the JSON input has no "unsigned_tx" (is it a --sign-offline --json output?)',
        EXIT_USAGE,
      );
    return tx.trim();
  }
  return text;
}

function decode(b64: string): Transaction {
  if (!b64) throw new CliError('no transaction given; nothing to sign', EXIT_USAGE);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) throw new CliError('expected a base64 transaction', EXIT_USAGE);
  try {
    return Transaction.from(Buffer.from(b64, 'base64'));
  } catch (err) {
    throw new CliError(`not a transaction: ${(err as Error).message}`, EXIT_USAGE);
  }
}

function describe(tx: Transaction): string[] {
  const lines = [
    `fee payer: ${tx.feePayer?.toBase58() ?? '(none)'}`,
    `recent blockhash: ${tx.recentBlockhash ?? '(none)'}`,
  ];
  for (const [i, ix] of tx.instructions.entries()) {
    const j = instructionJson(ix);
    lines.push(`instruction ${i + 1}: ${j.kind} (program ${j.program}, ${ix.keys.length} accounts)`);
  }
  return lines;
}

/** Adds `sign-tx [tx]` under the `mailbox` command. */
export function registerSignTx(mailbox: Command): void {
  mailbox
    .command('sign-tx [tx]')
    .description(
      'sign an unsigned transaction from --sign-offline with a wallet key, offline: the signature (or --signed-tx: the signed transaction) on stdout',
    )
    .requiredOption('-k, --key <file>', 'wallet keypair file (Solana CLI format: JSON array of 64 numbers)')
    .option('--signed-tx', 'print the whole signed transaction in base64 (for mailbox submit --signed-tx)')
    .option('--json', 'print {"signature","signer","signed_tx"} as JSON on stdout')
    .addHelpText('after', HELP_AFTER)
    .action(async (arg: string | undefined, opts: SignTxOptions) => {
      // The key first: a bad key file fails before stdin is read.
      const keypair = readKeypairFile(opts.key);
      const input = arg === undefined || arg === '-' ? await readStdin() : arg;
      const tx = decode(unsignedTxOf(input));
      const payer = tx.feePayer?.toBase58();
      if (!payer) throw new CliError('the transaction names no fee payer; nothing signed');
      if (payer !== keypair.address)
        throw new CliError(
          `the transaction's fee payer is ${payer}, not this key's wallet ${keypair.address}; nothing signed`,
        );
      if (tx.signatures.length !== 1)
        throw new CliError(
          `the transaction wants ${tx.signatures.length} signatures; mailbox transactions are signed by the wallet alone; nothing signed`,
        );
      if (tx.signatures.some((s) => s.signature !== null))
        throw new CliError('the transaction is signed already; nothing signed');
      for (const line of describe(tx)) process.stderr.write(`${line}\n`);
      const message = tx.serializeMessage();
      const signature = signDetachedBase58(keypair, new Uint8Array(message));
      tx.addSignature(tx.feePayer as NonNullable<typeof tx.feePayer>, Buffer.from(bs58.decode(signature)));
      if (!tx.verifySignatures(true)) throw new CliError('the signature does not verify; nothing printed');
      const signedTx = tx.serialize().toString('base64');
      if (opts.json)
        process.stdout.write(
          `${JSON.stringify({ signature, signer: keypair.address, signed_tx: signedTx })}\n`,
        );
      else process.stdout.write(`${opts.signedTx ? signedTx : signature}\n`);
      process.stderr.write(`signer: ${keypair.address}\n`);
    });
}
