// `sealpost timelock`: the timelocked records of docs/protocol.md
// ("Timelocks"): closing a mailbox, deactivating a domain, reclaiming a
// domain for a new authority. Each request prints when its window ends;
// cancel and complete send the matching instruction; status reads the record.

import { readFileSync, writeFileSync } from 'node:fs';
import type { Connection, Keypair, TransactionInstruction } from '@solana/web3.js';
import type { Command } from 'commander';
import {
  type PendingDeactivation,
  type PendingMailboxClose,
  type PendingReclaim,
  rentExemptLamports,
} from '../../../../chain/client/accounts/index.ts';
import { getDomain, getPostoffice } from '../../../../chain/client/client.ts';
import { priorityFeePolicyOf } from '../../../../chain/client/compute-budget.ts';
import { parseMailProgramError } from '../../../../chain/client/errors.ts';
import { normalizeDomain } from '../../../../chain/client/hash.ts';
import {
  cancelDeactivationInstruction,
  cancelMailboxCloseInstruction,
  cancelReclaimInstruction,
  closeMailboxInstruction,
  decodeInstruction,
  requestDeactivationInstruction,
  requestMailboxCloseInstruction,
  requestReclaimInstruction,
  settleDomainTimelockInstruction,
  TIMELOCK_WINDOW_SECS,
  timelockEndsAt,
} from '../../../../chain/client/instructions.ts';
import {
  domainAddress,
  pendingCloseAddress,
  pendingDeactivationAddress,
  pendingReclaimAddress,
} from '../../../../chain/client/pda.ts';
import {
  getPendingDeactivation,
  getPendingMailboxClose,
  getPendingReclaim,
} from '../../../../chain/client/timelock-client.ts';
import { collectTxtChain } from '../../../core/dns/dnssec-proof.ts';
import { parseDnsServer } from '../../../core/dns/resolver.ts';
import { authorityRecordName } from '../../../edge/domaind/authority-record.ts';
import { reclaimPrice, reclaimTransaction } from '../../../edge/domaind/reclaim.ts';
import { CliError, EXIT_USAGE } from '../../common.ts';
import {
  addPriorityFeeOptions,
  type PriorityFeeOptions,
  priorityPolicyOf,
  usePriorityFee,
} from '../../priority-fee.ts';
import { signAndConfirm } from '../chain-cli.ts';
import { connect, loadKeypair } from '../operate/program-common.ts';
import {
  addChainOptions,
  type ChainOptions,
  chainRead,
  isoSeconds,
  keyOption,
  settings,
  walletOf,
} from './mailbox-common.ts';

type Pending = PendingMailboxClose | PendingDeactivation | PendingReclaim;

interface Opts extends ChainOptions, PriorityFeeOptions {
  domain?: string;
  newAuthorityKey?: string;
  proof?: string;
  domaind?: string;
  resolver?: string;
  out?: string;
}

interface Ctx {
  conn: Connection;
  rpc: string;
  programId: string;
  json: boolean;
}

async function open(opts: Opts): Promise<Ctx> {
  const { rpc, programId, config } = settings(opts);
  const conn = usePriorityFee(await connect(rpc), priorityPolicyOf(opts, config.chain));
  return { conn, rpc, programId, json: !!opts.json };
}

function needKey(opts: Opts, role: string): Keypair {
  if (!opts.key) throw new CliError(`--key <file> is required: ${role}`, EXIT_USAGE);
  return loadKeypair('--key', opts.key);
}

function needDomain(opts: Opts): string {
  if (!opts.domain) throw new CliError('--domain <name> is required', EXIT_USAGE);
  try {
    return normalizeDomain(opts.domain);
  } catch (err) {
    throw new CliError(`--domain: ${(err as Error).message}`, EXIT_USAGE);
  }
}

