// The funds invariant of the mail program, per transaction (issue 29): every
// lamport a successful transaction moves is accounted for. Conservation: the
// accounts the transaction names (and its fee payer) hold, together, exactly
// the transaction fee less afterwards. Flow: who gained and who lost what is
// the documented flow of the instruction (docs/protocol.md "Rules", "Stamp
// prices", "Pin leases", the marketplaces' invariant tables, "Timelocks",
// "Sender attestations and reputation"), worked out here independently of the
// program from the accounts before the transaction and the instruction data;
// and the money the program's accounts record (a frombox's stamps and
// postage escrow, the postoffice's fees_collected, an Email's bounty, an
// AliasBid's amount, a listing's high bid, a reputation's spend) changes only
// as that flow says, and stays covered by the account's balance above rent.
// chain/program/host/world.ts runs it after every transaction of the program tests.
import { PublicKey } from '@solana/web3.js';
import { decodeAccount, type MailAccount, rentExemptLamports } from '../../client/accounts/index.ts';
import { decodeInstruction, type MailInstruction } from '../../client/instruction-data.ts';

/** One account's state as the runtime reports it; null (in a snapshot) when it does not exist. */
export interface FundsAccount {
  lamports: bigint;
  owner: PublicKey;
  data: Uint8Array;
}

/** Account states by base58 address. */
export type FundsSnapshot = ReadonlyMap<string, FundsAccount | null>;

/** What the checker reads of an instruction (a web3.js TransactionInstruction fits). */
export interface FundsInstruction {
  programId: PublicKey;
  keys: readonly { pubkey: PublicKey; isWritable: boolean }[];
  data: Uint8Array;
}

export interface FundsInput {
  instructions: readonly FundsInstruction[];
  /** Every account of fundsAccounts(instructions, feePayer), before and after the transaction. */
  before: FundsSnapshot;
  after: FundsSnapshot;
  /** The fee the runtime charged (RunResult.fee). */
  fee: bigint | number;
  feePayer: PublicKey | string;
  programId: PublicKey | string;
}

export interface FundsViolation {
  /** The instruction whose documented flow is broken; null for the transaction as a whole. */
  instruction: number | null;
  /** The instruction's kind, or 'transaction'. */
  kind: string;
  /** Base58 address, or 'all accounts' for conservation. */
  account: string;
  /** What the account is in the instruction (e.g. 'recipient wallet'). */
  role: string;
  /**
   * 'lamports': the balance change; 'conservation': the change of all balances
   * together; a money field's name ('stamps', 'feesCollected'...): its value
   * after; 'solvency': the lowest balance that covers rent and the recorded
   * money (actual: the balance); 'instruction': undecodable data.
   */
  what: string;
  expected: bigint;
  actual: bigint;
}

/** The Compute Budget program: its instructions move no lamports. */
export const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111';

/** The accounts to snapshot: every key the instructions name and the fee payer, once each. */
export function fundsAccounts(instructions: readonly FundsInstruction[], feePayer: PublicKey): PublicKey[] {
  const seen = new Map<string, PublicKey>([[feePayer.toBase58(), feePayer]]);
  for (const ix of instructions)
    for (const k of ix.keys) {
      const id = k.pubkey.toBase58();
      if (!seen.has(id)) seen.set(id, k.pubkey);
    }
  return [...seen.values()];
}

export function formatViolation(v: FundsViolation): string {
  const at = v.instruction === null ? 'transaction' : `instruction ${v.instruction} (${v.kind})`;
  const signed = (n: bigint) => (n >= 0n ? `+${n}` : `${n}`);
  const change = v.what === 'lamports' || v.what === 'conservation';
  const show = change ? signed : (n: bigint) => `${n}`;
  const what = v.what === 'solvency' ? 'balance at least' : v.what === 'lamports' ? 'lamports' : v.what;
  return (
    `${at}: ${v.account} (${v.role}): ${what} expected ${show(v.expected)}, actual ${show(v.actual)}` +
    (change ? ` (off by ${signed(v.actual - v.expected)})` : '')
  );
}

