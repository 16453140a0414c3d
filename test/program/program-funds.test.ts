// The funds invariant (chain/program/host/funds.ts), which World.run checks after
// every successful transaction of the program tests: negative controls show
// the checker catches what it is for (a recipient paid one lamport more than
// the documented share, lamports from nowhere, a money field that did not
// move with the lamports, a close paying the wrong wallet, the pre-issue-29
// live surcharge) and what it leaves to conservation alone (dependent
// instructions in one transaction); then one instance of every instruction
// kind, and the branches of SendMail and the marketplaces, runs through a
// World with the check on.
import type { PublicKey, TransactionInstruction } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { encodeFrombox, encodePostoffice } from '../../chain/client/accounts/index.ts';
import { blake3Text, fromHash } from '../../chain/client/hash.ts';
import {
  acceptAdminInstruction,
  acceptAliasInstruction,
  addStampsInstruction,
  attestSenderInstruction,
  bidAliasInstruction,
  buyAliasInstruction,
  buyDomainInstruction,
  buyStampsInstruction,
  cancelDeactivationInstruction,
  cancelDomainListingInstruction,
  cancelListingInstruction,
  cancelMailboxCloseInstruction,
  cancelReclaimInstruction,
  claimBountyInstruction,
  closeBeaconInstruction,
  closeMailboxInstruction,
  closePinLeaseInstruction,
  closeRecipientRuleInstruction,
  createAliasInstruction,
  createDomainInstruction,
  createFromboxInstruction,
  createMailboxInstruction,
  createPinLeaseInstruction,
  DEACTIVATION_WINDOW_SECS,
  decodeInstruction,
  deleteMailInstruction,
  INSTRUCTION_LAYOUTS,
  initPostofficeInstruction,
  listAliasInstruction,
  listDomainInstruction,
  MAILBOX_CLOSE_WINDOW_SECS,
  offerAliasInstruction,
  proposeAdminInstruction,
  publishBeaconInstruction,
  publishKeyInstruction,
  RECLAIM_WINDOW_SECS,
  reclaimAliasInstruction,
  reclaimFromboxStampsInstruction,
  removeKeyInstruction,
  requestDeactivationInstruction,
  requestMailboxCloseInstruction,
  requestReclaimInstruction,
  revokeAttestationInstruction,
  sendMailInstruction,
  setMailboxDomainInstruction,
  setMailboxFlagsInstruction,
  setRecipientRuleInstruction,
  settleAuctionInstruction,
  settleDomainTimelockInstruction,
  topUpStampsInstruction,
  updateFromboxInstruction,
  updatePostofficeInstruction,
  withdrawFeesInstruction,
  withReputation,
} from '../../chain/client/instructions.ts';
import { pinLeaseAddress } from '../../chain/client/pda.ts';
import {
  checkFunds,
  type FundsAccount,
  type FundsInput,
  type FundsViolation,
  formatViolation,
  fundsAccounts,
} from '../../chain/program/host/funds.ts';
import { DOMAIN, expectOk, FEE, rent, SOL, SURCHARGE, World } from '../support/program-world.ts';

const CID = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy';
const RELAYED_FROM = fromHash('carol@ext.example');
const POSTAGE = 10_000n;

/** Runs a transaction straight through the runtime (no check) and returns what checkFunds is given for it. */
function capture(w: World, ...ixs: TransactionInstruction[]): FundsInput {
  const keys = fundsAccounts(ixs, w.rt.payer.publicKey);
  const snapshot = () =>
    new Map<string, FundsAccount | null>(
      keys.map((k) => {
        const a = w.rt.account(k);
        return [k.toBase58(), a && { lamports: a.lamports, owner: a.owner, data: a.data }];
      }),
    );
  const signers = ixs.flatMap((ix) =>
    ix.keys.flatMap((k) => (k.isSigner ? [w.keys.get(k.pubkey.toBase58())].filter((s) => !!s) : [])),
  ) as NonNullable<ReturnType<typeof w.keys.get>>[];
  const before = snapshot();
  const r = w.rt.run(ixs, signers);
  w.rt.expireBlockhash();
  expectOk(r);
  return {
    instructions: ixs,
    before,
    after: snapshot(),
    fee: r.fee,
    feePayer: w.rt.payer.publicKey,
    programId: w.programKey,
  };
}

