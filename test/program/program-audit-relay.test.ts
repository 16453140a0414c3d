import type { PublicKey } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { emailSize, encodeMailDomain, FROMBOX_SIZE } from '../../chain/client/accounts/index.ts';
import { ZERO_KEY } from '../../chain/client/bytes.ts';
import { fromHash } from '../../chain/client/hash.ts';
import {
  addStampsInstruction,
  buyStampsInstruction,
  createDomainInstruction,
  createFromboxInstruction,
  createMailboxInstruction,
  reclaimFromboxStampsInstruction,
  sendMailInstruction,
  setMailboxDomainInstruction,
  topUpStampsInstruction,
} from '../../chain/client/instructions.ts';
import { mailboxAddress } from '../../chain/client/pda.ts';
import {
  DOMAIN,
  expectOk,
  FEE,
  refusedUnchanged,
  rent,
  SOL,
  SURCHARGE,
  swap,
  World,
  without,
} from '../support/program-world.ts';

const CID = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy';
const EVIL = 'evil.example';
const ALICE = 'alice@example.org';
const EMAIL_RENT = rent(emailSize(CID));

/** A domain created by the world's delegate, with `authority` as its authority. */
function domain(w: World, name: string, authority: PublicKey): void {
  expectOk(
    w.run(createDomainInstruction({ programId: w.programId, delegate: w.delegate, domain: name, authority })),
  );
}

/** A relayed SendMail into `recipient`'s mailbox at its next index, signed by `authority` for `domainName`. */
function relay(w: World, authority: PublicKey, recipient: PublicKey, domainName: string, hash: Uint8Array) {
  return sendMailInstruction({
    programId: w.programId,
    sender: authority,
    recipient,
    index: w.mailbox(recipient).mailCount,
    fromHash: hash,
    cid: CID,
    domain: domainName,
  });
}

/** A direct SendMail from `sender`'s wallet. */
function direct(w: World, sender: PublicKey, recipient: PublicKey) {
  return sendMailInstruction({
    programId: w.programId,
    sender,
    recipient,
    index: w.mailbox(recipient).mailCount,
    fromHash: fromHash(sender),
    cid: CID,
  });
}

