// The trustless compose flow (reference "Trustless compose flow"): resolve
// the recipient and its key on chain; refuse no_ipfs mailboxes and born-
// expired bounties before anything is pinned; hold the draft and quote
// postage when a stamp is needed and none is bought; otherwise seal in the
// page, pin, sign SendMail and poll it to commitment.
import type { Connection, PublicKey } from '@solana/web3.js';
import { decodeMailDomain, rentExemptLamports } from '../../../chain/accounts/index.ts';
import { isZeroBytes, toBase58 } from '../../../chain/bytes.ts';
import { fetchStampQuote, getFrombox, getMailbox, type StampQuote } from '../../../chain/client.ts';
import { fromHash, replyToHash } from '../../../chain/hash.ts';
import { sendMailInstruction } from '../../../chain/instructions.ts';
import { emailAddress } from '../../../chain/pda.ts';
import { checkCid, recipientSealKey, sealMessage } from '../../../src/seal/index.ts';
import { buildMessage, newMessageId } from '../mail/build-message.ts';
import type { Wallet } from '../wallet/wallet.ts';
import { type ResolvedRecipient, resolveRecipient } from './recipient.ts';
import { type PollOptions, sendInstructions, TxFailedError } from './tx.ts';

export const LAMPORTS_PER_SOL = 1_000_000_000n;
export const DEFAULT_CLAIM_DAYS = 7;

export interface Draft {
  to: string;
  subject: string;
  body: string;
  /** SOL as typed; blank = a plain send. */
  bountySol: string;
  /** Days as typed; blank = the default 7. */
  claimDays: string;
  /** The parent of a reply: its Email account and, when known, its Message-ID. */
  replyTo: { email: string; messageId: string | null; references: string[] } | null;
}

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

export type ComposeResult =
  | { kind: 'sent'; emailAddress: string; signature: string; cid: string }
  | { kind: 'pending'; emailAddress: string; signature: string; cid: string }
  | { kind: 'held'; recipient: ResolvedRecipient; quote: StampQuote };

export interface ComposeDeps {
  conn: Connection;
  programId: string;
  wallet: Wallet;
  /** Pins sealed bytes; resolves to the CID the pin service reports. */
  pin: (bytes: Uint8Array) => Promise<string>;
  now?: () => number;
  random?: (n: number) => Uint8Array;
  poll?: PollOptions;
  /** Progress for the screen: 'resolve' | 'seal' | 'pin' | 'sign' | 'confirm'. */
  onStep?: (step: ComposeStep) => void;
}

export type ComposeStep = 'resolve' | 'seal' | 'pin' | 'sign' | 'confirm';

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
  const whole = lamports / LAMPORTS_PER_SOL;
  const frac = (lamports % LAMPORTS_PER_SOL).toString().padStart(9, '0').replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : `${whole}`;
}

async function chainNow(conn: Connection, fallback: number): Promise<number> {
  try {
    const t = await conn.getBlockTime(await conn.getSlot('confirmed'));
    if (t !== null) return t;
  } catch {
    // Some nodes prune block times; the local clock is the fallback.
  }
  return Math.floor(fallback / 1000);
}

