// `sealpost mailbox create|flags|domain|alias|key`: a wallet holder sets up
// their mailbox from the terminal. Each command checks the chain first (so the
// usual mistakes are one clear line with nothing sent), then builds one
// instruction and hands it to runTx (key, --dry-run or --sign-offline).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import bs58 from 'bs58';
import { type Command, InvalidArgumentError, Option } from 'commander';
import {
  ALIAS_SIZE,
  createAliasInstruction,
  createMailboxInstruction,
  domainAddress,
  getAlias,
  getDomain,
  getMailbox,
  getMailboxKey,
  MAILBOX_KEY_SIZE,
  MAILBOX_SIZE,
  type Mailbox,
  mailboxAddress,
  mailboxKeyAddress,
  normalizeAlias,
  normalizeDomain,
  publishKeyInstruction,
  removeKeyInstruction,
  rentExemptLamports,
  setMailboxDomainInstruction,
  setMailboxFlagsInstruction,
  U64_MAX,
} from '../../../../chain/client/index.ts';
import { getMailboxDomain } from '../../../../chain/client/relay.ts';
import {
  formatMailboxKeyFile,
  generateReaderKeypair,
  parseMailboxKeyFile,
  type ReaderKeypair,
} from '../../../mail/seal/index.ts';
import { CliError, cliConnection, EXIT_USAGE } from '../../common.ts';
import { addChainOptions, type ChainOptions, chainRead, settings, sol } from './mailbox-common.ts';
import { addTxOptions, openTxSession, runTx, type TxOptions, type TxSession } from './mailbox-tx.ts';

export function lamportsOption(value: string): bigint {
  if (!/^\d{1,20}$/.test(value) || BigInt(value) > U64_MAX)
    throw new InvalidArgumentError(`expected lamports (an integer 0..${U64_MAX}), got "${value}"`);
  return BigInt(value);
}

async function needMailbox(s: TxSession) {
  const mailbox = await chainRead(s.rpc, 'the mailbox', () => getMailbox(s.conn, s.programId, s.wallet));
  if (!mailbox) {
    throw new CliError(
      `wallet ${s.wallet.toBase58()} has no mailbox on chain (program ${s.programId} at ${s.rpc}): create it first with sealpost mailbox create`,
    );
  }
  return mailbox;
}

interface CreateOptions extends TxOptions {
  postage: bigint;
  domain?: string;
}

async function create(opts: CreateOptions): Promise<void> {
  const s = openTxSession(opts);
  const existing = await chainRead(s.rpc, 'the mailbox', () => getMailbox(s.conn, s.programId, s.wallet));
  if (existing) throw new CliError(`wallet ${s.wallet.toBase58()} already has a mailbox; nothing was sent`);
  let domain: string | undefined;
  if (opts.domain !== undefined) {
    const name = opts.domain;
    const onChain = await chainRead(s.rpc, 'the mail domain', () => getDomain(s.conn, s.programId, name));
    if (!onChain) throw new CliError(`${name} is not a mail domain on chain; nothing was sent`);
    if (!onChain.isActive)
      throw new CliError(`the mail domain ${name} is inactive on chain; nothing was sent`);
    domain = onChain.domain;
  }
  const mailbox = mailboxAddress(s.programId, s.wallet)[0].toBase58();
  await runTx(s, {
    title: `create the mailbox of ${s.wallet.toBase58()}`,
    instructions: [
      createMailboxInstruction({
        programId: s.programId,
        owner: s.wallet,
        defaultPostage: opts.postage,
        domain,
      }),
    ],
    items: [{ kind: 'rent', what: `Mailbox account ${mailbox}`, lamports: rentExemptLamports(MAILBOX_SIZE) }],
    receipt: { mailbox, default_postage: opts.postage.toString(), domain: domain ?? null },
  });
}

interface FlagsOptions extends TxOptions {
  /** commander's attribute of --no-ipfs <on|off>: the word when given, else its negation default (true). */
  ipfs?: string | boolean;
  postage?: bigint;
}