const rent = (size: number | bigint): bigint => rentExemptLamports(Number(size));
const text = new TextEncoder();
const b58 = (k: PublicKey | string): string => (typeof k === 'string' ? k : k.toBase58());

type Decoded<K extends MailAccount['kind']> = Extract<MailAccount, { kind: K }>;

/** The money fields of each account kind, and what of the balance above rent they must cover. */
function moneyOf(a: MailAccount): { fields: Record<string, bigint>; reserve: bigint } | null {
  switch (a.kind) {
    case 'Frombox':
      return { fields: { stamps: a.stamps, postageEscrow: a.postageEscrow }, reserve: a.postageEscrow };
    case 'Postoffice':
      return { fields: { feesCollected: a.feesCollected }, reserve: a.feesCollected };
    case 'Email':
      return { fields: { bountyLamports: a.bountyLamports }, reserve: a.bountyLamports };
    case 'AliasBid':
      return { fields: { amountLamports: a.amountLamports }, reserve: a.amountLamports };
    case 'AliasListing':
      return { fields: { highBidLamports: a.highBidLamports }, reserve: 0n };
    case 'SenderReputation':
      return { fields: { cumulativeSpendLamports: a.cumulativeSpendLamports }, reserve: 0n };
    default:
      return null;
  }
}

/** Thrown inside a model when an account it reads is not what a successful instruction implies. */
class Unreadable extends Error {}

/** The accounts of one transaction, before and after, as the models read them. */
class State {
  private readonly decoded = new Map<string, MailAccount | null>();
  constructor(
    readonly accounts: FundsSnapshot,
    readonly program: PublicKey,
  ) {}

  lamports(key: string): bigint {
    return this.accounts.get(key)?.lamports ?? 0n;
  }

  /** No record: a System-owned account without data (lamports sent early do not count), as the program reads it. */
  absent(key: string): boolean {
    const a = this.accounts.get(key);
    return !a || (a.data.length === 0 && a.owner.equals(PublicKey.default));
  }

  /** The program's account at `key`, decoded, or null (absent, another owner, undecodable). */
  account(key: string): MailAccount | null {
    if (this.decoded.has(key)) return this.decoded.get(key) ?? null;
    const a = this.accounts.get(key);
    let out: MailAccount | null = null;
    if (a && a.data.length > 0 && a.owner.equals(this.program)) {
      try {
        out = decodeAccount(a.data);
      } catch {
        out = null;
      }
    }
    this.decoded.set(key, out);
    return out;
  }

  is<K extends MailAccount['kind']>(key: string, kind: K): Decoded<K> | null {
    const a = this.account(key);
    return a?.kind === kind ? (a as Decoded<K>) : null;
  }

  must<K extends MailAccount['kind']>(key: string, kind: K, role: string): Decoded<K> {
    const a = this.is(key, kind);
    if (!a) throw new Unreadable(`${role} ${key} is not a ${kind}`);
    return a;
  }
}

/** Expected balance changes (built from transfers only, so they always sum to zero) and money-field values. */
class Flow {
  readonly deltas = new Map<string, bigint>();
  readonly roles = new Map<string, string[]>();
  /** Expected money-field values after, per account; accounts not listed keep theirs. */
  readonly fields = new Map<string, Record<string, bigint>>();
  readonly owners = new Map<string, number>();

  role(key: string, role: string, instruction: number): void {
    const list = this.roles.get(key) ?? [];
    if (!list.includes(role)) list.push(role);
    this.roles.set(key, list);
    if (!this.owners.has(key)) this.owners.set(key, instruction);
  }

  move(from: string, to: string, amount: bigint): void {
    if (amount === 0n || from === to) return;
    this.deltas.set(from, (this.deltas.get(from) ?? 0n) - amount);
    this.deltas.set(to, (this.deltas.get(to) ?? 0n) + amount);
  }