/** The same input with one account's state after changed. */
function tamper(
  input: FundsInput,
  key: PublicKey,
  change: { lamports?: bigint; data?: Uint8Array },
): FundsInput {
  const after = new Map(input.after);
  const a = after.get(key.toBase58());
  if (!a) throw new Error(`no state after for ${key.toBase58()}`);
  after.set(key.toBase58(), {
    ...a,
    lamports: a.lamports + (change.lamports ?? 0n),
    data: change.data ?? a.data,
  });
  return { ...input, after };
}

const on = (vs: FundsViolation[], key: PublicKey | string, what = 'lamports') =>
  vs.find((v) => v.account === (typeof key === 'string' ? key : key.toBase58()) && v.what === what);

/** A recipient charging POSTAGE per first-contact stamp and a direct sender holding `stamps` of them. */
function stamped(stamps = 2n) {
  const w = new World({ seed: 29 });
  const recipient = w.user({ defaultPostage: POSTAGE });
  const sender = w.wallet();
  expectOk(w.run(buyStampsInstruction({ programId: w.programId, buyer: sender, recipient, stamps })));
  const send = (index: bigint) =>
    sendMailInstruction({
      programId: w.programId,
      sender,
      recipient,
      index,
      fromHash: fromHash(sender),
      cid: CID,
    });
  return { w, recipient, sender, send, frombox: w.fromboxAddress(fromHash(sender), recipient) };
}

