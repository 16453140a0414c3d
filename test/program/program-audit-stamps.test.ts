import { describe, expect, it } from 'vitest';
import { emailSize, FROMBOX_SIZE, POSTOFFICE_SIZE } from '../../chain/client/accounts/index.ts';
import { fromHash } from '../../chain/client/hash.ts';
import {
  addStampsInstruction,
  buyStampsInstruction,
  createFromboxInstruction,
  reclaimFromboxStampsInstruction,
  sendMailInstruction,
  setMailboxFlagsInstruction,
  topUpStampsInstruction,
  updateFromboxInstruction,
  updatePostofficeInstruction,
} from '../../chain/client/instructions.ts';
import { expectOk, FEE, refusedUnchanged, rent, SOL, SURCHARGE, World } from '../support/program-world.ts';

const CID = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy';
const POSTAGE = 20_000n;
const PER_STAMP = POSTAGE + SURCHARGE + FEE;
const FRONT_RUN = 30n * SOL;
const EMAIL_RENT = rent(emailSize(CID));
// Postoffice fields (docs/protocol.md "Postoffice"), for writing a fee change in directly.
const PO_STAMP_FEE = 129;
const PO_SURCHARGE = 137;

/** Writes one u64 field of the Postoffice in place: the state a fee change leaves, without the instruction. */
function setPostofficeU64(w: World, offset: number, value: bigint): void {
  const data = Uint8Array.from(w.data(w.postofficeAddress()) as Uint8Array);
  new DataView(data.buffer).setBigUint64(offset, value, true);
  w.patch(w.postofficeAddress(), data);
}

