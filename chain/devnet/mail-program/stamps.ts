// Fromboxes and stamps: the per-sender price a recipient sets, purchases
// (AddStamps / BuyStamps / TopUpStamps) and the sender's reclaim.
import { PublicKey } from '@solana/web3.js';
import { FROMBOX_SIZE } from '../../accounts/index.ts';
import { type Frombox, fromboxLayout, postofficeLayout } from '../../accounts/mail.ts';
import { blake3Text } from '../../hash.ts';
import type {
  AddStampsData,
  BuyStampsData,
  CreateFromboxData,
  ReclaimFromboxStampsData,
  TopUpStampsData,
  UpdateFromboxData,
} from '../../instruction-data.ts';
import { seeds } from '../../pda.ts';
import { requireMailbox, requireOwnMailbox } from './mailbox.ts';
import { add, addressBytes, E, fail, mul, type Run } from './runtime.ts';

export function createFrombox(run: Run, ix: CreateFromboxData): void {
  run.expectAccounts(4);
  const owner = run.signer(0, true);
  const mailboxAddress = run.readonly(1);
  const fromboxAddress = run.writable(2);
  run.system(3);
  requireOwnMailbox(run, mailboxAddress, owner);
  const bump = run.expectPda(fromboxAddress, seeds.frombox(ix.fromHash, addressBytes(owner)), 'frombox');
  run.expectAbsent(fromboxAddress, 'Frombox');
  run.create(
    fromboxAddress,
    fromboxLayout,
    {
      fromHash: ix.fromHash,
      recipient: new PublicKey(owner),
      requiredPostage: ix.requiredPostage,
      stamps: 0n,
      postageEscrow: 0n,
      createdAt: run.now,
      updatedAt: run.now,
      purchasedTotal: 0n,
      bump,
    },
    owner,
  );
}

export function updateFrombox(run: Run, ix: UpdateFromboxData): void {
  run.expectAccounts(3);
  const owner = run.signer(0);
  const mailboxAddress = run.readonly(1);
  const fromboxAddress = run.writable(2);
  requireOwnMailbox(run, mailboxAddress, owner);
  run.expectPda(fromboxAddress, seeds.frombox(ix.fromHash, addressBytes(owner)), 'frombox');
  const frombox = run.require(fromboxAddress, fromboxLayout);
  run.write(fromboxAddress, fromboxLayout, {
    ...frombox,
    requiredPostage: ix.requiredPostage,
    updatedAt: run.now,
  });
}

type Purchase = AddStampsData | BuyStampsData | TopUpStampsData;

/** The three purchase instructions share accounts and price math; they differ in which frombox and whether it may exist. */
export function purchaseStamps(run: Run, ix: Purchase): void {
  run.expectAccounts(5);
  const buyer = run.signer(0, true);
  const mailboxAddress = run.readonly(1);
  const fromboxAddress = run.writable(2);
  const postofficeAddress = run.writable(3);
  run.system(4);
  const mailbox = requireMailbox(run, mailboxAddress);
  run.expectPda(postofficeAddress, seeds.postoffice(), 'postoffice');
  const postoffice = run.require(postofficeAddress, postofficeLayout);

  const fromHash = ix.kind === 'AddStamps' ? ix.fromHash : blake3Text(buyer);
  const bump = run.expectPda(fromboxAddress, seeds.frombox(fromHash, mailbox.owner.toBytes()), 'frombox');
  const existing = run.read(fromboxAddress, fromboxLayout);
  if (ix.kind === 'BuyStamps' && existing) fail(E.AlreadyExists, 'the frombox exists: use TopUpStamps');
  if (ix.kind !== 'BuyStamps' && !existing) fail(E.NotFound, 'no frombox toward this recipient');

  const postage = existing ? existing.requiredPostage : mailbox.defaultPostage;
  if (ix.kind !== 'AddStamps' && ix.maxPriceLamports !== null && postage > ix.maxPriceLamports) {
    fail(E.PriceAboveCeiling, `postage ${postage} is above the ceiling ${ix.maxPriceLamports}`);
  }
  const ownMailbox = mailbox.owner.toBase58() === buyer;
  if (ix.stamps === 0n && !ownMailbox) fail(E.InvalidArgument, 'buy at least one stamp');

  const fee = ownMailbox ? 0n : postoffice.stampFeeLamports;
  const escrow = mul(postage, ix.stamps);
  const surcharges = mul(postoffice.settlementSurchargeLamports, ix.stamps);
  const fees = mul(fee, ix.stamps);
  const held = add(escrow, surcharges);

  const frombox: Frombox = existing ?? {
    kind: 'Frombox',
    fromHash,
    recipient: mailbox.owner,
    requiredPostage: postage,
    stamps: 0n,
    postageEscrow: 0n,
    createdAt: run.now,
    updatedAt: run.now,
    purchasedTotal: 0n,
    bump,
  };
  const next = {
    ...frombox,
    stamps: add(frombox.stamps, ix.stamps),
    postageEscrow: add(frombox.postageEscrow, escrow),
    purchasedTotal: add(frombox.purchasedTotal, ix.stamps),
    updatedAt: run.now,
  };
  if (existing) {
    run.transfer(buyer, fromboxAddress, held);
    run.write(fromboxAddress, fromboxLayout, next);
  } else {
    run.create(fromboxAddress, fromboxLayout, next, buyer, held);
  }
  run.transfer(buyer, postofficeAddress, fees);
  if (fees > 0n) {
    run.write(postofficeAddress, postofficeLayout, {
      ...postoffice,
      feesCollected: add(postoffice.feesCollected, fees),
    });
  }
  run.ctx.log(`Stamps ${ix.stamps} at ${postage} postage`);
}

export function reclaimFromboxStamps(run: Run, _ix: ReclaimFromboxStampsData): void {
  run.expectAccounts(3);
  const sender = run.signer(0, true);
  const mailboxAddress = run.readonly(1);
  const fromboxAddress = run.writable(2);
  const mailbox = requireMailbox(run, mailboxAddress);
  run.expectPda(fromboxAddress, seeds.frombox(blake3Text(sender), mailbox.owner.toBytes()), 'frombox');
  const frombox = run.require(fromboxAddress, fromboxLayout);
  if (frombox.stamps === 0n) fail(E.NothingToClaim, 'no unspent stamps');
  // Everything above rent is stamp money: postage_escrow + stamps × surcharge as paid in.
  const refund = run.lamports(fromboxAddress) - run.ctx.rentExemptMinimum(FROMBOX_SIZE);
  if (refund > 0n) run.transfer(fromboxAddress, sender, refund);
  run.write(fromboxAddress, fromboxLayout, { ...frombox, stamps: 0n, postageEscrow: 0n, updatedAt: run.now });
}