/** The record's fields and its window, as printed. */
function describe(record: Pending, address: string) {
  const ends = timelockEndsAt(record);
  return {
    record: record.kind,
    address,
    requested_at: isoSeconds(record.requestedAt),
    window_secs: Number(TIMELOCK_WINDOW_SECS[record.kind]),
    window_ends_at: isoSeconds(ends),
    window_ends_at_unix: Number(ends),
    ...('authority' in record
      ? { new_authority: record.authority.toBase58(), payer: record.payer.toBase58() }
      : {}),
  };
}

function print(ctx: Ctx, text: string, fields: Record<string, unknown>): void {
  if (ctx.json) process.stdout.write(`${JSON.stringify(fields, null, 2)}\n`);
  else process.stdout.write(`${text}\n`);
}

/** Signs with every key, sends, waits for `confirmed`; a program refusal becomes one CLI line. */
async function send(
  ctx: Ctx,
  signers: Keypair[],
  ix: TransactionInstruction,
  hints: Record<string, string> = {},
): Promise<string> {
  const what = decodeInstruction(new Uint8Array(ix.data)).kind;
  try {
    return await signAndConfirm(ctx.conn, signers, ix);
  } catch (err) {
    const refused = parseMailProgramError(err);
    if (refused) {
      const hint = hints[refused.name] ? ` (${hints[refused.name]})` : '';
      throw new CliError(`${what} refused by the mail program: ${refused.name}${hint}; nothing changed`);
    }
    throw new CliError(`${what} failed: ${(err as Error).message ?? JSON.stringify(err)}`);
  }
}

function notElapsed(record: Pending): Record<string, string> {
  return { TimelockNotElapsed: `the window ends at ${isoSeconds(timelockEndsAt(record))}` };
}

// ---- mailbox close -----------------------------------------------------------

async function mailboxClose(action: string, opts: Opts): Promise<void> {
  const ctx = await open(opts);
  const { conn, programId } = ctx;
  const read = (wallet: string) =>
    chainRead(ctx.rpc, 'the pending close', () => getPendingMailboxClose(conn, programId, wallet));
  if (action === 'status') {
    const wallet = walletOf(opts);
    if (!wallet) throw new CliError('say which wallet: --key <file> or --wallet <address>', EXIT_USAGE);
    const record = await read(wallet);
    const address = pendingCloseAddress(programId, wallet)[0].toBase58();
    if (!record) return print(ctx, `${wallet}: no pending mailbox close`, { wallet, pending: null });
    const d = describe(record, address);
    return print(
      ctx,
      `${wallet}: closing; requested ${d.requested_at}, the window ends at ${d.window_ends_at}`,
      {
        wallet,
        pending: d,
      },
    );
  }
  const key = needKey(opts, 'the mailbox owner');
  const wallet = key.publicKey.toBase58();
  const owner = { programId, owner: key.publicKey };
  if (action === 'request') {
    const signature = await send(ctx, [key], requestMailboxCloseInstruction(owner), {
      AlreadyExists: 'a close is already pending: see `sealpost timelock mailbox-close status`',
      NotFound: 'this wallet has no mailbox',
    });
    const record = await read(wallet);
    if (!record)
      throw new CliError(`RequestMailboxClose ${signature} confirmed but no record is visible yet`);
    const d = describe(record, pendingCloseAddress(programId, wallet)[0].toBase58());
    return print(
      ctx,
      `close of the mailbox of ${wallet} requested (${signature}); the window ends at ${d.window_ends_at}: ` +
        'then `sealpost timelock mailbox-close complete`; `cancel` stops it until then. ' +
        'Inbound mail is refused meanwhile (550 5.2.1).',
      { signature, wallet, pending: d },
    );
  }
  const record = await read(wallet);
  if (!record) throw new CliError(`${wallet} has no pending mailbox close: request one first`);
  if (action === 'cancel') {
    const signature = await send(ctx, [key], cancelMailboxCloseInstruction(owner));
    return print(ctx, `cancelled the close of the mailbox of ${wallet} (${signature})`, {
      signature,
      wallet,
      cancelled: true,
    });
  }
  const before = await conn.getBalance(key.publicKey, 'confirmed');
  const signature = await send(ctx, [key], closeMailboxInstruction(owner), notElapsed(record));
  const after = await conn.getBalance(key.publicKey, 'confirmed');
  return print(
    ctx,
    `closed the mailbox of ${wallet} (${signature}); ${after - before} lamports came back (rents less the fee)`,
    { signature, wallet, closed: true, returned_lamports: after - before },
  );
}

