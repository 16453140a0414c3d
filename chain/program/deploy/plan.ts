// What a deploy will send and what it costs, worked out before anything is
// sent: which Write chunks the buffer still lacks, the rent of every account
// (getMinimumBalanceForRentExemption) and the fee of every transaction
// (getFeeForMessage on the real messages), InitPostoffice after it (the
// postoffice's rent and the fee), the most the payer must hold at any point,
// and what it spends once the buffer's rent comes back.
import {
  type Connection,
  type Keypair,
  type PublicKey,
  Transaction,
  type TransactionInstruction,
} from '@solana/web3.js';
import { POSTOFFICE_SIZE } from '../../client/accounts/index.ts';
import {
  budgetedUnitLimit,
  type PriorityFeePolicy,
  priorityFeeLamports,
  resolvePriorityFee,
  writableKeysOf,
} from '../../client/compute-budget.ts';
import {
  BUFFER_METADATA_SIZE,
  close,
  createBuffer,
  deployWithMaxDataLen,
  extendProgram,
  PROGRAM_ACCOUNT_SIZE,
  PROGRAMDATA_METADATA_SIZE,
  upgrade,
  write,
} from '../../client/loader.ts';
import type { BufferState, OnChainProgram } from './onchain.ts';
import type { InitPlan } from './postoffice.ts';
import { DEFAULT_DEPLOY_PRIORITY_FEE, type TxSpec, withBudget } from './sender.ts';

const PACKET_SIZE = 1232;
const LAMPORTS_PER_SOL = 1_000_000_000;

export interface DeployKeys {
  payer: Keypair;
  authority: Keypair;
  buffer: Keypair;
  programId: PublicKey;
  /** Signs the program account's creation (new deploys only). */
  programKeypair: Keypair | null;
}

export interface Cost {
  /** Rent put into a new buffer (0 when resuming one). */
  bufferRent: number;
  /** Lamports the buffer holds at the end, returned to the payer by the loader. */
  bufferRefund: number;
  /** Lamports a stale buffer (another build's size) returns when it is closed first. */
  staleRefund: number;
  /** ProgramData rent: the whole account (deploy) or the extension (upgrade). */
  programDataRent: number;
  /** The program account's rent (deploy only). */
  programRent: number;
  /** Every transaction's fee: 5000 lamports per signature and the priority fee. */
  fees: number;
  feePerWrite: number;
  /** The part of `fees` that is priority fee (compute-unit limit × price). */
  priorityFees: number;
  /** The compute-unit price the plan was worked out at (µlamports per CU; raised on a re-sign). */
  microLamportsPerCu: bigint;
  /** The postoffice's rent, paid at InitPostoffice (0: not initialized by this deploy). */
  postofficeRent: number;
  /** InitPostoffice's fee (0: none sent); not in `fees`. */
  initFee: number;
  /** The payer's rent-exempt minimum: it must still hold that much afterwards. */
  payerReserve: number;
  /** The payer's balance must be at least this before the first transaction. */
  needed: number;
  /** What the payer ends up spending. */
  net: number;
}

export interface Plan {
  action: 'deploy' | 'upgrade';
  programLen: number;
  chunkSize: number;
  chunksTotal: number;
  /** Byte offsets of the Write chunks still to send. */
  offsets: number[];
  /** ProgramData capacity asked for by a deploy (max_data_len). */
  maxDataLen: number;
  /** Bytes ExtendProgram adds before an upgrade (0: none). */
  extendBy: number;
  /** Transactions before the writes (close a stale buffer, create the buffer). */
  setup: TxSpec[];
  /** Transactions after the writes (extend, deploy or upgrade). */
  finish: TxSpec[];
  /** InitPostoffice once the program runs (null: the postoffice exists, or --no-init). */
  init: InitPlan | null;
  cost: Cost;
}

export function sol(lamports: number): string {
  const sign = lamports < 0 ? '-' : '';
  const abs = Math.abs(lamports);
  const frac = String(abs % LAMPORTS_PER_SOL)
    .padStart(9, '0')
    .replace(/0+$/, '');
  return `${sign}${Math.floor(abs / LAMPORTS_PER_SOL)}${frac ? `.${frac}` : ''}`;
}

/**
 * Largest Write chunk whose transaction (these signers, these keys, and the
 * SetComputeUnitLimit / SetComputeUnitPrice in front) fits one packet.
 */
export function writeChunkSize(payer: PublicKey, authority: PublicKey, buffer: PublicKey): number {
  const tx = new Transaction({ feePayer: payer, recentBlockhash: payer.toBase58() });
  const budgetAtMost = { mode: 'fixed', maxLamports: 2n ** 64n } as const;
  tx.add(...withBudget([write(buffer, authority, 0, new Uint8Array(0))], 2n ** 63n, budgetAtMost));
  const empty = tx.serialize({ requireAllSignatures: false, verifySignatures: false }).length;
  // The instruction data's compact-u16 length takes a second byte past 127 bytes.
  return PACKET_SIZE - empty - 1;
}

