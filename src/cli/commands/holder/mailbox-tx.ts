// How every signing `sealpost mailbox …` command ends: one transaction,
// fee payer = the wallet, and one of four ways out of it:
//   - signed with --key, sent, polled to `confirmed`, receipt printed;
//   - --dry-run: the transaction (instructions, accounts, fee payer), the
//     program's verdict from a simulation, and its cost; nothing signed;
//   - --sign-offline: the unsigned transaction and its message in base64
//     for an external signer (hardware or offline wallet); nothing sent;
//   - `mailbox submit --tx … --signature …` or `--signed-tx …` sends what
//     an external signer signed, after checking the signature against the
//     message, so a mismatch is refused with nothing sent.

import {
  ComputeBudgetProgram,
  type Connection,
  Keypair,
  PublicKey,
  Transaction,
  type TransactionInstruction,
  VersionedTransaction,
} from '@solana/web3.js';
import bs58 from 'bs58';
import type { Command } from 'commander';
import { decodeInstruction, parseMailProgramError, toHex } from '../../../../chain/client/index.ts';
import { sendSigned } from '../../../../chain/client/rebroadcast.ts';
import { readKeypairFile } from '../../../core/keys/keypair-file.ts';
import { pollSignature, TxFailedError } from '../../../mail/trustless/tx.ts';
import { CliError, cliConnection, EXIT_USAGE } from '../../common.ts';
import {
  addPriorityFeeOptions,
  type Budget,
  budgetInstructions,
  type PriorityFeeOptions,
  policyFor,
  priorityPolicyOf,
  usePriorityFee,
} from '../../priority-fee.ts';
import {
  addChainOptions,
  type ChainOptions,
  chainRead,
  intOption,
  keyOption,
  settings,
  sol,
} from './mailbox-common.ts';

export interface TxOptions extends ChainOptions, PriorityFeeOptions {
  dryRun?: boolean;
  signOffline?: boolean;
  waitSecs: number;
}

/** The options of a command that signs: where, who, and which of the four ways out. */
export function addTxOptions(cmd: Command): Command {
  return addPriorityFeeOptions(addChainOptions(cmd))
    .option('-k, --key <file>', 'wallet keypair file that signs and pays (Solana CLI format)')
    .option(
      '--wallet <base58>',
      'the wallet, when its key is elsewhere (with --sign-offline or --dry-run)',
      keyOption('wallet address'),
    )
    .option('--dry-run', 'print the transaction, the simulation and its cost in SOL; sign and send nothing')
    .option('--sign-offline', 'print the unsigned transaction (base64) for an external signer; send nothing')
    .option('--wait-secs <n>', 'how long to wait for confirmation', intOption(1, 3600), 60);
}

export interface TxSession {
  rpc: string;
  programId: string;
  conn: Connection;
  wallet: PublicKey;
  /** null when the key is elsewhere (--wallet with --sign-offline or --dry-run). */
  keypair: Keypair | null;
  opts: TxOptions;
}

export function openTxSession(opts: TxOptions): TxSession {
  const { rpc, programId, config } = settings(opts);
  let keypair: Keypair | null = null;
  if (opts.key) {
    const file = readKeypairFile(opts.key);
    if (opts.wallet && opts.wallet !== file.address) {
      throw new CliError(
        `--wallet ${opts.wallet} is not the wallet of --key ${opts.key} (${file.address})`,
        EXIT_USAGE,
      );
    }
    keypair = Keypair.fromSecretKey(file.secretKey);
  } else if (!opts.wallet) {
    throw new CliError(
      'say which wallet signs: --key <wallet file>, or --wallet <address> with --sign-offline',
      EXIT_USAGE,
    );
  } else if (!opts.signOffline && !opts.dryRun) {
    throw new CliError(
      `no key for ${opts.wallet}: pass --key <wallet file>, or --sign-offline to have an external signer sign`,
      EXIT_USAGE,
    );
  }
  if (opts.signOffline && opts.dryRun)
    throw new CliError('give --dry-run or --sign-offline, not both', EXIT_USAGE);
  const wallet = keypair ? keypair.publicKey : new PublicKey(opts.wallet as string);
  const conn = usePriorityFee(cliConnection(rpc), priorityPolicyOf(opts, config.chain));
  return { rpc, programId, conn, wallet, keypair, opts };
}

/** The mail program refused the transaction; `name` is its error (PostageRequired, InvalidPda, …). */
export class TxRefusedError extends CliError {
  constructor(
    message: string,
    readonly mailError: string,
  ) {
    super(message);
  }
}

