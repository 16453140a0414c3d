// The real mail program against the domain marketplace's rules: a MailDomain
// listed at a price (for anyone, or for one named wallet), bought, or
// returned to its holder; custody of the domain's authority by the listing
// (so no authority instruction works meanwhile); a bounded term that anyone
// may end; and the interplay with pending deactivations and reclaims. Every
// refusal leaves balances and accounts as they were; every completed path
// moves the domain one way and the payment the other, never both to one
// party.
import type { PublicKey, TransactionInstruction } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import {
  DOMAIN_LISTING_SIZE,
  decodeDomainListing,
  decodeSenderAttestation,
  type MailDomain,
} from '../../chain/client/accounts/index.ts';
import { attestationCounts } from '../../chain/client/attest-client.ts';
import { fromHash } from '../../chain/client/hash.ts';
import {
  attestSenderInstruction,
  buyDomainInstruction,
  cancelDeactivationInstruction,
  cancelDomainListingInstruction,
  cancelReclaimInstruction,
  createMailboxInstruction,
  DOMAIN_LISTING_MAX_SECS,
  domainListingOf,
  isDomainListed,
  listDomainInstruction,
  RECLAIM_WINDOW_SECS,
  requestDeactivationInstruction,
  requestReclaimInstruction,
  revokeAttestationInstruction,
  sendMailInstruction,
  settleDomainTimelockInstruction,
} from '../../chain/client/instructions.ts';
import {
  attestationAddress,
  pendingDeactivationAddress,
  pendingReclaimAddress,
} from '../../chain/client/pda.ts';
import { DOMAIN, deltas, expectOk, refused, rent, SOL, World, without } from '../support/program-world.ts';

const DAY = 86_400n;
const CID = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy';
const RELAYED_FROM = fromHash('carol@ext.example');

interface Market {
  w: World;
  /** The domain's authority, the one that lists it. */
  holder: PublicKey;
  domain: PublicKey;
  listing: PublicKey;
  /** A wallet with a mailbox in the domain (a relayed send's recipient). */
  member: PublicKey;
}

function market(seed: number): Market {
  const w = new World({ seed });
  return {
    w,
    holder: w.authority,
    domain: w.domainAddress(),
    listing: domainListingOf(w.programId, { domain: DOMAIN }),
    member: w.user(),
  };
}

const domainOf = (m: Market): MailDomain => m.w.domain();
const listingOf = (m: Market) => decodeDomainListing(m.w.data(m.listing) as Uint8Array);

function list(m: Market, p: { holder?: PublicKey; price?: bigint; days?: bigint; buyer?: PublicKey } = {}) {
  return listDomainInstruction({
    programId: m.w.programId,
    domain: DOMAIN,
    holder: p.holder ?? m.holder,
    priceLamports: p.price ?? SOL,
    expiresAt: m.w.now + (p.days ?? 3n) * DAY,
    ...(p.buyer ? { buyer: p.buyer } : {}),
  });
}

const buy = (m: Market, buyer: PublicKey, holder = m.holder) =>
  buyDomainInstruction({ programId: m.w.programId, domain: DOMAIN, buyer, holder });
const cancel = (m: Market, signer: PublicKey, holder = m.holder) =>
  cancelDomainListingInstruction({ programId: m.w.programId, domain: DOMAIN, signer, holder });

/** A relayed SendMail for the domain signed by `sender`. */
function relayed(m: Market, sender: PublicKey): TransactionInstruction {
  return sendMailInstruction({
    programId: m.w.programId,
    sender,
    recipient: m.member,
    index: m.w.mailbox(m.member).mailCount,
    fromHash: RELAYED_FROM,
    cid: CID,
    domain: DOMAIN,
  });
}

/** A new wallet the domain's authority attests as a sender of the domain. */
function attest(m: Market): PublicKey {
  const wallet = m.w.wallet();
  const ix = attestSenderInstruction({
    programId: m.w.programId,
    authority: m.holder,
    domain: DOMAIN,
    wallet,
  });
  expectOk(m.w.run(ix));
  return wallet;
}

function authorityIs(m: Market, wallet: PublicKey): void {
  expect(domainOf(m).authority.toBase58()).toBe(wallet.toBase58());
}

