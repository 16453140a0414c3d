// The postoffice of a mail program as the deploy and the admin commands see
// it: who may initialize it (the program's upgrade authority, issue 29), what
// InitPostoffice costs (its rent and fee, worked out before anything is
// sent), what the admin may withdraw, and the lines and JSON that describe it.
import {
  type Connection,
  type Keypair,
  type PublicKey,
  SystemProgram,
  type TransactionInstruction,
} from '@solana/web3.js';
import {
  budgetedUnitLimit,
  type PriorityFeePolicy,
  resolvePriorityFee,
  writableKeysOf,
} from '../../client/compute-budget.ts';
import {
  decodePostoffice,
  initPostofficeInstruction,
  POSTOFFICE_SIZE,
  type Postoffice,
  postofficeAddress,
  toHex,
  ZERO_KEY,
} from '../../client/index.ts';
import { DeployError, type OnChainProgram, readAccount } from './onchain.ts';
import { budgetedFee } from './plan.ts';
import { DEFAULT_DEPLOY_PRIORITY_FEE, type TxSpec } from './sender.ts';

/** The InitPostoffice arguments of docs/protocol.md. */
export interface PostofficeArgs {
  delegate: PublicKey;
  stampFeeLamports: bigint;
  settlementSurchargeLamports: bigint;
  rootKsk?: Uint8Array;
  commitmentRoot?: Uint8Array;
}

/** The protocol fee per stamp and the settlement surcharge a new postoffice gets unless told otherwise. */
export const DEFAULT_STAMP_FEE = 1000n;
export const DEFAULT_SURCHARGE = 5000n;

export const isNone = (key: PublicKey): boolean => key.equals(ZERO_KEY);
export const pendingText = (p: Postoffice): string =>
  isNone(p.pendingAdmin) ? 'none' : p.pendingAdmin.toBase58();

/**
 * Refuses unless `key` is the program's upgrade authority: InitPostoffice
 * needs its signature, so an immutable program can never be initialized.
 */
export function mustBeUpgradeAuthority(program: OnChainProgram, key: PublicKey, hint = ''): void {
  const id = program.programId.toBase58();
  if (!program.authority) {
    throw new DeployError(
      `program ${id} is immutable (its upgrade authority was revoked): nobody can initialize its postoffice, InitPostoffice needs the upgrade authority's signature; nothing was sent`,
    );
  }
  if (!program.authority.equals(key)) {
    throw new DeployError(
      `${key.toBase58()} is not the upgrade authority of program ${id}: its upgrade authority is ${program.authority.toBase58()}${hint}; nothing was sent`,
    );
  }
}

/** The postoffice as the lines `init-postoffice`, `deploy` and `postoffice` print. */
export function describePostoffice(p: Postoffice): string[] {
  return [
    `  admin                 ${p.admin.toBase58()}`,
    `  pending admin         ${pendingText(p)}`,
    `  delegate              ${p.delegateAddress.toBase58()}`,
    `  stamp fee             ${p.stampFeeLamports} lamports`,
    `  settlement surcharge  ${p.settlementSurchargeLamports} lamports`,
    `  fees collected        ${p.feesCollected} lamports`,
    `  root ksk              ${toHex(p.rootKsk)}`,
    `  commitment root       ${toHex(p.commitmentRoot)}`,
  ];
}

/** "already exists" with the admin (and pending admin) found: InitPostoffice runs once. */
export function postofficeExists(programId: PublicKey, p: Postoffice, why = ''): DeployError {
  const address = postofficeAddress(programId)[0].toBase58();
  return new DeployError(
    `the postoffice ${address} of program ${programId.toBase58()} already exists with admin ${p.admin.toBase58()} ` +
      `(pending admin ${pendingText(p)})${why} (InitPostoffice runs once):\n${describePostoffice(p).join('\n')}`,
  );
}

/** A postoffice on chain with its balance: what WithdrawFees may take. */
export interface PostofficeState {
  address: PublicKey;
  postoffice: Postoffice;
  lamports: bigint;
  rent: bigint;
  /** min(fees_collected, lamports - rent): the most WithdrawFees moves. */
  withdrawable: bigint;
}

