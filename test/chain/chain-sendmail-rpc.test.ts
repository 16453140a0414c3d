// The mail program over real JSON-RPC: SendMail (relayed and direct),
// postage and stamps, bounties, DeleteMail — each success and refusal.
import type { Keypair, PublicKey } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import {
  addStampsInstruction,
  buyStampsInstruction,
  claimBountyInstruction,
  createDomainInstruction,
  createFromboxInstruction,
  createMailboxInstruction,
  deleteMailInstruction,
  emailAddress,
  fromHash,
  getEmail,
  getFrombox,
  getMailbox,
  getPostoffice,
  initPostofficeInstruction,
  listInbox,
  reclaimFromboxStampsInstruction,
  replyToHash,
  sendMailInstruction,
  setMailboxFlagsInstruction,
  topUpStampsInstruction,
  updateFromboxInstruction,
} from '../../chain/client/index.ts';
import { startTestChain, type TestChain } from '../support/devnet.ts';

const CID = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy';
const B3 = `b3:${'ab'.repeat(32)}`;
const DOMAIN = 'mail.test';
const FEE = 1000n;
const SURCHARGE = 5000n;

interface World {
  chain: TestChain;
  delegate: Keypair;
  authority: Keypair;
}

async function world(opts: { clock?: () => number } = {}): Promise<World> {
  const chain = await startTestChain(opts);
  const delegate = await chain.funded();
  const authority = await chain.funded();
  await chain.send(
    [
      initPostofficeInstruction({
        programId: chain.programId,
        admin: delegate.publicKey,
        upgradeAuthority: chain.upgradeAuthority.publicKey,
        delegateAddress: delegate.publicKey,
        stampFeeLamports: FEE,
        settlementSurchargeLamports: SURCHARGE,
      }),
      createDomainInstruction({
        programId: chain.programId,
        delegate: delegate.publicKey,
        domain: DOMAIN,
        authority: authority.publicKey,
      }),
    ],
    [delegate, chain.upgradeAuthority],
  );
  return { chain, delegate, authority };
}

async function mailbox(w: World, postage = 0n): Promise<Keypair> {
  const owner = await w.chain.funded();
  await w.chain.send(
    [
      createMailboxInstruction({
        programId: w.chain.programId,
        owner: owner.publicKey,
        defaultPostage: postage,
        domain: DOMAIN,
      }),
    ],
    [owner],
  );
  return owner;
}

function relayed(w: World, recipient: PublicKey, index: bigint, from = 'someone@remote.example', cid = CID) {
  return sendMailInstruction({
    programId: w.chain.programId,
    sender: w.authority.publicKey,
    recipient,
    index,
    fromHash: fromHash(from),
    cid,
    domain: DOMAIN,
  });
}

