// The real mail program against the rules of SendMail (direct and relayed,
// postage, bounty, no_ipfs), DeleteMail and ClaimBounty, in a bare litesvm.
import type { PublicKey } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { emailSize, encodeMailDomain, FROMBOX_SIZE } from '../../chain/client/accounts/index.ts';
import { toHex } from '../../chain/client/bytes.ts';
import { blake3Text, fromHash, replyToHash } from '../../chain/client/hash.ts';
import {
  addStampsInstruction,
  buyStampsInstruction,
  claimBountyInstruction,
  createFromboxInstruction,
  deleteMailInstruction,
  type SendMailParams,
  sendMailInstruction,
  setMailboxFlagsInstruction,
  topUpStampsInstruction,
  updateFromboxInstruction,
} from '../../chain/client/instructions.ts';
import { DOMAIN, expectErr, expectOk, rent, SURCHARGE, World, without } from '../support/program-world.ts';

const CID = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy';
const B3 = `b3:${toHex(blake3Text('sealed'))}`;

type Send = Omit<SendMailParams, 'programId' | 'index' | 'fromHash' | 'cid'> &
  Partial<Pick<SendMailParams, 'index' | 'fromHash' | 'cid'>>;

function send(w: World, p: Send) {
  return sendMailInstruction({
    programId: w.programId,
    index: w.mailbox(p.recipient as PublicKey).mailCount,
    fromHash: p.domain ? fromHash('alice@ext.example') : fromHash(p.sender),
    cid: CID,
    ...p,
  });
}

