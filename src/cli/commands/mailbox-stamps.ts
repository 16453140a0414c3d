// `sealpost mailbox frombox set|stamps buy|stamps reclaim`: postage from
// both sides. A recipient prices one sender (a Frombox); a sender buys
// stamps toward a recipient after a fresh quote, with the quoted postage as
// the purchase's ceiling (as the webmail's prepay card does), and takes the
// unspent ones back.
import type { Command } from 'commander';
import {
  buyStampsInstruction,
  createFromboxInstruction,
  FROMBOX_SIZE,
  fetchStampQuote,
  fromboxAddress,
  fromHash,
  getFrombox,
  reclaimFromboxStampsInstruction,
  rentExemptLamports,
  topUpStampsInstruction,
  updateFromboxInstruction,
} from '../../../chain/index.ts';
import { RecipientError, resolveRecipient } from '../../trustless/recipient.ts';
import { CliError, EXIT_USAGE } from '../common.ts';
import { chainRead, intOption, sol } from './mailbox-common.ts';
import { lamportsOption } from './mailbox-setup.ts';
import { addTxOptions, openTxSession, runTx, type TxOptions, type TxSession } from './mailbox-tx.ts';

interface FromboxOptions extends TxOptions {
  from: string;
  postage: bigint;
}

/** A sender's from_hash: a wallet's (direct sends) or an email address's (relayed mail). */
function senderHash(from: string): Uint8Array {
  try {
    return fromHash(from);
  } catch (err) {
    throw new CliError(`--from: ${(err as Error).message}`, EXIT_USAGE);
  }
}

async function fromboxSet(opts: FromboxOptions): Promise<void> {
  const hash = senderHash(opts.from);
  const s = openTxSession(opts);
  const existing = await chainRead(s.rpc, 'the frombox', () =>
    getFrombox(s.conn, s.programId, hash, s.wallet),
  );
  const address = fromboxAddress(s.programId, hash, s.wallet)[0].toBase58();
  const params = { programId: s.programId, owner: s.wallet, fromHash: hash, requiredPostage: opts.postage };
  await runTx(
    s,
    {
      title: `${existing ? 'reprice' : 'price'} mail from ${opts.from} at ${sol(opts.postage)} SOL`,
      instructions: [existing ? updateFromboxInstruction(params) : createFromboxInstruction(params)],
      items: existing
        ? []
        : [{ kind: 'rent', what: `Frombox account ${address}`, lamports: rentExemptLamports(FROMBOX_SIZE) }],
      receipt: { frombox: address, from: opts.from, required_postage: opts.postage.toString() },
    },
    { NotFound: 'create your mailbox first' },
  );
}

async function recipientOf(s: TxSession, to: string) {
  try {
    return await resolveRecipient(s.conn, s.programId, to);
  } catch (err) {
    if (err instanceof RecipientError) throw new CliError(err.message);
    throw new CliError(`could not read the recipient from the chain at ${s.rpc}: ${(err as Error).message}`);
  }
}

interface BuyOptions extends TxOptions {
  to: string;
  count: number;
  maxPrice?: bigint;
}

