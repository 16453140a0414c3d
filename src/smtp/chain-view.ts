// The MX's read-only view of the chain: mailboxes, delegated keys, fromboxes,
// aliases, domains (and whether one is listed for sale) and pending mailbox closes, with a short-lived cache so RCPT handling is not bound by RPC
// latency. The chain stays the final arbiter: the pipeline's SendMail re-checks
// every rule, so a stale cache entry can delay a refusal, never skip one.
import type { Connection } from '@solana/web3.js';
import {
  domainAddress,
  type Frombox,
  getDomain,
  getFrombox,
  getMailbox,
  getMailboxKey,
  getPendingMailboxClose,
  isDomainListed,
  type Mailbox,
  type MailboxKey,
  type MailDomain,
  type PendingMailboxClose,
  resolveAlias,
} from '../../chain/index.ts';

export interface ChainViewOptions {
  connection: Connection;
  programId: string;
  /** How long answers are reused; default 5 s. */
  ttlMs?: number;
  now?: () => number;
}

interface Entry<T> {
  at: number;
  value: Promise<T>;
}

export class ChainView {
  private readonly cache = new Map<string, Entry<unknown>>();
  private readonly ttl: number;
  private readonly now: () => number;

  constructor(private readonly opts: ChainViewOptions) {
    this.ttl = opts.ttlMs ?? 5000;
    this.now = opts.now ?? Date.now;
  }

  private cached<T>(key: string, load: () => Promise<T>): Promise<T> {
    const hit = this.cache.get(key) as Entry<T> | undefined;
    const now = this.now();
    if (hit && now - hit.at < this.ttl) return hit.value;
    const value = load();
    this.cache.set(key, { at: now, value });
    // A failed lookup is not remembered: the next RCPT asks again.
    value.catch(() => this.cache.delete(key));
    if (this.cache.size > 50_000) this.prune(now);
    return value;
  }

  private prune(now: number): void {
    for (const [key, entry] of this.cache) if (now - entry.at >= this.ttl) this.cache.delete(key);
  }

  mailbox(wallet: string): Promise<Mailbox | null> {
    return this.cached(`mb:${wallet}`, () => getMailbox(this.opts.connection, this.opts.programId, wallet));
  }

  mailboxKey(wallet: string): Promise<MailboxKey | null> {
    return this.cached(`mk:${wallet}`, () =>
      getMailboxKey(this.opts.connection, this.opts.programId, wallet),
    );
  }

  frombox(fromHash: Uint8Array, wallet: string): Promise<Frombox | null> {
    const key = `fb:${Buffer.from(fromHash).toString('hex')}:${wallet}`;
    return this.cached(key, () => getFrombox(this.opts.connection, this.opts.programId, fromHash, wallet));
  }

  /** The wallet an alias names, as base58, or null. */
  alias(normalized: string): Promise<string | null> {
    return this.cached(
      `al:${normalized}`,
      async () =>
        (await resolveAlias(this.opts.connection, this.opts.programId, normalized))?.toBase58() ?? null,
    );
  }

  /** The MailDomain of a (lowercase) domain name, or null when it is not on chain. */
  domain(name: string): Promise<MailDomain | null> {
    return this.cached(`md:${name}`, () => getDomain(this.opts.connection, this.opts.programId, name));
  }

  /**
   * The domain is in its DomainListing's custody (docs/protocol.md "Domain
   * marketplace"): its authority is the listing, so its relayed mail cannot
   * reach the chain until the listing closes.
   */
  async domainListed(name: string): Promise<boolean> {
    const md = await this.domain(name);
    if (!md) return false;
    // Both addresses come from chain/pda.ts's cache of derivations after the first RCPT.
    const account = domainAddress(this.opts.programId, name)[0];
    return isDomainListed(this.opts.programId, account, md.authority);
  }

  /** The wallet's PendingMailboxClose (docs/protocol.md "Timelocks"), or null. */
  pendingClose(wallet: string): Promise<PendingMailboxClose | null> {
    return this.cached(`pc:${wallet}`, () =>
      getPendingMailboxClose(this.opts.connection, this.opts.programId, wallet),
    );
  }

  /** Drops what is known about a wallet (e.g. after a send changed its mail_count or stamps). */
  forget(wallet: string): void {
    for (const key of this.cache.keys()) if (key.endsWith(wallet)) this.cache.delete(key);
  }
}