describe('SendMail direct', () => {
  it('creates the Email at mail_count, paid by the signer', () => {
    const w = new World();
    const sender = w.wallet();
    const recipient = w.user();
    const before = w.balance(sender);
    const r = w.run(send(w, { sender, recipient, replyToHash: replyToHash(w.emailAddress(recipient, 9n)) }));
    expectOk(r);
    expect(r.logs).toContain('Program log: Instruction: SendMail');
    const email = w.email(recipient, 0n);
    expect(email).toMatchObject({
      index: 0n,
      epoch: w.now,
      bountyLamports: 0n,
      expiresAt: 0n,
      cid: CID,
    });
    expect(
      email.recipient.equals(recipient) && email.sender.equals(sender) && email.rentPayer.equals(sender),
    ).toBe(true);
    expect(email.fromHash).toEqual(fromHash(sender));
    expect(email.replyToHash).toEqual(replyToHash(w.emailAddress(recipient, 9n)));
    expect(w.mailbox(recipient).mailCount).toBe(1n);
    expect(w.balance(sender)).toBe(before - rent(emailSize(CID)));
    expectOk(w.run(send(w, { sender, recipient })));
    expect(w.email(recipient, 1n).index).toBe(1n);
    expect(w.mailbox(recipient).mailCount).toBe(2n);
  });

  it('refuses a from_hash that is not the signer', () => {
    const w = new World();
    const sender = w.wallet();
    const recipient = w.user();
    expectErr(
      w.run(send(w, { sender, recipient, fromHash: fromHash('mallory@x.test') })),
      'FromHashMismatch',
    );
  });

  it('refuses a stale index, a wrong recipient wallet, a wrong frombox and a missing signature', () => {
    const w = new World();
    const sender = w.wallet();
    const recipient = w.user();
    expectOk(w.run(send(w, { sender, recipient })));
    expectErr(w.run(send(w, { sender, recipient, index: 0n })), 'InvalidPda');
    const wrongWallet = send(w, { sender, recipient });
    (wrongWallet.keys[4] as { pubkey: PublicKey }).pubkey = sender;
    expectErr(w.run(wrongWallet), 'InvalidAccount');
    const wrongFrombox = send(w, { sender, recipient });
    (wrongFrombox.keys[3] as { pubkey: PublicKey }).pubkey = w.fromboxAddress(fromHash('x@y.z'), recipient);
    expectErr(w.run(wrongFrombox), 'InvalidPda');
    expectErr(w.run(without(send(w, { sender, recipient }), 0, 'isSigner')), 'MissingSigner');
    expectErr(w.run(without(send(w, { sender, recipient }), 2, 'isWritable')), 'NotWritable');
    const noMailbox = w.wallet();
    const toNobody = { sender, recipient: noMailbox, index: 0n, fromHash: fromHash(sender), cid: CID };
    expectErr(w.run(sendMailInstruction({ programId: w.programId, ...toNobody })), 'NotFound');
  });

  it('refuses a sender who cannot pay the rent', () => {
    const w = new World();
    const sender = w.wallet(1_000n);
    const recipient = w.user();
    expectErr(w.run(send(w, { sender, recipient })), 'InsufficientFunds');
    expect(w.mailbox(recipient).mailCount).toBe(0n);
  });

  it('refuses when a record already sits at the next index', () => {
    const w = new World();
    const sender = w.wallet();
    const recipient = w.user();
    w.put(w.emailAddress(recipient, 0n), {
      lamports: rent(1),
      owner: w.programKey,
      data: new Uint8Array(1),
    });
    expectErr(w.run(send(w, { sender, recipient })), 'AlreadyExists');
  });

  it('sees earlier instructions of the same transaction, and fails them all together', () => {
    const w = new World();
    const sender = w.wallet();
    const recipient = w.user();
    const at = (index: bigint, cid = CID) =>
      sendMailInstruction({
        programId: w.programId,
        sender,
        recipient,
        index,
        fromHash: fromHash(sender),
        cid,
      });
    expectOk(w.run(at(0n), at(1n)));
    expect(w.mailbox(recipient).mailCount).toBe(2n);
    const before = w.balance(sender);
    expectErr(w.run(at(2n), at(3n, '')), 'InvalidArgument');
    expect(w.mailbox(recipient).mailCount).toBe(2n);
    expect(w.exists(w.emailAddress(recipient, 2n))).toBe(false);
    expect(w.balance(sender)).toBe(before);
  });

  it('creates the Email even when someone sent lamports to its address first', () => {
    const w = new World();
    const sender = w.wallet();
    const recipient = w.user();
    w.fund(w.emailAddress(recipient, 0n), 1n);
    expectOk(w.run(send(w, { sender, recipient })));
    expect(w.balance(w.emailAddress(recipient, 0n))).toBe(rent(emailSize(CID)) + 1n);
  });
});

describe('SendMail relayed', () => {
  it('is signed by the domain authority with any from_hash', () => {
    const w = new World();
    const recipient = w.user();
    expectOk(w.run(send(w, { sender: w.authority, recipient, domain: DOMAIN })));
    const email = w.email(recipient, 0n);
    expect(email.sender.equals(w.authority)).toBe(true);
    expect(email.fromHash).toEqual(fromHash('alice@ext.example'));
  });

  it('refuses a signer that is not the authority, an inactive domain and a bounty', () => {
    const w = new World();
    const recipient = w.user();
    const stranger = w.wallet();
    expectErr(w.run(send(w, { sender: stranger, recipient, domain: DOMAIN })), 'Unauthorized');
    const bounty = { bountyLamports: 10n, expiresAt: w.now + 100n };
    expectErr(
      w.run(send(w, { sender: w.authority, recipient, domain: DOMAIN, ...bounty })),
      'BountyNotAllowed',
    );
    w.patch(w.domainAddress(), encodeMailDomain({ ...w.domain(), isActive: false }));
    expectErr(w.run(send(w, { sender: w.authority, recipient, domain: DOMAIN })), 'DomainInactive');
    expectErr(w.run(send(w, { sender: w.authority, recipient, domain: 'unknown.test' })), 'NotFound');
  });
});

