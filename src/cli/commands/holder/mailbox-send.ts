// `sealpost mailbox send|delete|bounty claim`: the trustless send from the
// terminal, signed by the sender's own wallet, and what a holder does with a
// message afterwards. The checks, sealing, pinning and SendMail building are
// the webmail's (src/mail/trustless/send.ts): resolve the recipient (on-chain
// mailboxes only), refuse no_ipfs recipients and born-expired bounties, hold
// when postage is due, then seal, pin, sign and wait for confirmation.
import { readFileSync } from 'node:fs';
import { PublicKey } from '@solana/web3.js';
import type { Command } from 'commander';
import { deleteBountyLocked } from '../../../../chain/client/bounty-lock.ts';
import { emailSize, getEmailAt, isBase58Key, rentExemptLamports } from '../../../../chain/client/index.ts';
import { claimBountyInstruction, deleteMailInstruction } from '../../../../chain/client/instructions.ts';
import { computeCid } from '../../../mail/cid.ts';
import { PinServiceError, pinBytes } from '../../../mail/trustless/pin.ts';
import { RecipientError } from '../../../mail/trustless/recipient.ts';
import {
  buildSendMail,
  ComposeRefusal,
  chainNow,
  directEnvelope,
  formatSol,
  prepareSend,
  sealAndPin,
} from '../../../mail/trustless/send.ts';
import { CliError, EXIT_USAGE, loadCliConfig } from '../../common.ts';
import { chainRead, intOption, isoSeconds, sol, urlOption } from './mailbox-common.ts';
import {
  addTxOptions,
  openTxSession,
  runTx,
  type TxOptions,
  TxRefusedError,
  type TxSession,
} from './mailbox-tx.ts';

const DEV_PIN = 'http://127.0.0.1:8182';
/** Environment variable holding the pin service's bearer token. */
export const PIN_TOKEN_ENV = 'SEALPOST_PIN_TOKEN';
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

interface SendOptions extends TxOptions {
  to: string;
  bounty?: string;
  claimDays?: number;
  replyTo?: string;
  pinUrl?: string;
  pinTokenFile?: string;
}

async function readMessage(): Promise<Uint8Array> {
  if (process.stdin.isTTY)
    process.stderr.write('reading the RFC 5322 message from stdin; end it with Ctrl-D\n');
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of process.stdin) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : (chunk as Buffer);
    total += buf.length;
    if (total > MAX_MESSAGE_BYTES)
      throw new CliError(`the message on stdin is over ${MAX_MESSAGE_BYTES} bytes`, EXIT_USAGE);
    chunks.push(buf);
  }
  if (total === 0)
    throw new CliError('no message on stdin: pipe the RFC 5322 message in (< message.eml)', EXIT_USAGE);
  return new Uint8Array(Buffer.concat(chunks));
}

/** The pin service and its bearer token: options, else $SEALPOST_PIN_TOKEN, else the config's [ipfs]. */
function pinService(opts: SendOptions): { url: string; token: string } {
  const loaded = loadCliConfig({ config: opts.config }, { stderr: { write: () => true } });
  const config = loaded.configFile !== null ? loaded.config : null;
  let token = process.env[PIN_TOKEN_ENV] ?? config?.ipfs.pind_auth_token ?? '';
  if (opts.pinTokenFile) {
    try {
      token = readFileSync(opts.pinTokenFile, 'utf8').trim();
    } catch (err) {
      throw new CliError(`cannot read --pin-token-file ${opts.pinTokenFile}: ${(err as Error).message}`);
    }
  }
  return { url: (opts.pinUrl ?? config?.ipfs.pind_url ?? DEV_PIN).replace(/\/+$/, ''), token };
}

function pinError(err: PinServiceError, url: string): CliError {
  if (err.status === null) return new CliError(`the pin service at ${url} does not answer; nothing was sent`);
  if (err.status === 401 || err.status === 403)
    return new CliError(
      `the pin service at ${url} refused the bearer token (--pin-token-file, $${PIN_TOKEN_ENV} or [ipfs] pind_auth_token); nothing was sent`,
    );
  return new CliError(`${err.message.replace(/\.$/, '')}; nothing was sent`);
}

/** `perStamp`: postage + surcharge + fee, the price `stamps buy --max-price` caps. */
function heldMessage(to: string, postage: bigint, perStamp: bigint, total: bigint): string {
  return (
    `${to} asks ${formatSol(postage)} SOL postage per message from this wallet and it holds no stamp toward them: ` +
    `buy one first with "sealpost mailbox stamps buy --to ${to} --count 1 --max-price ${perStamp}" ` +
    `(${formatSol(total)} SOL with the postoffice fees and the frombox rent, plus the network fee); nothing was sealed, pinned or sent`
  );
}

