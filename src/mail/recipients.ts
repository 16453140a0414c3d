// RCPT TO: which wallet an address names, and whether the postage gate lets
// this sender reach it. Returns results; the SMTP edge turns them into replies.
import { fromHash, isBase58Key, isNormalizedAlias, type Mailbox } from '../../chain/client/index.ts';
import { hasNoDomain, relayDomainOf } from '../../chain/client/relay.ts';
import type { ChainView } from './chain-view.ts';

export type AddressForm = 'wallet' | 'alias' | 'postmaster';

export interface ResolvedRecipient {
  /** The address as given in RCPT TO. */
  address: string;
  wallet: string;
  form: AddressForm;
  /** The postmaster wallet is exempt from the postage gate. */
  exempt: boolean;
}

export type ResolveResult =
  | { ok: true; recipient: ResolvedRecipient }
  | {
      ok: false;
      /**
       * `closing`: the wallet's mailbox has a PendingMailboxClose; `domain-inactive`:
       * the address's domain (or the local domain the mailbox belongs to) is a
       * MailDomain that was deactivated; `domain-listed`: it is listed for sale,
       * so its relayed mail waits; `relay-not-allowed`: the mailbox belongs to
       * no local domain, so no relayed SendMail of this server can reach it
       * (docs/inbound.md). `detail`: the domain named; for `relay-not-allowed`
       * the mailbox's own domain, absent when it has none.
       */
      reason:
        | 'not-local'
        | 'unknown'
        | 'bad-address'
        | 'closing'
        | 'domain-inactive'
        | 'domain-listed'
        | 'relay-not-allowed';
      detail?: string;
    };

export interface RecipientPolicy {
  localDomains: string[];
  postmasterWallet?: string;
}

function splitAddress(address: string): { local: string; domain: string } | null {
  const at = address.lastIndexOf('@');
  if (at < 0) return address ? { local: address, domain: '' } : null;
  const local = address.slice(0, at);
  const domain = address
    .slice(at + 1)
    .toLowerCase()
    .replace(/\.$/, '');
  if (!local || !domain) return null;
  return { local, domain };
}

/**
 * `envelopeFrom`, when the caller will run the postage gate next: the
 * frombox it reads is asked for together with the mailbox, so both go out in
 * one getMultipleAccounts instead of one after the other.
 */
export async function resolveRecipient(
  address: string,
  policy: RecipientPolicy,
  chain: ChainView,
  envelopeFrom?: string,
): Promise<ResolveResult> {
  const parts = splitAddress(address);
  if (!parts) return { ok: false, reason: 'bad-address', detail: 'expected local@domain' };
  const { local, domain } = parts;
  // RFC 5321 4.5.1: "postmaster" without a domain must be accepted.
  const isLocalDomain =
    domain === '' ? local.toLowerCase() === 'postmaster' : policy.localDomains.includes(domain);
  if (!isLocalDomain) return { ok: false, reason: 'not-local' };
  // A local domain deactivated on chain (its notice window over) takes no mail;
  // one not on chain at all is the operator's configuration (serve warns at start).
  if (domain !== '' && (await chain.domain(domain))?.isActive === false) {
    return { ok: false, reason: 'domain-inactive', detail: domain };
  }
  // Listed for sale: no relayed SendMail for it lands until the listing closes, so senders retry.
  if (domain !== '' && (await chain.domainListed(domain))) {
    return { ok: false, reason: 'domain-listed', detail: domain };
  }

  if (local.toLowerCase() === 'postmaster') {
    if (!policy.postmasterWallet) return { ok: false, reason: 'unknown' };
    return {
      ok: true,
      recipient: { address, wallet: policy.postmasterWallet, form: 'postmaster', exempt: true },
    };
  }

  const gateNext = (wallet: string) => {
    if (envelopeFrom === undefined || wallet === policy.postmasterWallet) return;
    // Its answer (or failure) is the gate's to read; this only starts the read early.
    try {
      chain.frombox(fromHash(envelopeFrom), wallet).catch(() => undefined);
    } catch {
      // The gate meets the same error itself.
    }
  };

  const found = async (wallet: string, form: AddressForm): Promise<ResolveResult> => {
    const [mailbox, closing] = await Promise.all([chain.mailbox(wallet), chain.pendingClose(wallet)]);
    if (!mailbox) return { ok: false, reason: 'unknown' };
    if (closing) return { ok: false, reason: 'closing' };
    const refused = await relayRefusal(mailbox, domain, policy, chain);
    if (refused) return refused;
    return { ok: true, recipient: { address, wallet, form, exempt: wallet === policy.postmasterWallet } };
  };

  // A wallet address keeps its case (base58 is case-sensitive).
  if (isBase58Key(local)) {
    gateNext(local);
    return found(local, 'wallet');
  }

  const alias = local.toLowerCase();
  if (!isNormalizedAlias(alias)) return { ok: false, reason: 'unknown' };
  const wallet = await chain.alias(alias);
  if (!wallet) return { ok: false, reason: 'unknown' };
  gateNext(wallet);
  return found(wallet, 'alias');
}