describe('SendMail over JSON-RPC', () => {
  it('relayed by the domain authority: writes the Email account and advances mail_count; inbox lists newest first', async () => {
    const w = await world();
    const bob = await mailbox(w);
    const first = await w.chain.send([relayed(w, bob.publicKey, 0n)], [w.authority]);
    // What the runtime reports: the System CPI that created the Email account, the units, the consumed line.
    const landed = await w.chain.connection.getTransaction(first, { commitment: 'confirmed' });
    const cpi = landed?.meta?.innerInstructions?.[0];
    expect(cpi?.index).toBe(0);
    const keys = landed?.transaction.message.accountKeys.map((k) => k.toBase58()) ?? [];
    expect(cpi?.instructions.map((ix) => keys[ix.programIdIndex])).toContain(
      '11111111111111111111111111111111',
    );
    const units = landed?.meta?.computeUnitsConsumed ?? 0;
    expect(units).toBeGreaterThan(0);
    expect(landed?.meta?.logMessages).toContain(
      `Program ${w.chain.programId} consumed ${units} of 200000 compute units`,
    );
    await w.chain.send(
      [
        relayed(
          w,
          bob.publicKey,
          1n,
          'other@remote.example',
          'bafkreibm6jg3ux5qumhcn2b3flc3tyu6dmlb4xa7u5bf44yegnrjhc4yeq',
        ),
      ],
      [w.authority],
    );
    const email = await getEmail(w.chain.connection, w.chain.programId, bob.publicKey, 0n);
    expect(email).toMatchObject({ index: 0n, cid: CID, bountyLamports: 0n, expiresAt: 0n });
    expect(email?.sender.equals(w.authority.publicKey)).toBe(true);
    expect(email?.recipient.equals(bob.publicKey)).toBe(true);
    expect(Buffer.from(email?.fromHash ?? []).equals(Buffer.from(fromHash('someone@remote.example')))).toBe(
      true,
    );
    expect(email?.epoch).toBeGreaterThan(1_600_000_000n);
    expect((await getMailbox(w.chain.connection, w.chain.programId, bob.publicKey))?.mailCount).toBe(2n);
    const inbox = await listInbox(w.chain.connection, w.chain.programId, bob.publicKey);
    expect(inbox.map((e) => e.email.index)).toEqual([1n, 0n]);
    // Only what is new since a mail_count seen before.
    const since = (after: bigint) =>
      listInbox(w.chain.connection, w.chain.programId, bob.publicKey, { after }).then((l) =>
        l.map((e) => e.email.index),
      );
    expect(await since(1n)).toEqual([1n]);
    expect(await since(2n)).toEqual([]);
  });

  it('refuses a relay signed by a key that is not the domain authority, a stale index, and an existing email', async () => {
    const w = await world();
    const bob = await mailbox(w);
    const impostor = await w.chain.funded();
    const forged = sendMailInstruction({
      programId: w.chain.programId,
      sender: impostor.publicKey,
      recipient: bob.publicKey,
      index: 0n,
      fromHash: fromHash('ceo@bank.example'),
      cid: CID,
      domain: DOMAIN,
    });
    expect(await w.chain.refusal([forged], [impostor])).toBe('Unauthorized');
    // Index 1 while mail_count is 0: the email account is not the expected PDA.
    expect(await w.chain.refusal([relayed(w, bob.publicKey, 1n)], [w.authority])).toBe('InvalidPda');
    await w.chain.send([relayed(w, bob.publicKey, 0n)], [w.authority]);
    expect(await w.chain.refusal([relayed(w, bob.publicKey, 0n)], [w.authority])).toMatch(
      /InvalidPda|AlreadyExists/,
    );
    expect((await getMailbox(w.chain.connection, w.chain.programId, bob.publicKey))?.mailCount).toBe(1n);
  });

  it('direct sends carry the wallet hash; a wrong hash, a relayed bounty and a bounty born expired are refused', async () => {
    const w = await world();
    const bob = await mailbox(w);
    const alice = await w.chain.funded();
    const now = BigInt(Math.floor(Date.now() / 1000));
    const direct = (fromHashValue: Uint8Array, bounty = 0n, expiresAt = 0n, index = 0n) =>
      sendMailInstruction({
        programId: w.chain.programId,
        sender: alice.publicKey,
        recipient: bob.publicKey,
        index,
        fromHash: fromHashValue,
        cid: CID,
        bountyLamports: bounty,
        expiresAt,
      });
    expect(await w.chain.refusal([direct(fromHash('alice@elsewhere.example'))], [alice])).toBe(
      'FromHashMismatch',
    );
    expect(
      await w.chain.refusal([direct(fromHash(alice.publicKey.toBase58()), 50_000n, now - 10n)], [alice]),
    ).toBe('BountyExpired');

    const relayBounty = sendMailInstruction({
      programId: w.chain.programId,
      sender: w.authority.publicKey,
      recipient: bob.publicKey,
      index: 0n,
      fromHash: fromHash('x@remote.example'),
      cid: CID,
      bountyLamports: 1000n,
      expiresAt: now + 3600n,
      domain: DOMAIN,
    });
    expect(await w.chain.refusal([relayBounty], [w.authority])).toBe('BountyNotAllowed');

    const before = await w.chain.balance(alice.publicKey);
    await w.chain.send([direct(fromHash(alice.publicKey.toBase58()), 50_000n, now + 7n * 86_400n)], [alice]);
    const email = await getEmail(w.chain.connection, w.chain.programId, bob.publicKey, 0n);
    expect(email?.bountyLamports).toBe(50_000n);
    expect(email?.sender.equals(alice.publicKey)).toBe(true);
    const info = await w.chain.connection.getAccountInfo(
      emailAddress(w.chain.programId, bob.publicKey, 0n)[0],
    );
    const rent = await w.chain.connection.getMinimumBalanceForRentExemption(info?.data.length ?? 0);
    expect(info?.lamports).toBe(rent + 50_000);
    expect(before - (await w.chain.balance(alice.publicKey))).toBe(rent + 50_000 + 5000);

    // A reply links to its parent by hash only.
    const reply = sendMailInstruction({
      programId: w.chain.programId,
      sender: bob.publicKey,
      recipient: alice.publicKey,
      index: 0n,
      fromHash: fromHash(bob.publicKey.toBase58()),
      cid: CID,
      replyToHash: replyToHash(emailAddress(w.chain.programId, bob.publicKey, 0n)[0]),
    });
    await w.chain.send(
      [createMailboxInstruction({ programId: w.chain.programId, owner: alice.publicKey })],
      [alice],
    );
    await w.chain.send([reply], [bob]);
    const replyEmail = await getEmail(w.chain.connection, w.chain.programId, alice.publicKey, 0n);
    expect(
      Buffer.from(replyEmail?.replyToHash ?? []).equals(
        Buffer.from(replyToHash(emailAddress(w.chain.programId, bob.publicKey, 0n)[0])),
      ),
    ).toBe(true);
  });

  it('no_ipfs mailboxes take only b3: markers; others refuse them', async () => {
    const w = await world();
    const bob = await mailbox(w);
    expect(await w.chain.refusal([relayed(w, bob.publicKey, 0n, 'a@b.example', B3)], [w.authority])).toBe(
      'InvalidArgument',
    );
    await w.chain.send(
      [setMailboxFlagsInstruction({ programId: w.chain.programId, owner: bob.publicKey, noIpfs: true })],
      [bob],
    );
    expect(await w.chain.refusal([relayed(w, bob.publicKey, 0n)], [w.authority])).toBe('NoIpfs');
    await w.chain.send([relayed(w, bob.publicKey, 0n, 'a@b.example', B3)], [w.authority]);
    expect((await getEmail(w.chain.connection, w.chain.programId, bob.publicKey, 0n))?.cid).toBe(B3);
  });
});