async function send(opts: SendOptions): Promise<void> {
  if (opts.claimDays !== undefined && !opts.bounty)
    throw new CliError('--claim-days goes with --bounty', EXIT_USAGE);
  if (opts.replyTo !== undefined && !isBase58Key(opts.replyTo))
    throw new CliError(
      `--reply-to: expected the parent's message account (base58), got "${opts.replyTo}"`,
      EXIT_USAGE,
    );
  const raw = await readMessage();
  const s = openTxSession(opts);
  const ctx = { conn: s.conn, programId: s.programId, wallet: { publicKey: s.wallet } };
  const terms = { to: opts.to, bountySol: opts.bounty ?? '', claimDays: opts.claimDays?.toString() ?? '' };
  let prepared: Awaited<ReturnType<typeof prepareSend>>;
  try {
    prepared = await prepareSend(ctx, terms);
  } catch (err) {
    if (err instanceof RecipientError || err instanceof ComposeRefusal) throw new CliError(err.message);
    throw new CliError(`could not read the recipient from the chain at ${s.rpc}: ${(err as Error).message}`);
  }
  if (prepared.kind === 'held')
    throw new CliError(
      heldMessage(opts.to, prepared.quote.postage, prepared.quote.perStamp, prepared.quote.total),
    );
  const { recipient, bounty } = prepared;
  const envelope = await directEnvelope(s.conn, s.programId, s.wallet, recipient);
  const pin = pinService(opts);
  let cid: string;
  try {
    // A dry run seals to learn the CID but pins nothing.
    const pinner = opts.dryRun ? computeCid : (bytes: Uint8Array) => pinBytes(pin.url, pin.token, bytes);
    if (!opts.dryRun)
      process.stderr.write(`sealing to ${recipient.wallet.toBase58()} and pinning at ${pin.url}\n`);
    cid = (await sealAndPin(ctx, { recipient, envelope, raw, pin: pinner })).cid;
  } catch (err) {
    if (err instanceof PinServiceError) throw pinError(err, pin.url);
    if (err instanceof ComposeRefusal) throw new CliError(err.message);
    throw err;
  }
  for (let attempt = 0; ; attempt++) {
    const built = await buildSendMail(ctx, {
      recipient: recipient.wallet,
      cid,
      bounty,
      replyTo: opts.replyTo,
    });
    const items: Parameters<typeof runTx>[1]['items'] = [
      {
        kind: 'rent',
        what: `Email account ${built.emailAddress} (back on delete)`,
        lamports: rentExemptLamports(emailSize(cid)),
      },
    ];
    if (bounty.lamports > 0n)
      items.push({
        kind: 'transfer',
        what: `bounty, claimable until ${isoSeconds(bounty.expiresAt)}`,
        lamports: bounty.lamports,
      });
    try {
      await runTx(
        s,
        {
          title: `send to ${recipient.input} (wallet ${recipient.wallet.toBase58()})`,
          instructions: [built.ix],
          items,
          receipt: {
            email_address: built.emailAddress,
            index: Number(built.index),
            recipient: recipient.wallet.toBase58(),
            cid,
            from: envelope.from,
            to: envelope.to,
            bounty_lamports: bounty.lamports.toString(),
            expires_at: bounty.lamports > 0n ? isoSeconds(bounty.expiresAt) : null,
          },
        },
        {
          PostageRequired: 'a stamp is needed: see sealpost mailbox stamps buy',
          BountyExpired: 'the claim window is already over',
        },
      );
      return;
    } catch (err) {
      // Another send took this mail_count index first: build for the next one.
      const race =
        err instanceof TxRefusedError &&
        (err.mailError === 'InvalidPda' || err.mailError === 'AlreadyExists');
      if (race && attempt < 3 && !opts.signOffline && !opts.dryRun) continue;
      throw err;
    }
  }
}

async function message(s: TxSession, address: string) {
  if (!isBase58Key(address))
    throw new CliError(`expected a message account address (base58), got "${address}"`, EXIT_USAGE);
  const email = await chainRead(s.rpc, 'the message', () => getEmailAt(s.conn, s.programId, address));
  if (!email)
    throw new CliError(
      `no message account at ${address} (deleted, or not a message of program ${s.programId})`,
    );
  return email;
}

