// Deleting an on-chain message from the reader (DeleteMail, as `sealpost
// mailbox delete` does): a fresh read of the Email account and the chain's
// clock, then the sheet's rows. The program's rules (docs/protocol.md
// "DeleteMail"): the recipient may delete at any time; the sender only once
// a bounty's claim window is over (BountyLocked before), so the page refuses
// that before anything is signed. The account's lamports — its rent and any
// bounty still in it — go to its rent_payer, who paid for the send: when the
// recipient deletes a message whose bounty it could still claim, the bounty
// goes back to the sender with the rent, and the sheet says so.
import { type Connection, PublicKey } from '@solana/web3.js';
import { deleteBountyLocked } from '../../../chain/client/bounty-lock.ts';
import { getEmailAt } from '../../../chain/client/client.ts';
import { deleteMailInstruction } from '../../../chain/client/instructions.ts';
import { Refusal } from '../refusal.ts';
import { formatSol, SIGNATURE_FEE } from './compose.ts';
import type { CostRow, PreparedAction } from './market.ts';
import { quotePriorityFee } from './tx.ts';

const shortKey = (k: string) => `${k.slice(0, 4)}…${k.slice(-4)}`;

function isoTime(secs: bigint): string {
  return new Date(Number(secs) * 1000).toLocaleString();
}

/** What deleting one message moves, and to whom (the sheet, and the page's notice afterwards). */
export interface DeletePlan extends PreparedAction {
  /** The Email account's lamports: its rent plus any bounty still in it. */
  accountLamports: bigint;
  rentPayer: string;
  /** A bounty the signer (the recipient) could still claim and gives up by deleting. */
  forfeitedBounty: bigint;
}

export async function prepareDeleteMail(
  c: { conn: Connection; programId: string; wallet: PublicKey },
  address: string,
): Promise<DeletePlan> {
  const email = await getEmailAt(c.conn, c.programId, address);
  if (!email) throw new Refusal('This message account is no longer on chain: it was deleted already.');
  const isRecipient = email.recipient.equals(c.wallet);
  if (!isRecipient && !email.sender.equals(c.wallet)) {
    throw new Refusal('Only the recipient or the sender may delete this message. Nothing was signed.');
  }
  const slot = await c.conn.getSlot('confirmed');
  const now = BigInt((await c.conn.getBlockTime(slot)) ?? Math.floor(Date.now() / 1000));
  if (deleteBountyLocked(email, c.wallet, now)) {
    throw new Refusal(
      `The bounty of ${formatSol(email.bountyLamports)} SOL is the recipient's to claim until ${isoTime(email.expiresAt)}; the sender can delete this message only after that. Nothing was signed.`,
    );
  }
  const accountLamports = BigInt(await c.conn.getBalance(new PublicKey(address), 'confirmed'));
  const bounty = email.bountyLamports;
  const rent = accountLamports - bounty;
  const live = bounty > 0n && now < email.expiresAt;
  const forfeitedBounty = isRecipient && live ? bounty : 0n;
  const payer = email.rentPayer.toBase58();
  const toMe = email.rentPayer.equals(c.wallet);
  const whom = toMe ? 'you' : `the wallet that paid for it (${shortKey(payer)})`;
  const rows: CostRow[] = [];
  if (toMe) {
    rows.push({ label: 'Message account rent (returned to you)', lamports: -rent, testId: 'cost-returned' });
    if (bounty > 0n)
      rows.push({ label: 'Unclaimed bounty (returned to you)', lamports: -bounty, testId: 'cost-bounty' });
  }
  const parts = [
    `The message account is closed on chain and its rent, ${formatSol(rent)} SOL, goes back to ${whom}.`,
  ];
  if (forfeitedBounty > 0n) {
    parts.push(
      `It still carries a bounty of ${formatSol(bounty)} SOL that you may claim until ${isoTime(email.expiresAt)}: deleting forfeits it, and it goes back to the sender with the rent. Claim it first if you want it.`,
    );
  } else if (bounty > 0n) {
    parts.push(`Its unclaimed bounty of ${formatSol(bounty)} SOL goes back with the rent.`);
  }
  parts.push('The sealed body stays wherever it is pinned. This cannot be undone.');
  const instructions = [
    deleteMailInstruction({
      programId: c.programId,
      signer: c.wallet,
      email: address,
      rentPayer: email.rentPayer,
    }),
  ];
  const feeQuote = await quotePriorityFee(c.conn, instructions, c.wallet);
  rows.push(
    { label: 'Network fee', lamports: SIGNATURE_FEE, testId: 'cost-fee' },
    { label: 'Priority fee', lamports: feeQuote.lamports, testId: 'cost-priority' },
  );
  const net = rows.reduce((sum, r) => sum + r.lamports, 0n);
  const balance = BigInt(await c.conn.getBalance(c.wallet, 'confirmed'));
  return {
    title: forfeitedBounty > 0n ? 'Delete this message and forfeit its bounty?' : 'Delete this message?',
    summary: parts.join(' '),
    rows,
    net,
    balance,
    after: balance - net,
    confirmLabel: forfeitedBounty > 0n ? 'Delete and forfeit the bounty' : 'Delete the message',
    done: `Message deleted. Its rent of ${formatSol(rent)} SOL went back to ${whom}${bounty > 0n ? `, with the ${formatSol(bounty)} SOL bounty` : ''}.`,
    instructions,
    feeQuote,
    accountLamports,
    rentPayer: payer,
    forfeitedBounty,
  };
}
