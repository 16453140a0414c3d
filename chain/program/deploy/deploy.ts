// `sealpost program deploy` without the CLI: uploads a program through the
// BPF Upgradeable Loader as `solana program deploy` does. A buffer account
// (CreateAccount + InitializeBuffer), Write chunks in a bounded window, then
// DeployWithMaxDataLen (new program) or [ExtendProgram +] Upgrade (existing
// program whose upgrade authority is ours). A re-run finds the buffer at the
// same address and writes only the chunks it lacks. Done is reported only
// after the final transaction is confirmed and the program's bytes read back.
// Then, unless told not to, InitPostoffice signed by the upgrade authority (the
// only key the program lets initialize it), so no one can take the postoffice
// between the deploy and its set-up; a postoffice that exists already is left
// alone when its admin is ours and stops the deploy, before anything is sent,
// when it is someone else's.
import { createHash } from 'node:crypto';
import { type Connection, Keypair, type PublicKey } from '@solana/web3.js';
import type { PriorityFeePolicy } from '../../client/compute-budget.ts';
import { getPostoffice } from '../../client/index.ts';
import { programDataAddress, write } from '../../client/loader.ts';
import { SLOT_POLL_MS } from '../../client/rpc.ts';
import {
  DeployError,
  type OnChainProgram,
  readAccount,
  readBuffer,
  readProgram,
  sameBytes,
  sha256Hex,
} from './onchain.ts';
import { type DeployKeys, describePlan, initLines, makePlan, type Plan, sol } from './plan.ts';
import {
  type InitPlan,
  isNone,
  type PostofficeArgs,
  pendingText,
  planInit,
  readPostoffice,
} from './postoffice.ts';
import { sendAll, type TxSpec } from './sender.ts';

export interface DeployInput {
  connection: Connection;
  so: Uint8Array;
  payer: Keypair;
  authority: Keypair;
  programId: PublicKey;
  /** Present for a new program (it signs the program account's creation). */
  programKeypair: Keypair | null;
  /** The buffer keypair; deriveBufferKeypair when the operator names none. */
  buffer: Keypair;
  /** true: --program-id named an existing program to upgrade; it must exist. */
  upgradeOnly: boolean;
  /** ProgramData capacity of a new program; default twice the program. */
  maxDataLen?: number;
  /** Write transactions in flight; default 8. */
  window?: number;
  /** The compute-unit price of every transaction; default auto, at most 100,000 lamports each. */
  priorityFee?: PriorityFeePolicy;
  pollMs?: number;
  /**
   * InitPostoffice once the program runs, signed by the upgrade authority and
   * `admin` (null: leave the postoffice alone, --no-init).
   */
  init: { admin: Keypair; args: PostofficeArgs } | null;
  /** Work out and print the plan, send nothing: resolves to a DeployDryRun. */
  dryRun?: boolean;
  /** Prints a line for the operator (the plan, steps). */
  say(line: string): void;
  /** Chunks written so far, of the total. */
  progress(written: number, total: number): void;
  /** Asked once the plan is printed and the balance suffices; false stops before any transaction. */
  confirm(plan: Plan | null): Promise<boolean>;
}

/** What the deploy did (or, in a dry run, would do) about the postoffice. */
export interface PostofficeOutcome {
  /** initialized: by this run; exists: found with our admin, left alone; planned: a dry run would send InitPostoffice. */
  action: 'initialized' | 'exists' | 'planned';
  address: string;
  admin: string;
  pendingAdmin: string | null;
  delegate: string;
  stampFeeLamports: string;
  settlementSurchargeLamports: string;
  /** InitPostoffice's signature (initialized only). */
  signature: string | null;
  /** The postoffice's rent and InitPostoffice's fee, paid by this run (0 when it exists). */
  rentLamports: number;
  feeLamports: number;
}