describe('finding 1a: a relay by another domain', () => {
  it("evil.example's authority cannot relay from alice@example.org into a mail.test mailbox and burn her stamps", () => {
    const w = new World();
    const evil = w.wallet();
    domain(w, EVIL, evil);
    const recipient = w.user();
    const alice = fromHash(ALICE);
    const programId = w.programId;
    expectOk(
      w.run(
        createFromboxInstruction({ programId, owner: recipient, fromHash: alice, requiredPostage: 4_000n }),
      ),
    );
    const patron = w.wallet();
    expectOk(
      w.run(addStampsInstruction({ programId, payer: patron, recipient, fromHash: alice, stamps: 2n })),
    );
    const frombox = w.fromboxAddress(alice, recipient);
    expect(w.frombox(alice, recipient)).toMatchObject({ stamps: 2n, postageEscrow: 8_000n });

    // The attack: evil.example's authority, active and signing for its own
    // domain, relays "from alice@example.org" into a mailbox of mail.test.
    // The audited binary accepted it: it spent one of alice's stamps (4,000
    // lamports to the recipient, the 5,000 surcharge to the attacker) and
    // created an Email the recipient's own domain never relayed.
    const attack = relay(w, evil, recipient, EVIL, alice);
    refusedUnchanged(w, attack, 'RelayNotAllowed', [w.domainAddress(), w.authority, patron]);
    expect(w.frombox(alice, recipient)).toMatchObject({ stamps: 2n, postageEscrow: 8_000n });
    expect(w.mailbox(recipient).mailCount).toBe(0n);

    // Nor without stamps: a free mailbox takes no mail evil.example relays.
    const open = w.user();
    refusedUnchanged(w, relay(w, evil, open, EVIL, alice), 'RelayNotAllowed', [w.domainAddress()]);

    // The stamps stay for the relay of mail.test's own authority.
    expectOk(w.run(relay(w, w.authority, recipient, DOMAIN, alice)));
    expect(w.frombox(alice, recipient)).toMatchObject({ stamps: 1n, postageEscrow: 4_000n });
    expect(w.balance(frombox)).toBe(rent(FROMBOX_SIZE) + 4_000n + SURCHARGE);
  });

  it('a mailbox without a domain refuses every relayed send; direct sends still work', () => {
    const w = new World();
    const evil = w.wallet();
    domain(w, EVIL, evil);
    const owner = w.wallet();
    expectOk(w.run(createMailboxInstruction({ programId: w.programId, owner })));
    expect(w.mailbox(owner).domain.equals(ZERO_KEY)).toBe(true);
    const alice = fromHash(ALICE);
    // The audited binary let any active domain's authority relay into a
    // domain-less mailbox.
    refusedUnchanged(w, relay(w, w.authority, owner, DOMAIN, alice), 'RelayNotAllowed', [
      w.domainAddress(EVIL),
    ]);
    refusedUnchanged(w, relay(w, evil, owner, EVIL, alice), 'RelayNotAllowed', [w.domainAddress()]);
    // Even "from" the owner's own wallet hash, or the authority's.
    refusedUnchanged(w, relay(w, evil, owner, EVIL, fromHash(owner)), 'RelayNotAllowed');
    refusedUnchanged(w, relay(w, evil, owner, EVIL, fromHash(evil)), 'RelayNotAllowed');
    expect(w.mailbox(owner).mailCount).toBe(0n);

    const sender = w.wallet();
    expectOk(w.run(direct(w, sender, owner)));
    expect(w.email(owner, 0n).sender.equals(sender)).toBe(true);
    // The domain authorities' wallets can still send as themselves (direct).
    expectOk(w.run(direct(w, evil, owner)));
    expect(w.mailbox(owner).mailCount).toBe(2n);
  });
});