  expect(key: string, values: Record<string, bigint>): void {
    this.fields.set(key, { ...this.fields.get(key), ...values });
  }
}

/** One instruction's accounts by position, with their roles recorded in the flow. */
class Accounts {
  constructor(
    private readonly ix: FundsInstruction,
    private readonly flow: Flow,
    private readonly index: number,
  ) {}

  get length(): number {
    return this.ix.keys.length;
  }

  /** Account `i` without giving it a role yet. */
  peek(i: number): string {
    const k = this.ix.keys[i];
    if (!k) throw new Unreadable(`no account ${i}`);
    return k.pubkey.toBase58();
  }

  at(i: number, role: string): string {
    const k = this.ix.keys[i];
    if (!k) throw new Unreadable(`no account ${i} (${role})`);
    const key = k.pubkey.toBase58();
    this.flow.role(key, role, this.index);
    return key;
  }

  /** A key read from an account's data (a holder, a rent payer...): named by the instruction or not. */
  named(key: PublicKey, role: string): string {
    const id = key.toBase58();
    this.flow.role(id, role, this.index);
    return id;
  }
}

/**
 * The documented flow of one instruction of the mail program, from the state
 * before it (`s`) and its data. Every model names the accounts by their
 * roles; an account the instruction names but no rule pays or charges must
 * not change.
 */
