// A held draft's prepay card is bound to what it quoted: the draft's terms
// as typed (To, bounty amount, claim window), the wallet they resolved to,
// the bounty and its expiry, and the stamp's price. Before any SOL moves, the
// card's Buy compares the draft as it stands and a fresh chain read with
// this snapshot; any difference re-quotes and asks again instead of buying.
import { DEFAULT_CLAIM_DAYS, type Draft, formatSol, type Prepared, parseSol } from './compose.ts';
import { RepricedError } from './prepay.ts';

export type HeldPrepared = Extract<Prepared, { kind: 'held' }>;
export type DraftTerms = Pick<Draft, 'to' | 'bountySol' | 'claimDays'>;

export interface QuoteSnapshot {
  /** The terms as typed when the card was quoted. */
  terms: DraftTerms;
  /** The recipient as typed and the wallet it resolved to (base58). */
  label: string;
  wallet: string;
  bountyLamports: bigint;
  /** Unix seconds; 0 without a bounty. */
  expiresAt: bigint;
  /** The card's "Per stamp" (postage + surcharge + fee) and the frombox rent it included. */
  perStamp: bigint;
  rent: bigint;
}

export function quoteSnapshot(terms: DraftTerms, p: HeldPrepared): QuoteSnapshot {
  return {
    terms: { to: terms.to, bountySol: terms.bountySol, claimDays: terms.claimDays },
    label: p.recipient.input,
    wallet: p.recipient.wallet.toBase58(),
    bountyLamports: p.bounty.lamports,
    expiresAt: p.bounty.expiresAt,
    perStamp: p.quote.perStamp,
    rent: p.quote.rent,
  };
}

const shortAddress = (a: string) => (a.length > 12 ? `${a.slice(0, 4)}…${a.slice(-4)}` : a);

/** The bounty as lamports, or the trimmed text when it does not parse (so any edit counts). */
function bountyKey(text: string): string {
  try {
    return String(parseSol(text) ?? 0n);
  } catch {
    return `text:${text.trim()}`;
  }
}

function daysKey(text: string): string {
  const t = text.trim() === '' ? String(DEFAULT_CLAIM_DAYS) : text.trim();
  const n = Number(t);
  return Number.isFinite(n) ? String(n) : `text:${t}`;
}

const shown = (text: string, blank: string) => (text.trim() === '' ? blank : `"${text.trim()}"`);

/** What changed in the draft's terms since the quote, in words; empty when nothing did. */
export function draftChanges(snap: QuoteSnapshot, now: DraftTerms): string[] {
  const was = snap.terms;
  const changes: string[] = [];
  if (was.to.trim() !== now.to.trim()) {
    changes.push(`To (${shown(was.to, 'blank')} → ${shown(now.to, 'blank')})`);
  }
  const bountyWas = bountyKey(was.bountySol);
  const bountyNow = bountyKey(now.bountySol);
  if (bountyWas !== bountyNow) {
    changes.push(`the bounty (${shown(was.bountySol, 'none')} → ${shown(now.bountySol, 'none')} SOL)`);
  }
  // The claim window matters only with a bounty.
  if (bountyNow !== '0' && bountyWas === bountyNow && daysKey(was.claimDays) !== daysKey(now.claimDays)) {
    changes.push(
      `the bounty's claim window (${shown(was.claimDays, `${DEFAULT_CLAIM_DAYS}`)} → ${shown(now.claimDays, `${DEFAULT_CLAIM_DAYS}`)} days)`,
    );
  }
  return changes;
}

const AGAIN = 'Nothing was bought. Check the new quote and confirm again.';

/** The notice shown with the new quote when the draft changed under the card. */
export function changedNotice(changes: string[]): string {
  return `The draft changed after the postage quote: ${changes.join(', ')}. ${AGAIN}`;
}

/**
 * Why a fresh preparation of the same terms no longer matches the card
 * (the recipient now resolves elsewhere, postage is no longer needed, the
 * price or the rent changed), or null when the card still holds.
 */
export function freshDifference(snap: QuoteSnapshot, fresh: Prepared): string | null {
  const wallet = fresh.recipient.wallet.toBase58();
  if (wallet !== snap.wallet) {
    return `${snap.label} now resolves to wallet ${shortAddress(wallet)}, not ${shortAddress(snap.wallet)} as the quote said. ${AGAIN}`;
  }
  if (fresh.bounty.lamports !== snap.bountyLamports) {
    return `The bounty is now ${formatSol(fresh.bounty.lamports)} SOL, not ${formatSol(snap.bountyLamports)} SOL as quoted. ${AGAIN}`;
  }
  if (fresh.kind === 'ready') {
    return `${snap.label} no longer asks you for postage, so no stamp is needed. Nothing was bought. Check the send and confirm it.`;
  }
  if (fresh.quote.perStamp !== snap.perStamp) {
    return new RepricedError(snap.perStamp, fresh.quote.perStamp).message;
  }
  if (fresh.quote.rent !== snap.rent) {
    return `The stamp account's rent changed to ${formatSol(fresh.quote.rent)} SOL (quoted ${formatSol(snap.rent)} SOL). ${AGAIN}`;
  }
  return null;
}
