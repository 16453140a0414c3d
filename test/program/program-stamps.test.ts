// The real mail program against the rules of fromboxes and stamps:
// CreateFrombox, UpdateFrombox, AddStamps, BuyStamps, TopUpStamps,
// ReclaimFromboxStamps, and the client's price quote. Ported from the devnet
// program's tests (chain/devnet/mail-program/mail-program-stamps.test.ts).
import type { PublicKey } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { FROMBOX_SIZE } from '../../chain/client/accounts/index.ts';
import { U64_MAX } from '../../chain/client/bytes.ts';
import { stampQuote } from '../../chain/client/client.ts';
import { fromHash } from '../../chain/client/hash.ts';
import {
  addStampsInstruction,
  buyStampsInstruction,
  createFromboxInstruction,
  reclaimFromboxStampsInstruction,
  topUpStampsInstruction,
  updateFromboxInstruction,
} from '../../chain/client/instructions.ts';
import { expectErr, expectOk, FEE, rent, SURCHARGE, World, without } from '../support/program-world.ts';

const POSTAGE = 20_000n;

describe('CreateFrombox / UpdateFrombox', () => {
  it('lets the mailbox owner set and change a per-sender price', () => {
    const w = new World();
    const owner = w.user();
    const fh = fromHash('alice@ext.example');
    const p = { programId: w.programId, owner, fromHash: fh, requiredPostage: 7n };
    const before = w.balance(owner);
    expectOk(w.run(createFromboxInstruction(p)));
    const fb = w.frombox(fh, owner) as NonNullable<ReturnType<World['frombox']>>;
    expect(fb).toMatchObject({ requiredPostage: 7n, stamps: 0n, postageEscrow: 0n });
    expect(fb.recipient.equals(owner)).toBe(true);
    expect(w.balance(owner)).toBe(before - rent(FROMBOX_SIZE));
    expectErr(w.run(createFromboxInstruction(p)), 'AlreadyExists');
    w.advance(5n);
    expectOk(w.run(updateFromboxInstruction({ ...p, requiredPostage: 0n })));
    expect(w.frombox(fh, owner)).toMatchObject({ requiredPostage: 0n, stamps: 0n });
  });

  it('needs an existing frombox to update, and the owner to sign for their own mailbox', () => {
    const w = new World();
    const owner = w.user();
    const p = { programId: w.programId, owner, fromHash: fromHash('bob@ext.example'), requiredPostage: 1n };
    expectErr(w.run(updateFromboxInstruction(p)), 'NotFound');
    expectErr(w.run(without(createFromboxInstruction(p), 0, 'isSigner')), 'MissingSigner');
    const stranger = w.user();
    // The stranger signs but names the owner's mailbox and frombox.
    const ix = createFromboxInstruction({ ...p, owner: stranger });
    (ix.keys[1] as { pubkey: PublicKey }).pubkey = (
      createFromboxInstruction(p).keys[1] as { pubkey: PublicKey }
    ).pubkey;
    expectErr(w.run(ix), 'InvalidPda');
    const nobody = w.wallet();
    expectErr(w.run(createFromboxInstruction({ ...p, owner: nobody })), 'NotFound');
  });
});