describe("finding 1b: forged relays from a sender's wallet", () => {
  /** Mallory owns a mailbox in mallory.example, whose authority key she also holds. */
  function mallory(w: World) {
    const owner = w.wallet();
    const authority = w.wallet();
    domain(w, 'mallory.example', authority);
    expectOk(
      w.run(
        createMailboxInstruction({
          programId: w.programId,
          owner,
          defaultPostage: SOL,
          domain: 'mallory.example',
        }),
      ),
    );
    return { owner, authority };
  }

  it("a recipient holding its domain's authority key cannot take the stamps a sender bought with BuyStamps", () => {
    const w = new World();
    const m = mallory(w);
    const sender = w.wallet(20n * SOL);
    const start = w.balance(sender);
    const programId = w.programId;
    const perStamp = SOL + SURCHARGE + FEE;
    expectOk(
      w.run(
        buyStampsInstruction({
          programId,
          buyer: sender,
          recipient: m.owner,
          stamps: 2n,
          maxPriceLamports: perStamp,
        }),
      ),
    );
    const hash = fromHash(sender);
    const frombox = w.fromboxAddress(hash, m.owner);
    expect(w.frombox(hash, m.owner)).toMatchObject({ stamps: 2n, postageEscrow: 2n * SOL });

    // The attack: Mallory's authority key relays two forged sends "from" the
    // sender's wallet (from_hash = blake3(base58(wallet)), the hash BuyStamps
    // keyed the frombox on) into her own mailbox. The audited binary took
    // 1 SOL of postage per send to her mailbox's wallet and the surcharge to
    // her authority key, and the sender's reclaim then found nothing
    // (NothingToClaim).
    for (let i = 0; i < 2; i++) {
      refusedUnchanged(w, relay(w, m.authority, m.owner, 'mallory.example', hash), 'StampsNotRelayable', [
        sender,
        w.postofficeAddress(),
      ]);
    }
    // Directly, with her own wallet, the from_hash is checked.
    const forged = sendMailInstruction({
      programId,
      sender: m.owner,
      recipient: m.owner,
      index: w.mailbox(m.owner).mailCount,
      fromHash: hash,
      cid: CID,
    });
    refusedUnchanged(w, forged, 'FromHashMismatch', [sender]);
    expect(w.frombox(hash, m.owner)).toMatchObject({
      stamps: 2n,
      postageEscrow: 2n * SOL,
      walletStamps: true,
    });

    // The sender gets every lamport of the two stamps back but the fees and the frombox rent.
    const before = w.balance(sender);
    expectOk(w.run(reclaimFromboxStampsInstruction({ programId, sender, recipient: m.owner })));
    expect(w.balance(sender)).toBe(before + 2n * (SOL + SURCHARGE));
    expect(w.balance(sender)).toBe(start - 2n * FEE - rent(FROMBOX_SIZE));
    expect(w.balance(frombox)).toBe(rent(FROMBOX_SIZE));
  });

  it("nor those TopUpStamps put on a frombox the recipient created, while the sender's own sends spend them", () => {
    const w = new World();
    const m = mallory(w);
    const sender = w.wallet(20n * SOL);
    const programId = w.programId;
    const hash = fromHash(sender);
    // Mallory prices the sender herself (the frombox starts without wallet stamps).
    expectOk(
      w.run(createFromboxInstruction({ programId, owner: m.owner, fromHash: hash, requiredPostage: SOL })),
    );
    expectOk(
      w.run(
        topUpStampsInstruction({
          programId,
          buyer: sender,
          recipient: m.owner,
          stamps: 3n,
          maxPriceLamports: SOL + SURCHARGE + FEE,
        }),
      ),
    );
    refusedUnchanged(w, relay(w, m.authority, m.owner, 'mallory.example', hash), 'StampsNotRelayable', [
      sender,
    ]);
    expect(w.frombox(hash, m.owner)).toMatchObject({ stamps: 3n, walletStamps: true });

    // The sender's own send spends one: postage to Mallory, surcharge to the sender.
    const [r0, s0] = [w.balance(m.owner), w.balance(sender)];
    expectOk(w.run(direct(w, sender, m.owner)));
    expect(w.balance(m.owner)).toBe(r0 + SOL);
    expect(w.balance(sender)).toBe(s0 - EMAIL_RENT + SURCHARGE);
    refusedUnchanged(w, relay(w, m.authority, m.owner, 'mallory.example', hash), 'StampsNotRelayable', [
      sender,
    ]);

    const before = w.balance(sender);
    expectOk(w.run(reclaimFromboxStampsInstruction({ programId, sender, recipient: m.owner })));
    expect(w.balance(sender)).toBe(before + 2n * (SOL + SURCHARGE));
    expect(w.frombox(hash, m.owner)).toMatchObject({ stamps: 0n, postageEscrow: 0n, walletStamps: true });
    // No stamps left: a relayed send now needs postage like any other.
    refusedUnchanged(w, relay(w, m.authority, m.owner, 'mallory.example', hash), 'PostageRequired', [sender]);
  });

  it('AddStamps marks wallet stamps only when the wallet pays toward its own hash', () => {
    const w = new World();
    const programId = w.programId;
    const recipient = w.user();
    const wallet = w.wallet();
    const patron = w.wallet();
    const own = fromHash(wallet);
    const carol = fromHash('carol@ext.example');
    for (const hash of [own, carol])
      expectOk(
        w.run(
          createFromboxInstruction({ programId, owner: recipient, fromHash: hash, requiredPostage: 1_000n }),
        ),
      );

    // A third party on an e-mail hash (what AddStamps is for); the wallet on
    // its own hash (its stamps, as if bought with BuyStamps); then a third
    // party adding to those.
    const add = (payer: PublicKey, fromHash: Uint8Array) =>
      expectOk(w.run(addStampsInstruction({ programId, payer, recipient, fromHash, stamps: 1n })));
    add(patron, carol);
    add(wallet, own);
    add(patron, own);

    // mail.test's own authority, relaying "from" the wallet into its own member, is refused the wallet's stamps.
    refusedUnchanged(w, relay(w, w.authority, recipient, DOMAIN, own), 'StampsNotRelayable', [
      wallet,
      patron,
    ]);
    // The patron's stamps on an e-mail hash are relayable; the wallet's own
    // are not, and the patron's later addition cleared nothing.
    expect(w.frombox(carol, recipient)).toMatchObject({ stamps: 1n, walletStamps: false });
    expect(w.frombox(own, recipient)).toMatchObject({ stamps: 2n, walletStamps: true });
    // The e-mail hash's stamps go through.
    expectOk(w.run(relay(w, w.authority, recipient, DOMAIN, carol)));
    expect(w.frombox(carol, recipient)).toMatchObject({ stamps: 0n });
    // And the wallet spends its own directly.
    expectOk(w.run(direct(w, wallet, recipient)));
    expect(w.frombox(own, recipient)).toMatchObject({ stamps: 1n });
  });
});