function model(m: MailInstruction, k: Accounts, s: State, f: Flow): void {
  switch (m.kind) {
    // ---- rent in, rent out -------------------------------------------------
    case 'InitPostoffice': {
      const admin = k.at(0, 'admin (pays rent)');
      const po = k.at(1, 'postoffice');
      k.at(3, 'program data');
      k.at(4, 'upgrade authority');
      f.move(admin, po, rent(186));
      f.expect(po, { feesCollected: 0n });
      return;
    }
    case 'CreateMailbox':
      f.move(k.at(0, 'payer'), k.at(2, 'mailbox'), rent(83));
      return;
    case 'CreateDomain':
      f.move(
        k.at(0, 'delegate (pays rent)'),
        k.at(2, 'mail domain'),
        rent(103 + text.encode(m.domain).length),
      );
      return;
    case 'PublishKey': {
      const owner = k.at(0, 'owner');
      const key = k.at(2, 'mailbox key');
      if (s.absent(key)) f.move(owner, key, rent(66));
      return;
    }
    case 'CreateAlias':
      f.move(k.at(0, 'owner'), k.at(2, 'alias'), rent(98));
      return;
    case 'CreateFrombox': {
      const fb = k.at(2, 'frombox');
      f.move(k.at(0, 'owner'), fb, rent(91));
      f.expect(fb, { stamps: 0n, postageEscrow: 0n });
      return;
    }
    case 'CreatePinLease': {
      const holder = k.at(0, 'holder (pays rent and fee)');
      f.move(holder, k.at(2, 'pin lease'), rent(122));
      f.move(holder, k.at(1, 'operator (receives the fee)'), m.feeLamports);
      return;
    }
    case 'PublishBeacon': {
      const beacon = k.at(1, 'beacon');
      if (s.absent(beacon)) f.move(k.at(0, 'owner'), beacon, rent(155));
      return;
    }
    case 'RequestMailboxClose':
      f.move(k.at(0, 'owner'), k.at(2, 'pending close'), rent(42));
      return;
    case 'RequestDeactivation':
      f.move(k.at(0, 'authority'), k.at(2, 'pending deactivation'), rent(42));
      return;
    case 'RequestReclaim':
      k.at(1, 'new authority');
      f.move(k.at(0, 'delegate (pays rent)'), k.at(4, 'pending reclaim'), rent(106));
      return;
    case 'AttestSender':
      k.at(0, 'authority');
      f.move(k.at(1, 'payer'), k.at(3, 'attestation'), rent(138));
      return;
    case 'SetRecipientRule': {
      const rule = k.at(2, 'recipient rule');
      if (s.absent(rule)) f.move(k.at(0, 'owner'), rule, rent(50));
      return;
    }
    case 'ListAlias':
      k.at(1, 'alias');
      f.move(k.at(0, 'holder (pays rent)'), k.at(2, 'alias listing'), rent(139));
      return;
    case 'OfferAlias':
      k.at(1, 'alias');
      f.move(k.at(0, 'holder (pays rent)'), k.at(2, 'alias escrow'), rent(122));
      return;
    case 'ListDomain':
      k.at(1, 'mail domain');
      f.move(k.at(0, 'holder (pays rent)'), k.at(2, 'domain listing'), rent(122));
      return;

    // ---- closes: the whole balance to whoever the rule names ----------------
    case 'RemoveKey': {
      const key = k.at(1, 'mailbox key');
      f.move(key, k.at(0, 'owner'), s.lamports(key));
      return;
    }
    case 'DeleteMail': {
      k.at(0, 'signer');
      const em = k.at(1, 'email');
      const email = s.must(em, 'Email', 'email');
      k.at(2, 'rent payer account');
      f.move(em, k.named(email.rentPayer, "the email's rent_payer"), s.lamports(em));
      return;
    }
    case 'ClosePinLease': {
      const lease = k.at(1, 'pin lease');
      k.at(0, 'holder');
      f.move(
        lease,
        k.named(s.must(lease, 'PinLease', 'pin lease').holder, "the lease's holder"),
        s.lamports(lease),
      );
      return;
    }
    case 'CloseBeacon': {
      const beacon = k.at(1, 'beacon');
      f.move(beacon, k.at(0, 'owner'), s.lamports(beacon));
      return;
    }
    case 'CancelMailboxClose': {
      const pc = k.at(1, 'pending close');
      f.move(pc, k.at(0, 'owner'), s.lamports(pc));
      return;
    }
    case 'CloseMailbox': {
      const owner = k.at(0, 'owner');
      const mb = k.at(1, 'mailbox');
      const pc = k.at(2, 'pending close');
      f.move(mb, owner, s.lamports(mb));
      f.move(pc, owner, s.lamports(pc));
      return;
    }
    case 'CancelDeactivation': {
      const pd = k.at(2, 'pending deactivation');
      f.move(pd, k.at(0, 'authority'), s.lamports(pd));
      return;
    }
    case 'CancelReclaim': {
      k.at(0, 'signer');
      const pr = k.at(2, 'pending reclaim');
      const payer = k.named(s.must(pr, 'PendingReclaim', 'pending reclaim').payer, "the reclaim's payer");
      k.at(3, 'payer account');
      f.move(pr, payer, s.lamports(pr));
      return;
    }
    case 'SettleDomainTimelock': {
      const dom = k.at(0, 'mail domain');
      const p = k.at(1, 'pending record');
      k.at(2, 'rent_to account');
      const reclaim = s.is(p, 'PendingReclaim');
      const to = reclaim
        ? k.named(reclaim.payer, "the reclaim's payer")
        : k.named(s.must(dom, 'MailDomain', 'mail domain').authority, "the domain's authority");
      if (!reclaim) s.must(p, 'PendingDeactivation', 'pending record');
      f.move(p, to, s.lamports(p));
      return;
    }
    case 'RevokeAttestation': {
      k.at(0, 'signer');
      const att = k.at(1, 'attestation');
      const payer = k.named(
        s.must(att, 'SenderAttestation', 'attestation').rentPayer,
        "the record's rent_payer",
      );
      k.at(2, 'rent payer account');
      f.move(att, payer, s.lamports(att));
      return;
    }
    case 'CloseRecipientRule': {
      const rule = k.at(1, 'recipient rule');
      f.move(rule, k.at(0, 'owner'), s.lamports(rule));
      return;
    }

    // ---- mail ----------------------------------------------------------------
    case 'SendMail':
      sendMail(m, k, s, f);
      return;
    case 'ClaimBounty': {
      const em = k.at(1, 'email');
      const email = s.must(em, 'Email', 'email');
      k.at(0, 'recipient');
      f.move(em, k.named(email.recipient, "the email's recipient"), email.bountyLamports);
      f.expect(em, { bountyLamports: 0n });
      return;
    }

    // ---- stamps ----------------------------------------------------------------
    case 'AddStamps':
    case 'BuyStamps':
    case 'TopUpStamps': {
      const buyer = k.at(0, 'buyer');
      const mbKey = k.at(1, 'recipient mailbox');
      const fb = k.at(2, 'frombox');
      const poKey = k.at(3, 'postoffice');
      const mb = s.must(mbKey, 'Mailbox', 'recipient mailbox');
      const po = s.must(poKey, 'Postoffice', 'postoffice');
      const box = s.is(fb, 'Frombox');
      const postage = box ? box.requiredPostage : mb.defaultPostage;
      const fee = mb.owner.toBase58() === buyer ? 0n : po.stampFeeLamports;
      const n = m.stamps;
      const held = (postage + po.settlementSurchargeLamports) * n;
      f.move(buyer, fb, box ? held : held + rent(91));
      f.move(buyer, poKey, fee * n);
      f.expect(poKey, { feesCollected: po.feesCollected + fee * n });
      f.expect(fb, {
        stamps: (box?.stamps ?? 0n) + n,
        postageEscrow: (box?.postageEscrow ?? 0n) + postage * n,
      });
      return;
    }
    case 'ReclaimFromboxStamps': {
      const fb = k.at(2, 'frombox');
      const size = s.accounts.get(fb)?.data.length ?? 0;
      const above = s.lamports(fb) - rent(size);
      f.move(fb, k.at(0, 'sender wallet'), above > 0n ? above : 0n);
      f.expect(fb, { stamps: 0n, postageEscrow: 0n });
      return;
    }

    // ---- the alias marketplace -------------------------------------------------
    case 'BidAlias': {
      const bidder = k.at(0, 'bidder');
      const ls = k.at(1, 'alias listing');
      const bid = k.at(2, 'alias bid');
      const listing = s.must(ls, 'AliasListing', 'alias listing');
      const high = listing.highBidLamports;
      const raise = high > 0n && listing.highBidder.toBase58() === bidder;
      f.move(bidder, bid, raise ? m.amountLamports - high : rent(82) + m.amountLamports);
      if (high > 0n && !raise) {
        const prev = k.at(4, 'outbid alias bid');
        k.at(5, 'outbid wallet account');
        f.move(prev, k.named(listing.highBidder, 'the outbid high bidder'), s.lamports(prev));
      }
      f.expect(bid, { amountLamports: m.amountLamports });
      f.expect(ls, { highBidLamports: m.amountLamports });
      return;
    }
    case 'BuyAlias': {
      const buyer = k.at(0, 'buyer');
      const ls = k.at(1, 'alias listing');
      k.at(2, 'alias');
      const listing = s.must(ls, 'AliasListing', 'alias listing');
      const holder = k.named(listing.holder, "the listing's holder");
      f.move(buyer, holder, listing.priceLamports);
      f.move(ls, holder, s.lamports(ls));
      return;
    }
    case 'SettleAuction': {
      const ls = k.at(0, 'alias listing');
      k.at(1, 'alias');
      const listing = s.must(ls, 'AliasListing', 'alias listing');
      const holder = k.named(listing.holder, "the listing's holder");
      const high = listing.highBidLamports;
      if (high > 0n) {
        const bid = k.at(3, "the high bidder's alias bid");
        k.at(4, 'bidder account');
        f.move(bid, holder, high);
        f.move(bid, k.named(listing.highBidder, 'the high bidder'), s.lamports(bid) - high);
      }
      f.move(ls, holder, s.lamports(ls));
      return;
    }
    case 'CancelListing': {
      const ls = k.at(1, 'alias listing');
      k.at(2, 'alias');
      f.move(
        ls,
        k.named(s.must(ls, 'AliasListing', 'alias listing').holder, "the listing's holder"),
        s.lamports(ls),
      );
      return;
    }
    case 'AcceptAlias': {
      const recipient = k.at(0, 'recipient (pays the fee)');
      const es = k.at(1, 'alias escrow');
      k.at(2, 'alias');
      const escrow = s.must(es, 'AliasEscrow', 'alias escrow');
      const holder = k.named(escrow.holder, "the escrow's holder");
      f.move(recipient, holder, escrow.feeLamports);
      f.move(es, holder, s.lamports(es));
      return;
    }
    case 'ReclaimAlias': {
      k.at(0, 'signer');
      const es = k.at(1, 'alias escrow');
      k.at(2, 'alias');
      f.move(
        es,
        k.named(s.must(es, 'AliasEscrow', 'alias escrow').holder, "the escrow's holder"),
        s.lamports(es),
      );
      return;
    }

    // ---- the domain marketplace --------------------------------------------------
    case 'BuyDomain': {
      const buyer = k.at(0, 'buyer');
      k.at(1, 'mail domain');
      const ls = k.at(2, 'domain listing');
      const listing = s.must(ls, 'DomainListing', 'domain listing');
      const holder = k.named(listing.holder, "the listing's holder");
      f.move(buyer, holder, listing.priceLamports);
      f.move(ls, holder, s.lamports(ls));
      return;
    }
    case 'CancelDomainListing': {
      k.at(0, 'signer');
      k.at(1, 'mail domain');
      const ls = k.at(2, 'domain listing');
      const holder = k.named(s.must(ls, 'DomainListing', 'domain listing').holder, "the listing's holder");
      f.move(ls, holder, s.lamports(ls));
      return;
    }

    // ---- the postoffice's admin ----------------------------------------------------
    case 'WithdrawFees': {
      const po = k.at(1, 'postoffice');
      const office = s.must(po, 'Postoffice', 'postoffice');
      f.move(po, k.at(2, 'to'), m.amountLamports);
      f.expect(po, { feesCollected: office.feesCollected - m.amountLamports });
      return;
    }

    // ---- data only: nothing moves ----------------------------------------------------
    case 'SetMailboxFlags':
    case 'SetMailboxDomain':
    case 'UpdateFrombox':
    case 'UpdatePostoffice':
    case 'ProposeAdmin':
    case 'AcceptAdmin':
      return;
    default: {
      const never: never = m;
      throw new Unreadable(`no funds model for ${(never as MailInstruction).kind}`);
    }
  }
}

