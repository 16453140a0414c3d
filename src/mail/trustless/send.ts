// The trustless send (reference "Trustless compose flow"), shared by the
// webmail and `sealpost mailbox send`: resolve the recipient and its key on
// chain; refuse no_ipfs mailboxes and born-expired bounties before anything
// is pinned; hold when a stamp is needed and none is bought; otherwise seal,
// pin, and build SendMail for the recipient's current mail_count. Runs in
// Node and the browser; signing and submitting stay with the caller.
import type { Connection, PublicKey, TransactionInstruction } from '@solana/web3.js';
import { decodeMailDomain, emailSize, rentExemptLamports } from '../../../chain/client/accounts/index.ts';
import { isZeroBytes, toBase58 } from '../../../chain/client/bytes.ts';
import { fetchStampQuote, getFrombox, getMailbox, type StampQuote } from '../../../chain/client/client.ts';
import { fromHash, replyToHash } from '../../../chain/client/hash.ts';
import { sendMailInstruction } from '../../../chain/client/instructions.ts';
import { emailAddress } from '../../../chain/client/pda.ts';
import { checkCid, recipientSealKey, sealMessage } from '../seal/index.ts';
import { type ResolvedRecipient, resolveRecipient } from './recipient.ts';
import { type FeeQuote, quotePriorityFee } from './tx.ts';

export const LAMPORTS_PER_SOL = 1_000_000_000n;
export const DEFAULT_CLAIM_DAYS = 7;

export type RefusalCode = 'no_ipfs' | 'bounty_expired' | 'bad_bounty' | 'pin_mismatch' | 'insufficient_funds';

export class ComposeRefusal extends Error {
  constructor(
    readonly code: RefusalCode,
    message: string,
  ) {
    super(message);
    this.name = 'ComposeRefusal';
  }
}

/** What a send is asked to do, as typed: recipient, bounty SOL and claim days (blank = none / default). */
export interface SendTerms {
  to: string;
  bountySol: string;
  claimDays: string;
}

export type ComposeStep = 'resolve' | 'seal' | 'pin' | 'sign' | 'confirm';

/** The chain side of a send: who sends, and where. */
export interface SendContext {
  conn: Connection;
  programId: string;
  wallet: { publicKey: PublicKey };
  now?: () => number;
  onStep?: (step: ComposeStep) => void;
}

/** SOL text → lamports; null for blank. Throws ComposeRefusal on nonsense. */
export function parseSol(text: string): bigint | null {
  const t = text.trim();
  if (t === '') return null;
  const m = /^(\d+)(?:\.(\d{0,9}))?$/.exec(t);
  if (!m) throw new ComposeRefusal('bad_bounty', `"${t}" is not an amount of SOL (for example 0.01).`);
  const whole = BigInt(m[1] as string);
  const frac = BigInt((m[2] ?? '').padEnd(9, '0'));
  return whole * LAMPORTS_PER_SOL + frac;
}

export function formatSol(lamports: bigint): string {
  const sign = lamports < 0n ? '-' : '';
  const abs = lamports < 0n ? -lamports : lamports;
  const whole = abs / LAMPORTS_PER_SOL;
  const frac = (abs % LAMPORTS_PER_SOL).toString().padStart(9, '0').replace(/0+$/, '');
  return frac ? `${sign}${whole}.${frac}` : `${sign}${whole}`;
}

/** The chain's clock (the time the program compares bounty windows with), else the local one. */
export async function chainNow(conn: Connection, fallbackMs: number): Promise<number> {
  try {
    const t = await conn.getBlockTime(await conn.getSlot('confirmed'));
    if (t !== null) return t;
  } catch {
    // Some nodes prune block times; the local clock is the fallback.
  }
  return Math.floor(fallbackMs / 1000);
}