/**
 * A relayed SendMail lands only through the MailDomain the mailbox names
 * (RelayNotAllowed on chain otherwise; none for a mailbox with no domain), so
 * a mailbox of none of the local domains is refused here, naming its own
 * domain. A mailbox of another local domain than the address's (a wallet of
 * X addressed `<wallet>@Y`) is relayed through X, so X must take mail too.
 * Reads nothing for a mailbox of the address's own domain.
 */
async function relayRefusal(
  mailbox: Mailbox,
  addressDomain: string,
  policy: RecipientPolicy,
  chain: ChainView,
): Promise<ResolveResult | null> {
  const own = relayDomainOf(chain.programId, mailbox, policy.localDomains);
  if (own === null) {
    if (hasNoDomain(mailbox)) return { ok: false, reason: 'relay-not-allowed' };
    const md = await chain.domainAt(mailbox.domain);
    return { ok: false, reason: 'relay-not-allowed', detail: md?.domain ?? mailbox.domain.toBase58() };
  }
  if (own === addressDomain) return null;
  if ((await chain.domain(own))?.isActive === false)
    return { ok: false, reason: 'domain-inactive', detail: own };
  if (await chain.domainListed(own)) return { ok: false, reason: 'domain-listed', detail: own };
  return null;
}

export type GateResult = { ok: true; postage: bigint } | { ok: false; requiredPostage: bigint };

/**
 * The postage gate of docs/protocol.md's SendMail rule for relayed mail, read
 * from the chain: free for an open mailbox with no frombox, for an
 * allowlisted sender (frombox with required_postage 0), or when a stamp a
 * relayed send may spend is available (not one of a wallet's own stamps).
 */
export async function postageGate(
  envelopeFrom: string,
  recipient: ResolvedRecipient,
  chain: ChainView,
): Promise<GateResult> {
  if (recipient.exempt) return { ok: true, postage: 0n };
  const mailbox = await chain.mailbox(recipient.wallet);
  if (!mailbox) return { ok: false, requiredPostage: 0n };
  const box = await chain.frombox(fromHash(envelopeFrom), recipient.wallet);
  if (!box)
    return mailbox.defaultPostage === 0n
      ? { ok: true, postage: 0n }
      : { ok: false, requiredPostage: mailbox.defaultPostage };
  if (box.requiredPostage === 0n) return { ok: true, postage: 0n };
  // Stamps a wallet bought for itself pay only for its own direct sends: a
  // relayed SendMail may not spend them (StampsNotRelayable on chain).
  if (box.stamps > 0n && !box.walletStamps) return { ok: true, postage: box.requiredPostage };
  return { ok: false, requiredPostage: box.requiredPostage };
}