function refused(err: unknown, hints: Record<string, string>, suffix: string): CliError {
  const parsed = err instanceof TxFailedError ? err.mailError : parseMailProgramError(err);
  const message = `${refusalMessage(err, hints)}${suffix}`;
  return parsed ? new TxRefusedError(message, parsed.name) : new CliError(message);
}

export interface CostItem {
  /** rent: funds a new account (returned when it is closed); transfer: paid away; refund: comes back. */
  kind: 'rent' | 'transfer' | 'refund';
  what: string;
  lamports: bigint;
}

export interface TxPlan {
  /** What the transaction does, in a few words ("create the mailbox of …"). */
  title: string;
  instructions: TransactionInstruction[];
  items: CostItem[];
  /** Fields of the receipt (and of --sign-offline's output) besides signature and status. */
  receipt?: Record<string, string | number | boolean | null>;
  /** Keys that sign besides the wallet (`sealpost program init-postoffice`: the upgrade authority); not with --sign-offline. */
  signers?: Keypair[];
  /** Print the title and the cost on stderr before sending (the `sealpost program` admin commands). */
  announce?: boolean;
}

export interface Cost {
  /** The base fee: 5000 lamports per signature. */
  fee: bigint;
  /** The priority fee: compute-unit limit × price (SetComputeUnitLimit / SetComputeUnitPrice). */
  priority: bigint;
  unitLimit: number;
  microLamportsPerCu: bigint;
  rent: bigint;
  transfers: bigint;
  refunds: bigint;
  /** What the wallet must hold: fee + priority fee + rent + transfers. */
  total: bigint;
  balance: bigint;
}

function out(text: string): void {
  process.stdout.write(text);
}

const FEE_PER_SIGNATURE = 5000n;

async function fee(conn: Connection, tx: Transaction): Promise<bigint> {
  try {
    const { value } = await conn.getFeeForMessage(tx.compileMessage(), 'confirmed');
    if (value !== null) return BigInt(value);
  } catch {
    // Older nodes lack getFeeForMessage; the base fee rule applies.
  }
  return FEE_PER_SIGNATURE * BigInt(tx.compileMessage().header.numRequiredSignatures);
}

function costOf(items: CostItem[], feeLamports: bigint, budget: Budget, balance: bigint): Cost {
  const sum = (k: CostItem['kind']) => items.filter((i) => i.kind === k).reduce((a, i) => a + i.lamports, 0n);
  const rent = sum('rent');
  const transfers = sum('transfer');
  return {
    fee: feeLamports,
    priority: budget.priorityLamports,
    unitLimit: budget.unitLimit,
    microLamportsPerCu: budget.microLamportsPerCu,
    rent,
    transfers,
    refunds: sum('refund'),
    total: feeLamports + budget.priorityLamports + rent + transfers,
    balance,
  };
}

function costJson(c: Cost, items: CostItem[]) {
  return {
    fee_lamports: c.fee.toString(),
    priority_fee_lamports: c.priority.toString(),
    compute_unit_limit: c.unitLimit,
    compute_unit_price_micro_lamports: c.microLamportsPerCu.toString(),
    rent_lamports: c.rent.toString(),
    transfer_lamports: c.transfers.toString(),
    refund_lamports: c.refunds.toString(),
    total_lamports: c.total.toString(),
    total_sol: sol(c.total),
    balance_lamports: c.balance.toString(),
    items: items.map((i) => ({ kind: i.kind, what: i.what, lamports: i.lamports.toString() })),
  };
}

function costLine(c: Cost): string {
  return (
    `cost: ${sol(c.total)} SOL (fee ${sol(c.fee)} + priority fee ${sol(c.priority)} + rent ${sol(c.rent)} + transfers ${sol(c.transfers)})` +
    `${c.refunds > 0n ? `, ${sol(c.refunds)} SOL comes back` : ''}; balance ${sol(c.balance)} SOL`
  );
}

function insufficient(c: Cost): CliError {
  return new CliError(
    `not enough SOL: this needs ${sol(c.total)} SOL (fee ${sol(c.fee)}, priority fee ${sol(c.priority)}, rent ${sol(c.rent)}, transfers ${sol(c.transfers)}) and the wallet holds ${sol(c.balance)} SOL; nothing was sent`,
  );
}

const BUDGET_KINDS: Record<number, string> = { 2: 'SetComputeUnitLimit', 3: 'SetComputeUnitPrice' };