/** Bounty lamports and expires_at, refusing a window that would be born expired. */
export async function bountyTerms(
  conn: Connection,
  terms: Pick<SendTerms, 'bountySol' | 'claimDays'>,
  nowMs: number,
): Promise<{ lamports: bigint; expiresAt: bigint }> {
  const lamports = parseSol(terms.bountySol);
  if (lamports === null || lamports === 0n) return { lamports: 0n, expiresAt: 0n };
  const daysText = terms.claimDays.trim() === '' ? String(DEFAULT_CLAIM_DAYS) : terms.claimDays.trim();
  const days = Number(daysText);
  if (!Number.isFinite(days))
    throw new ComposeRefusal('bad_bounty', `"${daysText}" is not a number of days.`);
  const now = await chainNow(conn, nowMs);
  const expiresAt = now + Math.floor(days * 86_400);
  // A minute of slack: the send must land before the window ends, or the chain refuses it too.
  if (days <= 0 || expiresAt <= now + 60) {
    throw new ComposeRefusal(
      'bounty_expired',
      'The bounty’s claim window would already be over when the message lands; choose a window of at least a day. Nothing was pinned or sent.',
    );
  }
  return { lamports, expiresAt: BigInt(expiresAt) };
}

export async function domainName(conn: Connection, domainKey: PublicKey): Promise<string | null> {
  if (isZeroBytes(domainKey.toBytes())) return null;
  const info = await conn.getAccountInfo(domainKey);
  if (!info) return null;
  try {
    return decodeMailDomain(new Uint8Array(info.data)).domain;
  } catch {
    return null;
  }
}

/** Whether a send toward this recipient needs a stamp that the sender lacks. */
export async function needsPostage(
  conn: Connection,
  programId: string,
  sender: PublicKey,
  recipient: ResolvedRecipient,
): Promise<boolean> {
  if (sender.equals(recipient.wallet)) return false;
  const frombox = await getFrombox(conn, programId, fromHash(sender), recipient.wallet);
  if (frombox) return frombox.requiredPostage > 0n && frombox.stamps === 0n;
  return recipient.mailbox.defaultPostage > 0n;
}

/** Lamports per signature (Solana's base fee); one signature per send. */
export const SIGNATURE_FEE = 5000n;
/** A CIDv1 of a sha2-256 digest in base32 is always 59 characters. */
const CID_TEXT_LENGTH = 59;

/** What a send moves, itemized, and the wallet's balance before and after. */
export interface SendCost {
  /** The Email account's rent, returned to the sender when the message is deleted. */
  rent: bigint;
  bounty: bigint;
  fee: bigint;
  /** The priority fee (compute-unit limit × price); `feeQuote` is the price the send then pays. */
  priority: bigint;
  feeQuote: FeeQuote;
  total: bigint;
  balance: bigint;
  after: bigint;
}

export type Prepared =
  | {
      kind: 'ready';
      recipient: ResolvedRecipient;
      bounty: { lamports: bigint; expiresAt: bigint };
      cost: SendCost;
    }
  | {
      kind: 'held';
      recipient: ResolvedRecipient;
      bounty: { lamports: bigint; expiresAt: bigint };
      quote: StampQuote;
      cost: SendCost;
    };

/**
 * Everything checked and priced before anything is sealed, pinned or paid:
 * bounty terms, the recipient, no_ipfs, postage, and the SOL the send moves.
 */
export async function prepareSend(ctx: SendContext, terms: SendTerms): Promise<Prepared> {
  const { conn, programId, wallet } = ctx;
  const now = ctx.now ?? Date.now;
  (ctx.onStep ?? (() => {}))('resolve');
  const bounty = await bountyTerms(conn, terms, now());
  const recipient = await resolveRecipient(conn, programId, terms.to);
  if (recipient.mailbox.noIpfs) {
    throw new ComposeRefusal(
      'no_ipfs',
      `${recipient.input} keeps its mail off IPFS (no_ipfs), so a trustless send is not possible. Nothing was pinned. Send through a mail server instead.`,
    );
  }
  const balance = BigInt(await conn.getBalance(wallet.publicKey, 'confirmed'));
  const rent = rentExemptLamports(emailSize('x'.repeat(CID_TEXT_LENGTH)));
  // The SendMail as it will be built (its index read again then): same accounts, so the same limit and price.
  const sample = sendMailInstruction({
    programId,
    sender: wallet.publicKey,
    recipient: recipient.wallet,
    index: recipient.mailbox.mailCount,
    fromHash: fromHash(wallet.publicKey),
    cid: 'x'.repeat(CID_TEXT_LENGTH),
    bountyLamports: bounty.lamports,
    expiresAt: bounty.expiresAt,
  });
  const feeQuote = await quotePriorityFee(conn, [sample], wallet.publicKey);
  const total = rent + bounty.lamports + SIGNATURE_FEE + feeQuote.lamports;
  const cost: SendCost = {
    rent,
    bounty: bounty.lamports,
    fee: SIGNATURE_FEE,
    priority: feeQuote.lamports,
    feeQuote,
    total,
    balance,
    after: balance - total,
  };
  if (await needsPostage(conn, programId, wallet.publicKey, recipient)) {
    const quote = await fetchStampQuote(conn, programId, {
      buyer: wallet.publicKey,
      recipient: recipient.wallet,
      stamps: 1n,
    });
    return { kind: 'held', recipient, bounty, quote, cost };
  }
  if (balance < total) {
    throw new ComposeRefusal(
      'insufficient_funds',
      `Not enough SOL: this send needs ${formatSol(total)} SOL (account rent${bounty.lamports > 0n ? ', bounty' : ''}, fee and priority fee) and the wallet holds ${formatSol(balance)} SOL. Nothing was pinned or sent.`,
    );
  }
  return { kind: 'ready', recipient, bounty, cost };
}