export interface DeployResult {
  action: 'deployed' | 'upgraded' | 'unchanged';
  programId: string;
  programData: string;
  upgradeAuthority: string;
  buffer: string;
  sha256: string;
  size: number;
  chunksTotal: number;
  chunksWritten: number;
  /** Chunks the buffer already held (resumed upload). */
  chunksHeld: number;
  signature: string | null;
  slot: number | null;
  /** Lamports the payer's balance went down by (InitPostoffice included). */
  lamportsSpent: number;
  transactions: number;
  seconds: number;
  /** null: --no-init. */
  postoffice: PostofficeOutcome | null;
}

/** A dry run: the plan, nothing sent. */
export interface DeployDryRun {
  dryRun: true;
  action: 'deploy' | 'upgrade' | 'unchanged';
  programId: string;
  programData: string;
  upgradeAuthority: string;
  buffer: string;
  sha256: string;
  size: number;
  chunksTotal: number;
  chunksToWrite: number;
  /** Transactions a real run would send (InitPostoffice included). */
  transactions: number;
  payer: string;
  balanceLamports: number;
  /** Lamports the payer must hold before the first transaction. */
  neededLamports: number;
  /** Lamports the payer would end up spending. */
  costLamports: number;
  /** false: the payer holds too little (a real run would stop before sending). */
  enough: boolean;
  postoffice: PostofficeOutcome | null;
}

/**
 * The buffer keypair a deploy uses when none is named: derived from the
 * upgrade authority's secret and the program id, so every run of the same
 * deploy finds the same buffer and nobody without the authority key can.
 */
export function deriveBufferKeypair(authority: Keypair, programId: PublicKey): Keypair {
  const seed = createHash('sha256')
    .update('sealpost:program-buffer:v1')
    .update(authority.secretKey.subarray(0, 32))
    .update(programId.toBytes())
    .digest();
  return Keypair.fromSeed(new Uint8Array(seed));
}

async function balanceOf(conn: Connection, key: PublicKey): Promise<number> {
  try {
    return await conn.getBalance(key, 'confirmed');
  } catch (err) {
    throw new DeployError(`the RPC at ${conn.rpcEndpoint} did not answer: ${(err as Error).message}`);
  }
}

async function waitPastDeploySlot(conn: Connection, programId: PublicKey): Promise<void> {
  const program = await readProgram(conn, programId);
  if (!program) return;
  // At slot cadence for about a minute, backing off when a read fails.
  for (let i = 0, failures = 0; i < 150; i++) {
    const slot = await conn.getSlot('confirmed').then(
      (s) => {
        failures = 0;
        return s;
      },
      () => {
        failures++;
        return -1;
      },
    );
    if (slot >= Number(program.slot)) return;
    await new Promise((r) => setTimeout(r, SLOT_POLL_MS * 2 ** Math.min(failures, 4)));
  }
}

/** The postoffice outcome for the result, from the chain or from the InitPostoffice about to be sent. */
function outcome(
  action: PostofficeOutcome['action'],
  found: { address: PublicKey; admin: PublicKey; pendingAdmin: string | null },
  p: { delegate: PublicKey; stampFee: bigint; surcharge: bigint },
  paid: { signature: string | null; rent: number; fee: number },
): PostofficeOutcome {
  return {
    action,
    address: found.address.toBase58(),
    admin: found.admin.toBase58(),
    pendingAdmin: found.pendingAdmin,
    delegate: p.delegate.toBase58(),
    stampFeeLamports: p.stampFee.toString(),
    settlementSurchargeLamports: p.surcharge.toString(),
    signature: paid.signature,
    rentLamports: paid.rent,
    feeLamports: paid.fee,
  };
}

function plannedOutcome(init: InitPlan, args: PostofficeArgs): PostofficeOutcome {
  return outcome(
    'planned',
    { address: init.postoffice, admin: init.admin, pendingAdmin: null },
    { delegate: args.delegate, stampFee: args.stampFeeLamports, surcharge: args.settlementSurchargeLamports },
    { signature: null, rent: init.rent, fee: init.fee },
  );
}

/**
 * The postoffice of an existing program, before anything is sent: absent →
 * InitPostoffice is planned; ours → left alone; someone else's → refused.
 */