async function flags(opts: FlagsOptions): Promise<void> {
  const noIpfs = typeof opts.ipfs === 'string' ? opts.ipfs === 'on' : undefined;
  if (noIpfs === undefined && opts.postage === undefined) {
    throw new CliError('say what to change: --no-ipfs on|off and/or --postage <lamports>', EXIT_USAGE);
  }
  const s = openTxSession(opts);
  const mailbox = await needMailbox(s);
  await runTx(s, {
    title: `set the flags of the mailbox of ${s.wallet.toBase58()}`,
    instructions: [
      setMailboxFlagsInstruction({
        programId: s.programId,
        owner: s.wallet,
        noIpfs,
        defaultPostage: opts.postage,
      }),
    ],
    items: [],
    receipt: {
      no_ipfs: noIpfs ?? mailbox.noIpfs,
      default_postage: (opts.postage ?? mailbox.defaultPostage).toString(),
    },
  });
}

/** The name of the domain the mailbox names now (its account address when that is not on chain), or null. */
async function currentDomain(s: TxSession, mailbox: Mailbox): Promise<string | null> {
  const found = await chainRead(s.rpc, 'the mail domain', () =>
    getMailboxDomain(s.conn, s.programId, mailbox),
  );
  if (!found) return null;
  return found.domain?.domain ?? found.address.toBase58();
}

async function domainSet(text: string, opts: TxOptions): Promise<void> {
  let name: string;
  try {
    name = normalizeDomain(text);
  } catch {
    throw new CliError(`"${text}" is not a valid domain name`, EXIT_USAGE);
  }
  const s = openTxSession(opts);
  const mailbox = await needMailbox(s);
  const onChain = await chainRead(s.rpc, 'the mail domain', () => getDomain(s.conn, s.programId, name));
  if (!onChain) throw new CliError(`${name} is not a mail domain on chain; nothing was sent`);
  if (!onChain.isActive) throw new CliError(`the mail domain ${name} is inactive on chain; nothing was sent`);
  const domain = onChain.domain;
  const account = domainAddress(s.programId, domain)[0];
  if (mailbox.domain.equals(account))
    throw new CliError(`the mailbox of ${s.wallet.toBase58()} is already in ${domain}; nothing was sent`);
  const previous = await currentDomain(s, mailbox);
  await runTx(
    s,
    {
      title: `move the mailbox of ${s.wallet.toBase58()} into ${domain}${previous ? ` (from ${previous})` : ''}`,
      instructions: [setMailboxDomainInstruction({ programId: s.programId, owner: s.wallet, domain })],
      items: [],
      receipt: { domain, domain_account: account.toBase58(), previous_domain: previous },
    },
    { DomainInactive: `${domain} was deactivated in the meantime`, NotFound: `${domain} is not on chain` },
  );
  process.stderr.write(
    `relayed mail now reaches this mailbox only through ${domain}'s mail server (its domain authority); direct sends are unchanged\n`,
  );
}

async function domainLeave(opts: TxOptions): Promise<void> {
  const s = openTxSession(opts);
  const mailbox = await needMailbox(s);
  const previous = await currentDomain(s, mailbox);
  if (previous === null)
    throw new CliError(`the mailbox of ${s.wallet.toBase58()} is in no mail domain; nothing was sent`);
  await runTx(s, {
    title: `take the mailbox of ${s.wallet.toBase58()} out of ${previous}`,
    instructions: [setMailboxDomainInstruction({ programId: s.programId, owner: s.wallet, domain: null })],
    items: [],
    receipt: { domain: null, previous_domain: previous },
  });
  process.stderr.write(
    'this mailbox now takes no relayed mail (no mail server delivers to it); direct sends are unchanged\n',
  );
}

function aliasName(text: string): string {
  try {
    return normalizeAlias(text);
  } catch (err) {
    throw new CliError(`"${text}" is not a valid alias: ${(err as Error).message}`, EXIT_USAGE);
  }
}