/**
 * SendMail (docs/protocol.md "Rules", "Sender attestations and reputation",
 * issue 29's stamp spend): the signer pays the Email's rent and bounty into
 * it; a spent stamp moves floor(postage_escrow / stamps) from the frombox to
 * the recipient wallet and floor((frombox balance - rent - postage_escrow) /
 * stamps) to the signer; a recipient rule the signer's reputation reaches
 * replaces the stamp by its postage, signer -> recipient; the postage paid
 * (share or rule postage) is added to the signer's reputation when it passed
 * one, whose rent it pays on first use.
 */
function sendMail(m: Extract<MailInstruction, { kind: 'SendMail' }>, k: Accounts, s: State, f: Flow): void {
  const sender = k.at(0, 'signer');
  const mbKey = k.at(1, 'recipient mailbox');
  const em = k.at(2, 'email');
  const fb = k.at(3, 'frombox');
  const wallet = k.at(4, 'recipient wallet');
  k.at(5, 'postoffice');
  const mb = s.must(mbKey, 'Mailbox', 'recipient mailbox');
  const recipient = mb.owner.toBase58();
  if (wallet !== recipient)
    throw new Unreadable(`recipient wallet ${wallet} is not the mailbox owner ${recipient}`);
  // An eighth account that is a MailDomain is the relayed form; otherwise it is the signer's reputation.
  const relayed = k.length === 8 && s.is(k.peek(7), 'MailDomain') !== null;
  if (relayed) k.at(7, 'mail domain');
  const rep = k.length >= 8 && !relayed ? k.at(7, 'sender reputation') : null;
  const rule = k.length === 9 ? k.at(8, 'recipient rule') : null;

  const box = s.is(fb, 'Frombox');
  let free = sender === recipient || (box ? box.requiredPostage === 0n : mb.defaultPostage === 0n);
  let byRule = false;
  let rulePostage = 0n;
  const record = rep ? s.is(rep, 'SenderReputation') : null;
  if (!free && rule) {
    const r = s.is(rule, 'RecipientRule');
    if (r && (record?.cumulativeSpendLamports ?? 0n) >= r.minReputationLamports) {
      byRule = true;
      rulePostage = r.postageLamports;
      if (rulePostage === 0n) free = true;
    }
  }
  const stamp = !free && !byRule;
  let credited = 0n;
  if (stamp) {
    if (!box || box.stamps === 0n) throw new Unreadable(`a stamped send without stamps in frombox ${fb}`);
    const size = s.accounts.get(fb)?.data.length ?? 0;
    const share = box.postageEscrow / box.stamps;
    const surcharge = (s.lamports(fb) - rent(size) - box.postageEscrow) / box.stamps;
    f.move(fb, wallet, share);
    f.move(fb, sender, surcharge);
    f.expect(fb, { stamps: box.stamps - 1n, postageEscrow: box.postageEscrow - share });
    credited = share;
  } else if (byRule) {
    f.move(sender, wallet, rulePostage);
    credited = rulePostage;
  }
  f.move(sender, em, rent(198 + text.encode(m.cid).length) + m.bountyLamports);
  f.expect(em, { bountyLamports: m.bountyLamports });
  if (rep && credited > 0n) {
    if (s.absent(rep)) f.move(sender, rep, rent(50));
    f.expect(rep, { cumulativeSpendLamports: (record?.cumulativeSpendLamports ?? 0n) + credited });
  }
}