// ---- domain deactivation -----------------------------------------------------

async function domainRecord(
  ctx: Ctx,
  kind: 'deactivation' | 'reclaim',
  domain: string,
): Promise<Pending | null> {
  return chainRead<Pending | null>(ctx.rpc, `the pending ${kind}`, () =>
    kind === 'deactivation'
      ? getPendingDeactivation(ctx.conn, ctx.programId, domain)
      : getPendingReclaim(ctx.conn, ctx.programId, domain),
  );
}

function pendingAddress(ctx: Ctx, kind: 'deactivation' | 'reclaim', domain: string): string {
  const md = domainAddress(ctx.programId, domain)[0];
  const derive = kind === 'deactivation' ? pendingDeactivationAddress : pendingReclaimAddress;
  return derive(ctx.programId, md)[0].toBase58();
}

async function requireDomain(ctx: Ctx, domain: string) {
  const md = await chainRead(ctx.rpc, 'the domain', () => getDomain(ctx.conn, ctx.programId, domain));
  if (!md) throw new CliError(`${domain} is not a domain on chain`);
  return md;
}

async function status(ctx: Ctx, kind: 'deactivation' | 'reclaim', domain: string): Promise<void> {
  const md = await requireDomain(ctx, domain);
  const record = await domainRecord(ctx, kind, domain);
  const head = { domain, active: md.isActive, authority: md.authority.toBase58() };
  if (!record)
    return print(ctx, `${domain}: no pending ${kind} (active: ${md.isActive})`, { ...head, pending: null });
  const d = describe(record, pendingAddress(ctx, kind, domain));
  return print(
    ctx,
    `${domain}: ${kind} pending; requested ${d.requested_at}, the window ends at ${d.window_ends_at}`,
    {
      ...head,
      pending: d,
    },
  );
}

async function deactivation(action: string, opts: Opts): Promise<void> {
  const domain = needDomain(opts);
  const ctx = await open(opts);
  if (action === 'status') return status(ctx, 'deactivation', domain);
  const md = await requireDomain(ctx, domain);
  const { programId } = ctx;
  if (action === 'deactivate') {
    const key = needKey(opts, "the domain authority's keypair");
    const signature = await send(
      ctx,
      [key],
      requestDeactivationInstruction({ programId, authority: key.publicKey, domain }),
      {
        Unauthorized: `--key is not the authority of ${domain} (${md.authority.toBase58()})`,
        AlreadyExists: 'a deactivation is already pending',
        DomainInactive: `${domain} is already inactive`,
      },
    );
    const record = await domainRecord(ctx, 'deactivation', domain);
    if (!record)
      throw new CliError(`RequestDeactivation ${signature} confirmed but no record is visible yet`);
    const d = describe(record, pendingAddress(ctx, 'deactivation', domain));
    return print(
      ctx,
      `deactivation of ${domain} requested (${signature}); the notice window ends at ${d.window_ends_at}: ` +
        'then anyone may complete it (`sealpost timelock domain complete`); the authority may `cancel` until then',
      { signature, domain, pending: d },
    );
  }
  const record = await domainRecord(ctx, 'deactivation', domain);
  if (!record) throw new CliError(`${domain} has no pending deactivation`);
  if (action === 'cancel') {
    const key = needKey(opts, "the domain authority's keypair");
    const signature = await send(
      ctx,
      [key],
      cancelDeactivationInstruction({ programId, authority: key.publicKey, domain }),
      {
        Unauthorized: `--key is not the authority of ${domain} (${md.authority.toBase58()})`,
      },
    );
    return print(ctx, `cancelled the deactivation of ${domain} (${signature})`, {
      signature,
      domain,
      cancelled: true,
    });
  }
  const key = needKey(opts, 'any wallet that pays the fee');
  const ix = settleDomainTimelockInstruction({
    programId,
    domain,
    record: 'deactivation',
    rentTo: md.authority,
  });
  const signature = await send(ctx, [key], ix, notElapsed(record));
  return print(
    ctx,
    `${domain} is now inactive (${signature}); the record's rent went to ${md.authority.toBase58()}`,
    {
      signature,
      domain,
      active: false,
    },
  );
}