describe('checkFunds: negative controls', () => {
  it('a real stamped SendMail holds; one lamport more to the recipient breaks the flow, from nowhere also conservation', () => {
    const { w, recipient, sender, send } = stamped();
    const real = capture(w, send(0n));
    expect(checkFunds(real)).toEqual([]);

    // Taken from the signer: the balances still sum to the fee, but neither moved as documented.
    const moved = tamper(tamper(real, recipient, { lamports: 1n }), sender, { lamports: -1n });
    const vs = checkFunds(moved);
    expect(vs.find((v) => v.what === 'conservation')).toBeUndefined();
    expect(on(vs, recipient)).toMatchObject({
      instruction: 0,
      kind: 'SendMail',
      expected: POSTAGE,
      actual: POSTAGE + 1n,
    });
    expect(on(vs, recipient)?.role).toContain('recipient wallet');
    expect(on(vs, sender)).toMatchObject({ expected: SURCHARGE - rent(198 + CID.length) });
    expect(vs).toHaveLength(2);
    expect(formatViolation(on(vs, recipient) as FundsViolation)).toBe(
      `instruction 0 (SendMail): ${recipient.toBase58()} (recipient wallet): lamports expected +${POSTAGE}, actual +${POSTAGE + 1n} (off by +1)`,
    );

    // From nowhere: conservation fails too.
    const minted = checkFunds(tamper(real, recipient, { lamports: 1n }));
    const fee = BigInt(real.fee);
    expect(minted.find((v) => v.what === 'conservation')).toMatchObject({
      instruction: null,
      account: 'all accounts',
      expected: -fee,
      actual: -fee + 1n,
    });
    expect(on(minted, recipient)).toMatchObject({ expected: POSTAGE, actual: POSTAGE + 1n });
  });

  it('a spent stamp whose escrow did not go down, a purchase whose fee is not in fees_collected', () => {
    const { w, recipient, sender, send, frombox } = stamped();
    const real = capture(w, send(0n));
    const box = w.frombox(fromHash(sender), recipient);
    if (!box) throw new Error('no frombox');
    const stale = encodeFrombox({ ...box, postageEscrow: box.postageEscrow + POSTAGE });
    const vs = checkFunds(tamper(real, frombox, { data: stale }));
    expect(on(vs, frombox, 'postageEscrow')).toMatchObject({ expected: POSTAGE, actual: 2n * POSTAGE });
    // It now records more postage than it holds above its rent.
    expect(on(vs, frombox, 'solvency')).toMatchObject({ expected: rent(91) + 2n * POSTAGE });

    const buyer = w.wallet();
    const buy = capture(w, buyStampsInstruction({ programId: w.programId, buyer, recipient, stamps: 3n }));
    expect(checkFunds(buy)).toEqual([]);
    const po = w.postoffice();
    const unpaid = encodePostoffice({ ...po, feesCollected: po.feesCollected - 3n * FEE });
    const vs2 = checkFunds(tamper(buy, w.postofficeAddress(), { data: unpaid }));
    expect(on(vs2, w.postofficeAddress(), 'feesCollected')).toMatchObject({
      kind: 'BuyStamps',
      expected: po.feesCollected,
      actual: po.feesCollected - 3n * FEE,
    });
  });

  it("a DeleteMail whose balance went to the signer instead of the email's rent_payer", () => {
    const w = new World({ seed: 30 });
    const recipient = w.user();
    const sender = w.wallet();
    expectOk(
      w.run(
        sendMailInstruction({
          programId: w.programId,
          sender,
          recipient,
          index: 0n,
          fromHash: fromHash(sender),
          cid: CID,
        }),
      ),
    );
    const held = w.balance(w.emailAddress(recipient, 0n));
    const del = deleteMailInstruction({
      programId: w.programId,
      signer: recipient,
      recipient,
      index: 0n,
      rentPayer: sender,
    });
    const real = capture(w, del);
    expect(checkFunds(real)).toEqual([]);
    const wrong = tamper(tamper(real, sender, { lamports: -held }), recipient, { lamports: held });
    const vs = checkFunds(wrong);
    expect(on(vs, sender)).toMatchObject({ kind: 'DeleteMail', expected: held, actual: 0n });
    expect(on(vs, recipient)).toMatchObject({ expected: 0n, actual: held });
    expect(vs.find((v) => v.what === 'conservation')).toBeUndefined();
  });

  it('the surcharge is the one held since purchase: paying the live (raised) one is caught', () => {
    const { w, sender, send, frombox } = stamped(2n);
    const raised = SURCHARGE + 4_000n;
    expectOk(
      w.run(
        updatePostofficeInstruction({
          programId: w.programId,
          admin: w.admin,
          settlementSurchargeLamports: raised,
        }),
      ),
    );
    const real = capture(w, send(0n));
    expect(checkFunds(real)).toEqual([]);
    // What the binary before issue 29 did: the postoffice's surcharge of the day, out of the frombox.
    const live = tamper(tamper(real, frombox, { lamports: SURCHARGE - raised }), sender, {
      lamports: raised - SURCHARGE,
    });
    const vs = checkFunds(live);
    expect(on(vs, frombox)).toMatchObject({ expected: -(POSTAGE + SURCHARGE), actual: -(POSTAGE + raised) });
    expect(on(vs, sender)?.expected).toBe(SURCHARGE - rent(198 + CID.length));
  });

  it('dependent instructions in one transaction are checked for conservation only; missing snapshots are reported', () => {
    const w = new World({ seed: 31 });
    const owner = w.user();
    const programId = w.programId;
    const real = capture(
      w,
      publishKeyInstruction({ programId, owner, pubKey: w.address() }),
      removeKeyInstruction({ programId, owner }),
      publishKeyInstruction({ programId, owner, pubKey: w.address() }),
    );
    expect(checkFunds(real)).toEqual([]);
    const key = real.instructions[0]?.keys[2]?.pubkey as PublicKey;
    // A lamport moved between two of its accounts: no per-instruction flow to hold it against.
    expect(checkFunds(tamper(tamper(real, owner, { lamports: -1n }), key, { lamports: 1n }))).toEqual([]);
    expect(checkFunds(tamper(real, key, { lamports: 1n })).map((v) => v.what)).toEqual(['conservation']);

    const before = new Map(real.before);
    before.delete(owner.toBase58());
    expect(checkFunds({ ...real, before })[0]).toMatchObject({
      account: owner.toBase58(),
      role: 'not in the snapshots',
    });
  });

  it('World.run throws when a successful transaction breaks the invariant, and checks no failed one', () => {
    const w = new World({ seed: 32 });
    const owner = w.wallet();
    const real = w.rt.run.bind(w.rt);
    // A runtime that mints one lamport into the owner's wallet with every transaction.
    w.rt.run = (tx, signers) => {
      const r = real(tx, signers);
      w.fund(owner, 1n);
      return r;
    };
    const make = () =>
      createMailboxInstruction({ programId: w.programId, owner, defaultPostage: 0n, domain: DOMAIN });
    expect(() => w.run(make())).toThrow(/conservation expected -\d+, actual -\d+ \(off by \+1\)/);
    // The mailbox exists now; creating it again fails, and a failed transaction is not checked.
    expect(w.run(make()).ok).toBe(false);
  });
});