describe('BuyStamps', () => {
  it('creates the frombox at the mailbox default and charges postage + surcharge + fee + rent', () => {
    const w = new World();
    const buyer = w.wallet();
    const recipient = w.user({ defaultPostage: POSTAGE });
    const quote = stampQuote({
      postoffice: w.postoffice(),
      mailbox: w.mailbox(recipient),
      frombox: null,
      buyer,
      stamps: 3n,
    });
    expect(quote).toMatchObject({
      postage: POSTAGE,
      surcharge: SURCHARGE,
      fee: FEE,
      rent: rent(FROMBOX_SIZE),
    });
    const before = w.balance(buyer);
    const poBefore = w.balance(w.postofficeAddress());
    // The ceiling bounds the whole price of one stamp: postage + surcharge + fee.
    const buy = (maxPriceLamports: bigint) =>
      buyStampsInstruction({ programId: w.programId, buyer, recipient, stamps: 3n, maxPriceLamports });
    expect(quote.perStamp).toBe(POSTAGE + SURCHARGE + FEE);
    expectErr(w.run(buy(quote.perStamp - 1n)), 'PriceAboveCeiling');
    expectErr(w.run(buy(POSTAGE)), 'PriceAboveCeiling');
    expect(w.balance(buyer)).toBe(before);
    expectOk(w.run(buy(quote.perStamp)));
    expect(w.balance(buyer)).toBe(before - quote.total);
    expect(quote.total).toBe(3n * (POSTAGE + SURCHARGE + FEE) + rent(FROMBOX_SIZE));
    const fh = fromHash(buyer);
    expect(w.frombox(fh, recipient)).toMatchObject({
      requiredPostage: POSTAGE,
      stamps: 3n,
      postageEscrow: 3n * POSTAGE,
    });
    expect(w.balance(w.fromboxAddress(fh, recipient))).toBe(rent(FROMBOX_SIZE) + 3n * (POSTAGE + SURCHARGE));
    expect(w.balance(w.postofficeAddress())).toBe(poBefore + 3n * FEE);
    expect(w.postoffice().feesCollected).toBe(3n * FEE);
    expectErr(
      w.run(buyStampsInstruction({ programId: w.programId, buyer, recipient, stamps: 1n })),
      'AlreadyExists',
    );
  });

  it('refuses a price above the ceiling and zero stamps from a stranger', () => {
    const w = new World();
    const buyer = w.wallet();
    const recipient = w.user({ defaultPostage: POSTAGE });
    const p = { programId: w.programId, buyer, recipient };
    expectErr(
      w.run(buyStampsInstruction({ ...p, stamps: 1n, maxPriceLamports: POSTAGE - 1n })),
      'PriceAboveCeiling',
    );
    expectErr(w.run(buyStampsInstruction({ ...p, stamps: 0n })), 'InvalidArgument');
    expectErr(w.run(buyStampsInstruction({ ...p, stamps: U64_MAX })), 'InvalidArgument');
    const poor = w.wallet(rent(FROMBOX_SIZE));
    expectErr(w.run(buyStampsInstruction({ ...p, buyer: poor, stamps: 1n })), 'InsufficientFunds');
    expect(w.frombox(fromHash(buyer), recipient)).toBeNull();
  });

  it("waives the fee toward one's own mailbox and allows zero stamps there", () => {
    const w = new World();
    const owner = w.user({ defaultPostage: POSTAGE });
    const before = w.balance(owner);
    expectOk(
      w.run(buyStampsInstruction({ programId: w.programId, buyer: owner, recipient: owner, stamps: 0n })),
    );
    expect(w.balance(owner)).toBe(before - rent(FROMBOX_SIZE));
    expectOk(
      w.run(topUpStampsInstruction({ programId: w.programId, buyer: owner, recipient: owner, stamps: 2n })),
    );
    expect(w.balance(owner)).toBe(before - rent(FROMBOX_SIZE) - 2n * (POSTAGE + SURCHARGE));
    expect(w.postoffice().feesCollected).toBe(0n);
  });
});