async function aliasCreate(name: string, opts: TxOptions): Promise<void> {
  const alias = aliasName(name);
  const s = openTxSession(opts);
  await needMailbox(s);
  const taken = await chainRead(s.rpc, 'the alias', () => getAlias(s.conn, s.programId, alias));
  if (taken) {
    throw new CliError(
      taken.owner.equals(s.wallet)
        ? `the alias ${alias} is already yours; nothing was sent`
        : `the alias ${alias} is taken (it points at ${taken.address.toBase58()}); nothing was sent`,
    );
  }
  await runTx(
    s,
    {
      title: `register the alias ${alias} for ${s.wallet.toBase58()}`,
      instructions: [createAliasInstruction({ programId: s.programId, owner: s.wallet, name: alias })],
      items: [{ kind: 'rent', what: `Alias account for ${alias}`, lamports: rentExemptLamports(ALIAS_SIZE) }],
      receipt: { alias, address: s.wallet.toBase58() },
    },
    { AlreadyExists: 'someone registered that alias in the meantime' },
  );
}

async function aliasShow(name: string, opts: ChainOptions): Promise<void> {
  const alias = aliasName(name);
  const { rpc, programId } = settings(opts);
  const conn = cliConnection(rpc);
  const found = await chainRead(rpc, 'the alias', () => getAlias(conn, programId, alias));
  if (!found) throw new CliError(`no alias "${alias}" is registered on chain`);
  const mailbox = await chainRead(rpc, 'the mailbox', () => getMailbox(conn, programId, found.address));
  const result = {
    alias,
    address: found.address.toBase58(),
    owner: found.owner.toBase58(),
    has_mailbox: mailbox !== null,
    no_ipfs: mailbox?.noIpfs ?? null,
    default_postage: mailbox ? mailbox.defaultPostage.toString() : null,
  };
  if (opts.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  else {
    process.stdout.write(`${alias} -> ${result.address}\nowner: ${result.owner}\n`);
    process.stdout.write(
      mailbox
        ? `mailbox: no_ipfs ${mailbox.noIpfs ? 'on' : 'off'}, default postage ${sol(mailbox.defaultPostage)} SOL\n`
        : 'mailbox: none\n',
    );
  }
}

interface KeyPublishOptions extends TxOptions {
  generate?: string;
  mailboxKeyFile?: string;
}

async function keyPublish(opts: KeyPublishOptions): Promise<void> {
  if (!!opts.generate === !!opts.mailboxKeyFile) {
    throw new CliError('give --generate <new file> or --mailbox-key-file <existing file>', EXIT_USAGE);
  }
  let reader: ReaderKeypair;
  if (opts.generate) {
    if (existsSync(opts.generate))
      throw new CliError(`${opts.generate} already exists; refusing to overwrite a mailbox key`, EXIT_USAGE);
    reader = generateReaderKeypair();
  } else {
    const file = opts.mailboxKeyFile as string;
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new CliError(`cannot read mailbox key file ${file}: ${(err as Error).message}`);
    }
    try {
      reader = parseMailboxKeyFile(text, file);
    } catch (err) {
      throw new CliError((err as Error).message);
    }
  }
  const s = openTxSession(opts);
  await needMailbox(s);
  const current = await chainRead(s.rpc, 'the mailbox key', () =>
    getMailboxKey(s.conn, s.programId, s.wallet),
  );
  const pubKey = bs58.encode(reader.publicKey);
  if (current && current.pubKey.toBase58() === pubKey)
    throw new CliError(`that key (${pubKey}) is already published; nothing was sent`);
  // The secret goes to disk before anything is signed, so a published key can never be lost.
  if (opts.generate && !opts.dryRun)
    writeFileSync(opts.generate, `${formatMailboxKeyFile(reader)}\n`, { mode: 0o600, flag: 'wx' });
  if (opts.generate && !opts.dryRun) process.stderr.write(`wrote the new mailbox key to ${opts.generate}\n`);
  await runTx(s, {
    title: `${current ? 'replace' : 'publish'} the mailbox key of ${s.wallet.toBase58()}`,
    instructions: [publishKeyInstruction({ programId: s.programId, owner: s.wallet, pubKey })],
    items: current
      ? []
      : [
          {
            kind: 'rent',
            what: `MailboxKey account ${mailboxKeyAddress(s.programId, s.wallet)[0].toBase58()}`,
            lamports: rentExemptLamports(MAILBOX_KEY_SIZE),
          },
        ],
    receipt: {
      mailbox_key: pubKey,
      replaced: current ? current.pubKey.toBase58() : null,
      key_file: opts.generate ?? opts.mailboxKeyFile ?? null,
    },
  });
}