describe('postage and stamps over JSON-RPC', () => {
  it('a gated mailbox refuses first contact; stamps bought with AddStamps are spent one per send', async () => {
    const w = await world();
    const carol = await mailbox(w, 20_000n);
    const from = 'stranger@remote.example';
    expect(await w.chain.refusal([relayed(w, carol.publicKey, 0n, from)], [w.authority])).toBe(
      'PostageRequired',
    );

    // The recipient prices this sender; anyone then funds stamps for it.
    await w.chain.send(
      [
        createFromboxInstruction({
          programId: w.chain.programId,
          owner: carol.publicKey,
          fromHash: fromHash(from),
          requiredPostage: 20_000n,
        }),
      ],
      [carol],
    );
    expect(await w.chain.refusal([relayed(w, carol.publicKey, 0n, from)], [w.authority])).toBe(
      'PostageRequired',
    );
    const sponsor = await w.chain.funded();
    const sponsorBefore = await w.chain.balance(sponsor.publicKey);
    await w.chain.send(
      [
        addStampsInstruction({
          programId: w.chain.programId,
          payer: sponsor.publicKey,
          recipient: carol.publicKey,
          fromHash: fromHash(from),
          stamps: 2n,
        }),
      ],
      [sponsor],
    );
    expect(sponsorBefore - (await w.chain.balance(sponsor.publicKey))).toBe(
      Number(2n * (20_000n + SURCHARGE + FEE)) + 5000,
    );
    expect((await getPostoffice(w.chain.connection, w.chain.programId))?.feesCollected).toBe(2n * FEE);

    const carolBefore = await w.chain.balance(carol.publicKey);
    const authBefore = await w.chain.balance(w.authority.publicKey);
    await w.chain.send([relayed(w, carol.publicKey, 0n, from)], [w.authority]);
    expect((await w.chain.balance(carol.publicKey)) - carolBefore).toBe(20_000);
    const emailRent =
      (await w.chain.connection.getAccountInfo(emailAddress(w.chain.programId, carol.publicKey, 0n)[0]))
        ?.lamports ?? 0;
    // The authority pays the fee and the Email's rent and gets the settlement surcharge.
    expect(authBefore - (await w.chain.balance(w.authority.publicKey))).toBe(
      emailRent + 5000 - Number(SURCHARGE),
    );
    expect(
      (await getFrombox(w.chain.connection, w.chain.programId, fromHash(from), carol.publicKey))?.stamps,
    ).toBe(1n);

    // UpdateFrombox allowlists the sender: free from now on, stamps untouched.
    await w.chain.send(
      [
        updateFromboxInstruction({
          programId: w.chain.programId,
          owner: carol.publicKey,
          fromHash: fromHash(from),
          requiredPostage: 0n,
        }),
      ],
      [carol],
    );
    await w.chain.send([relayed(w, carol.publicKey, 1n, from)], [w.authority]);
    expect(
      (await getFrombox(w.chain.connection, w.chain.programId, fromHash(from), carol.publicKey))?.stamps,
    ).toBe(1n);
  });

  it('CreateFrombox/UpdateFrombox/AddStamps refusals', async () => {
    const w = await world();
    const carol = await mailbox(w, 1000n);
    const stranger = await w.chain.funded();
    const h = fromHash('x@remote.example');
    expect(
      await w.chain.refusal(
        [
          updateFromboxInstruction({
            programId: w.chain.programId,
            owner: carol.publicKey,
            fromHash: h,
            requiredPostage: 1n,
          }),
        ],
        [carol],
      ),
    ).toBe('NotFound');
    expect(
      await w.chain.refusal(
        [
          addStampsInstruction({
            programId: w.chain.programId,
            payer: stranger.publicKey,
            recipient: carol.publicKey,
            fromHash: h,
            stamps: 1n,
          }),
        ],
        [stranger],
      ),
    ).toBe('NotFound');
    const create = () =>
      createFromboxInstruction({
        programId: w.chain.programId,
        owner: carol.publicKey,
        fromHash: h,
        requiredPostage: 1000n,
      });
    await w.chain.send([create()], [carol]);
    expect(await w.chain.refusal([create()], [carol])).toBe('AlreadyExists');
    expect(
      await w.chain.refusal(
        [
          addStampsInstruction({
            programId: w.chain.programId,
            payer: stranger.publicKey,
            recipient: carol.publicKey,
            fromHash: h,
            stamps: 0n,
          }),
        ],
        [stranger],
      ),
    ).toBe('InvalidArgument');
    // Someone other than the recipient pricing a sender toward the recipient.
    const hijack = createFromboxInstruction({
      programId: w.chain.programId,
      owner: stranger.publicKey,
      fromHash: fromHash('y@remote.example'),
      requiredPostage: 0n,
    });
    const { mailboxAddress, fromboxAddress } = await import('../../chain/client/index.ts');
    hijack.keys[1] = {
      pubkey: mailboxAddress(w.chain.programId, carol.publicKey)[0],
      isSigner: false,
      isWritable: false,
    };
    hijack.keys[2] = {
      pubkey: fromboxAddress(w.chain.programId, fromHash('y@remote.example'), carol.publicKey)[0],
      isSigner: false,
      isWritable: true,
    };
    // The owner's mailbox must be the signer's own PDA: someone else's is refused.
    expect(await w.chain.refusal([hijack], [stranger])).toBe('InvalidPda');
    expect(
      await getFrombox(w.chain.connection, w.chain.programId, fromHash('y@remote.example'), carol.publicKey),
    ).toBeNull();
  });

  it('BuyStamps then TopUpStamps with a price ceiling; a direct send spends a stamp; ReclaimFromboxStamps refunds the rest', async () => {
    const w = await world();
    const dave = await mailbox(w, 30_000n);
    const alice = await w.chain.funded();
    const buy = (stamps: bigint, max?: bigint) =>
      buyStampsInstruction({
        programId: w.chain.programId,
        buyer: alice.publicKey,
        recipient: dave.publicKey,
        stamps,
        maxPriceLamports: max,
      });
    const topUp = (stamps: bigint, max?: bigint) =>
      topUpStampsInstruction({
        programId: w.chain.programId,
        buyer: alice.publicKey,
        recipient: dave.publicKey,
        stamps,
        maxPriceLamports: max,
      });

    expect(await w.chain.refusal([topUp(1n)], [alice])).toBe('NotFound');
    expect(await w.chain.refusal([buy(0n)], [alice])).toBe('InvalidArgument');
    // The ceiling is the whole per-stamp price: postage + surcharge + fee.
    const price = (postage: bigint) => postage + SURCHARGE + FEE;
    expect(await w.chain.refusal([buy(1n, price(30_000n) - 1n)], [alice])).toBe('PriceAboveCeiling');
    // The postage alone is below it.
    expect(await w.chain.refusal([buy(1n, 30_000n)], [alice])).toBe('PriceAboveCeiling');
    await w.chain.send([buy(2n, price(30_000n))], [alice]);
    expect(await w.chain.refusal([buy(1n)], [alice])).toBe('AlreadyExists');

    // The recipient reprices above the buyer's quote: the top-up is refused.
    const h = fromHash(alice.publicKey.toBase58());
    await w.chain.send(
      [
        updateFromboxInstruction({
          programId: w.chain.programId,
          owner: dave.publicKey,
          fromHash: h,
          requiredPostage: 40_000n,
        }),
      ],
      [dave],
    );
    expect(await w.chain.refusal([topUp(1n, price(30_000n))], [alice])).toBe('PriceAboveCeiling');
    await w.chain.send([topUp(1n, price(40_000n))], [alice]);
    const box = await getFrombox(w.chain.connection, w.chain.programId, h, dave.publicKey);
    expect(box).toMatchObject({ stamps: 3n, postageEscrow: 2n * 30_000n + 40_000n });

    const daveBefore = await w.chain.balance(dave.publicKey);
    await w.chain.send(
      [
        sendMailInstruction({
          programId: w.chain.programId,
          sender: alice.publicKey,
          recipient: dave.publicKey,
          index: 0n,
          fromHash: h,
          cid: CID,
        }),
      ],
      [alice],
    );
    // Stamp value was fixed at purchase: floor(escrow / stamps).
    expect((await w.chain.balance(dave.publicKey)) - daveBefore).toBe(Math.floor(100_000 / 3));

    const aliceBefore = await w.chain.balance(alice.publicKey);
    await w.chain.send(
      [
        reclaimFromboxStampsInstruction({
          programId: w.chain.programId,
          sender: alice.publicKey,
          recipient: dave.publicKey,
        }),
      ],
      [alice],
    );
    const refunded = 100_000 - Math.floor(100_000 / 3) + 2 * Number(SURCHARGE);
    expect((await w.chain.balance(alice.publicKey)) - aliceBefore).toBe(refunded - 5000);
    expect(await getFrombox(w.chain.connection, w.chain.programId, h, dave.publicKey)).toMatchObject({
      stamps: 0n,
      postageEscrow: 0n,
    });
    expect(
      await w.chain.refusal(
        [
          reclaimFromboxStampsInstruction({
            programId: w.chain.programId,
            sender: alice.publicKey,
            recipient: dave.publicKey,
          }),
        ],
        [alice],
      ),
    ).toBe('NothingToClaim');
  });

  it('the protocol fee is waived when buying toward one’s own mailbox', async () => {
    const w = await world();
    const erin = await mailbox(w, 10_000n);
    const before = await w.chain.balance(erin.publicKey);
    await w.chain.send(
      [
        buyStampsInstruction({
          programId: w.chain.programId,
          buyer: erin.publicKey,
          recipient: erin.publicKey,
          stamps: 1n,
        }),
      ],
      [erin],
    );
    const boxInfo = await w.chain.connection.getAccountInfo(
      (await import('../../chain/client/index.ts')).fromboxAddress(
        w.chain.programId,
        fromHash(erin.publicKey.toBase58()),
        erin.publicKey,
      )[0],
    );
    const rent = await w.chain.connection.getMinimumBalanceForRentExemption(boxInfo?.data.length ?? 0);
    expect(before - (await w.chain.balance(erin.publicKey))).toBe(rent + 10_000 + Number(SURCHARGE) + 5000);
    expect((await getPostoffice(w.chain.connection, w.chain.programId))?.feesCollected).toBe(0n);
  });
});