describe('SendMail cid rules', () => {
  it('takes 1..=128 bytes and refuses b3: markers for IPFS mailboxes', () => {
    const w = new World();
    const sender = w.wallet();
    const recipient = w.user();
    expectOk(w.run(send(w, { sender, recipient, cid: 'x'.repeat(128) })));
    expectErr(w.run(send(w, { sender, recipient, cid: 'x'.repeat(129) })), 'InvalidArgument');
    expectErr(w.run(send(w, { sender, recipient, cid: '' })), 'InvalidArgument');
    expectErr(w.run(send(w, { sender, recipient, cid: B3 })), 'InvalidArgument');
  });

  it('needs b3: + 64 lowercase hex for no_ipfs mailboxes', () => {
    const w = new World();
    const sender = w.wallet();
    const recipient = w.user();
    expectOk(w.run(setMailboxFlagsInstruction({ programId: w.programId, owner: recipient, noIpfs: true })));
    expectErr(w.run(send(w, { sender, recipient, cid: CID })), 'NoIpfs');
    expectErr(w.run(send(w, { sender, recipient, cid: B3.toUpperCase().replace('B3', 'b3') })), 'NoIpfs');
    expectErr(w.run(send(w, { sender, recipient, cid: B3.slice(0, -1) })), 'NoIpfs');
    expectOk(w.run(send(w, { sender, recipient, cid: B3 })));
    expect(w.email(recipient, 0n).cid).toBe(B3);
  });
});

describe('SendMail bounty', () => {
  it('escrows the bounty in the Email', () => {
    const w = new World();
    const sender = w.wallet();
    const recipient = w.user();
    const before = w.balance(sender);
    const expiresAt = w.now + 3600n;
    expectOk(w.run(send(w, { sender, recipient, bountyLamports: 50_000n, expiresAt })));
    expect(w.email(recipient, 0n)).toMatchObject({ bountyLamports: 50_000n, expiresAt });
    expect(w.balance(w.emailAddress(recipient, 0n))).toBe(rent(emailSize(CID)) + 50_000n);
    expect(w.balance(sender)).toBe(before - rent(emailSize(CID)) - 50_000n);
  });

  it('refuses a bounty born expired and an expiry without a bounty', () => {
    const w = new World();
    const sender = w.wallet();
    const recipient = w.user();
    expectErr(w.run(send(w, { sender, recipient, bountyLamports: 1n, expiresAt: w.now })), 'BountyExpired');
    expectErr(w.run(send(w, { sender, recipient, bountyLamports: 1n, expiresAt: 0n })), 'BountyExpired');
    expectErr(w.run(send(w, { sender, recipient, expiresAt: w.now + 10n })), 'InvalidArgument');
  });

  it('ClaimBounty pays the recipient inside the window, once', () => {
    const w = new World();
    const sender = w.wallet();
    const recipient = w.user();
    expectOk(w.run(send(w, { sender, recipient, bountyLamports: 7_000n, expiresAt: w.now + 100n })));
    const stranger = w.wallet();
    const email = w.emailAddress(recipient, 0n);
    expectErr(
      w.run(claimBountyInstruction({ programId: w.programId, recipient: stranger, email })),
      'Unauthorized',
    );
    w.advance(99n);
    const before = w.balance(recipient);
    expectOk(w.run(claimBountyInstruction({ programId: w.programId, recipient, index: 0n })));
    expect(w.balance(recipient)).toBe(before + 7_000n);
    expect(w.email(recipient, 0n).bountyLamports).toBe(0n);
    expect(w.balance(email)).toBe(rent(emailSize(CID)));
    expectErr(
      w.run(claimBountyInstruction({ programId: w.programId, recipient, index: 0n })),
      'NothingToClaim',
    );
  });

  it('ClaimBounty refuses after expiry and without a bounty', () => {
    const w = new World();
    const sender = w.wallet();
    const recipient = w.user();
    expectOk(w.run(send(w, { sender, recipient, bountyLamports: 7_000n, expiresAt: w.now + 100n })));
    expectOk(w.run(send(w, { sender, recipient })));
    expectErr(
      w.run(claimBountyInstruction({ programId: w.programId, recipient, index: 1n })),
      'NothingToClaim',
    );
    w.advance(100n);
    expectErr(
      w.run(claimBountyInstruction({ programId: w.programId, recipient, index: 0n })),
      'BountyExpired',
    );
    expectErr(w.run(claimBountyInstruction({ programId: w.programId, recipient, index: 5n })), 'NotFound');
  });
});