// ---- domain reclaim ----------------------------------------------------------

async function reclaim(action: string, opts: Opts): Promise<void> {
  const domain = needDomain(opts);
  const ctx = await open(opts);
  if (action === 'status') return status(ctx, 'reclaim', domain);
  const md = await requireDomain(ctx, domain);
  const { programId } = ctx;
  if (action === 'request') {
    const key = needKey(opts, "the domain service's delegate keypair");
    if (!opts.newAuthorityKey) throw new CliError('--new-authority-key <file> is required', EXIT_USAGE);
    const next = loadKeypair('--new-authority-key', opts.newAuthorityKey);
    const ix = requestReclaimInstruction({
      programId,
      delegate: key.publicKey,
      newAuthority: next.publicKey,
      domain,
    });
    const signature = await send(ctx, [key, next], ix, {
      Unauthorized: "--key is not the postoffice's delegate (the domain service)",
      InvalidArgument: 'the new authority must differ from the current one and from the delegate',
      AlreadyExists: 'a reclaim is already pending',
      DomainInactive: `${domain} is inactive`,
    });
    const record = await domainRecord(ctx, 'reclaim', domain);
    if (!record) throw new CliError(`RequestReclaim ${signature} confirmed but no record is visible yet`);
    const d = describe(record, pendingAddress(ctx, 'reclaim', domain));
    return print(
      ctx,
      `reclaim of ${domain} for ${next.publicKey.toBase58()} requested (${signature}); the window ends at ${d.window_ends_at}: ` +
        `then anyone may settle it; the current authority (${md.authority.toBase58()}) may cancel until then`,
      { signature, domain, pending: d },
    );
  }
  const record = (await domainRecord(ctx, 'reclaim', domain)) as PendingReclaim | null;
  if (!record) throw new CliError(`${domain} has no pending reclaim`);
  if (action === 'cancel') {
    const key = needKey(opts, "the domain authority's keypair, or the reclaim's payer");
    const ix = cancelReclaimInstruction({ programId, signer: key.publicKey, payer: record.payer, domain });
    const signature = await send(ctx, [key], ix, {
      Unauthorized: `--key is neither the authority of ${domain} nor the reclaim's payer`,
    });
    return print(ctx, `cancelled the reclaim of ${domain} (${signature})`, {
      signature,
      domain,
      cancelled: true,
    });
  }
  const key = needKey(opts, 'any wallet that pays the fee');
  const ix = settleDomainTimelockInstruction({ programId, domain, record: 'reclaim', rentTo: record.payer });
  const signature = await send(ctx, [key], ix, notElapsed(record));
  return print(ctx, `${domain} now belongs to ${record.authority.toBase58()} (${signature})`, {
    signature,
    domain,
    authority: record.authority.toBase58(),
  });
}

/**
 * `reclaim proof`: collects the DNSSEC chain of `_solana.authority.<domain>`
 * from a DNSSEC-aware resolver into a file for `reclaim submit`. It does not
 * verify it (the domain service does, against the Postoffice's root_ksk).
 */
async function collectProof(opts: Opts): Promise<void> {
  const domain = needDomain(opts);
  if (!opts.out) throw new CliError('--out <file> is required: where to write the proof', EXIT_USAGE);
  const { config } = settings(opts);
  let server: ReturnType<typeof parseDnsServer>;
  try {
    server = parseDnsServer(opts.resolver ?? config.domaind.resolver);
  } catch (err) {
    throw new CliError(`--resolver: ${(err as Error).message}`, EXIT_USAGE);
  }
  const name = authorityRecordName(domain);
  let proof: Buffer;
  try {
    proof = await collectTxtChain(server, name);
  } catch (err) {
    throw new CliError(`could not collect the DNSSEC chain of ${name}: ${(err as Error).message}`);
  }
  writeFileSync(opts.out, proof);
  const fields = { domain, record_name: name, file: opts.out, bytes: proof.length };
  if (opts.json) process.stdout.write(`${JSON.stringify(fields, null, 2)}\n`);
  else process.stdout.write(`wrote the DNSSEC chain of ${name} (${proof.length} bytes) to ${opts.out}\n`);
}