/** Offsets of the chunks of `so` whose bytes the buffer does not hold yet (a fresh buffer is zero-filled). */
export function chunksToWrite(so: Uint8Array, held: Uint8Array | null, chunkSize: number): number[] {
  const out: number[] = [];
  for (let at = 0; at < so.length; at += chunkSize) {
    const want = so.subarray(at, at + chunkSize);
    const have = held ? held.subarray(at, at + chunkSize) : null;
    const same = have ? Buffer.from(want).equals(have) : want.every((b) => b === 0);
    if (!same) out.push(at);
  }
  return out;
}

/** The fee of `ixs` as sent (behind the budget instructions at `price`); the priority part apart. */
export async function budgetedFee(
  conn: Connection,
  blockhash: string,
  payer: PublicKey,
  ixs: TransactionInstruction[],
  price: bigint,
  policy: PriorityFeePolicy,
): Promise<{ fee: number; priority: number }> {
  const sent = withBudget(ixs, price, policy);
  const priceIx = sent.length > ixs.length + 1 ? sent[1] : undefined;
  const sentPrice = priceIx ? priceIx.data.readBigUInt64LE(1) : 0n;
  const priority = Number(priorityFeeLamports(budgetedUnitLimit(ixs, 1n), sentPrice));
  const tx = new Transaction({ feePayer: payer, recentBlockhash: blockhash }).add(...sent);
  const message = tx.compileMessage();
  const { value } = await conn.getFeeForMessage(message, 'confirmed');
  // A node that omits the priority fee from getFeeForMessage: count it here.
  const base = 5000 * message.header.numRequiredSignatures;
  return { fee: Math.max(value ?? 0, base + priority), priority };
}

/** Everything a deploy (no program yet) or an upgrade (`existing`) of `so` will send, and its cost. */
export async function makePlan(
  conn: Connection,
  keys: DeployKeys,
  so: Uint8Array,
  existing: OnChainProgram | null,
  buffer: BufferState,
  maxDataLen: number,
  init: InitPlan | null = null,
  policy: PriorityFeePolicy = DEFAULT_DEPLOY_PRIORITY_FEE,
): Promise<Plan> {
  const payer = keys.payer.publicKey;
  const authority = keys.authority.publicKey;
  const bufferKey = keys.buffer.publicKey;
  const rent = (size: number) => conn.getMinimumBalanceForRentExemption(size, 'confirmed');
  const { blockhash } = await conn.getLatestBlockhash('confirmed');
  const sample = [write(bufferKey, authority, 0, so.subarray(0, 1))];
  const price = await resolvePriorityFee(
    conn,
    policy,
    writableKeysOf(sample, payer),
    0,
    budgetedUnitLimit(sample, 1n),
  );
  let priorityFees = 0;
  let lastPriority = 0;
  const fee = async (ixs: TransactionInstruction[]) => {
    const f = await budgetedFee(conn, blockhash, payer, ixs, price, policy);
    priorityFees += f.priority;
    lastPriority = f.priority;
    return f.fee;
  };

  const chunkSize = writeChunkSize(payer, authority, bufferKey);
  const chunksTotal = Math.ceil(so.length / chunkSize);
  const held = buffer.kind === 'resume' ? buffer.bytes : null;
  const offsets = chunksToWrite(so, held, chunkSize);

  const setup: TxSpec[] = [];
  let setupFees = 0;
  let bufferRent = 0;
  const staleRefund = buffer.kind === 'stale' ? buffer.lamports : 0;
  if (buffer.kind === 'stale') {
    const ixs = [close({ account: bufferKey, recipient: payer, authority })];
    setup.push({ label: `closing the stale buffer ${bufferKey.toBase58()}`, ixs, signers: [keys.authority] });
    setupFees += await fee(ixs);
  }
  if (buffer.kind !== 'resume') {
    bufferRent = await rent(BUFFER_METADATA_SIZE + so.length);
    const ixs = createBuffer({
      payer,
      buffer: bufferKey,
      authority,
      programLen: so.length,
      lamports: bufferRent,
    });
    setup.push({ label: 'creating the buffer (InitializeBuffer)', ixs, signers: [keys.buffer] });
    setupFees += await fee(ixs);
  }
  const bufferRefund = buffer.kind === 'resume' ? buffer.lamports : bufferRent;
  const feePerWrite = await fee([write(bufferKey, authority, 0, so.subarray(0, chunkSize))]);
  priorityFees += lastPriority * (offsets.length - 1);

  const finish: TxSpec[] = [];
  let programRent = 0;
  let programDataRent = 0;
  let extendBy = 0;
  if (!existing) {
    if (!keys.programKeypair) throw new Error('a new deploy needs the program keypair');
    programRent = await rent(PROGRAM_ACCOUNT_SIZE);
    programDataRent = await rent(PROGRAMDATA_METADATA_SIZE + maxDataLen);
    const ixs = deployWithMaxDataLen({
      payer,
      programId: keys.programId,
      buffer: bufferKey,
      authority,
      maxDataLen,
      programLamports: programRent,
    });
    finish.push({ label: 'DeployWithMaxDataLen', ixs, signers: [keys.programKeypair, keys.authority] });
  } else {
    extendBy = Math.max(0, so.length - existing.capacity);
    if (extendBy > 0) {
      const total = await rent(PROGRAMDATA_METADATA_SIZE + existing.capacity + extendBy);
      programDataRent = Math.max(0, total - existing.programDataLamports);
      const ixs = [extendProgram(keys.programId, payer, extendBy)];
      finish.push({ label: `ExtendProgram by ${extendBy} bytes`, ixs, signers: [] });
    }
    const ixs = [upgrade({ programId: keys.programId, buffer: bufferKey, authority, spill: payer })];
    finish.push({ label: 'Upgrade', ixs, signers: [keys.authority] });
  }
  let finishFees = 0;
  for (const t of finish) finishFees += await fee(t.ixs);

  const fees = setupFees + feePerWrite * offsets.length + finishFees;
  const postofficeRent = init?.rent ?? 0;
  const initFee = init?.fee ?? 0;
  // Running spend: stale refund, buffer rent, fees, the program account, then
  // the loader moves the buffer's lamports to the payer and takes ProgramData's
  // rent; InitPostoffice comes last.
  const beforeRefund = -staleRefund + bufferRent + fees + programRent;
  const deployed = beforeRefund + programDataRent - bufferRefund;
  const net = deployed + postofficeRent + initFee;
  const payerReserve = await rent(0);
  const needed = Math.max(bufferRent + setupFees, beforeRefund, deployed, net) + payerReserve;
  return {
    action: existing ? 'upgrade' : 'deploy',
    programLen: so.length,
    chunkSize,
    chunksTotal,
    offsets,
    maxDataLen,
    extendBy,
    setup,
    finish,
    init,
    cost: {
      bufferRent,
      bufferRefund,
      staleRefund,
      programDataRent,
      programRent,
      fees,
      feePerWrite,
      priorityFees,
      microLamportsPerCu: price,
      postofficeRent,
      initFee,
      payerReserve,
      needed,
      net,
    },
  };
}