describe('the legitimate relayed path', () => {
  it("the mailbox's own domain authority spends AddStamps stamps of an e-mail hash: share to the recipient, surcharge to the signer", () => {
    const w = new World();
    const programId = w.programId;
    const recipient = w.user({ defaultPostage: 1n });
    const alice = fromHash(ALICE);
    expectOk(
      w.run(
        createFromboxInstruction({ programId, owner: recipient, fromHash: alice, requiredPostage: 4_000n }),
      ),
    );
    const patron = w.wallet();
    const p0 = w.balance(patron);
    expectOk(
      w.run(addStampsInstruction({ programId, payer: patron, recipient, fromHash: alice, stamps: 2n })),
    );
    expect(w.balance(patron)).toBe(p0 - 2n * (4_000n + SURCHARGE + FEE));
    const frombox = w.fromboxAddress(alice, recipient);
    for (let i = 0; i < 2; i++) {
      const [r0, a0, f0] = [w.balance(recipient), w.balance(w.authority), w.balance(frombox)];
      expectOk(w.run(relay(w, w.authority, recipient, DOMAIN, alice)));
      expect(w.balance(recipient)).toBe(r0 + 4_000n);
      expect(w.balance(w.authority)).toBe(a0 - EMAIL_RENT + SURCHARGE);
      expect(w.balance(frombox)).toBe(f0 - 4_000n - SURCHARGE);
      const email = w.email(recipient, BigInt(i));
      expect(email.sender.equals(w.authority) && email.rentPayer.equals(w.authority)).toBe(true);
      expect(email.fromHash).toEqual(alice);
    }
    expect(w.frombox(alice, recipient)).toMatchObject({ stamps: 0n, postageEscrow: 0n });
    expect(w.balance(frombox)).toBe(rent(FROMBOX_SIZE));
    refusedUnchanged(w, relay(w, w.authority, recipient, DOMAIN, alice), 'PostageRequired');
  });
});