/**
 * Instructions whose flows can be checked one by one within a transaction:
 * none writes an account another one names, so each saw the state before the
 * transaction. Returns null otherwise.
 */
function independent(ixs: readonly FundsInstruction[], programId: string): number[] | null {
  const mail: number[] = [];
  for (const [i, ix] of ixs.entries()) {
    const program = ix.programId.toBase58();
    if (program === programId) mail.push(i);
    else if (program !== COMPUTE_BUDGET_PROGRAM) return null;
  }
  if (mail.length <= 1) return mail;
  const named = mail.map((i) => new Set(ixs[i]?.keys.map((k) => k.pubkey.toBase58())));
  for (const [a, i] of mail.entries())
    for (const k of ixs[i]?.keys ?? []) {
      if (!k.isWritable) continue;
      const id = k.pubkey.toBase58();
      if (named.some((set, b) => b !== a && set.has(id))) return null;
    }
  return mail;
}

/**
 * The violations of the funds invariant by one successful transaction
 * (empty when it holds). Conservation is checked for every transaction; the
 * documented flow when its instructions are the mail program's (and Compute
 * Budget ones) and independent of each other (above) — in particular for
 * every single-instruction transaction. A transaction of dependent
 * instructions (e.g. PublishKey, RemoveKey, PublishKey of one key) or with
 * another program's instructions gets the conservation check alone.
 */