/** One instruction as the CLI shows it: program, decoded kind, data. */
export function instructionJson(ix: TransactionInstruction) {
  let kind = 'unknown';
  if (ix.programId.equals(ComputeBudgetProgram.programId)) kind = BUDGET_KINDS[ix.data[0] ?? -1] ?? kind;
  else
    try {
      kind = decodeInstruction(new Uint8Array(ix.data)).kind;
    } catch {}
  return {
    program: ix.programId.toBase58(),
    kind,
    data_hex: toHex(new Uint8Array(ix.data)),
    accounts: ix.keys.map((k) => ({
      address: k.pubkey.toBase58(),
      signer: k.isSigner,
      writable: k.isWritable,
    })),
  };
}

function printInstructions(ixs: TransactionInstruction[]): void {
  ixs.forEach((ix, i) => {
    const j = instructionJson(ix);
    out(`instruction ${i + 1}: ${j.kind} (program ${j.program})\n  data: ${j.data_hex}\n`);
    for (const a of j.accounts) {
      const flags = [a.signer ? 'signer' : '', a.writable ? 'writable' : 'readonly'].filter(Boolean);
      out(`  ${a.address}  ${flags.join(', ')}\n`);
    }
  });
}

/** The mail program's refusal, or the node's words, as one line. */
function refusalMessage(err: unknown, hints: Record<string, string> = {}): string {
  const parsed = err instanceof TxFailedError ? err.mailError : parseMailProgramError(err);
  if (parsed)
    return `the mail program refused: ${parsed.name}${hints[parsed.name] ? ` (${hints[parsed.name]})` : ''}`;
  const message = err instanceof Error ? err.message : String(err);
  if (/blockhash not found|block height exceeded/i.test(message)) {
    return "the transaction's blockhash has expired (a blockhash lasts about a minute on mainnet); build and sign it again";
  }
  return message.split('\n')[0] as string;
}

/**
 * Why a simulation failed, in words: the mail program's refusal by name, or
 * else the runtime's error (`InsufficientFundsForRent`, an instruction's
 * custom error, …) with the last error line the programs logged.
 */
export function simulationFailure(
  value: { err: unknown; logs?: string[] | null },
  hints: Record<string, string> = {},
  programId?: string,
): string {
  // A custom error code is the mail program's only when its logs say the mail program failed.
  if (parseMailProgramError(value, programId)) return refusalMessage(value, hints);
  const err = value.err;
  let what: string;
  if (typeof err === 'string') what = err;
  else if (err && typeof err === 'object' && 'InstructionError' in err) {
    const [index, inner] = (err as { InstructionError: [number, unknown] }).InstructionError;
    const detail =
      typeof inner === 'string'
        ? inner
        : inner && typeof inner === 'object' && 'Custom' in inner
          ? `custom error ${(inner as { Custom: number }).Custom}`
          : JSON.stringify(inner);
    what = `instruction ${index} failed: ${detail}`;
  } else what = JSON.stringify(err);
  const logged = [...(value.logs ?? [])]
    .reverse()
    .find((l) => /error|insufficient|failed/i.test(l) && !/^Program \S+ failed: /.test(l));
  return logged ? `${what} (${logged.replace(/^Program log: /, '')})` : what;
}

function budgetLine(c: Cost): string {
  return `compute budget: ${c.unitLimit} compute units at ${c.microLamportsPerCu} µlamports each (priority fee ${sol(c.priority)} SOL)`;
}

/**
 * Builds the transaction for the wallet (the compute budget's instructions
 * first: priority-fee.ts) and takes the way out the options chose.
 */