/** The plan as the lines printed before anything is sent. */
export function describePlan(plan: Plan, keys: DeployKeys, balance: number): string[] {
  const c = plan.cost;
  const lines = [
    `${plan.action === 'deploy' ? 'deploying' : 'upgrading'} program ${keys.programId.toBase58()}: ${plan.programLen} bytes, ${plan.chunksTotal} chunks of ≤ ${plan.chunkSize} bytes`,
    `  buffer ${keys.buffer.publicKey.toBase58()}: ${plan.offsets.length} of ${plan.chunksTotal} chunks to write`,
  ];
  if (c.staleRefund > 0)
    lines.push(`  close stale buffer (another build): refunds ${sol(c.staleRefund)} SOL`);
  if (c.bufferRent > 0)
    lines.push(`  buffer rent:            ${sol(c.bufferRent)} SOL (refunded at ${plan.action})`);
  else
    lines.push(
      `  buffer rent:            already paid; ${sol(c.bufferRefund)} SOL refunded at ${plan.action}`,
    );
  if (plan.action === 'deploy') {
    lines.push(
      `  program data rent:      ${sol(c.programDataRent)} SOL (max_data_len ${plan.maxDataLen} bytes)`,
    );
    lines.push(`  program account rent:   ${sol(c.programRent)} SOL`);
  } else if (plan.extendBy > 0) {
    lines.push(`  extend program data:    ${sol(c.programDataRent)} SOL (+${plan.extendBy} bytes)`);
  }
  lines.push(
    `  fees:                   ${sol(c.fees)} SOL (${plan.offsets.length} writes × ${c.feePerWrite} lamports + setup and ${plan.action})`,
    `  of which priority fee:  ${sol(c.priorityFees)} SOL (${c.microLamportsPerCu} µlamports per compute unit, every transaction with a compute-unit limit)`,
  );
  if (plan.init) lines.push(...initLines(plan.init));
  lines.push(
    `  SOL needed:             ${sol(c.needed)} SOL (peak, incl. the payer's rent-exempt ${sol(c.payerReserve)})`,
    // A resumed upgrade can refund more (a stale buffer's rent) than it spends: say so, not "-0.6 SOL".
    c.net >= 0
      ? `  cost after refunds:     ${sol(c.net)} SOL`
      : `  cost after refunds:     none; ${sol(-c.net)} SOL comes back to the payer (an earlier buffer's rent)`,
    `  payer ${keys.payer.publicKey.toBase58()} balance: ${sol(balance)} SOL`,
  );
  return lines;
}

/** InitPostoffice's lines in a plan: who becomes admin, the rent and the fee. */
export function initLines(init: InitPlan): string[] {
  return [
    `  then InitPostoffice ${init.postoffice.toBase58()}: admin ${init.admin.toBase58()}, signed by the upgrade authority ${init.upgradeAuthority.toBase58()}`,
    `  postoffice rent:        ${sol(init.rent)} SOL (${POSTOFFICE_SIZE} bytes)`,
    `  InitPostoffice fee:     ${sol(init.fee)} SOL`,
  ];
}