/** Bounty lamports and expires_at, refusing a window that would be born expired. */
export async function bountyTerms(
  conn: Connection,
  draft: Draft,
  nowMs: number,
): Promise<{ lamports: bigint; expiresAt: bigint }> {
  const lamports = parseSol(draft.bountySol);
  if (lamports === null || lamports === 0n) return { lamports: 0n, expiresAt: 0n };
  const daysText = draft.claimDays.trim() === '' ? String(DEFAULT_CLAIM_DAYS) : draft.claimDays.trim();
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

async function domainName(conn: Connection, domainKey: PublicKey): Promise<string | null> {
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
export async function prepareSend(deps: ComposeDeps, draft: Draft): Promise<Prepared> {
  const { conn, programId, wallet } = deps;
  const now = deps.now ?? Date.now;
  (deps.onStep ?? (() => {}))('resolve');
  const bounty = await bountyTerms(conn, draft, now());
  const recipient = await resolveRecipient(conn, programId, draft.to);
  if (recipient.mailbox.noIpfs) {
    throw new ComposeRefusal(
      'no_ipfs',
      `${recipient.input} keeps its mail off IPFS (no_ipfs), so a trustless send is not possible. Nothing was pinned. Send through a mail server instead.`,
    );
  }
  const balance = BigInt(await conn.getBalance(wallet.publicKey, 'confirmed'));
  const rent = rentExemptLamports(198 + CID_TEXT_LENGTH);
  const total = rent + bounty.lamports + SIGNATURE_FEE;
  const cost: SendCost = {
    rent,
    bounty: bounty.lamports,
    fee: SIGNATURE_FEE,
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
      `Not enough SOL: this send needs ${formatSol(total)} SOL (account rent${bounty.lamports > 0n ? ', bounty' : ''} and fee) and the wallet holds ${formatSol(balance)} SOL. Nothing was pinned or sent.`,
    );
  }
  return { kind: 'ready', recipient, bounty, cost };
}

/** Seals, pins and sends a prepared draft. */
export async function executeSend(
  deps: ComposeDeps,
  draft: Draft,
  prepared: Extract<Prepared, { kind: 'ready' }>,
): Promise<ComposeResult> {
  const { conn, programId, wallet } = deps;
  const now = deps.now ?? Date.now;
  const random = deps.random ?? ((n: number) => crypto.getRandomValues(new Uint8Array(n)));
  const step = deps.onStep ?? (() => {});
  const { recipient, bounty } = prepared;
  const senderMailbox = await getMailbox(conn, programId, wallet.publicKey);
  const domain =
    (senderMailbox ? await domainName(conn, senderMailbox.domain) : null) ??
    (await domainName(conn, recipient.mailbox.domain)) ??
    'sealpost.invalid';
  const from = `${wallet.address}@${domain}`;
  const to = recipient.input.includes('@')
    ? recipient.input
    : `${recipient.input}@${recipient.domain ?? domain}`;
  const raw = buildMessage({
    from,
    to: [to],
    subject: draft.subject,
    text: draft.body,
    date: new Date(now()),
    messageId: newMessageId(domain, random),
    inReplyTo: draft.replyTo?.messageId ?? undefined,
    references: draft.replyTo?.messageId
      ? [...(draft.replyTo.references ?? []), draft.replyTo.messageId]
      : undefined,
  });
  step('seal');
  const key = await recipientSealKey(conn, programId, recipient.wallet);
  const { sealed, contentKey } = await sealMessage({
    envelope: { version: 1, from, to, receivedAt: now() },
    raw,
    recipientPublicKey: key.publicKey,
  });
  contentKey.fill(0);
  step('pin');
  const cid = await deps.pin(sealed);
  if ((await checkCid(cid, sealed)) !== 'match') {
    throw new ComposeRefusal(
      'pin_mismatch',
      `The pin service answered CID ${cid}, which is not the CID of the sealed message.`,
    );
  }

  // The Email PDA is indexed by mail_count: a send that races another one
  // for the same index is refused (InvalidPda/AlreadyExists) and retried.
  for (let attempt = 0; ; attempt++) {
    const mailbox = await getMailbox(conn, programId, recipient.wallet);
    if (!mailbox) throw new Error(`the mailbox of ${recipient.wallet.toBase58()} disappeared`);
    const index = mailbox.mailCount;
    const ix = sendMailInstruction({
      programId,
      sender: wallet.publicKey,
      recipient: recipient.wallet,
      index,
      fromHash: fromHash(wallet.publicKey),
      cid,
      bountyLamports: bounty.lamports,
      expiresAt: bounty.expiresAt,
      replyToHash: draft.replyTo ? replyToHash(draft.replyTo.email) : undefined,
    });
    const address = toBase58(emailAddress(programId, recipient.wallet, index)[0]);
    try {
      step('sign');
      const out = await sendInstructions(conn, wallet, [ix], {
        ...deps.poll,
        onSubmitted: () => step('confirm'),
      });
      return {
        kind: out.status === 'confirmed' ? 'sent' : 'pending',
        emailAddress: address,
        signature: out.signature,
        cid,
      };
    } catch (err) {
      const name = err instanceof TxFailedError ? err.mailError?.name : undefined;
      if ((name === 'InvalidPda' || name === 'AlreadyExists') && attempt < 3) continue;
      if (name === 'PostageRequired') {
        const quote = await fetchStampQuote(conn, programId, {
          buyer: wallet.publicKey,
          recipient: recipient.wallet,
          stamps: 1n,
        });
        return { kind: 'held', recipient, quote };
      }
      throw err;
    }
  }
}