describe('finding 2: a price change landing before a purchase', () => {
  it("AddStamps: the recipient's UpdateFrombox to 30 SOL lands first, the payer's ceiling refuses it", () => {
    const w = new World();
    const programId = w.programId;
    const recipient = w.user();
    const carol = fromHash('carol@ext.example');
    const price = { programId, owner: recipient, fromHash: carol };
    expectOk(w.run(createFromboxInstruction({ ...price, requiredPostage: POSTAGE })));
    const patron = w.wallet(200n * SOL);
    const buy = (stamps: bigint, maxPriceLamports?: bigint) =>
      addStampsInstruction({
        programId,
        payer: patron,
        recipient,
        fromHash: carol,
        stamps,
        ...(maxPriceLamports === undefined ? {} : { maxPriceLamports }),
      });

    // The patron quotes 26,000 lamports a stamp and sends AddStamps for 3 with that ceiling;
    // the recipient's reprice to 30 SOL is ordered before it.
    expectOk(w.run(updateFromboxInstruction({ ...price, requiredPostage: FRONT_RUN })));
    // On the audited binary AddStamps took no ceiling: the patron paid 90 SOL and change.
    refusedUnchanged(w, buy(3n, PER_STAMP), 'PriceAboveCeiling', [w.authority]);
    expect(w.frombox(carol, recipient)).toMatchObject({ stamps: 0n, postageEscrow: 0n });
    expect(w.postoffice().feesCollected).toBe(0n);

    // Without a ceiling the live price is what is charged (the payer's choice).
    const p0 = w.balance(patron);
    expectOk(w.run(buy(1n)));
    expect(w.balance(patron)).toBe(p0 - (FRONT_RUN + SURCHARGE + FEE));

    // The ceiling bounds postage + surcharge + fee, not the postage alone.
    expectOk(w.run(updateFromboxInstruction({ ...price, requiredPostage: POSTAGE })));
    refusedUnchanged(w, buy(1n, POSTAGE), 'PriceAboveCeiling');
    refusedUnchanged(w, buy(1n, PER_STAMP - 1n), 'PriceAboveCeiling');
    const p1 = w.balance(patron);
    expectOk(w.run(buy(2n, PER_STAMP)));
    expect(w.balance(patron)).toBe(p1 - 2n * PER_STAMP);
    expect(w.frombox(carol, recipient)).toMatchObject({
      stamps: 3n,
      postageEscrow: FRONT_RUN + 2n * POSTAGE,
    });
  });

  it("BuyStamps: the recipient's new default postage lands first, the buyer's ceiling refuses it", () => {
    const w = new World();
    const programId = w.programId;
    const recipient = w.user({ defaultPostage: POSTAGE });
    const buyer = w.wallet(200n * SOL);
    const buy = (maxPriceLamports: bigint) =>
      buyStampsInstruction({ programId, buyer, recipient, stamps: 3n, maxPriceLamports });
    expectOk(w.run(setMailboxFlagsInstruction({ programId, owner: recipient, defaultPostage: FRONT_RUN })));
    refusedUnchanged(w, buy(PER_STAMP), 'PriceAboveCeiling', [recipient]);
    expect(w.frombox(fromHash(buyer), recipient)).toBeNull();

    expectOk(w.run(setMailboxFlagsInstruction({ programId, owner: recipient, defaultPostage: POSTAGE })));
    // The audited binary compared the postage only and sold at a ceiling of POSTAGE.
    refusedUnchanged(w, buy(POSTAGE), 'PriceAboveCeiling');
    refusedUnchanged(w, buy(PER_STAMP - 1n), 'PriceAboveCeiling');
    const b0 = w.balance(buyer);
    expectOk(w.run(buy(PER_STAMP)));
    expect(w.balance(buyer)).toBe(b0 - 3n * PER_STAMP - rent(FROMBOX_SIZE));
  });

  it("TopUpStamps: the recipient's UpdateFrombox to 30 SOL lands first, the buyer's ceiling refuses it", () => {
    const w = new World();
    const programId = w.programId;
    const recipient = w.user({ defaultPostage: POSTAGE });
    const buyer = w.wallet(200n * SOL);
    const hash = fromHash(buyer);
    expectOk(
      w.run(buyStampsInstruction({ programId, buyer, recipient, stamps: 1n, maxPriceLamports: PER_STAMP })),
    );
    const top = (maxPriceLamports: bigint) =>
      topUpStampsInstruction({ programId, buyer, recipient, stamps: 5n, maxPriceLamports });
    expectOk(
      w.run(
        updateFromboxInstruction({ programId, owner: recipient, fromHash: hash, requiredPostage: FRONT_RUN }),
      ),
    );
    refusedUnchanged(w, top(PER_STAMP), 'PriceAboveCeiling', [recipient]);
    expect(w.frombox(hash, recipient)).toMatchObject({ stamps: 1n, postageEscrow: POSTAGE });

    expectOk(
      w.run(
        updateFromboxInstruction({ programId, owner: recipient, fromHash: hash, requiredPostage: POSTAGE }),
      ),
    );
    refusedUnchanged(w, top(POSTAGE), 'PriceAboveCeiling');
    expectOk(w.run(top(PER_STAMP)));
    expect(w.frombox(hash, recipient)).toMatchObject({ stamps: 6n, postageEscrow: 6n * POSTAGE });
  });

  it("the admin's fee or surcharge raise lands first: every kind of purchase with a ceiling is refused", () => {
    const w = new World();
    const programId = w.programId;
    const recipient = w.user({ defaultPostage: POSTAGE });
    const buyer = w.wallet(200n * SOL);
    const carol = fromHash('carol@ext.example');
    expectOk(
      w.run(
        createFromboxInstruction({ programId, owner: recipient, fromHash: carol, requiredPostage: POSTAGE }),
      ),
    );
    expectOk(w.run(updatePostofficeInstruction({ programId, admin: w.admin, stampFeeLamports: SOL })));
    expect(w.postoffice()).toMatchObject({ stampFeeLamports: SOL, settlementSurchargeLamports: SURCHARGE });
    const watch = [w.postofficeAddress(), recipient];
    refusedUnchanged(
      w,
      buyStampsInstruction({ programId, buyer, recipient, stamps: 2n, maxPriceLamports: PER_STAMP }),
      'PriceAboveCeiling',
      watch,
    );
    refusedUnchanged(
      w,
      addStampsInstruction({
        programId,
        payer: buyer,
        recipient,
        fromHash: carol,
        stamps: 2n,
        maxPriceLamports: PER_STAMP,
      }),
      'PriceAboveCeiling',
      watch,
    );
    // The fee is waived toward one's own mailbox: its owner's ceiling is postage + surcharge.
    expectOk(
      w.run(
        buyStampsInstruction({
          programId,
          buyer: recipient,
          recipient,
          stamps: 1n,
          maxPriceLamports: POSTAGE + SURCHARGE,
        }),
      ),
    );

    // A surcharge raise is refused the same way (TopUpStamps on the owner's own frombox).
    expectOk(
      w.run(updatePostofficeInstruction({ programId, admin: w.admin, settlementSurchargeLamports: SOL })),
    );
    refusedUnchanged(
      w,
      topUpStampsInstruction({
        programId,
        buyer: recipient,
        recipient,
        stamps: 1n,
        maxPriceLamports: POSTAGE + SURCHARGE,
      }),
      'PriceAboveCeiling',
      watch,
    );
    expect(w.postoffice().feesCollected).toBe(0n);
    expect(w.balance(w.postofficeAddress())).toBe(rent(POSTOFFICE_SIZE));
  });
});