/** The envelope addresses of a direct send: the wallet at its mailbox's domain (else the recipient's). */
export async function directEnvelope(
  conn: Connection,
  programId: string,
  sender: PublicKey,
  recipient: ResolvedRecipient,
): Promise<{ from: string; to: string; domain: string }> {
  const senderMailbox = await getMailbox(conn, programId, sender);
  const domain =
    (senderMailbox ? await domainName(conn, senderMailbox.domain) : null) ??
    (await domainName(conn, recipient.mailbox.domain)) ??
    'sealpost.invalid';
  const to = recipient.input.includes('@')
    ? recipient.input
    : `${recipient.input}@${recipient.domain ?? domain}`;
  return { from: `${sender.toBase58()}@${domain}`, to, domain };
}

/**
 * Seals `raw` to the recipient's key (its MailboxKey, else its wallet),
 * pins it and checks the pin service's CID against the sealed bytes.
 */
export async function sealAndPin(
  ctx: SendContext,
  p: {
    recipient: ResolvedRecipient;
    envelope: { from: string; to: string };
    raw: Uint8Array;
    pin: (bytes: Uint8Array) => Promise<string>;
  },
): Promise<{ cid: string; sealed: Uint8Array }> {
  const now = ctx.now ?? Date.now;
  const step = ctx.onStep ?? (() => {});
  step('seal');
  const key = await recipientSealKey(ctx.conn, ctx.programId, p.recipient.wallet);
  const { sealed, contentKey } = await sealMessage({
    envelope: { version: 1, from: p.envelope.from, to: p.envelope.to, receivedAt: now() },
    raw: p.raw,
    recipientPublicKey: key.publicKey,
  });
  contentKey.fill(0);
  step('pin');
  const cid = await p.pin(sealed);
  if ((await checkCid(cid, sealed)) !== 'match') {
    throw new ComposeRefusal(
      'pin_mismatch',
      `The pin service answered CID ${cid}, which is not the CID of the sealed message.`,
    );
  }
  return { cid, sealed };
}

/**
 * SendMail for the recipient's current mail_count. The Email PDA is indexed
 * by it, so a send that races another for the same index is refused
 * (InvalidPda/AlreadyExists): build again and retry.
 */
export async function buildSendMail(
  ctx: SendContext,
  p: {
    recipient: PublicKey;
    cid: string;
    bounty: { lamports: bigint; expiresAt: bigint };
    /** The parent's Email account, for a reply. */
    replyTo?: string | null;
  },
): Promise<{ ix: TransactionInstruction; emailAddress: string; index: bigint }> {
  const mailbox = await getMailbox(ctx.conn, ctx.programId, p.recipient);
  if (!mailbox) throw new Error(`the mailbox of ${p.recipient.toBase58()} disappeared`);
  const index = mailbox.mailCount;
  const ix = sendMailInstruction({
    programId: ctx.programId,
    sender: ctx.wallet.publicKey,
    recipient: p.recipient,
    index,
    fromHash: fromHash(ctx.wallet.publicKey),
    cid: p.cid,
    bountyLamports: p.bounty.lamports,
    expiresAt: p.bounty.expiresAt,
    replyToHash: p.replyTo ? replyToHash(p.replyTo) : undefined,
  });
  return { ix, emailAddress: toBase58(emailAddress(ctx.programId, p.recipient, index)[0]), index };
}