export function checkFunds(input: FundsInput): FundsViolation[] {
  const programId = b58(input.programId);
  const feePayer = b58(input.feePayer);
  const fee = BigInt(input.fee);
  const out: FundsViolation[] = [];
  const keys = new Set<string>([feePayer]);
  for (const ix of input.instructions) for (const k of ix.keys) keys.add(k.pubkey.toBase58());

  let sum = 0n;
  const actual = new Map<string, bigint>();
  for (const key of keys) {
    if (!input.before.has(key) || !input.after.has(key)) {
      out.push({
        instruction: null,
        kind: 'transaction',
        account: key,
        role: 'not in the snapshots',
        what: 'lamports',
        expected: 0n,
        actual: 0n,
      });
      continue;
    }
    const d = (input.after.get(key)?.lamports ?? 0n) - (input.before.get(key)?.lamports ?? 0n);
    actual.set(key, d);
    sum += d;
  }
  if (sum !== -fee)
    out.push({
      instruction: null,
      kind: 'transaction',
      account: 'all accounts',
      role: 'the fee leaves, nothing else appears or vanishes',
      what: 'conservation',
      expected: -fee,
      actual: sum,
    });

  const checked = independent(input.instructions, programId);
  if (!checked) return out;
  const program = new PublicKey(programId);
  const before = new State(input.before, program);
  const after = new State(input.after, program);
  const flow = new Flow();
  const kinds = new Map<number, string>();
  flow.role(feePayer, 'fee payer', -1);
  flow.deltas.set(feePayer, -fee);
  for (const i of checked) {
    const ix = input.instructions[i] as FundsInstruction;
    let m: MailInstruction;
    try {
      m = decodeInstruction(ix.data);
    } catch (e) {
      const role = `undecodable data: ${(e as Error).message}`;
      out.push({
        instruction: i,
        kind: 'unknown',
        account: programId,
        role,
        what: 'instruction',
        expected: 0n,
        actual: 0n,
      });
      return out;
    }
    kinds.set(i, m.kind);
    try {
      model(m, new Accounts(ix, flow, i), before, flow);
    } catch (e) {
      if (!(e instanceof Unreadable)) throw e;
      out.push({
        instruction: i,
        kind: m.kind,
        account: programId,
        role: `the state before does not fit a successful ${m.kind}: ${e.message}`,
        what: 'instruction',
        expected: 0n,
        actual: 0n,
      });
      return out;
    }
  }
  const only = checked.length === 1 ? (checked[0] as number) : null;
  const whose = (key: string): { instruction: number | null; kind: string } => {
    const i = flow.owners.get(key);
    const at = i === undefined || i < 0 ? only : i;
    return { instruction: at, kind: at === null ? 'transaction' : (kinds.get(at) ?? 'transaction') };
  };
  const roleOf = (key: string) => flow.roles.get(key)?.join(', ') ?? 'named, moves nothing';

  // Balances: every named account and every account a rule pays.
  for (const key of new Set([...keys, ...flow.deltas.keys()])) {
    const expected = flow.deltas.get(key) ?? 0n;
    const got = actual.get(key) ?? 0n;
    if (got !== expected)
      out.push({ ...whose(key), account: key, role: roleOf(key), what: 'lamports', expected, actual: got });
  }

  // Money fields and solvency of the program's accounts.
  for (const key of keys) {
    const a = after.account(key);
    const b = before.account(key);
    const moneyAfter = a ? moneyOf(a) : null;
    if (!a || !moneyAfter) continue;
    const moneyBefore = b?.kind === a.kind ? moneyOf(b) : null;
    const wanted = flow.fields.get(key) ?? {};
    for (const [field, value] of Object.entries(moneyAfter.fields)) {
      const expected = wanted[field] ?? moneyBefore?.fields[field] ?? 0n;
      if (value !== expected)
        out.push({
          ...whose(key),
          account: key,
          role: `${a.kind}, ${roleOf(key)}`,
          what: field,
          expected,
          actual: value,
        });
    }
    const size = input.after.get(key)?.data.length ?? 0;
    const floor = rent(size) + moneyAfter.reserve;
    const held = input.after.get(key)?.lamports ?? 0n;
    const heldBefore = input.before.get(key)?.lamports ?? 0n;
    const sizeBefore = input.before.get(key)?.data.length ?? 0;
    const solventBefore = !moneyBefore || heldBefore >= rent(sizeBefore) + moneyBefore.reserve;
    if (held < floor && solventBefore)
      out.push({
        ...whose(key),
        account: key,
        role: `${a.kind}: rent + the money it records`,
        what: 'solvency',
        expected: floor,
        actual: held,
      });
  }
  return out;
}