/** The postoffice of `programId`, or null when it is not initialized. */
export async function readPostoffice(
  conn: Connection,
  programId: PublicKey,
): Promise<PostofficeState | null> {
  const address = postofficeAddress(programId)[0];
  const [account, rent] = await Promise.all([
    readAccount(conn, address),
    conn.getMinimumBalanceForRentExemption(POSTOFFICE_SIZE, 'confirmed'),
  ]);
  if (!account?.owner.equals(programId)) return null;
  let postoffice: Postoffice;
  try {
    postoffice = decodePostoffice(new Uint8Array(account.data));
  } catch (err) {
    throw new DeployError(
      `the postoffice ${address.toBase58()} of program ${programId.toBase58()} holds ${account.data.length} bytes this build cannot read as a postoffice (${POSTOFFICE_SIZE} bytes): ${(err as Error).message}`,
    );
  }
  const lamports = BigInt(account.lamports);
  const free = lamports > BigInt(rent) ? lamports - BigInt(rent) : 0n;
  const withdrawable = postoffice.feesCollected < free ? postoffice.feesCollected : free;
  return { address, postoffice, lamports, rent: BigInt(rent), withdrawable };
}

/** The postoffice for --json (u64 amounts as decimal strings). */
export function postofficeJson(s: PostofficeState) {
  const p = s.postoffice;
  return {
    address: s.address.toBase58(),
    admin: p.admin.toBase58(),
    pending_admin: isNone(p.pendingAdmin) ? null : p.pendingAdmin.toBase58(),
    delegate: p.delegateAddress.toBase58(),
    stamp_fee_lamports: p.stampFeeLamports.toString(),
    settlement_surcharge_lamports: p.settlementSurchargeLamports.toString(),
    fees_collected_lamports: p.feesCollected.toString(),
    balance_lamports: s.lamports.toString(),
    rent_lamports: s.rent.toString(),
    withdrawable_lamports: s.withdrawable.toString(),
    root_ksk: toHex(p.rootKsk),
    commitment_root: toHex(p.commitmentRoot),
  };
}

/** InitPostoffice as a deploy sends it, with what it costs. */
export interface InitPlan {
  postoffice: PublicKey;
  admin: PublicKey;
  upgradeAuthority: PublicKey;
  spec: TxSpec;
  /** The postoffice's rent, (128 + 186) × 6960 lamports; paid by the deploy's payer. */
  rent: number;
  /** The transaction's fee (getFeeForMessage on the real message). */
  fee: number;
}

/**
 * InitPostoffice signed by the upgrade authority and the admin, the payer
 * paying the fee and the rent: when the admin is another key, the payer
 * first moves the rent to it in the same transaction, so a cold admin key
 * needs no SOL of its own.
 */
export async function planInit(
  conn: Connection,
  o: {
    programId: PublicKey;
    payer: Keypair;
    admin: Keypair;
    upgradeAuthority: Keypair;
    args: PostofficeArgs;
    priorityFee?: PriorityFeePolicy;
  },
): Promise<InitPlan> {
  const rent = await conn.getMinimumBalanceForRentExemption(POSTOFFICE_SIZE, 'confirmed');
  const ixs: TransactionInstruction[] = [];
  if (!o.admin.publicKey.equals(o.payer.publicKey)) {
    ixs.push(
      SystemProgram.transfer({ fromPubkey: o.payer.publicKey, toPubkey: o.admin.publicKey, lamports: rent }),
    );
  }
  ixs.push(
    initPostofficeInstruction({
      programId: o.programId,
      admin: o.admin.publicKey,
      upgradeAuthority: o.upgradeAuthority.publicKey,
      delegateAddress: o.args.delegate,
      stampFeeLamports: o.args.stampFeeLamports,
      settlementSurchargeLamports: o.args.settlementSurchargeLamports,
      ...(o.args.rootKsk ? { rootKsk: o.args.rootKsk } : {}),
      ...(o.args.commitmentRoot ? { commitmentRoot: o.args.commitmentRoot } : {}),
    }),
  );
  const { blockhash } = await conn.getLatestBlockhash('confirmed');
  const policy = o.priorityFee ?? DEFAULT_DEPLOY_PRIORITY_FEE;
  const keys = writableKeysOf(ixs, o.payer.publicKey);
  const price = await resolvePriorityFee(conn, policy, keys, 0, budgetedUnitLimit(ixs, 1n));
  const { fee } = await budgetedFee(conn, blockhash, o.payer.publicKey, ixs, price, policy);
  return {
    postoffice: postofficeAddress(o.programId)[0],
    admin: o.admin.publicKey,
    upgradeAuthority: o.upgradeAuthority.publicKey,
    spec: { label: 'InitPostoffice', ixs, signers: [o.upgradeAuthority, o.admin] },
    rent,
    fee,
  };
}