describe('the ceiling counts the live fee and surcharge, however they changed', () => {
  it('a fee or surcharge written into the Postoffice before a purchase is refused by the ceiling', () => {
    // The same front-run as UpdatePostoffice's, with the fields written in
    // place: the audited binary compared the ceiling with the postage alone,
    // so it sold at a fee of 1 SOL a stamp to a buyer who agreed to 26,000.
    const w = new World();
    const programId = w.programId;
    const recipient = w.user({ defaultPostage: POSTAGE });
    const buyer = w.wallet(200n * SOL);
    const buy = () =>
      buyStampsInstruction({ programId, buyer, recipient, stamps: 2n, maxPriceLamports: PER_STAMP });
    setPostofficeU64(w, PO_STAMP_FEE, SOL);
    refusedUnchanged(w, buy(), 'PriceAboveCeiling', [recipient]);
    setPostofficeU64(w, PO_STAMP_FEE, FEE);
    setPostofficeU64(w, PO_SURCHARGE, SOL);
    refusedUnchanged(w, buy(), 'PriceAboveCeiling', [recipient]);
    setPostofficeU64(w, PO_SURCHARGE, SURCHARGE);
    expectOk(w.run(buy()));
    expect(w.frombox(fromHash(buyer), recipient)).toMatchObject({ stamps: 2n, postageEscrow: 2n * POSTAGE });
  });

  it('a surcharge raised in place after a purchase: the bought stamps still pay what they hold', () => {
    // On the audited binary the spend paid the live surcharge (50,000) out of
    // a frombox holding 5,000 per stamp: InsufficientFunds, the stamps stuck.
    const w = new World();
    const programId = w.programId;
    const recipient = w.user({ defaultPostage: 10_000n });
    const sender = w.wallet();
    expectOk(w.run(buyStampsInstruction({ programId, buyer: sender, recipient, stamps: 2n })));
    setPostofficeU64(w, PO_SURCHARGE, 10n * SURCHARGE);
    const hash = fromHash(sender);
    for (let i = 0; i < 2; i++) {
      const s0 = w.balance(sender);
      const index = w.mailbox(recipient).mailCount;
      expectOk(w.run(sendMailInstruction({ programId, sender, recipient, index, fromHash: hash, cid: CID })));
      expect(w.balance(sender)).toBe(s0 - EMAIL_RENT + SURCHARGE);
    }
    expect(w.balance(w.fromboxAddress(hash, recipient))).toBe(rent(FROMBOX_SIZE));
  });
});

