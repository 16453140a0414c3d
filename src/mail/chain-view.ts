// The MX's read-only view of the chain: mailboxes, delegated keys, fromboxes,
// aliases, domains (by name or by a mailbox's `domain` account, and whether
// one is listed for sale) and pending mailbox closes. RCPT handling must not be bound by RPC latency or cost, so:
// - lookups asked for in the same turn of the event loop (every session's
//   RCPTs of that moment, and the pipeline's own reads) go out as one
//   getMultipleAccounts through chain/client/rpc.ts's lean reader, which takes
//   the node's JSON as it is instead of web3.js's validated objects;
// - answers are kept for a while: an account that exists and lets mail
//   through for `ttlMs`, anything else (no account, a refusing record, an
//   alias's wallet) for the shorter `refusalTtlMs`.
// The chain stays the final arbiter: the pipeline's SendMail re-checks every
// rule, so a stale answer that lets mail through only delays a refusal (the
// message is bounced); a refusing answer is kept briefly because it is the
// MX's own final word (docs/inbound.md "Chain lookups").
import type { Connection, PublicKey } from '@solana/web3.js';
import {
  aliasAddress,
  decodeAlias,
  decodeFrombox,
  decodeMailbox,
  decodeMailboxKey,
  decodeMailDomain,
  decodePendingMailboxClose,
  domainAddress,
  type Frombox,
  fromboxAddress,
  isDomainListed,
  type Mailbox,
  type MailboxKey,
  type MailDomain,
  mailboxAddress,
  mailboxKeyAddress,
  normalizeAlias,
  normalizeDomain,
  type PendingMailboxClose,
  pendingCloseAddress,
} from '../../chain/client/index.ts';
import { hasNoDomain, relayDomainOf } from '../../chain/client/relay.ts';
import { readAccounts } from '../../chain/client/rpc.ts';
import type { SmtpConfig } from '../core/config/types.ts';

/** How long an answer that lets mail through is reused, by default. */
export const CHAIN_CACHE_MS = 30_000;
/** How long any other answer (absent, refusing, an alias's wallet) is reused, by default. */
export const CHAIN_REFUSAL_CACHE_MS = 5_000;
/** Answers kept at most, by default (about 2 KB each with its decoded record: some 40 MB). */
export const CHAIN_CACHE_ENTRIES = 20_000;

export interface ChainViewOptions {
  connection: Connection;
  programId: string;
  /** How long an account that exists and lets mail through is reused; default 30 s. 0: never. */
  ttlMs?: number;
  /**
   * How long other answers are reused: no account, a record that refuses
   * mail, a stamp count, an alias's wallet, a MailboxKey, a MailDomain.
   * Default 5 s, never longer than `ttlMs`.
   */
  refusalTtlMs?: number;
  /** Answers kept at most; the oldest go first. Default 20,000. */
  maxEntries?: number;
  /**
   * The server's local domains (`[smtp] local_domains`): a Mailbox of none of
   * them takes no relayed mail from here, so it is kept the shorter time (a
   * move into one shows soon). Absent: only a Mailbox with no domain is.
   */
  localDomains?: readonly string[];
  now?: () => number;
}

/** The cache settings of `[smtp]` (docs/config.md) as ChainViewOptions. */
export function chainCacheOptions(
  smtp: Pick<
    SmtpConfig,
    'chain_cache_secs' | 'chain_refusal_cache_secs' | 'chain_cache_entries' | 'local_domains'
  >,
): Pick<ChainViewOptions, 'ttlMs' | 'refusalTtlMs' | 'maxEntries' | 'localDomains'> {
  return {
    ttlMs: smtp.chain_cache_secs * 1000,
    refusalTtlMs: smtp.chain_refusal_cache_secs * 1000,
    maxEntries: smtp.chain_cache_entries,
    localDomains: smtp.local_domains,
  };
}

interface Entry<T> {
  /** Reused until then (ms since the epoch, the view's clock). */
  until: number;
  value: Promise<T>;
}

export class ChainView {
  private readonly cache = new Map<string, Entry<unknown>>();
  private readonly ttl: number;
  private readonly refusalTtl: number;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(private readonly opts: ChainViewOptions) {
    this.ttl = opts.ttlMs ?? CHAIN_CACHE_MS;
    this.refusalTtl = Math.min(opts.refusalTtlMs ?? CHAIN_REFUSAL_CACHE_MS, this.ttl);
    this.maxEntries = Math.max(1, opts.maxEntries ?? CHAIN_CACHE_ENTRIES);
    this.now = opts.now ?? Date.now;
  }

  /** The mail program whose accounts this view reads. */
  get programId(): string {
    return this.opts.programId;
  }

  /** Answers held now (in flight included). */
  get size(): number {
    return this.cache.size;
  }