async function postofficeStep(
  input: DeployInput,
  existing: OnChainProgram | null,
): Promise<{ init: InitPlan | null; found: PostofficeOutcome | null }> {
  if (!input.init) return { init: null, found: null };
  const conn = input.connection;
  const { programId } = input;
  const admin = input.init.admin.publicKey;
  // A program that does not exist yet has no postoffice.
  const state = existing ? await readPostoffice(conn, programId) : null;
  if (state) {
    const p = state.postoffice;
    if (!p.admin.equals(admin)) {
      throw new DeployError(
        `the postoffice ${state.address.toBase58()} of program ${programId.toBase58()} already exists with admin ${p.admin.toBase58()} ` +
          `(pending admin ${pendingText(p)}), not ${admin.toBase58()}: nothing was sent ` +
          '(deploy with --no-init to leave the postoffice as it is, or with --admin naming its admin keypair)',
      );
    }
    input.say(
      `postoffice ${state.address.toBase58()} exists already with admin ${p.admin.toBase58()}: InitPostoffice is not sent`,
    );
    const found = outcome(
      'exists',
      {
        address: state.address,
        admin: p.admin,
        pendingAdmin: isNone(p.pendingAdmin) ? null : p.pendingAdmin.toBase58(),
      },
      { delegate: p.delegateAddress, stampFee: p.stampFeeLamports, surcharge: p.settlementSurchargeLamports },
      { signature: null, rent: 0, fee: 0 },
    );
    return { init: null, found };
  }
  const init = await planInit(conn, {
    programId,
    payer: input.payer,
    admin: input.init.admin,
    upgradeAuthority: input.authority,
    args: input.init.args,
    ...(input.priorityFee ? { priorityFee: input.priorityFee } : {}),
  });
  return { init, found: null };
}