export async function runTx(s: TxSession, plan: TxPlan, hints: Record<string, string> = {}): Promise<void> {
  const { conn, rpc, wallet, opts } = s;
  const latest = await chainRead(rpc, 'a recent blockhash', () => conn.getLatestBlockhash('confirmed'));
  const budget = await budgetInstructions(conn, plan.instructions, wallet, policyFor(conn));
  const tx = new Transaction({ feePayer: wallet, ...latest }).add(...budget.instructions);
  // The base fee of the same signatures; the priority fee is counted apart.
  const unbudgeted = new Transaction({ feePayer: wallet, ...latest }).add(...plan.instructions);
  const [feeLamports, balance] = await chainRead(rpc, 'the wallet balance', () =>
    Promise.all([fee(conn, unbudgeted), conn.getBalance(wallet, 'confirmed')]),
  );
  const cost = costOf(plan.items, feeLamports, budget, BigInt(balance));

  if (opts.dryRun) {
    const sim = await chainRead(rpc, 'a simulation', () =>
      conn.simulateTransaction(new VersionedTransaction(tx.compileMessage()), { sigVerify: false }),
    );
    const simErr = sim.value.err ? simulationFailure(sim.value, hints, s.programId) : null;
    if (opts.json) {
      out(
        `${JSON.stringify(
          {
            dry_run: true,
            title: plan.title,
            fee_payer: wallet.toBase58(),
            recent_blockhash: latest.blockhash,
            instructions: plan.instructions.map(instructionJson),
            simulation: {
              ok: simErr === null,
              error: simErr,
              units_consumed: sim.value.unitsConsumed ?? null,
            },
            cost: costJson(cost, plan.items),
            ...plan.receipt,
          },
          null,
          2,
        )}\n`,
      );
    } else {
      out(`dry run: ${plan.title} (nothing signed or sent)\nfee payer: ${wallet.toBase58()}\n`);
      out(`recent blockhash: ${latest.blockhash}\n`);
      printInstructions(plan.instructions);
      out(`${budgetLine(cost)}\n`);
      for (const i of plan.items) out(`  ${i.kind}: ${sol(i.lamports)} SOL  ${i.what}\n`);
      out(`${costLine(cost)}\n`);
      out(`simulation: ${simErr ?? `ok, ${sim.value.unitsConsumed ?? 0} compute units`}\n`);
    }
    if (simErr) throw new CliError(`the transaction would fail: ${simErr}`);
    if (cost.balance < cost.total) throw insufficient(cost);
    return;
  }

  if (cost.balance < cost.total) throw insufficient(cost);

  if (opts.signOffline) {
    if (plan.signers?.length) {
      throw new CliError(
        `this transaction needs ${plan.signers.length + 1} signatures; --sign-offline handles the wallet's only`,
        EXIT_USAGE,
      );
    }
    const unsigned = tx
      .serialize({ requireAllSignatures: false, verifySignatures: false })
      .toString('base64');
    const message = tx.serializeMessage().toString('base64');
    if (opts.json) {
      out(
        `${JSON.stringify(
          {
            title: plan.title,
            fee_payer: wallet.toBase58(),
            recent_blockhash: latest.blockhash,
            last_valid_block_height: latest.lastValidBlockHeight,
            unsigned_tx: unsigned,
            message,
            cost: costJson(cost, plan.items),
            ...plan.receipt,
          },
          null,
          2,
        )}\n`,
      );
    } else {
      out(
        `${plan.title}: unsigned, for ${wallet.toBase58()} to sign\nrecent blockhash: ${latest.blockhash} (valid to block height ${latest.lastValidBlockHeight})\n`,
      );
      for (const [k, v] of Object.entries(plan.receipt ?? {})) out(`${k}: ${v}\n`);
      out(
        `${costLine(cost)}\nunsigned transaction (base64):\n${unsigned}\nmessage to sign (base64):\n${message}\n`,
      );
      process.stderr.write(
        'sign the message with the wallet, then send it: sealpost mailbox submit --tx <unsigned transaction> --signature <base58 signature>\n',
      );
    }
    return;
  }

  const keypair = s.keypair as Keypair;
  if (plan.announce) process.stderr.write(`${plan.title}\n${costLine(cost)}\n${budgetLine(cost)}\n`);
  tx.sign(keypair, ...(plan.signers ?? []).filter((k) => !k.publicKey.equals(keypair.publicKey)));
  await sendAndReport(s, tx.serialize(), plan.receipt ?? {}, hints, cost);
}

/** Sends signed wire bytes, polls to `confirmed` and prints the receipt. */
async function sendAndReport(
  s: Pick<TxSession, 'conn' | 'rpc' | 'opts'>,
  wire: Uint8Array,
  receipt: Record<string, unknown>,
  hints: Record<string, string>,
  cost?: Cost,
): Promise<void> {
  let signature: string;
  try {
    signature = await sendSigned(s.conn, wire, { preflightCommitment: 'confirmed' });
  } catch (err) {
    throw refused(err, hints, '; nothing was sent');
  }
  process.stderr.write(`submitted ${signature}, waiting for confirmation\n`);
  let status: string;
  try {
    // The same bytes re-sent every 2 s while unseen (a dropped send still lands in its blockhash's lifetime).
    status = (await pollSignature(s.conn, signature, { budgetMs: s.opts.waitSecs * 1000, wire })).status;
  } catch (err) {
    throw refused(err, hints, ` (transaction ${signature})`);
  }
  const result = { signature, status, ...receipt, ...(cost ? { cost_lamports: cost.total.toString() } : {}) };
  if (s.opts.json) out(`${JSON.stringify(result, null, 2)}\n`);
  else for (const [k, v] of Object.entries(result)) out(`${k.replace(/_/g, ' ')}: ${v}\n`);
  if (status !== 'confirmed') {
    throw new CliError(
      `transaction ${signature} is not confirmed after ${s.opts.waitSecs} s; it may still land: look it up before trying again`,
    );
  }
}

