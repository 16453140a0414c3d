// `sealpost mailbox list|read`: a wallet holder's view from the terminal.
// list walks the inbox newest first from mail_count; read fetches one
// message's sealed body from an IPFS gateway (or, for no_ipfs mail, from the
// operator's store through the account API: ./mailbox-store.ts), checks it
// against its CID or `b3:` marker, opens it with the wallet key (or the
// delegated mailbox key) and prints the original RFC 5322 bytes. Only reads:
// no transaction.
import { readFileSync } from 'node:fs';
import type { Connection, PublicKey } from '@solana/web3.js';
import type { Command } from 'commander';
import {
  type Email,
  emailAddress,
  getEmail,
  getEmailAt,
  getMailbox,
  getMailboxKey,
  isBase58Key,
  isZeroBytes,
  listInbox,
  replyToHash,
  toHex,
} from '../../../../chain/client/index.ts';
import { readKeypairFile } from '../../../core/keys/keypair-file.ts';
import {
  fetchSealedBody,
  GatewayError,
  openSealed,
  parseMailboxKeyFile,
  type ReaderKeypair,
  SealFormatError,
  walletEncryptionKeypair,
} from '../../../mail/seal/index.ts';
import { CliError, cliConnection, EXIT_USAGE } from '../../common.ts';
import {
  addChainOptions,
  type ChainOptions,
  chainRead,
  DEV_GATEWAY,
  indexOption,
  intOption,
  isoSeconds,
  keyOption,
  settings,
  sol,
  urlOption,
  walletOf,
} from './mailbox-common.ts';
import { registerSend } from './mailbox-send.ts';
import { registerSetup } from './mailbox-setup.ts';
import { registerSignText } from './mailbox-sign-text.ts';
import { registerSignTx } from './mailbox-sign-tx.ts';
import { registerStamps } from './mailbox-stamps.ts';
import {
  API_TOKEN_ENV,
  fetchFromStore,
  STORE_ACCESS_HINT,
  type StoreAccessOptions,
  storeAccess,
} from './mailbox-store.ts';
import { registerSubmit } from './mailbox-tx.ts';

interface ListOptions extends ChainOptions {
  limit: number;
  before?: bigint;
}

interface ReadOptions extends ChainOptions, StoreAccessOptions {
  gateway?: string;
  mailboxKeyFile?: string;
  index?: bigint;
  address?: string;
  maxBytes: number;
  timeoutSecs: number;
}

function entryJson(address: PublicKey, email: Email, parents: Map<string, bigint>) {
  const reply = isZeroBytes(email.replyToHash) ? null : toHex(email.replyToHash);
  return {
    index: Number(email.index),
    address: address.toBase58(),
    epoch: Number(email.epoch),
    received_at: isoSeconds(email.epoch),
    cid: email.cid,
    local_only: email.cid.startsWith('b3:'),
    sender: email.sender.toBase58(),
    from_hash: toHex(email.fromHash),
    bounty_lamports: email.bountyLamports.toString(),
    expires_at: email.bountyLamports > 0n ? isoSeconds(email.expiresAt) : null,
    reply_to_hash: reply,
    reply_to_index: reply && parents.has(reply) ? Number(parents.get(reply)) : null,
  };
}