export async function deployProgram(input: DeployInput): Promise<DeployResult | DeployDryRun> {
  const started = Date.now();
  const conn = input.connection;
  const { so, payer, authority, programId } = input;
  const id = programId.toBase58();
  const startBalance = await balanceOf(conn, payer.publicKey);
  const existing = await readProgram(conn, programId);
  if (!existing && input.upgradeOnly) {
    throw new DeployError(
      `program ${id} does not exist on this cluster, so there is nothing to upgrade; a new program is deployed with --program-keypair`,
    );
  }
  const base = {
    programId: id,
    programData: programDataAddress(programId).toBase58(),
    buffer: input.buffer.publicKey.toBase58(),
    sha256: sha256Hex(so),
    size: so.length,
  };
  let current = false;
  if (existing) {
    if (!existing.authority) {
      throw new DeployError(
        `program ${id} is immutable (its upgrade authority was revoked): it cannot be upgraded`,
      );
    }
    if (!existing.authority.equals(authority.publicKey)) {
      throw new DeployError(
        `program ${id} has upgrade authority ${existing.authority.toBase58()}, not ${authority.publicKey.toBase58()}: we may not upgrade it`,
      );
    }
    current = existing.elf !== null && sameBytes(existing.elf, so);
  }
  const { init, found } = await postofficeStep(input, existing);
  const upgradeAuthority = authority.publicKey.toBase58();
  const postoffice = found ?? (init && input.init ? plannedOutcome(init, input.init.args) : null);

  if (current) {
    // The program runs this build: at most InitPostoffice is left to do.
    const unchanged: DeployResult = {
      ...base,
      action: 'unchanged',
      upgradeAuthority,
      chunksTotal: 0,
      chunksWritten: 0,
      chunksHeld: 0,
      signature: null,
      slot: Number(existing?.slot ?? 0),
      lamportsSpent: 0,
      transactions: 0,
      seconds: 0,
      postoffice,
    };
    const needed = init
      ? init.rent + init.fee + (await conn.getMinimumBalanceForRentExemption(0, 'confirmed'))
      : 0;
    if (init) {
      input.say(
        `program ${id} already runs this build (sha256 ${base.sha256}); the postoffice is not initialized`,
      );
      for (const line of initLines(init)) input.say(line);
      input.say(`  SOL needed:             ${sol(needed)} SOL (incl. the payer's rent-exempt minimum)`);
      input.say(`  payer ${payer.publicKey.toBase58()} balance: ${sol(startBalance)} SOL`);
    }
    if (input.dryRun) {
      return {
        dryRun: true,
        ...base,
        action: 'unchanged',
        upgradeAuthority,
        chunksTotal: 0,
        chunksToWrite: 0,
        transactions: init ? 1 : 0,
        payer: payer.publicKey.toBase58(),
        balanceLamports: startBalance,
        neededLamports: needed,
        costLamports: init ? init.rent + init.fee : 0,
        enough: startBalance >= needed,
        postoffice,
      };
    }
    if (!init) return { ...unchanged, seconds: (Date.now() - started) / 1000 };
    if (startBalance < needed) throw short(payer.publicKey, needed, startBalance);
    if (!(await input.confirm(null))) throw new DeployError('stopped before sending anything');
    const initialized = await initialize(input, init);
    const endBalance = await balanceOf(conn, payer.publicKey);
    return {
      ...unchanged,
      lamportsSpent: startBalance - endBalance,
      transactions: 1,
      seconds: (Date.now() - started) / 1000,
      postoffice: initialized,
    };
  }

  const maxDataLen = input.maxDataLen ?? so.length * 2;
  if (maxDataLen < so.length) {
    throw new DeployError(`--max-len ${maxDataLen} is smaller than the program (${so.length} bytes)`);
  }
  const keys: DeployKeys = {
    payer,
    authority,
    buffer: input.buffer,
    programId,
    programKeypair: existing ? null : input.programKeypair,
  };
  const buffer = await readBuffer(conn, input.buffer.publicKey, authority.publicKey, so.length);
  const plan = await makePlan(conn, keys, so, existing, buffer, maxDataLen, init, input.priorityFee);
  for (const line of describePlan(plan, keys, startBalance)) input.say(line);
  const transactions = plan.setup.length + plan.offsets.length + plan.finish.length + (init ? 1 : 0);
  if (input.dryRun) {
    return {
      dryRun: true,
      ...base,
      action: plan.action,
      upgradeAuthority,
      chunksTotal: plan.chunksTotal,
      chunksToWrite: plan.offsets.length,
      transactions,
      payer: payer.publicKey.toBase58(),
      balanceLamports: startBalance,
      neededLamports: plan.cost.needed,
      costLamports: plan.cost.net,
      enough: startBalance >= plan.cost.needed,
      postoffice,
    };
  }
  if (startBalance < plan.cost.needed) throw short(payer.publicKey, plan.cost.needed, startBalance);
  if (!(await input.confirm(plan))) throw new DeployError('stopped before sending anything');
  let deployed: DeployResult;
  try {
    deployed = await execute(input, plan, base, started);
  } catch (err) {
    const resume = `buffer ${base.buffer} keeps what was written: run the same command again to resume`;
    throw new DeployError(`${(err as Error).message}\n${resume}`);
  }
  const initialized = init ? await initialize(input, init) : postoffice;
  const endBalance = await balanceOf(conn, payer.publicKey);
  return {
    ...deployed,
    lamportsSpent: startBalance - endBalance,
    transactions,
    seconds: (Date.now() - started) / 1000,
    postoffice: initialized,
  };
}

function short(payer: PublicKey, needed: number, balance: number): DeployError {
  return new DeployError(
    `the payer ${payer.toBase58()} needs ${sol(needed)} SOL, has ${sol(balance)} SOL ` +
      `(short by ${sol(needed - balance)} SOL); nothing was sent`,
  );
}