describe('the funds invariant across every instruction kind (World.run checks each)', () => {
  it('runs one of each kind, and the branches of SendMail, the stamps and the marketplaces', () => {
    const seen = new Set<string>();
    const watch = (w: World): World => {
      const run = w.run.bind(w);
      w.run = (...ixs) => {
        const r = run(...ixs);
        expectOk(r);
        for (const ix of ixs) seen.add(decodeInstruction(ix.data).kind);
        return r;
      };
      return w;
    };

    // InitPostoffice in a world of its own.
    const bare = watch(new World({ seed: 40, setup: false }));
    const admin = bare.wallet();
    bare.run(
      initPostofficeInstruction({
        programId: bare.programId,
        admin,
        upgradeAuthority: bare.upgradeAuthority,
        delegateAddress: bare.wallet(),
        stampFeeLamports: FEE,
        settlementSurchargeLamports: SURCHARGE,
      }),
    );

    const w = watch(new World({ seed: 41 }));
    const programId = w.programId;
    const { delegate, authority } = w;
    const open = w.wallet();
    w.run(createMailboxInstruction({ programId, owner: open, defaultPostage: 0n, domain: DOMAIN }));
    const recipient = w.user({ defaultPostage: POSTAGE });
    const sender = w.wallet();
    const other = w.wallet();
    const index = () => w.mailbox(recipient).mailCount;
    const direct = (from: PublicKey, extra: { bountyLamports?: bigint; expiresAt?: bigint } = {}) =>
      sendMailInstruction({
        programId,
        sender: from,
        recipient,
        index: index(),
        fromHash: fromHash(from),
        cid: CID,
        ...extra,
      });

    // Mailbox, key, flags, domain membership.
    w.run(setMailboxFlagsInstruction({ programId, owner: recipient, defaultPostage: POSTAGE }));
    w.run(publishKeyInstruction({ programId, owner: recipient, pubKey: w.address() }));
    w.run(publishKeyInstruction({ programId, owner: recipient, pubKey: w.address() })); // replaces, moves nothing
    w.run(removeKeyInstruction({ programId, owner: recipient }));
    w.run(setMailboxDomainInstruction({ programId, owner: open, domain: null }));
    w.run(createDomainInstruction({ programId, delegate, domain: 'funds.test', authority }));

    // A free send to an open mailbox (the signer pays the Email only), and to oneself.
    w.run(
      sendMailInstruction({
        programId,
        sender,
        recipient: open,
        index: 0n,
        fromHash: fromHash(sender),
        cid: CID,
      }),
    );
    w.run(
      sendMailInstruction({
        programId,
        sender: recipient,
        recipient,
        index: index(),
        fromHash: fromHash(recipient),
        cid: CID,
      }),
    );

    // Stamps: lamports sent to the frombox address early stay on top (and count as surcharge held).
    w.fund(w.fromboxAddress(fromHash(sender), recipient), 5n);
    w.run(buyStampsInstruction({ programId, buyer: sender, recipient, stamps: 3n }));
    w.run(topUpStampsInstruction({ programId, buyer: sender, recipient, stamps: 1n }));
    // The surcharge changes: stamps already bought keep theirs.
    w.run(
      updatePostofficeInstruction({ programId, admin: w.admin, settlementSurchargeLamports: 2n * SURCHARGE }),
    );
    w.run(
      addStampsInstruction({ programId, payer: sender, recipient, fromHash: fromHash(sender), stamps: 1n }),
    );
    // A stamped direct send recording reputation (created, its rent paid by the signer), then plain ones.
    w.run(withReputation(direct(sender), { programId, sender, recipient }));
    w.run(direct(sender, { bountyLamports: 50_000n, expiresAt: w.now + 3_600n }));
    const bountied = index() - 1n;
    w.run(withReputation(direct(sender), { programId, sender, recipient }));
    w.run(claimBountyInstruction({ programId, recipient, index: bountied }));
    w.run(direct(sender));
    // The last stamp takes the remainder; the frombox ends at its rent.
    w.run(direct(sender));
    expect(w.frombox(fromHash(sender), recipient)?.stamps).toBe(0n);
    expect(w.balance(w.fromboxAddress(fromHash(sender), recipient))).toBe(rent(91));
    w.run(topUpStampsInstruction({ programId, buyer: sender, recipient, stamps: 2n }));
    w.run(reclaimFromboxStampsInstruction({ programId, sender, recipient }));

    // Relayed: stamps a stranger funds for an email address's frombox.
    w.run(
      createFromboxInstruction({
        programId,
        owner: recipient,
        fromHash: RELAYED_FROM,
        requiredPostage: 700n,
      }),
    );
    w.run(
      updateFromboxInstruction({
        programId,
        owner: recipient,
        fromHash: RELAYED_FROM,
        requiredPostage: 900n,
      }),
    );
    w.run(addStampsInstruction({ programId, payer: other, recipient, fromHash: RELAYED_FROM, stamps: 2n }));
    w.run(
      sendMailInstruction({
        programId,
        sender: authority,
        recipient,
        index: index(),
        fromHash: RELAYED_FROM,
        cid: CID,
        domain: DOMAIN,
      }),
    );
    // An allowlisted sender (frombox price 0) sends free.
    w.run(
      createFromboxInstruction({
        programId,
        owner: recipient,
        fromHash: fromHash(other),
        requiredPostage: 0n,
      }),
    );
    w.run(direct(other));

    // Recipient rules: the sender's reputation reaches it; postage straight to the recipient, then free.
    w.run(
      setRecipientRuleInstruction({
        programId,
        owner: recipient,
        minReputationLamports: 1n,
        postageLamports: 700n,
      }),
    );
    w.run(withReputation(direct(sender), { programId, sender, recipient, applyRule: true }));
    w.run(
      setRecipientRuleInstruction({
        programId,
        owner: recipient,
        minReputationLamports: 1n,
        postageLamports: 0n,
      }),
    );
    w.run(withReputation(direct(sender), { programId, sender, recipient, applyRule: true }));
    w.run(closeRecipientRuleInstruction({ programId, owner: recipient }));

    // DeleteMail: by the recipient, and by the sender once the bounty window is over (an early-funded Email).
    w.fund(w.emailAddress(recipient, index()), 3n);
    w.run(direct(recipient));
    w.run(
      deleteMailInstruction({ programId, signer: recipient, recipient, index: 0n, rentPayer: recipient }),
    );
    const bounty = w.wallet();
    w.run(buyStampsInstruction({ programId, buyer: bounty, recipient, stamps: 1n }));
    w.run(direct(bounty, { bountyLamports: 70_000n, expiresAt: w.now + 60n }));
    w.advance(61n);
    w.run(
      deleteMailInstruction({ programId, signer: bounty, recipient, index: index() - 1n, rentPayer: bounty }),
    );

    // Attestations.
    w.run(attestSenderInstruction({ programId, authority, payer: other, domain: DOMAIN, wallet: sender }));
    w.run(
      revokeAttestationInstruction({
        programId,
        signer: sender,
        domain: DOMAIN,
        wallet: sender,
        rentPayer: other,
      }),
    );

    // Pin leases (the lease address funded early) and beacons.
    const holder = w.wallet();
    w.fund(pinLeaseAddress(programId, blake3Text(CID), holder)[0], 7n);
    w.run(
      createPinLeaseInstruction({
        programId,
        holder,
        operator: other,
        cid: CID,
        expiresAt: w.now + 86_400n,
        feeLamports: 12_345n,
      }),
    );
    w.run(closePinLeaseInstruction({ programId, holder, cid: CID }));
    w.run(publishBeaconInstruction({ programId, owner: holder, tags: 1n, detailCid: CID }));
    w.run(publishBeaconInstruction({ programId, owner: holder, tags: 3n, detailCid: CID }));
    w.run(closeBeaconInstruction({ programId, owner: holder }));

    // The alias marketplace: fixed price bought and cancelled, two auctions, two offers.
    const seller = w.user();
    const bidder = w.wallet();
    for (const name of ['f-buy', 'f-cancel', 'f-auction', 'f-quiet', 'f-accept', 'f-reclaim'])
      w.run(createAliasInstruction({ programId, owner: seller, name }));
    w.run(listAliasInstruction({ programId, holder: seller, alias: 'f-buy', priceLamports: SOL }));
    w.run(buyAliasInstruction({ programId, buyer: bidder, alias: 'f-buy', holder: seller }));
    w.run(listAliasInstruction({ programId, holder: seller, alias: 'f-cancel', priceLamports: SOL }));
    w.run(cancelListingInstruction({ programId, holder: seller, alias: 'f-cancel' }));
    for (const alias of ['f-auction', 'f-quiet'])
      w.run(
        listAliasInstruction({
          programId,
          holder: seller,
          alias,
          auction: { reserveLamports: SOL, endsAt: w.now + 100n, antisnipeSecs: 0n },
        }),
      );
    const bid = (who: PublicKey, amountLamports: bigint, highBidder: PublicKey | null) =>
      w.run(bidAliasInstruction({ programId, bidder: who, alias: 'f-auction', amountLamports, highBidder }));
    bid(bidder, SOL, null);
    bid(bidder, SOL + SOL / 10n, bidder); // a raise pays the difference
    bid(other, 2n * SOL, bidder); // outbid: the previous AliasBid goes back whole
    for (const [alias, expiresAt] of [
      ['f-accept', w.now + 86_400n],
      ['f-reclaim', w.now + 86_400n],
    ] as const)
      w.run(
        offerAliasInstruction({
          programId,
          holder: seller,
          alias,
          recipient: bidder,
          feeLamports: 4_321n,
          expiresAt,
        }),
      );
    w.run(acceptAliasInstruction({ programId, recipient: bidder, alias: 'f-accept', holder: seller }));
    w.run(reclaimAliasInstruction({ programId, signer: seller, alias: 'f-reclaim', holder: seller }));
    w.advance(101n);
    w.run(settleAuctionInstruction({ programId, alias: 'f-auction', holder: seller, highBidder: other }));
    w.run(settleAuctionInstruction({ programId, alias: 'f-quiet', holder: seller, highBidder: null }));

    // The domain marketplace.
    for (const domain of ['sale.test', 'kept.test'])
      w.run(createDomainInstruction({ programId, delegate, domain, authority }));
    const until = w.now + 86_400n;
    w.run(
      listDomainInstruction({
        programId,
        domain: 'sale.test',
        holder: authority,
        priceLamports: SOL,
        expiresAt: until,
      }),
    );
    w.run(buyDomainInstruction({ programId, buyer: bidder, domain: 'sale.test', holder: authority }));
    w.run(
      listDomainInstruction({
        programId,
        domain: 'kept.test',
        holder: authority,
        priceLamports: SOL,
        expiresAt: until,
      }),
    );
    w.run(
      cancelDomainListingInstruction({
        programId,
        signer: authority,
        domain: 'kept.test',
        holder: authority,
      }),
    );

    // Timelocks: a mailbox close cancelled and one completed, a deactivation and a reclaim each cancelled and settled.
    const leaving = w.user();
    w.run(requestMailboxCloseInstruction({ programId, owner: leaving }));
    w.run(cancelMailboxCloseInstruction({ programId, owner: leaving }));
    w.run(requestMailboxCloseInstruction({ programId, owner: leaving }));
    const newcomer = w.wallet();
    w.run(requestDeactivationInstruction({ programId, authority, domain: 'funds.test' }));
    w.run(cancelDeactivationInstruction({ programId, authority, domain: 'funds.test' }));
    w.run(requestDeactivationInstruction({ programId, authority, domain: 'funds.test' }));
    w.run(requestReclaimInstruction({ programId, delegate, newAuthority: newcomer, domain: 'kept.test' }));
    w.run(cancelReclaimInstruction({ programId, signer: authority, payer: delegate, domain: 'kept.test' }));
    w.run(requestReclaimInstruction({ programId, delegate, newAuthority: newcomer, domain: 'kept.test' }));
    w.advance(DEACTIVATION_WINDOW_SECS + MAILBOX_CLOSE_WINDOW_SECS + RECLAIM_WINDOW_SECS);
    w.run(closeMailboxInstruction({ programId, owner: leaving }));
    w.run(
      settleDomainTimelockInstruction({
        programId,
        domain: 'funds.test',
        record: 'deactivation',
        rentTo: authority,
      }),
    );
    w.run(
      settleDomainTimelockInstruction({
        programId,
        domain: 'kept.test',
        record: 'reclaim',
        rentTo: delegate,
      }),
    );

    // The postoffice's admin: the fees the purchases collected, withdrawn; the role handed over.
    const fees = w.postoffice().feesCollected;
    expect(fees).toBeGreaterThan(0n);
    w.run(withdrawFeesInstruction({ programId, admin: w.admin, to: other, amountLamports: fees }));
    expect(w.postoffice().feesCollected).toBe(0n);
    w.run(proposeAdminInstruction({ programId, admin: w.admin, newAdmin: other }));
    w.run(acceptAdminInstruction({ programId, newAdmin: other }));

    expect([...seen].sort()).toEqual(Object.keys(INSTRUCTION_LAYOUTS).sort());
  });
});