async function list(opts: ListOptions): Promise<void> {
  const wallet = walletOf(opts);
  if (!wallet) throw new CliError('say whose inbox: --wallet <base58> or --key <wallet file>', EXIT_USAGE);
  const { rpc, programId } = settings(opts);
  const conn = cliConnection(rpc);
  const mailbox = await chainRead(rpc, 'the mailbox', () => getMailbox(conn, programId, wallet));
  if (!mailbox)
    throw new CliError(`wallet ${wallet} has no mailbox on chain (program ${programId} at ${rpc})`);
  const entries = await chainRead(rpc, 'the inbox', () =>
    listInbox(conn, programId, wallet, { limit: opts.limit, before: opts.before }),
  );
  // A reply names its parent only by hash; resolve it when the parent is listed too.
  const parents = new Map(entries.map((e) => [toHex(replyToHash(e.address)), e.email.index]));
  const rows = entries.map((e) => entryJson(e.address, e.email, parents));
  if (opts.json) {
    const out = { wallet, mail_count: Number(mailbox.mailCount), messages: rows };
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    return;
  }
  process.stdout.write(`inbox of ${wallet}: mail_count ${mailbox.mailCount}, showing ${rows.length}\n`);
  if (rows.length === 0) return;
  const table = rows.map((r) => [
    String(r.index),
    r.received_at,
    r.bounty_lamports === '0' ? '-' : `${sol(BigInt(r.bounty_lamports))} SOL until ${r.expires_at}`,
    r.reply_to_hash === null
      ? '-'
      : r.reply_to_index !== null
        ? `#${r.reply_to_index}`
        : `${r.reply_to_hash.slice(0, 12)}…`,
    r.local_only ? `${r.cid} (local-only)` : r.cid,
    r.address,
  ]);
  const head = ['INDEX', 'RECEIVED (UTC)', 'BOUNTY', 'REPLY TO', 'CID', 'MESSAGE ACCOUNT'];
  const widths = head.map((h, i) => Math.max(h.length, ...table.map((row) => (row[i] as string).length)));
  for (const row of [head, ...table]) {
    process.stdout.write(
      `${row
        .map((c, i) => c.padEnd(widths[i] as number))
        .join('  ')
        .trimEnd()}\n`,
    );
  }
  const local = rows.filter((r) => r.local_only).map((r) => r.index);
  if (local.length > 0) {
    process.stderr.write(
      `local-only (no_ipfs): ${local.length === 1 ? 'message' : 'messages'} ${local.join(', ')}: not on IPFS, the sealed ` +
        `${local.length === 1 ? 'body is' : 'bodies are'} only in the operator's store; to read one with \`mailbox read --index N\`, ${STORE_ACCESS_HINT}\n`,
    );
  }
}

async function findMessage(
  conn: Connection,
  rpc: string,
  programId: string,
  wallet: string | undefined,
  opts: ReadOptions,
) {
  if (opts.address) {
    const address = opts.address;
    const email = await chainRead(rpc, 'the message', () => getEmailAt(conn, programId, address));
    if (!email)
      throw new CliError(
        `no message account at ${address} (deleted, or not a message of program ${programId})`,
      );
    return { address, email };
  }
  if (!wallet)
    throw new CliError(
      'say which message: --address <message account>, or --key/--wallet with --index',
      EXIT_USAGE,
    );
  if (opts.index !== undefined) {
    const index = opts.index;
    const email = await chainRead(rpc, 'the message', () => getEmail(conn, programId, wallet, index));
    if (!email)
      throw new CliError(`wallet ${wallet} has no message at index ${index} (deleted, or not sent yet)`);
    return { address: emailAddress(programId, wallet, index)[0].toBase58(), email };
  }
  const [newest] = await chainRead(rpc, 'the inbox', () => listInbox(conn, programId, wallet, { limit: 1 }));
  if (!newest) throw new CliError(`wallet ${wallet} has no messages`);
  process.stderr.write(`reading the newest message, index ${newest.email.index}\n`);
  return { address: newest.address.toBase58(), email: newest.email };
}

/** The keys to try, delegated key first: mail sealed before a MailboxKey was published is sealed to the wallet. */
function readerKeys(opts: ReadOptions): ReaderKeypair[] {
  const keys: ReaderKeypair[] = [];
  if (opts.mailboxKeyFile) {
    const file = opts.mailboxKeyFile;
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new CliError(`cannot read mailbox key file ${file}: ${(err as Error).message}`);
    }
    keys.push(parseMailboxKeyFile(text, file));
  }
  if (opts.key) keys.push(walletEncryptionKeypair(readKeypairFile(opts.key).secretKey));
  if (keys.length === 0)
    throw new CliError(
      'reading needs a key: --key <wallet file> and/or --mailbox-key-file <file>',
      EXIT_USAGE,
    );
  return keys;
}