/** Sends InitPostoffice once the program runs, and reads the postoffice back. */
async function initialize(input: DeployInput, init: InitPlan): Promise<PostofficeOutcome> {
  const conn = input.connection;
  const { programId } = input;
  const id = programId.toBase58();
  const args = input.init?.args as PostofficeArgs;
  // A program deployed in slot N runs from slot N + 1.
  await waitPastDeploySlot(conn, programId);
  let signature: string;
  try {
    [signature] = (await sendAll([init.spec], {
      connection: conn,
      payer: input.payer,
      ...(input.priorityFee ? { priorityFee: input.priorityFee } : {}),
      ...(input.pollMs ? { pollMs: input.pollMs } : {}),
    })) as [string];
  } catch (err) {
    throw new DeployError(
      `program ${id} holds this build, but InitPostoffice failed: ${(err as Error).message}\n` +
        'run the same command again to initialize the postoffice (the program is not sent again)',
    );
  }
  const created = await getPostoffice(conn, programId);
  if (!created?.admin.equals(init.admin)) {
    throw new DeployError(
      `InitPostoffice was confirmed (${signature}) but ${init.postoffice.toBase58()} holds no postoffice of admin ${init.admin.toBase58()}`,
    );
  }
  input.say(`initialized the postoffice ${init.postoffice.toBase58()} (${signature})`);
  return outcome(
    'initialized',
    { address: init.postoffice, admin: created.admin, pendingAdmin: null },
    { delegate: args.delegate, stampFee: args.stampFeeLamports, surcharge: args.settlementSurchargeLamports },
    { signature, rent: init.rent, fee: init.fee },
  );
}

/** The deploy or upgrade itself; lamportsSpent, transactions and postoffice are the caller's. */
async function execute(
  input: DeployInput,
  plan: Plan,
  base: Pick<DeployResult, 'programId' | 'programData' | 'buffer' | 'sha256' | 'size'>,
  started: number,
): Promise<DeployResult> {
  const conn = input.connection;
  const { so, payer, authority, programId } = input;
  const id = base.programId;

  const send = (specs: TxSpec[], onConfirmed?: (i: number) => void) =>
    sendAll(specs, {
      connection: conn,
      payer,
      window: input.window ?? 8,
      ...(input.priorityFee ? { priorityFee: input.priorityFee } : {}),
      ...(input.pollMs ? { pollMs: input.pollMs } : {}),
      ...(onConfirmed ? { onConfirmed } : {}),
    });
  // Setup and finish transactions depend on each other: one at a time, in order.
  for (const spec of plan.setup) await send([spec]);

  const held = plan.chunksTotal - plan.offsets.length;
  let written = 0;
  input.progress(held, plan.chunksTotal);
  const writes = plan.offsets.map((at) => ({
    label: `Write at offset ${at}`,
    ixs: [write(input.buffer.publicKey, authority.publicKey, at, so.subarray(at, at + plan.chunkSize))],
    signers: [authority],
  }));
  await send(writes, () => input.progress(held + ++written, plan.chunksTotal));

  // The buffer must hold exactly this build before it becomes the program.
  const filled = await readBuffer(conn, input.buffer.publicKey, authority.publicKey, so.length);
  if (filled.kind !== 'resume' || !sameBytes(filled.bytes, so)) {
    throw new DeployError(`buffer ${base.buffer} does not hold the program after the writes`);
  }
  let signature: string | null = null;
  for (const spec of plan.finish) {
    // The loader refuses to extend or upgrade a program in the slot it last changed.
    if (plan.action === 'upgrade') await waitPastDeploySlot(conn, programId);
    [signature = null] = await send([spec]);
  }

  const landed = await readProgram(conn, programId);
  if (!landed?.elf || !sameBytes(landed.elf, so)) {
    throw new DeployError(
      `the ${plan.action} of ${id} was confirmed but the program does not hold this build`,
    );
  }
  const leftover = await readAccount(conn, input.buffer.publicKey);
  if (leftover) input.say(`note: buffer ${base.buffer} still exists after the ${plan.action}`);
  return {
    ...base,
    action: plan.action === 'deploy' ? 'deployed' : 'upgraded',
    upgradeAuthority: authority.publicKey.toBase58(),
    chunksTotal: plan.chunksTotal,
    chunksWritten: plan.offsets.length,
    chunksHeld: held,
    signature,
    slot: Number(landed.slot),
    lamportsSpent: 0,
    transactions: plan.setup.length + plan.offsets.length + plan.finish.length,
    seconds: (Date.now() - started) / 1000,
    postoffice: null,
  };
}
