// The reader's Delete plan (webmail/src/chain/delete-mail.ts) against a real
// devnet, for the sender of a message with a bounty: while the recipient may
// still claim it, the page refuses before anything is signed, and the
// program agrees (the same DeleteMail sent anyway fails BountyLocked); a
// wallet that is neither party is refused too; the recipient is told it
// forfeits the bounty; once the window is over the sender's plan names the
// rent and the bounty coming back, and signing it closes the account.
import { PublicKey } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { fromHash } from '../../chain/client/hash.ts';
import {
  deleteMailInstruction,
  emailAddress,
  getEmailAt,
  getMailbox,
  sendMailInstruction,
} from '../../chain/client/index.ts';
import { prepareDeleteMail } from '../../webmail/src/chain/delete-mail.ts';
import { startTestChain, waitForChainTime } from '../support/devnet.ts';
import { prepareMailChain } from '../support/mail-chain.ts';

const CID = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy';
const BOUNTY = 50_000n;

describe('webmail Delete: the bounty rule for the sender', () => {
  it('refuses the sender inside the claim window (as the program does), allows it after, and warns the recipient', async () => {
    const chain = await startTestChain();
    const conn = chain.connection;
    const p = chain.programId;
    const mail = await prepareMailChain(chain, 'mail.test');
    const alice = await mail.mailbox();
    const bob = await mail.mailbox();
    const carol = await chain.funded();

    const slot = await conn.getSlot('confirmed');
    const chainNow = (await conn.getBlockTime(slot)) ?? Math.floor(Date.now() / 1000);
    const expiresAt = chainNow + 6;
    const index = (await getMailbox(conn, p, bob.publicKey))?.mailCount ?? 0n;
    await chain.send(
      [
        sendMailInstruction({
          programId: p,
          sender: alice.publicKey,
          recipient: bob.publicKey,
          index,
          fromHash: fromHash(alice.publicKey.toBase58()),
          cid: CID,
          bountyLamports: BOUNTY,
          expiresAt: BigInt(expiresAt),
        }),
      ],
      [alice],
    );
    const address = emailAddress(p, bob.publicKey, index)[0].toBase58();
    const ctx = (wallet: PublicKey) => ({ conn, programId: p, wallet });

    // The sender, inside the window: refused in words, nothing signed.
    await expect(prepareDeleteMail(ctx(alice.publicKey), address)).rejects.toThrow(
      /is the recipient's to claim until .*; the sender can delete this message only after that\. Nothing was signed\./,
    );
    // The program holds the same rule: the sender's DeleteMail sent anyway fails and moves nothing.
    const recipientPlan = await prepareDeleteMail(ctx(bob.publicKey), address);
    expect(
      await chain.refusal(
        [
          deleteMailInstruction({
            programId: p,
            signer: alice.publicKey,
            email: address,
            rentPayer: alice.publicKey,
          }),
        ],
        [alice],
      ),
    ).toBe('BountyLocked');
    expect((await getEmailAt(conn, p, address))?.bountyLamports).toBe(BOUNTY);

    // Neither party: refused.
    await expect(prepareDeleteMail(ctx(carol.publicKey), address)).rejects.toThrow(
      /Only the recipient or the sender may delete this message/,
    );

    // The recipient may delete now, and is told the bounty it could claim goes back to the sender.
    expect(recipientPlan.forfeitedBounty).toBe(BOUNTY);
    expect(recipientPlan.title).toBe('Delete this message and forfeit its bounty?');
    expect(recipientPlan.summary).toMatch(/deleting forfeits it, and it goes back to the sender/);

    // After the window the sender may delete: rent and bounty come back to it (it paid for the send).
    await waitForChainTime(conn, expiresAt + 1);
    const plan = await prepareDeleteMail(ctx(alice.publicKey), address);
    expect(plan.forfeitedBounty).toBe(0n);
    expect(plan.rentPayer).toBe(alice.publicKey.toBase58());
    const accountLamports = BigInt(await conn.getBalance(new PublicKey(address), 'confirmed'));
    expect(plan.accountLamports).toBe(accountLamports);
    const returned = plan.rows
      .filter((r) => r.testId === 'cost-returned' || r.testId === 'cost-bounty')
      .reduce((s, r) => s - r.lamports, 0n);
    expect(returned).toBe(accountLamports);
    const before = BigInt(await conn.getBalance(alice.publicKey, 'confirmed'));
    await chain.send(plan.instructions, [alice]);
    expect(await getEmailAt(conn, p, address)).toBeNull();
    // Everything in the account came back, less the signature fee (no priority fee is set here).
    expect(BigInt(await conn.getBalance(alice.publicKey, 'confirmed')) - before).toBe(
      accountLamports - 5000n,
    );
  }, 60_000);
});