/**
 * `reclaim submit`: the new authority signs RequestReclaim (fee payer: the
 * postoffice's delegate, read from the Postoffice) and sends it with the
 * DNSSEC proof file to the domain service, which verifies the proof, adds the
 * delegate's signature and submits it (POST /domain/reclaim).
 */
async function submitReclaim(opts: Opts): Promise<void> {
  const domain = needDomain(opts);
  if (!opts.proof)
    throw new CliError('--proof <file> is required: the DNSSEC chain (wire format)', EXIT_USAGE);
  if (!opts.newAuthorityKey) throw new CliError('--new-authority-key <file> is required', EXIT_USAGE);
  let proof: Buffer;
  try {
    proof = readFileSync(opts.proof);
  } catch (err) {
    throw new CliError(`--proof: ${(err as Error).message}`, EXIT_USAGE);
  }
  const next = loadKeypair('--new-authority-key', opts.newAuthorityKey);
  const ctx = await open(opts);
  const { config } = settings(opts);
  const service = (opts.domaind ?? `http://${config.domaind.host}:${config.domaind.port}`).replace(
    /\/+$/,
    '',
  );
  const postoffice = await chainRead(ctx.rpc, 'the Postoffice', () => getPostoffice(ctx.conn, ctx.programId));
  if (!postoffice) throw new CliError('the mail program has no Postoffice: no delegate can start a reclaim');
  const { blockhash } = await chainRead(ctx.rpc, 'a recent blockhash', () =>
    ctx.conn.getLatestBlockhash('confirmed'),
  );
  const params = {
    programId: ctx.programId,
    delegate: postoffice.delegateAddress,
    newAuthority: next.publicKey,
    domain,
  };
  // The delegate pays: priced by the config's [chain] priority fee policy; domaind caps it again with its own.
  const microLamportsPerCu = await chainRead(ctx.rpc, 'recent priority fees', () =>
    reclaimPrice(ctx.conn, priorityFeePolicyOf(config.chain), params),
  );
  const tx = reclaimTransaction({ ...params, recentBlockhash: blockhash, microLamportsPerCu });
  tx.partialSign(next);
  const body = JSON.stringify({
    domain,
    proof: proof.toString('base64'),
    transaction: tx.serialize({ requireAllSignatures: false }).toString('base64'),
  });
  let res: Response;
  try {
    res = await fetch(`${service}/domain/reclaim`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      signal: AbortSignal.timeout(120_000),
    });
  } catch (err) {
    throw new CliError(`the domain service at ${service} could not be reached: ${(err as Error).message}`);
  }
  const answer = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (!res.ok) {
    const link = typeof answer.link === 'string' ? ` [${answer.link}]` : '';
    throw new CliError(
      `the domain service refused the reclaim (${res.status} ${String(answer.error ?? 'error')}${link}): ${String(answer.message ?? '')}`,
    );
  }
  if (answer.status === 'already_authorized') {
    return print(
      ctx,
      `${domain} already belongs to ${next.publicKey.toBase58()}; nothing to reclaim`,
      answer,
    );
  }
  return print(
    ctx,
    `reclaim of ${domain} for ${next.publicKey.toBase58()} requested (${String(answer.signature)}); the window ends at ${String(answer.window_ends_at)}: then anyone may settle it; the current authority (${String(answer.authority)}) may cancel until then`,
    answer,
  );
}

// ---- registration -------------------------------------------------------------

const RENT_NOTE = `Rent: a pending record holds ${rentExemptLamports(42)} lamports (${rentExemptLamports(106)} for a reclaim), returned when it is cancelled or completed.`;