describe('domain listing for anyone', () => {
  it('takes the authority into custody, refuses every authority instruction meanwhile, then swaps domain and price in one transaction', () => {
    const m = market(11);
    const { w, holder } = m;
    const buyer = w.wallet();
    const stranger = w.wallet();
    const attested = attest(m);
    const watch = [holder, buyer, stranger, m.domain, m.listing];

    // Bad terms and the wrong signer: named errors, nothing moves.
    refused(w, list(m, { holder: stranger }), 'Unauthorized', watch);
    refused(w, list(m, { price: 0n }), 'InvalidArgument', watch);
    refused(w, list(m, { days: 0n }), 'ListingExpired', watch);
    refused(w, list(m, { days: 8n }), 'InvalidArgument', watch);
    refused(w, list(m, { buyer: holder }), 'InvalidArgument', watch);
    refused(w, without(list(m), 0, 'isSigner'), 'MissingSigner', watch);

    // The longest term is accepted; the holder pays the listing's rent.
    const ends = w.now + DOMAIN_LISTING_MAX_SECS;
    const full = listDomainInstruction({
      programId: w.programId,
      domain: DOMAIN,
      holder,
      priceLamports: 2n * SOL,
      expiresAt: ends,
    });
    const [h] = deltas(w, full, [holder]);
    expect(h).toBe(-rent(DOMAIN_LISTING_SIZE));
    expect(listingOf(m)).toMatchObject({ priceLamports: 2n * SOL, createdAt: w.now, expiresAt: ends });
    expect(listingOf(m).holder.equals(holder)).toBe(true);
    expect(
      listingOf(m)
        .buyer.toBytes()
        .every((b) => b === 0),
    ).toBe(true);
    authorityIs(m, m.listing);
    expect(isDomainListed(w.programId, m.domain, domainOf(m).authority)).toBe(true);

    // Locked: no second listing, no relayed mail, no attestation, no deactivation, no revocation by the holder.
    refused(w, list(m), 'DomainLocked', watch);
    refused(w, list(m, { holder: stranger }), 'DomainLocked', watch);
    refused(w, relayed(m, holder), 'Unauthorized', [...watch, m.member]);
    refused(
      w,
      attestSenderInstruction({
        programId: w.programId,
        authority: holder,
        domain: DOMAIN,
        wallet: stranger,
      }),
      'NotDomainAuthority',
      watch,
    );
    refused(
      w,
      requestDeactivationInstruction({ programId: w.programId, authority: holder, domain: DOMAIN }),
      'Unauthorized',
      [...watch, pendingDeactivationAddress(w.programId, m.domain)[0]],
    );
    const revoke = (signer: PublicKey) =>
      revokeAttestationInstruction({
        programId: w.programId,
        signer,
        domain: DOMAIN,
        wallet: attested,
        rentPayer: holder,
      });
    refused(w, revoke(holder), 'Unauthorized', watch);
    // What needs no authority keeps working: a mailbox in the domain, an attested wallet withdrawing itself.
    expectOk(w.run(createMailboxInstruction({ programId: w.programId, owner: stranger, domain: DOMAIN })));
    expectOk(w.run(revoke(attested)));

    // Buying: not one's own, the listing's real holder, a buyer who can pay.
    refused(w, buy(m, holder), 'OwnListing', watch);
    refused(w, buy(m, buyer, stranger), 'InvalidAccount', watch);
    refused(w, cancel(m, stranger), 'ListingNotExpired', watch);
    const poor = w.wallet(2n * SOL - 1n);
    refused(w, buy(m, poor), 'InsufficientFunds', [...watch, poor]);

    const [db, dh, dl] = deltas(w, buy(m, buyer), [buyer, holder, m.listing]);
    expect(db).toBe(-2n * SOL);
    expect(dh).toBe(2n * SOL + rent(DOMAIN_LISTING_SIZE));
    expect(dl).toBe(-rent(DOMAIN_LISTING_SIZE));
    expect(w.exists(m.listing)).toBe(false);
    authorityIs(m, buyer);
    expect(domainOf(m).isActive).toBe(true);

    // The buyer relays for the domain now; the seller cannot; nobody can buy it twice.
    refused(w, relayed(m, holder), 'Unauthorized', [holder, m.member, m.domain]);
    expectOk(w.run(relayed(m, buyer)));
    refused(w, buy(m, stranger), 'NotFound', [stranger, buyer, holder, m.domain]);
    refused(w, list(m), 'Unauthorized', [holder, m.domain, m.listing]);
  });

  it('the holder cancels at any time; the domain and the rent come back, nobody else pays or gains', () => {
    const m = market(12);
    const { w, holder } = m;
    const attested = attest(m);
    const attestation = () =>
      decodeSenderAttestation(w.data(attestationAddress(w.programId, m.domain, attested)[0]) as Uint8Array);
    const before = w.balance(holder);
    expectOk(w.run(list(m)));
    // The holder's attestations do not count while the listing holds the authority...
    expect(attestationCounts(attestation(), domainOf(m))).toBe(false);
    expectOk(w.run(cancel(m, holder)));
    // ...and count again once it has the domain back.
    expect(attestationCounts(attestation(), domainOf(m))).toBe(true);
    expect(w.balance(holder)).toBe(before);
    expect(w.exists(m.listing)).toBe(false);
    authorityIs(m, holder);
    refused(w, cancel(m, holder), 'NotFound', [holder, m.domain]);
    // Unlocked: relayed mail flows again and the domain can be listed again.
    expectOk(w.run(relayed(m, holder)));
    expectOk(w.run(list(m)));
  });
});