async function keyRemove(opts: TxOptions): Promise<void> {
  const s = openTxSession(opts);
  const current = await chainRead(s.rpc, 'the mailbox key', () =>
    getMailboxKey(s.conn, s.programId, s.wallet),
  );
  if (!current)
    throw new CliError(`wallet ${s.wallet.toBase58()} has no published mailbox key; nothing was sent`);
  await runTx(s, {
    title: `remove the mailbox key of ${s.wallet.toBase58()}`,
    instructions: [removeKeyInstruction({ programId: s.programId, owner: s.wallet })],
    items: [{ kind: 'refund', what: 'MailboxKey rent', lamports: rentExemptLamports(MAILBOX_KEY_SIZE) }],
    receipt: { removed: current.pubKey.toBase58() },
  });
}

export function registerSetup(mailbox: Command): void {
  addTxOptions(
    mailbox
      .command('create')
      .description("create the wallet's mailbox on chain")
      .addOption(
        new Option(
          '--postage <lamports>',
          'default postage a first-contact sender pays per message (0 = open)',
        )
          .argParser(lamportsOption)
          // A bigint default with its own text: help would JSON.stringify it otherwise.
          .default(0n, '0'),
      )
      .option('--domain <name>', 'the mail domain the mailbox belongs to (an active MailDomain on chain)'),
  ).action((opts: CreateOptions) => create(opts));

  addTxOptions(
    mailbox
      .command('flags')
      .description('set no_ipfs and/or the default postage of the mailbox')
      .addOption(
        new Option('--no-ipfs <on|off>', 'keep mail off IPFS (on) or not (off)').choices(['on', 'off']),
      )
      .option('--postage <lamports>', 'new default postage per message', lamportsOption),
  ).action((opts: FlagsOptions) => flags(opts));

  const domain = mailbox
    .command('domain')
    .description("the mail domain whose server relays mail into the mailbox (the mailbox's domain field)");
  addTxOptions(
    domain
      .command('set <domain>')
      .description(
        'move the mailbox into an active mail domain: its relayed mail then comes only through that domain',
      ),
  ).action((name: string, opts: TxOptions) => domainSet(name, opts));
  addTxOptions(
    domain
      .command('leave')
      .description(
        'take the mailbox out of its mail domain: it then takes direct sends only, no relayed mail',
      ),
  ).action((opts: TxOptions) => domainLeave(opts));

  const alias = mailbox.command('alias').description('on-chain aliases: alice@your.domain');
  addTxOptions(alias.command('create <name>').description('register an alias for the wallet')).action(
    (name: string, opts: TxOptions) => aliasCreate(name, opts),
  );
  addChainOptions(alias.command('show <name>').description('which wallet an alias names')).action(
    (name: string, opts: ChainOptions) => aliasShow(name, opts),
  );

  const key = mailbox.command('key').description('the delegated mailbox key (MailboxKey) mail is sealed to');
  addTxOptions(
    key
      .command('publish')
      .description('publish a mailbox key: mail is then sealed to it instead of the wallet')
      .option('--generate <file>', 'make a new key, write it to this file (never overwritten), publish it')
      .option('--mailbox-key-file <file>', 'publish the key in this existing file'),
  ).action((opts: KeyPublishOptions) => keyPublish(opts));
  addTxOptions(
    key.command('remove').description('remove the published mailbox key (its rent comes back)'),
  ).action((opts: TxOptions) => keyRemove(opts));
}