/** The chain options, and --key unless the subcommand only reads. */
function withKey(cmd: Command, help: string | null): Command {
  return help === null
    ? addChainOptions(cmd)
    : addPriorityFeeOptions(addChainOptions(cmd)).option('-k, --key <file>', help);
}

export function register(program: Command): void {
  const cmd = program
    .command('timelock')
    .description('timelocked records: close a mailbox, deactivate or reclaim a domain')
    .addHelpText(
      'after',
      `\n${RENT_NOTE}\nWindows: mailbox close 7 days, domain deactivation 30 days, reclaim 14 days.`,
    );

  const close = cmd.command('mailbox-close').description("close the key's mailbox after a 7-day window");
  for (const [action, help] of [
    ['request', 'start the window (the owner signs and pays the record)'],
    ['cancel', 'stop a pending close (the owner)'],
    ['complete', 'close the mailbox once the window is over; both rents return to the owner'],
  ] as const)
    withKey(close.command(action).description(help), 'the mailbox owner keypair file').action((o: Opts) =>
      mailboxClose(action, o),
    );
  addChainOptions(close.command('status').description("a wallet's pending close and its window"))
    .option('-k, --key <file>', 'the wallet keypair file')
    .option('--wallet <base58>', 'the wallet', keyOption('wallet address'))
    .action((o: Opts) => mailboxClose('status', o));

  const domain = cmd.command('domain').description("a domain's deactivation (30-day notice) and reclaim");
  for (const [action, help, key] of [
    ['deactivate', 'start the notice window', "the domain authority's keypair file"],
    ['cancel', 'stop a pending deactivation', "the domain authority's keypair file"],
    ['complete', 'make the domain inactive once the window is over', 'any wallet that pays the fee'],
    ['status', 'the pending deactivation and its window', null],
  ] as const)
    withKey(domain.command(action).description(help), key)
      .option('--domain <name>', 'the domain')
      .action((o: Opts) => deactivation(action, o));

  const re = domain.command('reclaim').description('hand a domain to a new authority after a 14-day window');
  for (const [action, help, key] of [
    [
      'request',
      'start a reclaim (the domain service, after checking the DNSSEC proof)',
      "the postoffice delegate's keypair file",
    ],
    ['cancel', 'stop a pending reclaim', "the domain authority's (or the reclaim payer's) keypair file"],
    [
      'settle',
      'give the domain to the new authority once the window is over',
      'any wallet that pays the fee',
    ],
    ['status', 'the pending reclaim and its window', null],
  ] as const) {
    const sub = withKey(re.command(action).description(help), key).option('--domain <name>', 'the domain');
    if (action === 'request')
      sub.option('--new-authority-key <file>', 'the new authority keypair file (co-signs)');
    sub.action((o: Opts) => reclaim(action, o));
  }
  addChainOptions(
    re
      .command('submit')
      .description(
        'start a reclaim as the new authority: send a DNSSEC proof to the domain service, which verifies it and co-signs',
      ),
  )
    .option('--domain <name>', 'the domain')
    .option(
      '--proof <file>',
      'the DNSSEC chain from the root to _solana.authority.<domain> (RFC 9102 wire format)',
    )
    .option(
      '--new-authority-key <file>',
      'the new authority keypair file (the key the TXT record names; signs)',
    )
    .option('--domaind <url>', 'the domain service (default http://[domaind] host:port)')
    .action((o: Opts) => submitReclaim(o));
  re.command('proof')
    .description(
      'collect the DNSSEC chain of _solana.authority.<domain> from a DNSSEC-aware resolver into a file',
    )
    .option('--config <file>', 'config file (for [domaind] resolver)')
    .option('--domain <name>', 'the domain')
    .option('--resolver <host[:port]>', 'a resolver that returns RRSIGs (default [domaind] resolver)')
    .option('--out <file>', 'where to write the proof (for `reclaim submit --proof`)')
    .option('--json', 'print the result as JSON on stdout')
    .action((o: Opts) => collectProof(o));
}