describe('hand-off to a named wallet', () => {
  it('only the named wallet may take it, a gift included; it may pay a price', () => {
    const m = market(13);
    const { w, holder } = m;
    const named = w.wallet();
    const stranger = w.wallet();
    const watch = [holder, named, stranger, m.domain, m.listing];
    expectOk(w.run(list(m, { buyer: named, price: SOL / 2n })));
    expect(listingOf(m).buyer.equals(named)).toBe(true);
    refused(w, buy(m, stranger), 'Unauthorized', watch);
    const [dn, dh] = deltas(w, buy(m, named), [named, holder]);
    expect([dn, dh]).toEqual([-SOL / 2n, SOL / 2n + rent(DOMAIN_LISTING_SIZE)]);
    authorityIs(m, named);

    // The new authority gives it away: a price of 0 is allowed only with a named buyer.
    const gift = listDomainInstruction({
      programId: w.programId,
      domain: DOMAIN,
      holder: named,
      priceLamports: 0n,
      expiresAt: w.now + DAY,
      buyer: stranger,
    });
    expectOk(w.run(gift));
    const [ds, dn2] = deltas(w, buy(m, stranger, named), [stranger, named]);
    expect([ds, dn2]).toEqual([0n, rent(DOMAIN_LISTING_SIZE)]);
    authorityIs(m, stranger);
  });

  it('an expired listing cannot be bought; anyone returns it to the holder', () => {
    const m = market(14);
    const { w, holder } = m;
    const named = w.wallet();
    const crank = w.wallet();
    const start = w.balance(holder);
    expectOk(w.run(list(m, { buyer: named, days: 1n })));
    w.advance(DAY - 1n);
    refused(w, cancel(m, crank), 'ListingNotExpired', [holder, named, crank, m.domain, m.listing]);
    w.advance(1n);
    refused(w, buy(m, named), 'ListingExpired', [holder, named, m.domain, m.listing]);
    const [dh, dn, dc] = deltas(w, cancel(m, crank), [holder, named, crank]);
    expect([dh, dn, dc]).toEqual([rent(DOMAIN_LISTING_SIZE), 0n, 0n]);
    expect(w.balance(holder)).toBe(start);
    authorityIs(m, holder);
  });
});

describe('pending deactivations and reclaims', () => {
  it('no listing during a deactivation notice or on an inactive domain', () => {
    const m = market(15);
    const { w, holder } = m;
    const pending = pendingDeactivationAddress(w.programId, m.domain)[0];
    const watch = [holder, m.domain, m.listing, pending];
    const deactivation = { programId: w.programId, authority: holder, domain: DOMAIN };
    expectOk(w.run(requestDeactivationInstruction(deactivation)));
    refused(w, list(m), 'DomainPending', watch);
    expectOk(w.run(cancelDeactivationInstruction(deactivation)));
    expectOk(w.run(requestDeactivationInstruction(deactivation)));
    w.advance(30n * DAY);
    expectOk(
      w.run(
        settleDomainTimelockInstruction({
          programId: w.programId,
          domain: DOMAIN,
          record: 'deactivation',
          rentTo: holder,
        }),
      ),
    );
    refused(w, list(m), 'DomainInactive', [holder, m.domain, m.listing]);
  });

  it('a reclaim requested while listed blocks the purchase and waits for the listing to close', () => {
    const m = market(16);
    const { w, holder } = m;
    const claimant = w.wallet();
    const buyer = w.wallet();
    const pending = pendingReclaimAddress(w.programId, m.domain)[0];
    const watch = [holder, buyer, claimant, m.domain, m.listing, pending];
    const reclaim = requestReclaimInstruction({
      programId: w.programId,
      delegate: w.delegate,
      newAuthority: claimant,
      domain: DOMAIN,
    });
    const settle = settleDomainTimelockInstruction({
      programId: w.programId,
      domain: DOMAIN,
      record: 'reclaim',
      rentTo: w.delegate,
    });

    // Pending first: no listing.
    expectOk(w.run(reclaim));
    refused(w, list(m), 'DomainPending', watch);
    expectOk(
      w.run(
        cancelReclaimInstruction({
          programId: w.programId,
          signer: holder,
          payer: w.delegate,
          domain: DOMAIN,
        }),
      ),
    );

    // Listed first: the domain service may still start a reclaim; nobody can buy meanwhile.
    expectOk(w.run(list(m, { days: 7n })));
    expectOk(w.run(reclaim));
    refused(w, buy(m, buyer), 'DomainPending', watch);
    // The holder is not the authority while listed, so it cannot cancel the reclaim...
    refused(
      w,
      cancelReclaimInstruction({ programId: w.programId, signer: holder, payer: w.delegate, domain: DOMAIN }),
      'Unauthorized',
      watch,
    );
    // ...and the reclaim cannot take the domain out of the listing's custody, even after its window.
    w.advance(RECLAIM_WINDOW_SECS);
    refused(w, settle, 'DomainLocked', [...watch, w.delegate]);
    // The listing expired meanwhile (7 days < 14): anyone returns the domain, then the reclaim settles.
    expectOk(w.run(cancel(m, buyer)));
    authorityIs(m, holder);
    expectOk(w.run(settle));
    authorityIs(m, claimant);
  });
});
