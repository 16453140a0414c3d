// What the real runtime adds to the devnet program's rules, and how the C
// program answers it with its own errors instead of a transaction-level
// failure: no account may be left between 0 and its rent-exempt minimum
// (payers, and wallets the program credits), System transfers debit only
// data-less System accounts, and a PDA that already holds lamports is still
// created (Transfer + Allocate + Assign), its earlier lamports kept.
import { PublicKey } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { emailSize, FROMBOX_SIZE, MAILBOX_SIZE } from '../../chain/client/accounts/index.ts';
import { fromHash } from '../../chain/client/hash.ts';
import {
  buyStampsInstruction,
  claimBountyInstruction,
  createMailboxInstruction,
  sendMailInstruction,
} from '../../chain/client/instructions.ts';
import { mailboxAddress } from '../../chain/client/pda.ts';
import { expectErr, expectOk, FEE, rent, SURCHARGE, World } from '../support/program-world.ts';

const CID = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy';
const WALLET_RENT = rent(0);

describe('payers', () => {
  it('may be emptied but not left below rent exemption', () => {
    const w = new World({ seed: 31 });
    const programId = w.programId;
    const almost = w.wallet(rent(MAILBOX_SIZE) + 1_000n);
    expectErr(w.run(createMailboxInstruction({ programId, owner: almost })), 'InsufficientFunds');
    expect(w.exists(mailboxAddress(programId, almost)[0])).toBe(false);
    const exact = w.wallet(rent(MAILBOX_SIZE));
    expectOk(w.run(createMailboxInstruction({ programId, owner: exact })));
    expect(w.balance(exact)).toBe(0n);
    const plenty = w.wallet(rent(MAILBOX_SIZE) + WALLET_RENT);
    expectOk(w.run(createMailboxInstruction({ programId, owner: plenty })));
    expect(w.balance(plenty)).toBe(WALLET_RENT);
  });

  it('must be System accounts without data', () => {
    const w = new World({ seed: 32 });
    const owner = w.wallet();
    // A signer whose System account carries data cannot pay through System transfers.
    w.put(owner, { lamports: 10_000_000_000n, owner: PublicKey.default, data: new Uint8Array(4) });
    expectErr(w.run(createMailboxInstruction({ programId: w.programId, owner })), 'InvalidAccount');
  });
});

describe('credited wallets', () => {
  it('refuse a stamp that would leave the recipient wallet below rent exemption', () => {
    const w = new World({ seed: 33 });
    const programId = w.programId;
    const payer = w.wallet();
    const recipient = w.wallet(0n);
    expectOk(w.run(createMailboxInstruction({ programId, owner: recipient, payer, defaultPostage: 10n })));
    const sender = w.wallet();
    expectOk(w.run(buyStampsInstruction({ programId, buyer: sender, recipient, stamps: 1n })));
    const send = () =>
      sendMailInstruction({ programId, sender, recipient, index: 0n, fromHash: fromHash(sender), cid: CID });
    expectErr(w.run(send()), 'InsufficientFunds');
    w.fund(recipient, WALLET_RENT);
    expectOk(w.run(send()));
    expect(w.balance(recipient)).toBe(WALLET_RENT + 10n);
  });

  it('refuse a bounty too small to make an empty recipient wallet rent-exempt', () => {
    const w = new World({ seed: 34 });
    const programId = w.programId;
    const payer = w.wallet();
    const recipient = w.wallet(0n);
    expectOk(w.run(createMailboxInstruction({ programId, owner: recipient, payer })));
    const sender = w.wallet();
    const bounty = { bountyLamports: 7_000n, expiresAt: w.now + 100n };
    expectOk(
      w.run(
        sendMailInstruction({
          programId,
          sender,
          recipient,
          index: 0n,
          fromHash: fromHash(sender),
          cid: CID,
          ...bounty,
        }),
      ),
    );
    expectErr(w.run(claimBountyInstruction({ programId, recipient, index: 0n })), 'InsufficientFunds');
    w.fund(recipient, WALLET_RENT);
    expectOk(w.run(claimBountyInstruction({ programId, recipient, index: 0n })));
    expect(w.balance(recipient)).toBe(WALLET_RENT + 7_000n);
  });
});

describe('SendMail', () => {
  it('lets the surcharge of the spent stamp help pay for the Email, as the reference does', () => {
    const w = new World({ seed: 36 });
    const programId = w.programId;
    const recipient = w.user({ defaultPostage: 10n });
    const sender = w.wallet();
    expectOk(w.run(buyStampsInstruction({ programId, buyer: sender, recipient, stamps: 2n })));
    const send = (index: bigint) =>
      sendMailInstruction({ programId, sender, recipient, index, fromHash: fromHash(sender), cid: CID });
    const cost = rent(emailSize(CID));
    w.put(sender, { lamports: cost - SURCHARGE - 1n, owner: PublicKey.default, data: new Uint8Array(0) });
    expectErr(w.run(send(0n)), 'InsufficientFunds');
    w.put(sender, { lamports: cost - SURCHARGE, owner: PublicKey.default, data: new Uint8Array(0) });
    const before = w.balance(recipient);
    expectOk(w.run(send(0n)));
    expect(w.balance(sender)).toBe(0n);
    expect(w.balance(recipient)).toBe(before + 10n);
    expect(w.frombox(fromHash(sender), recipient)).toMatchObject({ stamps: 1n, postageEscrow: 10n });
  });
});

describe('PDAs that already hold lamports', () => {
  it('are created with the payment on top of what they held', () => {
    const w = new World({ seed: 35 });
    const programId = w.programId;
    const recipient = w.user({ defaultPostage: 100n });
    const buyer = w.wallet();
    const fb = w.fromboxAddress(fromHash(buyer), recipient);
    w.fund(fb, 5n);
    const before = w.balance(buyer);
    expectOk(w.run(buyStampsInstruction({ programId, buyer, recipient, stamps: 2n })));
    expect(w.balance(fb)).toBe(5n + rent(FROMBOX_SIZE) + 2n * (100n + SURCHARGE));
    expect(w.balance(buyer)).toBe(before - rent(FROMBOX_SIZE) - 2n * (100n + SURCHARGE + FEE));
    expect(w.frombox(fromHash(buyer), recipient)).toMatchObject({ stamps: 2n, postageEscrow: 200n });
    // And with a bounty: rent + bounty paid, the early lamports kept.
    const email = w.emailAddress(recipient, 0n);
    w.fund(email, 3n);
    const bounty = { bountyLamports: 9_000n, expiresAt: w.now + 10n };
    expectOk(
      w.run(
        sendMailInstruction({
          programId,
          sender: recipient,
          recipient,
          index: 0n,
          fromHash: fromHash(recipient),
          cid: CID,
          ...bounty,
        }),
      ),
    );
    expect(w.balance(email)).toBe(3n + rent(emailSize(CID)) + 9_000n);
    expect(w.email(recipient, 0n).bountyLamports).toBe(9_000n);
  });
});