async function claim(address: string, opts: TxOptions): Promise<void> {
  const s = openTxSession(opts);
  const email = await message(s, address);
  if (!email.recipient.equals(s.wallet))
    throw new CliError(
      `message ${address} is addressed to ${email.recipient.toBase58()}, not to ${s.wallet.toBase58()}`,
    );
  if (email.bountyLamports === 0n)
    throw new CliError(`message ${address} carries no bounty to claim; nothing was sent`);
  const now = await chainNow(s.conn, Date.now());
  if (BigInt(now) >= email.expiresAt) {
    throw new CliError(
      `the bounty window of message ${address} closed at ${isoSeconds(email.expiresAt)}; the sender gets it back on delete; nothing was sent`,
    );
  }
  await runTx(
    s,
    {
      title: `claim the bounty of message ${address}`,
      instructions: [claimBountyInstruction({ programId: s.programId, recipient: s.wallet, email: address })],
      items: [{ kind: 'refund', what: 'the bounty', lamports: email.bountyLamports }],
      receipt: {
        email_address: address,
        bounty_lamports: email.bountyLamports.toString(),
        bounty_sol: sol(email.bountyLamports),
      },
    },
    { BountyExpired: 'the claim window closed', NothingToClaim: 'the bounty was already claimed' },
  );
}

async function remove(address: string, opts: TxOptions): Promise<void> {
  const s = openTxSession(opts);
  const email = await message(s, address);
  if (!email.recipient.equals(s.wallet) && !email.sender.equals(s.wallet)) {
    throw new CliError(`only the recipient or the sender may delete message ${address}; nothing was sent`);
  }
  const locked = () =>
    `the bounty of ${sol(email.bountyLamports)} SOL is the recipient's to claim until ${isoSeconds(email.expiresAt)}; ` +
    'you can delete this message after that';
  // The sender takes an unclaimed bounty back only once its window is over (BountyLocked before).
  if (!email.recipient.equals(s.wallet) && email.bountyLamports > 0n) {
    const now = await chainNow(s.conn, Date.now());
    if (deleteBountyLocked(email, s.wallet, now)) throw new CliError(`${locked()}; nothing was sent`);
  }
  const lamports = await chainRead(s.rpc, 'the message', () => s.conn.getBalance(new PublicKey(address)));
  await runTx(
    s,
    {
      title: `delete message ${address}`,
      instructions: [
        deleteMailInstruction({
          programId: s.programId,
          signer: s.wallet,
          email: address,
          rentPayer: email.rentPayer,
        }),
      ],
      items: email.rentPayer.equals(s.wallet)
        ? [{ kind: 'refund', what: 'the Email rent and any unclaimed bounty', lamports: BigInt(lamports) }]
        : [],
      receipt: {
        deleted: address,
        refund_to: email.rentPayer.toBase58(),
        refund_lamports: lamports.toString(),
      },
    },
    { BountyLocked: locked() },
  );
}

const SEND_HELP = `
The message is read from stdin as is (RFC 5322) and sealed to the
recipient's published mailbox key, else to its wallet. The recipient is a
wallet address, wallet@any.domain, an alias, or alias@domain where domain
is an active mail domain on chain; other addresses are refused (send those
through a mail server). A mailbox with no_ipfs cannot take a trustless
send. When the recipient asks postage and this wallet has no stamp toward
it, nothing is sealed or pinned: buy a stamp first (mailbox stamps buy).

The pin service is --pin-url, else the config's [ipfs] pind_url; its bearer
token --pin-token-file, else $${PIN_TOKEN_ENV}, else [ipfs] pind_auth_token.

Examples:
  $ sealpost mailbox send --key wallet.json --to alice@mail.example < note.eml
  $ sealpost mailbox send --key wallet.json --to 7xKX…q3 --bounty 0.01 --claim-days 3 < offer.eml
  $ sealpost mailbox send --key wallet.json --to bob --reply-to 9aQw…Zt < reply.eml
`;

export function registerSend(mailbox: Command): void {
  addTxOptions(
    mailbox
      .command('send')
      .description('send a message (stdin) directly, signed by the wallet: seal, pin, SendMail')
      .requiredOption('--to <recipient>', 'wallet, wallet@domain, alias or alias@on-chain-domain')
      .option('--bounty <sol>', 'SOL the recipient may claim by reading the message')
      .option('--claim-days <n>', 'days the bounty can be claimed (default 7)', intOption(1, 3650))
      .option('--reply-to <message>', "the parent message's account (base58)")
      .option('--pin-url <url>', `pin service (default: config [ipfs] pind_url, else ${DEV_PIN})`, urlOption)
      .option('--pin-token-file <file>', "file holding the pin service's bearer token"),
  )
    .addHelpText('after', SEND_HELP)
    .action((opts: SendOptions) => send(opts));

  addTxOptions(
    mailbox
      .command('delete <message>')
      .description(
        'delete a message account (the recipient; the sender once any bounty window is over); its rent goes back',
      ),
  ).action((address: string, opts: TxOptions) => remove(address, opts));

  const bounty = mailbox.command('bounty').description('bounties carried by messages to this wallet');
  addTxOptions(
    bounty.command('claim <message>').description("claim a message's bounty within its window"),
  ).action((address: string, opts: TxOptions) => claim(address, opts));
}