describe('the surcharge is fixed at purchase', () => {
  it('stamps bought before UpdatePostoffice raises the surcharge are spent at the surcharge they were sold with', () => {
    const w = new World();
    const programId = w.programId;
    const recipient = w.user({ defaultPostage: 10_000n });
    const sender = w.wallet();
    expectOk(w.run(buyStampsInstruction({ programId, buyer: sender, recipient, stamps: 3n })));
    const hash = fromHash(sender);
    const frombox = w.fromboxAddress(hash, recipient);
    expect(w.balance(frombox)).toBe(rent(FROMBOX_SIZE) + 3n * (10_000n + SURCHARGE));

    // The admin raises the surcharge tenfold and the fee. On the audited
    // binary a spend paid the live surcharge out of the frombox, so the
    // stamps bought at 5,000 could not pay 50,000 (InsufficientFunds) and sat
    // there until reclaimed.
    expectOk(
      w.run(
        updatePostofficeInstruction({
          programId,
          admin: w.admin,
          settlementSurchargeLamports: 10n * SURCHARGE,
          stampFeeLamports: 10n * FEE,
        }),
      ),
    );
    for (let left = 2n; left >= 0n; left--) {
      const [r0, s0, f0] = [w.balance(recipient), w.balance(sender), w.balance(frombox)];
      const ix = sendMailInstruction({
        programId,
        sender,
        recipient,
        index: w.mailbox(recipient).mailCount,
        fromHash: hash,
        cid: CID,
      });
      expectOk(w.run(ix));
      expect(w.balance(recipient)).toBe(r0 + 10_000n);
      expect(w.balance(sender)).toBe(s0 - EMAIL_RENT + SURCHARGE);
      expect(w.balance(frombox)).toBe(f0 - 10_000n - SURCHARGE);
      expect(w.frombox(hash, recipient)).toMatchObject({ stamps: left, postageEscrow: left * 10_000n });
    }
    expect(w.balance(frombox)).toBe(rent(FROMBOX_SIZE));
  });

  it('stamps sold at two surcharges share what the frombox holds; the last takes the remainder and the frombox ends at rent', () => {
    const w = new World();
    const programId = w.programId;
    const recipient = w.user({ defaultPostage: 10_000n });
    const sender = w.wallet();
    const hash = fromHash(sender);
    const frombox = w.fromboxAddress(hash, recipient);
    expectOk(w.run(buyStampsInstruction({ programId, buyer: sender, recipient, stamps: 2n })));
    expectOk(
      w.run(updatePostofficeInstruction({ programId, admin: w.admin, settlementSurchargeLamports: 6_000n })),
    );
    expectOk(
      w.run(
        topUpStampsInstruction({
          programId,
          buyer: sender,
          recipient,
          stamps: 1n,
          maxPriceLamports: 17_000n,
        }),
      ),
    );
    // 2 x 5,000 + 1 x 6,000 = 16,000 held for three spends.
    expect(w.balance(frombox)).toBe(rent(FROMBOX_SIZE) + 30_000n + 16_000n);
    // The admin now drops the surcharge to 0: bought stamps still pay theirs.
    expectOk(
      w.run(updatePostofficeInstruction({ programId, admin: w.admin, settlementSurchargeLamports: 0n })),
    );
    const paid: bigint[] = [];
    for (let i = 0; i < 3; i++) {
      const s0 = w.balance(sender);
      const ix = sendMailInstruction({
        programId,
        sender,
        recipient,
        index: w.mailbox(recipient).mailCount,
        fromHash: hash,
        cid: CID,
      });
      expectOk(w.run(ix));
      paid.push(w.balance(sender) - s0 + EMAIL_RENT);
    }
    expect(paid).toEqual([5_333n, 5_333n, 5_334n]);
    expect(w.balance(frombox)).toBe(rent(FROMBOX_SIZE));
    expect(w.frombox(hash, recipient)).toMatchObject({ stamps: 0n, postageEscrow: 0n });
    refusedUnchanged(w, reclaimFromboxStampsInstruction({ programId, sender, recipient }), 'NothingToClaim');
  });
});