  /**
   * The record of our program at `address`, decoded, through the cache.
   * `admits` says whether an answer lets mail through (kept `ttlMs`);
   * any other is kept `refusalTtlMs`. A failed read is not kept.
   */
  private read<T>(
    key: string,
    address: () => PublicKey,
    decode: (data: Uint8Array) => T,
    admits: (value: T) => boolean,
  ): Promise<T | null> {
    const now = this.now();
    const hit = this.cache.get(key) as Entry<T | null> | undefined;
    if (hit && now < hit.until) return hit.value;
    let value: Promise<T | null>;
    try {
      const programId = this.opts.programId;
      value = readAccounts(this.opts.connection, [address()]).then(([raw]) =>
        // An address derived for our program but owned by someone else (lamports sent
        // to a PDA before it was created) holds no record of ours yet.
        raw && raw.owner === programId ? decode(raw.data) : null,
      );
    } catch (err) {
      value = Promise.reject(err);
    }
    // While in flight, concurrent askers share the read (unless nothing may be kept at all).
    const entry: Entry<T | null> = { until: now + this.refusalTtl, value };
    this.cache.delete(key);
    this.cache.set(key, entry);
    value.then(
      (v) => {
        entry.until = now + (v !== null && admits(v) ? this.ttl : this.refusalTtl);
      },
      // A failed lookup is not remembered: the next RCPT asks again.
      () => {
        if (this.cache.get(key) === entry) this.cache.delete(key);
      },
    );
    if (this.cache.size > this.maxEntries) this.evict();
    return value;
  }

  // Over the bound: drops the oldest answers (the map keeps them in the order
  // they were asked for), a tenth of the bound at a time so a full cache is
  // not walked on every insert.
  private evict(): void {
    const target = this.maxEntries - Math.ceil(this.maxEntries / 10);
    for (const key of this.cache.keys()) {
      if (this.cache.size <= target) break;
      this.cache.delete(key);
    }
  }

  mailbox(wallet: string): Promise<Mailbox | null> {
    const p = this.opts.programId;
    // A mailbox asking postage of first-contact senders can refuse one; one
    // outside the local domains (or in none) refuses relayed mail.
    const domains = this.opts.localDomains;
    return this.read(
      `mb:${wallet}`,
      () => mailboxAddress(p, wallet)[0],
      decodeMailbox,
      (m) => m.defaultPostage === 0n && (domains ? relayDomainOf(p, m, domains) !== null : !hasNoDomain(m)),
    );
  }

  mailboxKey(wallet: string): Promise<MailboxKey | null> {
    const p = this.opts.programId;
    // The key mail is sealed to: a rotation should show soon, so kept the shorter time.
    return this.read(
      `mk:${wallet}`,
      () => mailboxKeyAddress(p, wallet)[0],
      decodeMailboxKey,
      () => false,
    );
  }

  frombox(fromHash: Uint8Array, wallet: string): Promise<Frombox | null> {
    const p = this.opts.programId;
    return this.read(
      `fb:${Buffer.from(fromHash).toString('hex')}:${wallet}`,
      () => fromboxAddress(p, fromHash, wallet)[0],
      decodeFrombox,
      // Allowlisted; stamps are spent by every delivery, so a count is kept the shorter time.
      (b) => b.requiredPostage === 0n,
    );
  }

  /** The wallet an alias names, as base58, or null. Kept the shorter time: it says where mail goes. */
  async alias(normalized: string): Promise<string | null> {
    const p = this.opts.programId;
    const found = await this.read(
      `al:${normalized}`,
      () => aliasAddress(p, normalizeAlias(normalized))[0],
      decodeAlias,
      () => false,
    );
    return found?.address.toBase58() ?? null;
  }

  /** The MailDomain of a (lowercase) domain name, or null when it is not on chain. */
  domain(name: string): Promise<MailDomain | null> {
    const p = this.opts.programId;
    return this.read(
      `md:${name}`,
      () => domainAddress(p, normalizeDomain(name))[0],
      decodeMailDomain,
      // One account per local domain, so the shorter time costs nothing; a listing
      // or a deactivation shows within it (mail accepted meanwhile would bounce).
      () => false,
    );
  }

  /**
   * The MailDomain at an account address (a mailbox's `domain`), or null.
   * Read only for a mailbox that belongs to none of the local domains, to
   * name its own domain in the refusal; kept the shorter time.
   */
  domainAt(address: PublicKey): Promise<MailDomain | null> {
    return this.read(
      `mda:${address.toBase58()}`,
      () => address,
      decodeMailDomain,
      () => false,
    );
  }

  // Both addresses come from chain/client/pda.ts's cache of derivations after the first RCPT.
  private listed(name: string, md: MailDomain): boolean {
    const account = domainAddress(this.opts.programId, name)[0];
    return isDomainListed(this.opts.programId, account, md.authority);
  }

  /**
   * The domain is in its DomainListing's custody (docs/protocol.md "Domain
   * marketplace"): its authority is the listing, so its relayed mail cannot
   * reach the chain until the listing closes.
   */
  async domainListed(name: string): Promise<boolean> {
    const md = await this.domain(name);
    return md ? this.listed(name, md) : false;
  }

  /** The wallet's PendingMailboxClose (docs/protocol.md "Timelocks"), or null. */
  pendingClose(wallet: string): Promise<PendingMailboxClose | null> {
    const p = this.opts.programId;
    // A pending close refuses mail; its absence is the usual answer, kept the shorter time too.
    return this.read(
      `pc:${wallet}`,
      () => pendingCloseAddress(p, wallet)[0],
      decodePendingMailboxClose,
      () => false,
    );
  }

  /** Drops what is known about a wallet (e.g. after a send changed its mail_count or stamps). */
  forget(wallet: string): void {
    for (const key of this.cache.keys()) if (key.endsWith(wallet)) this.cache.delete(key);
  }
}