async function read(message: string | undefined, opts: ReadOptions): Promise<void> {
  if (message && opts.address && message !== opts.address) {
    throw new CliError('give the message account once (argument or --address)', EXIT_USAGE);
  }
  opts.address ??= message;
  if (opts.address && !isBase58Key(opts.address)) {
    throw new CliError(`expected a base58 message account address, got "${opts.address}"`, EXIT_USAGE);
  }
  if (opts.address && opts.index !== undefined)
    throw new CliError('give --index or --address, not both', EXIT_USAGE);
  const keys = readerKeys(opts);
  const wallet = walletOf(opts);
  const { rpc, programId, gateway, config } = settings(opts);
  // Checked before any read, so a bad token option fails first; used only for local-only mail.
  const access = storeAccess(opts, config);
  const conn = cliConnection(rpc);
  const { address, email } = await findMessage(conn, rpc, programId, wallet, opts);
  const recipient = email.recipient.toBase58();
  if (wallet && recipient !== wallet) {
    throw new CliError(`message ${address} is addressed to ${recipient}, not to ${wallet}`);
  }
  const limits = { maxBytes: opts.maxBytes, timeoutMs: opts.timeoutSecs * 1000 };
  const localOnly = email.cid.startsWith('b3:');
  let sealed: Uint8Array;
  let check: 'match' | 'unsupported';
  if (localOnly) {
    if (!access) {
      throw new CliError(
        `message ${address} is local-only (cid ${email.cid}): the mailbox has no_ipfs, so its sealed body is ` +
          `stored only on the operator's server; ${STORE_ACCESS_HINT}`,
      );
    }
    sealed = await fetchFromStore(access, { address, marker: email.cid, recipient }, limits);
    check = 'match';
  } else {
    try {
      ({ bytes: sealed, cidCheck: check } = await fetchSealedBody(gateway, email.cid, limits));
    } catch (err) {
      if (err instanceof GatewayError) throw new CliError(err.message);
      throw err;
    }
  }
  let opened: Awaited<ReturnType<typeof openSealed>> | undefined;
  let failure: SealFormatError | undefined;
  for (const key of keys) {
    try {
      opened = await openSealed(sealed, key);
      break;
    } catch (err) {
      if (!(err instanceof SealFormatError)) throw err;
      failure ??= err;
    }
  }
  if (!opened) {
    const published = opts.mailboxKeyFile
      ? null
      : await getMailboxKey(conn, programId, recipient).catch(() => null);
    const hint = published
      ? `; this wallet published a MailboxKey (${published.pubKey.toBase58()}): pass its key file with --mailbox-key-file`
      : '';
    throw new CliError(`cannot open message ${address}: ${failure?.message}${hint}`);
  }
  const { envelope, raw } = opened;
  if (opts.json) {
    let text: string | null = null;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
    } catch {}
    const out = {
      address,
      index: Number(email.index),
      recipient,
      cid: email.cid,
      cid_verified: check === 'match',
      body_from: localOnly ? 'operator_store' : 'gateway',
      envelope: {
        from: envelope.from,
        to: envelope.to,
        received_at: new Date(envelope.receivedAt).toISOString(),
      },
      raw_base64: Buffer.from(raw).toString('base64'),
      raw: text,
    };
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    return;
  }
  process.stderr.write(
    `envelope from: ${envelope.from === '' ? '<>' : envelope.from}\n` +
      `envelope to: ${envelope.to}\nreceived: ${new Date(envelope.receivedAt).toISOString()}\n` +
      `message: ${address} (index ${email.index}), cid ${email.cid} ${check === 'match' ? 'verified' : 'not verified (CID form not checked)'}` +
      `${localOnly ? " (BLAKE3 of the bytes from the operator's store)" : ''}\n`,
  );
  process.stdout.write(raw);
}

const LIST_HELP = `
Examples:
  $ sealpost mailbox list --wallet 7xKX…q3 --rpc http://127.0.0.1:8899
  $ sealpost mailbox list --key wallet.json --limit 5 --json
`;