async function buy(opts: BuyOptions): Promise<void> {
  const s = openTxSession(opts);
  const recipient = await recipientOf(s, opts.to);
  const stamps = BigInt(opts.count);
  const quote = await chainRead(s.rpc, 'the stamp price', () =>
    fetchStampQuote(s.conn, s.programId, { buyer: s.wallet, recipient: recipient.wallet, stamps }),
  );
  process.stderr.write(
    `quote: ${sol(quote.postage)} SOL postage + ${sol(quote.surcharge)} surcharge + ${sol(quote.fee)} fee per stamp` +
      `${quote.rent > 0n ? ` + ${sol(quote.rent)} frombox rent` : ''} = ${sol(quote.total)} SOL for ${stamps}\n`,
  );
  const ceiling = opts.maxPrice ?? quote.postage;
  if (quote.postage > ceiling) {
    throw new CliError(
      `${opts.to} asks ${sol(quote.postage)} SOL postage per stamp, above --max-price ${sol(ceiling)} SOL; nothing was bought`,
    );
  }
  const params = {
    programId: s.programId,
    buyer: s.wallet,
    recipient: recipient.wallet,
    stamps,
    maxPriceLamports: ceiling,
  };
  const items: Parameters<typeof runTx>[1]['items'] = [
    {
      kind: 'transfer',
      what: `${stamps} stamp(s) at ${sol(quote.perStamp)} SOL`,
      lamports: quote.perStamp * stamps,
    },
  ];
  if (quote.rent > 0n) items.unshift({ kind: 'rent', what: 'Frombox account', lamports: quote.rent });
  await runTx(
    s,
    {
      title: `buy ${stamps} stamp(s) toward ${recipient.input} (wallet ${recipient.wallet.toBase58()})`,
      instructions: [quote.createsFrombox ? buyStampsInstruction(params) : topUpStampsInstruction(params)],
      items,
      receipt: {
        recipient: recipient.wallet.toBase58(),
        stamps: Number(stamps),
        postage_lamports: quote.postage.toString(),
        max_price_lamports: ceiling.toString(),
        frombox: fromboxAddress(s.programId, fromHash(s.wallet), recipient.wallet)[0].toBase58(),
      },
    },
    { PriceAboveCeiling: 'the recipient raised the postage since the quote; nothing was bought' },
  );
}

async function reclaim(opts: TxOptions & { to: string }): Promise<void> {
  const s = openTxSession(opts);
  const recipient = await recipientOf(s, opts.to);
  const frombox = await chainRead(s.rpc, 'the frombox', () =>
    getFrombox(s.conn, s.programId, fromHash(s.wallet), recipient.wallet),
  );
  if (!frombox || frombox.stamps === 0n)
    throw new CliError(`this wallet holds no unspent stamps toward ${opts.to}; nothing was sent`);
  const address = fromboxAddress(s.programId, fromHash(s.wallet), recipient.wallet)[0];
  const held = BigInt(await chainRead(s.rpc, 'the frombox', () => s.conn.getBalance(address)));
  await runTx(s, {
    title: `reclaim ${frombox.stamps} unspent stamp(s) toward ${opts.to}`,
    instructions: [
      reclaimFromboxStampsInstruction({
        programId: s.programId,
        sender: s.wallet,
        recipient: recipient.wallet,
      }),
    ],
    items: [
      {
        kind: 'refund',
        what: 'unspent postage and surcharge',
        lamports: held - rentExemptLamports(FROMBOX_SIZE),
      },
    ],
    receipt: { recipient: recipient.wallet.toBase58(), stamps: Number(frombox.stamps) },
  });
}

export function registerStamps(mailbox: Command): void {
  const frombox = mailbox.command('frombox').description("your price for one sender's mail (a Frombox)");
  addTxOptions(
    frombox
      .command('set')
      .description('set the postage one sender pays per message to you (0 lets them in free)')
      .requiredOption('--from <address>', 'the sender: a wallet address or an email address (relayed mail)')
      .requiredOption('--postage <lamports>', 'lamports per message', lamportsOption),
  ).action((opts: FromboxOptions) => fromboxSet(opts));

  const stamps = mailbox
    .command('stamps')
    .description('stamps this wallet buys to write to priced mailboxes');
  addTxOptions(
    stamps
      .command('buy')
      .description('quote, then buy stamps toward a recipient')
      .requiredOption('--to <recipient>', 'wallet, alias or alias@on-chain-domain')
      .option('--count <n>', 'stamps to buy', intOption(1, 1_000_000), 1)
      .option(
        '--max-price <lamports>',
        'refuse when the postage per stamp is above this (default: the quote)',
        lamportsOption,
      ),
  ).action((opts: BuyOptions) => buy(opts));
  addTxOptions(
    stamps
      .command('reclaim')
      .description('take back the unspent stamps toward a recipient')
      .requiredOption('--to <recipient>', 'wallet, alias or alias@on-chain-domain'),
  ).action((opts: TxOptions & { to: string }) => reclaim(opts));
}