describe('DeleteMail and ClaimBounty over JSON-RPC', () => {
  it('the recipient deletes: the account closes and rent returns to the payer; strangers and wrong payees are refused', async () => {
    const w = await world();
    const bob = await mailbox(w);
    await w.chain.send([relayed(w, bob.publicKey, 0n)], [w.authority]);
    const address = emailAddress(w.chain.programId, bob.publicKey, 0n)[0];
    const rent = (await w.chain.connection.getAccountInfo(address))?.lamports ?? 0;
    const stranger = await w.chain.funded();
    const del = (signer: Keypair, rentPayer: PublicKey) =>
      deleteMailInstruction({
        programId: w.chain.programId,
        signer: signer.publicKey,
        rentPayer,
        recipient: bob.publicKey,
        index: 0n,
      });
    expect(await w.chain.refusal([del(stranger, w.authority.publicKey)], [stranger])).toBe('Unauthorized');
    expect(await w.chain.refusal([del(bob, bob.publicKey)], [bob])).toBe('InvalidAccount');
    const before = await w.chain.balance(w.authority.publicKey);
    await w.chain.send([del(bob, w.authority.publicKey)], [bob]);
    expect(await w.chain.connection.getAccountInfo(address)).toBeNull();
    expect((await w.chain.balance(w.authority.publicKey)) - before).toBe(rent);
    // The sender (the publishing authority) may delete too, e.g. the admin sweep.
    await w.chain.send([relayed(w, bob.publicKey, 1n)], [w.authority]);
    await w.chain.send(
      [
        deleteMailInstruction({
          programId: w.chain.programId,
          signer: w.authority.publicKey,
          rentPayer: w.authority.publicKey,
          recipient: bob.publicKey,
          index: 1n,
        }),
      ],
      [w.authority],
    );
    expect(await getEmail(w.chain.connection, w.chain.programId, bob.publicKey, 1n)).toBeNull();
  });

  it('ClaimBounty pays the recipient inside the window only; DeleteMail returns an unclaimed bounty', async () => {
    let now = Math.floor(Date.now() / 1000);
    const w = await world({ clock: () => now });
    const bob = await mailbox(w);
    const alice = await w.chain.funded();
    await w.chain.send(
      [createMailboxInstruction({ programId: w.chain.programId, owner: alice.publicKey })],
      [alice],
    );
    const send = (index: bigint) =>
      sendMailInstruction({
        programId: w.chain.programId,
        sender: alice.publicKey,
        recipient: bob.publicKey,
        index,
        fromHash: fromHash(alice.publicKey.toBase58()),
        cid: CID,
        bountyLamports: 70_000n,
        expiresAt: BigInt(now + 3600),
      });
    await w.chain.send([send(0n)], [alice]);
    const bobBefore = await w.chain.balance(bob.publicKey);
    await w.chain.send(
      [claimBountyInstruction({ programId: w.chain.programId, recipient: bob.publicKey, index: 0n })],
      [bob],
    );
    expect((await w.chain.balance(bob.publicKey)) - bobBefore).toBe(70_000 - 5000);
    expect((await getEmail(w.chain.connection, w.chain.programId, bob.publicKey, 0n))?.bountyLamports).toBe(
      0n,
    );
    expect(
      await w.chain.refusal(
        [claimBountyInstruction({ programId: w.chain.programId, recipient: bob.publicKey, index: 0n })],
        [bob],
      ),
    ).toBe('NothingToClaim');

    await w.chain.send([send(1n)], [alice]);
    now += 7200; // past the claim window
    await new Promise((r) => setTimeout(r, 150));
    expect(
      await w.chain.refusal(
        [claimBountyInstruction({ programId: w.chain.programId, recipient: bob.publicKey, index: 1n })],
        [bob],
      ),
    ).toBe('BountyExpired');
    const aliceBefore = await w.chain.balance(alice.publicKey);
    const held =
      (await w.chain.connection.getAccountInfo(emailAddress(w.chain.programId, bob.publicKey, 1n)[0]))
        ?.lamports ?? 0;
    await w.chain.send(
      [
        deleteMailInstruction({
          programId: w.chain.programId,
          signer: bob.publicKey,
          rentPayer: alice.publicKey,
          recipient: bob.publicKey,
          index: 1n,
        }),
      ],
      [bob],
    );
    expect((await w.chain.balance(alice.publicKey)) - aliceBefore).toBe(held);
    expect(held).toBeGreaterThan(70_000);
  });
});