const READ_HELP = `
The message is the newest one unless --index, --address or the message
account argument names another. The original RFC 5322 bytes go to stdout
unchanged; the envelope (sender, recipient, time) goes to stderr, or
everything as JSON with --json. The fetched bytes are checked against the
message's CID before they are opened.

A local-only message (the mailbox has no_ipfs; its cid is a b3: marker) is
on no gateway: its sealed body is fetched from the operator's store through
the account API, which serves it only to the recipient, and opened only when
its BLAKE3 equals the marker. The way in is a bearer token (--token-file
FILE, --token TOKEN or $${API_TOKEN_ENV}), or --login, which signs in with
--key (the key signs the login nonce locally; it is never sent). The API is
--api URL, else [api] public_url of the config, else [api] host and port
(http://127.0.0.1:8080 with no config). --api with --key and no token also
logs in.

Examples:
  $ sealpost mailbox read --key wallet.json --index 0 > message.eml
  $ sealpost mailbox read 9aQw…Zt --key wallet.json --gateway http://127.0.0.1:8183
  $ sealpost mailbox read --wallet 7xKX…q3 --mailbox-key-file mailbox-key.json --index 3
  $ sealpost mailbox read --key wallet.json --index 4 --login --api https://mail.example.org
  $ SEALPOST_API_TOKEN=eyJ… sealpost mailbox read --wallet 7xKX…q3 --mailbox-key-file mailbox-key.json --index 4
`;

export function register(program: Command): void {
  const mailbox = program
    .command('mailbox')
    .description("a wallet holder's mail from the chain and the gateway");

  addChainOptions(
    mailbox
      .command('list')
      .description(
        "list a wallet's inbox newest first (index, time, bounty, reply link, cid, message account)",
      )
      .option('--wallet <base58>', 'whose inbox', keyOption('wallet address'))
      .option('-k, --key <file>', 'wallet keypair file (instead of --wallet)')
      .option('--limit <n>', 'most messages to show', intOption(1, 1000), 20)
      .option('--before <index>', 'only messages with an index below this (paging)', indexOption),
  )
    .addHelpText('after', LIST_HELP)
    .action((opts: ListOptions) => list(opts));

  addChainOptions(
    mailbox
      .command('read [message]')
      .description(
        'fetch one message from the gateway (local-only mail: the operator store), open it and print the original RFC 5322 message',
      )
      .option('-k, --key <file>', 'wallet keypair file: names the wallet and opens mail sealed to it')
      .option(
        '--wallet <base58>',
        'the wallet, when only --mailbox-key-file is given',
        keyOption('wallet address'),
      )
      .option('--mailbox-key-file <file>', 'the delegated key (published MailboxKey) file')
      .option('--index <n>', 'message index in the inbox', indexOption)
      .option('--address <account>', 'message (Email) account address')
      .option(
        '--gateway <url>',
        `IPFS gateway (default: config [ipfs] gateway_url, else ${DEV_GATEWAY})`,
        urlOption,
      )
      .option(
        '--max-bytes <n>',
        'largest sealed body to fetch, in bytes',
        intOption(1, 2 ** 31),
        64 * 1024 * 1024,
      )
      .option('--timeout-secs <n>', 'gateway (or account API) timeout in seconds', intOption(1, 3600), 30)
      .option(
        '--api <url>',
        'account API for local-only (no_ipfs) mail (default: config [api] public_url, else [api] host:port)',
        urlOption,
      )
      .option('--login', 'local-only mail: log in to the account API with --key (signs the nonce locally)')
      .option(
        '--token-file <file>',
        `local-only mail: file holding an account API token (else $${API_TOKEN_ENV})`,
      )
      .option(
        '--token <token>',
        'local-only mail: an account API token (visible in ps; prefer --token-file)',
      ),
  )
    .addHelpText('after', READ_HELP)
    .action((message: string | undefined, opts: ReadOptions) => read(message, opts));

  registerSignText(mailbox);
  registerSignTx(mailbox);
  registerSetup(mailbox);
  registerSend(mailbox);
  registerStamps(mailbox);
  registerSubmit(mailbox);
}
