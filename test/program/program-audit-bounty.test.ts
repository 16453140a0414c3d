import type { PublicKey } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { emailSize } from '../../chain/client/accounts/index.ts';
import { fromHash } from '../../chain/client/hash.ts';
import {
  claimBountyInstruction,
  deleteMailInstruction,
  sendMailInstruction,
} from '../../chain/client/instructions.ts';
import { expectOk, refusedUnchanged, rent, World } from '../support/program-world.ts';

const CID = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy';
const BOUNTY = 50_000n;
const WINDOW = 3_600n;
const EMAIL_RENT = rent(emailSize(CID));

/** A world with one direct Email carrying a bounty that expires WINDOW seconds from now. */
function withBounty() {
  const w = new World();
  const sender = w.wallet();
  const recipient = w.user();
  const expiresAt = w.now + WINDOW;
  const send = sendMailInstruction({
    programId: w.programId,
    sender,
    recipient,
    index: 0n,
    fromHash: fromHash(sender),
    cid: CID,
    bountyLamports: BOUNTY,
    expiresAt,
  });
  expectOk(w.run(send));
  const email = w.emailAddress(recipient, 0n);
  expect(w.balance(email)).toBe(EMAIL_RENT + BOUNTY);
  const del = (signer: PublicKey) =>
    deleteMailInstruction({ programId: w.programId, signer, email, rentPayer: sender });
  const claim = () => claimBountyInstruction({ programId: w.programId, recipient, email });
  return { w, sender, recipient, email, expiresAt, del, claim };
}

describe('finding 3: the sender taking a bounty back inside its window', () => {
  it("is refused with BountyLocked, and the recipient's ClaimBounty then succeeds", () => {
    const { w, sender, recipient, email, del, claim } = withBounty();
    // The attack: right after sending, the sender deletes the Email. The
    // audited binary closed it and paid rent + bounty back to the sender; the
    // recipient's ClaimBounty then failed with NotFound.
    refusedUnchanged(w, del(sender), 'BountyLocked', [recipient]);
    w.advance(WINDOW - 1n);
    // Still locked in the window's last second.
    refusedUnchanged(w, del(sender), 'BountyLocked', [recipient]);
    expect(w.email(recipient, 0n).bountyLamports).toBe(BOUNTY);

    const before = w.balance(recipient);
    expectOk(w.run(claim()));
    expect(w.balance(recipient)).toBe(before + BOUNTY);
    expect(w.balance(email)).toBe(EMAIL_RENT);
    // A claimed bounty locks nothing: the sender may delete and gets the rent back.
    const s0 = w.balance(sender);
    expectOk(w.run(del(sender)));
    expect(w.balance(sender)).toBe(s0 + EMAIL_RENT);
    expect(w.exists(email)).toBe(false);
  });

  it('after expiry the sender deletes it and rent_payer gets rent + the unclaimed bounty', () => {
    const { w, sender, recipient, email, expiresAt, del, claim } = withBounty();
    refusedUnchanged(w, del(sender), 'BountyLocked', [recipient]);
    w.advance(WINDOW);
    expect(w.now).toBe(expiresAt);
    refusedUnchanged(w, claim(), 'BountyExpired', [sender]);
    const [s0, r0] = [w.balance(sender), w.balance(recipient)];
    expectOk(w.run(del(sender)));
    expect(w.balance(sender)).toBe(s0 + EMAIL_RENT + BOUNTY);
    expect(w.balance(recipient)).toBe(r0);
    expect(w.exists(email)).toBe(false);
  });

  it('the recipient may delete at any time, inside the window too (giving the bounty up to rent_payer)', () => {
    const { w, sender, recipient, email, del } = withBounty();
    const stranger = w.wallet();
    refusedUnchanged(
      w,
      deleteMailInstruction({ programId: w.programId, signer: stranger, email, rentPayer: sender }),
      'Unauthorized',
      [recipient],
    );
    const [s0, r0] = [w.balance(sender), w.balance(recipient)];
    expectOk(w.run(del(recipient)));
    expect(w.balance(sender)).toBe(s0 + EMAIL_RENT + BOUNTY);
    expect(w.balance(recipient)).toBe(r0);
    expect(w.exists(email)).toBe(false);
  });

  it('an Email without a bounty is the sender’s to delete at once, as before', () => {
    const w = new World();
    const sender = w.wallet();
    const recipient = w.user();
    const programId = w.programId;
    expectOk(
      w.run(
        sendMailInstruction({
          programId,
          sender,
          recipient,
          index: 0n,
          fromHash: fromHash(sender),
          cid: CID,
        }),
      ),
    );
    const s0 = w.balance(sender);
    expectOk(
      w.run(deleteMailInstruction({ programId, signer: sender, recipient, index: 0n, rentPayer: sender })),
    );
    expect(w.balance(sender)).toBe(s0 + EMAIL_RENT);
  });
});