describe('SetMailboxDomain', () => {
  it('moves a mailbox to another domain and out of every domain; who may relay follows it', () => {
    const w = new World();
    const evil = w.wallet();
    domain(w, EVIL, evil);
    const programId = w.programId;
    const owner = w.user();
    const alice = fromHash(ALICE);
    const move = (name: string | null) => setMailboxDomainInstruction({ programId, owner, domain: name });
    expectOk(w.run(relay(w, w.authority, owner, DOMAIN, alice)));
    refusedUnchanged(w, relay(w, evil, owner, EVIL, alice), 'RelayNotAllowed');

    expectOk(w.run(move(EVIL)));
    expect(w.mailbox(owner).domain.equals(w.domainAddress(EVIL))).toBe(true);
    refusedUnchanged(w, relay(w, w.authority, owner, DOMAIN, alice), 'RelayNotAllowed');
    expectOk(w.run(relay(w, evil, owner, EVIL, alice)));

    expectOk(w.run(move(null)));
    expect(w.mailbox(owner).domain.equals(ZERO_KEY)).toBe(true);
    refusedUnchanged(w, relay(w, evil, owner, EVIL, alice), 'RelayNotAllowed');
    refusedUnchanged(w, relay(w, w.authority, owner, DOMAIN, alice), 'RelayNotAllowed');
    expectOk(w.run(direct(w, w.wallet(), owner)));

    expectOk(w.run(move(DOMAIN)));
    expect(w.mailbox(owner).domain.equals(w.domainAddress())).toBe(true);
    expectOk(w.run(relay(w, w.authority, owner, DOMAIN, alice)));
    // Only the domain field changed: the mail count kept counting, the owner is the same.
    expect(w.mailbox(owner)).toMatchObject({ mailCount: 4n });
    expect(w.mailbox(owner).owner.equals(owner)).toBe(true);
  });

  it('refuses a stranger, an inactive or unknown domain, a mismatched domain account and wrong account counts', () => {
    const w = new World();
    const evil = w.wallet();
    domain(w, EVIL, evil);
    const programId = w.programId;
    const owner = w.user();
    const mailbox = mailboxAddress(programId, owner)[0];
    const watch = [w.domainAddress(), w.domainAddress(EVIL), owner];

    // A stranger names the owner's mailbox.
    const stranger = w.user();
    const steal = swap(setMailboxDomainInstruction({ programId, owner: stranger, domain: EVIL }), 1, mailbox);
    refusedUnchanged(w, steal, 'Unauthorized', watch);
    const leave = swap(setMailboxDomainInstruction({ programId, owner: stranger, domain: null }), 1, mailbox);
    refusedUnchanged(w, leave, 'Unauthorized', watch);
    const nobody = w.wallet();
    refusedUnchanged(
      w,
      setMailboxDomainInstruction({ programId, owner: nobody, domain: EVIL }),
      'NotFound',
      watch,
    );
    refusedUnchanged(
      w,
      without(setMailboxDomainInstruction({ programId, owner, domain: EVIL }), 0, 'isSigner'),
      'MissingSigner',
      watch,
    );
    refusedUnchanged(
      w,
      without(setMailboxDomainInstruction({ programId, owner, domain: EVIL }), 1, 'isWritable'),
      'NotWritable',
      watch,
    );

    // An inactive domain, and one that was never created.
    domain(w, 'dead.example', w.wallet());
    const dead = w.domain('dead.example');
    w.patch(w.domainAddress('dead.example'), encodeMailDomain({ ...dead, isActive: false }));
    refusedUnchanged(
      w,
      setMailboxDomainInstruction({ programId, owner, domain: 'dead.example' }),
      'DomainInactive',
      [...watch],
    );
    refusedUnchanged(
      w,
      setMailboxDomainInstruction({ programId, owner, domain: 'nowhere.example' }),
      'NotFound',
      watch,
    );
    // The third account must be the domain the data names.
    const mismatched = swap(
      setMailboxDomainInstruction({ programId, owner, domain: EVIL }),
      2,
      w.domainAddress(),
    );
    refusedUnchanged(w, mismatched, 'InvalidAccount', watch);

    // A domain without its account, and no domain with one.
    const short = setMailboxDomainInstruction({ programId, owner, domain: EVIL });
    short.keys.pop();
    refusedUnchanged(w, short, 'InvalidInstruction', watch);
    const long = setMailboxDomainInstruction({ programId, owner, domain: null });
    long.keys.push({ pubkey: w.domainAddress(EVIL), isSigner: false, isWritable: false });
    refusedUnchanged(w, long, 'InvalidInstruction', watch);

    expect(w.mailbox(owner).domain.equals(w.domainAddress())).toBe(true);
  });
});