describe('SendMail postage', () => {
  it('is free into an open mailbox, for allowlisted senders and to oneself', () => {
    const w = new World();
    const sender = w.wallet();
    const gated = w.user({ defaultPostage: 100_000n });
    expectErr(w.run(send(w, { sender, recipient: gated })), 'PostageRequired');
    expectOk(w.run(send(w, { sender: gated, recipient: gated })));
    const params = { programId: w.programId, owner: gated, fromHash: fromHash(sender), requiredPostage: 0n };
    expectOk(w.run(createFromboxInstruction(params)));
    expectOk(w.run(send(w, { sender, recipient: gated })));
    expectOk(w.run(updateFromboxInstruction({ ...params, requiredPostage: 10n })));
    expectErr(w.run(send(w, { sender, recipient: gated })), 'PostageRequired');
  });

  it('spends a stamp: postage share to the recipient, surcharge to the signer', () => {
    const w = new World();
    const sender = w.wallet();
    const recipient = w.user({ defaultPostage: 10_000n });
    expectOk(w.run(buyStampsInstruction({ programId: w.programId, buyer: sender, recipient, stamps: 3n })));
    const fb = w.fromboxAddress(fromHash(sender), recipient);
    const [r0, s0, f0] = [w.balance(recipient), w.balance(sender), w.balance(fb)];
    expectOk(w.run(send(w, { sender, recipient })));
    const emailRent = rent(emailSize(CID));
    expect(w.balance(recipient)).toBe(r0 + 10_000n);
    expect(w.balance(sender)).toBe(s0 - emailRent + SURCHARGE);
    expect(w.balance(fb)).toBe(f0 - 10_000n - SURCHARGE);
    expect(w.frombox(fromHash(sender), recipient)).toMatchObject({ stamps: 2n, postageEscrow: 20_000n });
  });

  it('splits the escrow evenly and gives the last stamp the remainder', () => {
    const w = new World();
    const sender = w.wallet();
    const recipient = w.user({ defaultPostage: 10n });
    const programId = w.programId;
    expectOk(w.run(buyStampsInstruction({ programId, buyer: sender, recipient, stamps: 2n })));
    const fh = fromHash(sender);
    expectOk(
      w.run(updateFromboxInstruction({ programId, owner: recipient, fromHash: fh, requiredPostage: 5n })),
    );
    expectOk(w.run(topUpStampsInstruction({ programId, buyer: sender, recipient, stamps: 1n })));
    expect(w.frombox(fh, recipient)).toMatchObject({ stamps: 3n, postageEscrow: 25n });
    const got: bigint[] = [];
    for (let i = 0; i < 3; i++) {
      const before = w.balance(recipient);
      expectOk(w.run(send(w, { sender, recipient })));
      got.push(w.balance(recipient) - before);
    }
    expect(got).toEqual([8n, 8n, 9n]);
    expect(w.frombox(fh, recipient)).toMatchObject({ stamps: 0n, postageEscrow: 0n });
    expect(w.balance(w.fromboxAddress(fh, recipient))).toBe(rent(FROMBOX_SIZE));
    expectErr(w.run(send(w, { sender, recipient })), 'PostageRequired');
  });

  it('lets relayed senders use stamps bought by anyone through AddStamps', () => {
    const w = new World();
    const recipient = w.user({ defaultPostage: 1n });
    const fh = fromHash('alice@ext.example');
    const programId = w.programId;
    expectErr(w.run(send(w, { sender: w.authority, recipient, domain: DOMAIN })), 'PostageRequired');
    expectOk(
      w.run(createFromboxInstruction({ programId, owner: recipient, fromHash: fh, requiredPostage: 4_000n })),
    );
    const patron = w.wallet();
    expectOk(w.run(addStampsInstruction({ programId, payer: patron, recipient, fromHash: fh, stamps: 1n })));
    const [r0, a0] = [w.balance(recipient), w.balance(w.authority)];
    expectOk(w.run(send(w, { sender: w.authority, recipient, domain: DOMAIN })));
    expect(w.balance(recipient)).toBe(r0 + 4_000n);
    expect(w.balance(w.authority)).toBe(a0 - rent(emailSize(CID)) + SURCHARGE);
  });
});