interface SubmitOptions extends ChainOptions {
  tx?: string;
  signature?: string;
  signedTx?: string;
  waitSecs: number;
}

function decodeTx(b64: string, option: string): Transaction {
  const text = b64.trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text))
    throw new CliError(`${option}: expected a base64 transaction`, EXIT_USAGE);
  try {
    return Transaction.from(Buffer.from(text, 'base64'));
  } catch (err) {
    throw new CliError(`${option}: not a transaction (${(err as Error).message})`, EXIT_USAGE);
  }
}

/** `--tx` + `--signature`, or `--signed-tx`: check, then send. */
async function submit(opts: SubmitOptions): Promise<void> {
  if (!!opts.signedTx === !!(opts.tx || opts.signature)) {
    throw new CliError('give --tx with --signature, or --signed-tx alone', EXIT_USAGE);
  }
  let tx: Transaction;
  if (opts.signedTx) {
    tx = decodeTx(opts.signedTx, '--signed-tx');
  } else {
    if (!opts.tx || !opts.signature) throw new CliError('--tx and --signature go together', EXIT_USAGE);
    tx = decodeTx(opts.tx, '--tx');
    let sig: Uint8Array;
    try {
      sig = bs58.decode(opts.signature.trim());
    } catch {
      sig = new Uint8Array();
    }
    if (sig.length !== 64)
      throw new CliError('--signature: expected a base58 ed25519 signature (64 bytes)', EXIT_USAGE);
    const payer = tx.feePayer;
    if (!payer) throw new CliError('--tx: the transaction names no fee payer', EXIT_USAGE);
    tx.addSignature(payer, Buffer.from(sig));
  }
  const payer = tx.feePayer?.toBase58() ?? '?';
  if (opts.wallet && opts.wallet !== payer) {
    throw new CliError(
      `the transaction's fee payer is ${payer}, not --wallet ${opts.wallet}; nothing was sent`,
    );
  }
  if (tx.signatures.length !== 1) {
    throw new CliError(
      `the transaction wants ${tx.signatures.length} signatures; mailbox commands sign with one`,
    );
  }
  if (!tx.verifySignatures(true)) {
    throw new CliError(
      `the signature does not verify against the transaction's message for fee payer ${payer}; nothing was sent`,
    );
  }
  const { rpc } = settings(opts);
  const conn = cliConnection(rpc);
  const receipt: Record<string, unknown> = {
    fee_payer: payer,
    instructions: tx.instructions.map((ix) => instructionJson(ix).kind).join(', '),
  };
  await sendAndReport({ conn, rpc, opts: { ...opts } }, tx.serialize(), receipt, {});
}

const SUBMIT_HELP = `
Sends a transaction that an external signer signed. Either give the
unsigned transaction a command printed with --sign-offline together with
the wallet's base58 signature over its message (--tx + --signature), or
the whole signed transaction (--signed-tx). The signature is checked
against the message first: one that does not verify is refused and
nothing is sent.

Examples:
  $ sealpost mailbox create --wallet 7xKX…q3 --sign-offline --json > unsigned.json
  $ sealpost mailbox submit --tx "$(jq -r .unsigned_tx unsigned.json)" --signature 3vQ…x9
`;

export function registerSubmit(mailbox: Command): void {
  addChainOptions(
    mailbox
      .command('submit')
      .description('send a transaction signed by an external signer (after --sign-offline)')
      .option('--tx <base64>', 'the unsigned transaction --sign-offline printed')
      .option('--signature <base58>', "the wallet's signature over that transaction's message")
      .option('--signed-tx <base64>', 'the whole signed transaction (instead of --tx and --signature)')
      .option('--wallet <base58>', 'refuse unless this wallet is the fee payer', keyOption('wallet address'))
      .option('--wait-secs <n>', 'how long to wait for confirmation', intOption(1, 3600), 60),
  )
    .addHelpText('after', SUBMIT_HELP)
    .action((opts: SubmitOptions) => submit(opts));
}