describe('TopUpStamps', () => {
  it('buys at the frombox price and honours the ceiling', () => {
    const w = new World();
    const buyer = w.wallet();
    const recipient = w.user({ defaultPostage: POSTAGE });
    const p = { programId: w.programId, buyer, recipient };
    expectErr(w.run(topUpStampsInstruction({ ...p, stamps: 1n })), 'NotFound');
    expectOk(w.run(buyStampsInstruction({ ...p, stamps: 1n })));
    const fh = fromHash(buyer);
    const upd = { programId: w.programId, owner: recipient, fromHash: fh, requiredPostage: 2n * POSTAGE };
    expectOk(w.run(updateFromboxInstruction(upd)));
    expectErr(
      w.run(topUpStampsInstruction({ ...p, stamps: 1n, maxPriceLamports: POSTAGE })),
      'PriceAboveCeiling',
    );
    const quote = stampQuote({
      postoffice: w.postoffice(),
      mailbox: w.mailbox(recipient),
      frombox: w.frombox(fh, recipient),
      buyer,
      stamps: 2n,
    });
    const before = w.balance(buyer);
    expectErr(
      w.run(topUpStampsInstruction({ ...p, stamps: 2n, maxPriceLamports: quote.perStamp - 1n })),
      'PriceAboveCeiling',
    );
    expect(w.balance(buyer)).toBe(before);
    expectOk(w.run(topUpStampsInstruction({ ...p, stamps: 2n, maxPriceLamports: quote.perStamp })));
    expect(w.balance(buyer)).toBe(before - quote.total);
    expect(quote.rent).toBe(0n);
    expect(w.frombox(fh, recipient)).toMatchObject({
      stamps: 3n,
      postageEscrow: 5n * POSTAGE,
    });
  });
});

describe('AddStamps', () => {
  it('funds any existing frombox and refuses a missing one', () => {
    const w = new World();
    const recipient = w.user({ defaultPostage: 1n });
    const fh = fromHash('carol@ext.example');
    const patron = w.wallet();
    const p = { programId: w.programId, payer: patron, recipient, fromHash: fh, stamps: 2n };
    expectErr(w.run(addStampsInstruction(p)), 'NotFound');
    expectOk(
      w.run(
        createFromboxInstruction({
          programId: w.programId,
          owner: recipient,
          fromHash: fh,
          requiredPostage: 300n,
        }),
      ),
    );
    const before = w.balance(patron);
    expectOk(w.run(addStampsInstruction(p)));
    expect(w.balance(patron)).toBe(before - 2n * (300n + SURCHARGE + FEE));
    expect(w.frombox(fh, recipient)).toMatchObject({ stamps: 2n, postageEscrow: 600n });
    expectErr(w.run(addStampsInstruction({ ...p, stamps: 0n })), 'InvalidArgument');
    expectErr(w.run(without(addStampsInstruction(p), 3, 'isWritable')), 'NotWritable');
  });
});

describe('ReclaimFromboxStamps', () => {
  it('refunds unspent postage and surcharges, not fees', () => {
    const w = new World();
    const buyer = w.wallet();
    const recipient = w.user({ defaultPostage: POSTAGE });
    const p = { programId: w.programId, buyer, recipient };
    expectErr(
      w.run(reclaimFromboxStampsInstruction({ programId: w.programId, sender: buyer, recipient })),
      'NotFound',
    );
    expectOk(w.run(buyStampsInstruction({ ...p, stamps: 3n })));
    const before = w.balance(buyer);
    expectOk(w.run(reclaimFromboxStampsInstruction({ programId: w.programId, sender: buyer, recipient })));
    expect(w.balance(buyer)).toBe(before + 3n * (POSTAGE + SURCHARGE));
    const fh = fromHash(buyer);
    expect(w.frombox(fh, recipient)).toMatchObject({ stamps: 0n, postageEscrow: 0n });
    expect(w.balance(w.fromboxAddress(fh, recipient))).toBe(rent(FROMBOX_SIZE));
    expect(w.postoffice().feesCollected).toBe(3n * FEE);
    expectErr(
      w.run(reclaimFromboxStampsInstruction({ programId: w.programId, sender: buyer, recipient })),
      'NothingToClaim',
    );
  });

  it("only reaches the signer's own frombox", () => {
    const w = new World();
    const buyer = w.wallet();
    const thief = w.wallet();
    const recipient = w.user({ defaultPostage: POSTAGE });
    expectOk(w.run(buyStampsInstruction({ programId: w.programId, buyer, recipient, stamps: 1n })));
    const ix = reclaimFromboxStampsInstruction({ programId: w.programId, sender: thief, recipient });
    (ix.keys[2] as { pubkey: PublicKey }).pubkey = w.fromboxAddress(fromHash(buyer), recipient);
    expectErr(w.run(ix), 'InvalidPda');
  });
});