describe('DeleteMail', () => {
  it('closes the Email and returns rent and an unclaimed bounty to rent_payer', () => {
    const w = new World();
    const sender = w.wallet();
    const recipient = w.user();
    expectOk(w.run(send(w, { sender, recipient, bountyLamports: 3_000n, expiresAt: w.now + 10n })));
    const before = w.balance(sender);
    const programId = w.programId;
    expectOk(
      w.run(deleteMailInstruction({ programId, signer: recipient, recipient, index: 0n, rentPayer: sender })),
    );
    expect(w.exists(w.emailAddress(recipient, 0n))).toBe(false);
    expect(w.balance(sender)).toBe(before + rent(emailSize(CID)) + 3_000n);
    expectErr(
      w.run(deleteMailInstruction({ programId, signer: recipient, recipient, index: 0n, rentPayer: sender })),
      'NotFound',
    );
    expect(w.mailbox(recipient).mailCount).toBe(1n);
  });

  it('lets the sender delete too, and refuses strangers and a wrong rent_payer', () => {
    const w = new World();
    const sender = w.wallet();
    const recipient = w.user();
    const programId = w.programId;
    expectOk(w.run(send(w, { sender, recipient })));
    const stranger = w.wallet();
    expectErr(
      w.run(deleteMailInstruction({ programId, signer: stranger, recipient, index: 0n, rentPayer: sender })),
      'Unauthorized',
    );
    expectErr(
      w.run(deleteMailInstruction({ programId, signer: sender, recipient, index: 0n, rentPayer: stranger })),
      'InvalidAccount',
    );
    expectErr(
      w.run(
        without(
          deleteMailInstruction({ programId, signer: sender, recipient, index: 0n, rentPayer: sender }),
          0,
          'isSigner',
        ),
      ),
      'MissingSigner',
    );
    expectOk(
      w.run(deleteMailInstruction({ programId, signer: sender, recipient, index: 0n, rentPayer: sender })),
    );
  });

  it('refuses accounts that are not Emails', () => {
    const w = new World();
    const owner = w.user();
    const ix = deleteMailInstruction({
      programId: w.programId,
      signer: owner,
      email: w.postofficeAddress(),
      rentPayer: owner,
    });
    expectErr(w.run(ix), 'InvalidAccount');
    // A wallet holds no record of ours: it reads as absent.
    const wallet = deleteMailInstruction({
      programId: w.programId,
      signer: owner,
      email: owner,
      rentPayer: owner,
    });
    expectErr(w.run(wallet), 'NotFound');
    // Data owned by another program is not ours to read.
    const foreign = w.address();
    w.put(foreign, {
      lamports: 10_000_000n,
      owner: w.address(),
      data: new Uint8Array(200),
    });
    const other = deleteMailInstruction({
      programId: w.programId,
      signer: owner,
      email: foreign,
      rentPayer: owner,
    });
    expectErr(w.run(other), 'InvalidAccount');
  });
});
