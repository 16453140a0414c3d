// `sealpost mailbox frombox set|stamps buy|stamps add|stamps reclaim`:
// postage from both sides. A recipient prices one sender (a Frombox); a
// sender buys stamps toward a recipient after a fresh quote, with the quoted
// per-stamp price (postage + surcharge + fee) as the purchase's ceiling (as
// the webmail's prepay card does), and takes the unspent ones back. Those
// stamps pay for the wallet's own direct sends only; relayed mail from an
// address spends stamps anyone added for that address (`stamps add --for`).
import type { PublicKey } from '@solana/web3.js';
import type { Command } from 'commander';
import {
  addStampsInstruction,
  buyStampsInstruction,
  createFromboxInstruction,
  FROMBOX_SIZE,
  fetchStampQuote,
  fromboxAddress,
  fromHash,
  getFrombox,
  reclaimFromboxStampsInstruction,
  rentExemptLamports,
  type StampQuote,
  topUpStampsInstruction,
  updateFromboxInstruction,
} from '../../../../chain/client/index.ts';
import { RecipientError, resolveRecipient } from '../../../mail/trustless/recipient.ts';
import { CliError, EXIT_USAGE } from '../../common.ts';
import { chainRead, intOption, sol } from './mailbox-common.ts';
import { lamportsOption } from './mailbox-setup.ts';
import {
  addTxOptions,
  openTxSession,
  runTx,
  type TxOptions,
  TxRefusedError,
  type TxSession,
} from './mailbox-tx.ts';

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

/** `stamps buy`: this wallet's own frombox. `stamps add --for`: any sender's, which the recipient priced. */
async function buy(opts: BuyOptions & { for?: string }): Promise<void> {
  const forAddress = opts.for;
  const hash = forAddress === undefined ? undefined : senderHash(forAddress);
  const s = openTxSession(opts);
  const recipient = await recipientOf(s, opts.to);
  const stamps = BigInt(opts.count);
  const quote = await chainRead(s.rpc, 'the stamp price', () =>
    fetchStampQuote(s.conn, s.programId, {
      buyer: s.wallet,
      recipient: recipient.wallet,
      stamps,
      fromHash: hash,
    }),
  );
  // AddStamps only fills a frombox the recipient made: pricing a sender is the recipient's.
  if (forAddress !== undefined && quote.createsFrombox) {
    throw new CliError(
      `${opts.to} has not priced mail from ${forAddress} (no frombox): only the recipient can, with sealpost mailbox frombox set; nothing was bought`,
    );
  }
  process.stderr.write(
    `quote: ${sol(quote.perStamp)} SOL per stamp (${priceParts(quote)}) × ${stamps}` +
      `${quote.rent > 0n ? ` + ${sol(quote.rent)} frombox rent` : ''} = ${sol(quote.total)} SOL\n`,
  );
  // The whole per-stamp price is what the program compares with the ceiling.
  const ceiling = opts.maxPrice ?? quote.perStamp;
  if (quote.perStamp > ceiling) {
    throw new CliError(
      `one stamp toward ${opts.to} costs ${sol(quote.perStamp)} SOL (${priceParts(quote)}), above --max-price ${sol(ceiling)} SOL; nothing was bought`,
    );
  }
  const params = {
    programId: s.programId,
    buyer: s.wallet,
    recipient: recipient.wallet,
    stamps,
    maxPriceLamports: ceiling,
  };
  const instruction =
    hash !== undefined
      ? addStampsInstruction({ ...params, payer: s.wallet, fromHash: hash })
      : quote.createsFrombox
        ? buyStampsInstruction(params)
        : topUpStampsInstruction(params);
  const items: Parameters<typeof runTx>[1]['items'] = [
    {
      kind: 'transfer',
      what: `${stamps} stamp(s) at ${sol(quote.perStamp)} SOL`,
      lamports: quote.perStamp * stamps,
    },
  ];
  if (quote.rent > 0n) items.unshift({ kind: 'rent', what: 'Frombox account', lamports: quote.rent });
  const toward = `toward ${recipient.input} (wallet ${recipient.wallet.toBase58()})`;
  try {
    await runTx(
      s,
      {
        title:
          forAddress === undefined
            ? `buy ${stamps} stamp(s) ${toward}`
            : `add ${stamps} stamp(s) for mail from ${forAddress} ${toward}`,
        instructions: [instruction],
        items,
        receipt: {
          recipient: recipient.wallet.toBase58(),
          ...(forAddress === undefined ? {} : { for: forAddress }),
          stamps: Number(stamps),
          postage_lamports: quote.postage.toString(),
          price_per_stamp_lamports: quote.perStamp.toString(),
          max_price_lamports: ceiling.toString(),
          frombox: fromboxAddress(s.programId, hash ?? fromHash(s.wallet), recipient.wallet)[0].toBase58(),
        },
      },
      {
        PriceAboveCeiling: 'the price per stamp rose above the ceiling since the quote; nothing was bought',
        NotFound: 'the recipient removed its price for this sender',
      },
    );
  } catch (err) {
    if (err instanceof TxRefusedError && err.mailError === 'PriceAboveCeiling')
      throw await repriced(s, recipient.wallet, stamps, ceiling, hash);
    throw err;
  }
}

/** postage + surcharge + fee, in SOL, as one phrase. */
function priceParts(q: StampQuote): string {
  return `${sol(q.postage)} postage + ${sol(q.surcharge)} surcharge + ${sol(q.fee)} fee`;
}

/** The purchase was refused for its ceiling: names the price now (read again), or the ceiling alone. */
async function repriced(
  s: TxSession,
  recipient: PublicKey,
  stamps: bigint,
  ceiling: bigint,
  hash?: Uint8Array,
): Promise<CliError> {
  const live = await fetchStampQuote(s.conn, s.programId, {
    buyer: s.wallet,
    recipient,
    stamps,
    fromHash: hash,
  }).catch(() => null);
  const now = live
    ? `the price changed to ${sol(live.perStamp)} SOL per stamp (${priceParts(live)})`
    : 'the price per stamp changed';
  return new TxRefusedError(
    `${now}, above the ${sol(ceiling)} SOL you agreed to; nothing was bought (the mail program refused: PriceAboveCeiling)`,
    'PriceAboveCeiling',
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
        'refuse when one stamp costs more than this in all: postage + surcharge + fee (default: the quote)',
        lamportsOption,
      ),
  ).action((opts: BuyOptions) => buy(opts));
  addTxOptions(
    stamps
      .command('add')
      .description(
        'quote, then add stamps for mail from any sender (e.g. an email address: relayed mail) that the recipient priced',
      )
      .requiredOption('--to <recipient>', 'wallet, alias or alias@on-chain-domain')
      .requiredOption('--for <address>', 'the sender: an email address (relayed mail) or a wallet address')
      .option('--count <n>', 'stamps to add', intOption(1, 1_000_000), 1)
      .option(
        '--max-price <lamports>',
        'refuse when one stamp costs more than this in all: postage + surcharge + fee (default: the quote)',
        lamportsOption,
      ),
  ).action((opts: BuyOptions & { for: string }) => buy(opts));
  addTxOptions(
    stamps
      .command('reclaim')
      .description('take back the unspent stamps toward a recipient')
      .requiredOption('--to <recipient>', 'wallet, alias or alias@on-chain-domain'),
  ).action((opts: TxOptions & { to: string }) => reclaim(opts));
}
