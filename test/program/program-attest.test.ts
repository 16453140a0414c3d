// The real mail program against the rules of sender attestations, sender
// reputation and recipient rules: AttestSender, RevokeAttestation,
// SetRecipientRule, CloseRecipientRule, SendMail with its reputation
// accounts, and every refusal leaving balances and accounts as they were.
import { PublicKey } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import {
  decodeRecipientRule,
  decodeSenderAttestation,
  decodeSenderReputation,
  RECIPIENT_RULE_SIZE,
  SENDER_ATTESTATION_SIZE,
  SENDER_REPUTATION_SIZE,
} from '../../chain/client/accounts/index.ts';
import { fromHash } from '../../chain/client/hash.ts';
import {
  attestSenderInstruction,
  buyStampsInstruction,
  closeRecipientRuleInstruction,
  createDomainInstruction,
  revokeAttestationInstruction,
  sendMailInstruction,
  setRecipientRuleInstruction,
  withReputation,
} from '../../chain/client/instructions.ts';
import { attestationAddress, recipientRuleAddress, reputationAddress } from '../../chain/client/pda.ts';
import {
  DOMAIN,
  expectOk,
  refused,
  rent,
  SURCHARGE,
  swap,
  World,
  without,
} from '../support/program-world.ts';

const CID = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy';
const POSTAGE = 20_000n;

describe('AttestSender / RevokeAttestation', () => {
  it('records an attestation signed by the domain authority and paid by a payer; revoking returns the rent', () => {
    const w = new World();
    const wallet = w.wallet();
    const payer = w.wallet();
    const domain = w.domainAddress();
    const att = attestationAddress(w.programId, domain, wallet)[0];
    const p = { programId: w.programId, authority: w.authority, payer, domain: DOMAIN, wallet };
    const [ab, pb] = [w.balance(w.authority), w.balance(payer)];
    expectOk(w.run(attestSenderInstruction(p)));
    expect(w.balance(payer)).toBe(pb - rent(SENDER_ATTESTATION_SIZE));
    expect(w.balance(w.authority)).toBe(ab);
    expect(w.balance(att)).toBe(rent(SENDER_ATTESTATION_SIZE));
    const stored = decodeSenderAttestation(w.data(att) as Uint8Array);
    expect(stored.attestedAt).toBe(w.now);
    expect(stored.domain.equals(domain) && stored.wallet.equals(wallet)).toBe(true);
    expect(stored.authority.equals(w.authority) && stored.rentPayer.equals(payer)).toBe(true);
    // One per (domain, wallet).
    refused(w, attestSenderInstruction(p), 'AlreadyExists', [payer, att]);

    const revoke = {
      programId: w.programId,
      signer: w.authority,
      domain: DOMAIN,
      wallet,
      rentPayer: payer,
    };
    const stranger = w.wallet();
    refused(w, revokeAttestationInstruction({ ...revoke, signer: stranger }), 'Unauthorized', [payer, att]);
    refused(w, revokeAttestationInstruction({ ...revoke, rentPayer: stranger }), 'InvalidAccount', [
      payer,
      att,
      stranger,
    ]);
    refused(w, swap(revokeAttestationInstruction(revoke), 3, w.address()), 'InvalidAccount', [payer, att]);
    refused(w, without(revokeAttestationInstruction(revoke), 0, 'isSigner'), 'MissingSigner', [payer, att]);
    refused(w, without(revokeAttestationInstruction(revoke), 2, 'isWritable'), 'NotWritable', [payer, att]);
    w.advance(10n);
    expectOk(w.run(revokeAttestationInstruction(revoke)));
    expect(w.exists(att)).toBe(false);
    expect(w.balance(payer)).toBe(pb);
    refused(w, revokeAttestationInstruction(revoke), 'NotFound', [payer, att]);

    // The attested wallet may drop its own attestation; the authority paying for itself is one account.
    expectOk(w.run(attestSenderInstruction({ ...p, payer: w.authority })));
    expect(w.balance(w.authority)).toBe(ab - rent(SENDER_ATTESTATION_SIZE));
    expectOk(w.run(revokeAttestationInstruction({ ...revoke, signer: wallet, rentPayer: w.authority })));
    expect(w.balance(w.authority)).toBe(ab);
  });

  it('refuses a forged attestation, an inactive domain and bad accounts, changing nothing', () => {
    const w = new World();
    const wallet = w.wallet();
    const payer = w.wallet();
    const domain = w.domainAddress();
    const att = attestationAddress(w.programId, domain, wallet)[0];
    const p = { programId: w.programId, authority: w.authority, payer, domain: DOMAIN, wallet };
    const watch = [payer, w.authority, att, domain];
    // Anyone but the authority: the wallet itself, the delegate, a stranger.
    for (const forger of [wallet, w.delegate, w.wallet()])
      refused(w, attestSenderInstruction({ ...p, authority: forger }), 'NotDomainAuthority', [
        ...watch,
        forger,
      ]);
    // Another domain's authority cannot attest for this one.
    const otherAuthority = w.wallet();
    expectOk(
      w.run(
        createDomainInstruction({
          programId: w.programId,
          delegate: w.delegate,
          domain: 'other.test',
          authority: otherAuthority,
        }),
      ),
    );
    refused(w, attestSenderInstruction({ ...p, authority: otherAuthority }), 'NotDomainAuthority', watch);
    // Its own domain's record cannot be created under this domain's address.
    const own = attestSenderInstruction({ ...p, authority: otherAuthority, domain: 'other.test' });
    refused(w, swap(own, 3, att), 'InvalidPda', watch);
    refused(w, attestSenderInstruction({ ...p, wallet: PublicKey.default }), 'InvalidArgument', watch);
    refused(w, swap(attestSenderInstruction(p), 3, w.address()), 'InvalidPda', watch);
    refused(w, swap(attestSenderInstruction(p), 2, w.address()), 'NotFound', watch);
    refused(w, without(attestSenderInstruction(p), 0, 'isSigner'), 'MissingSigner', watch);
    refused(w, without(attestSenderInstruction(p), 1, 'isSigner'), 'MissingSigner', watch);
    refused(w, without(attestSenderInstruction(p), 3, 'isWritable'), 'NotWritable', watch);
    const poor = w.wallet(rent(SENDER_ATTESTATION_SIZE) - 1n);
    refused(w, attestSenderInstruction({ ...p, payer: poor }), 'InsufficientFunds', [...watch, poor]);
    // An inactive domain attests nobody (is_active patched: no instruction deactivates yet).
    const data = (w.data(domain) as Uint8Array).slice();
    data[1] = 0;
    w.patch(domain, data);
    refused(w, attestSenderInstruction(p), 'DomainInactive', watch);
    data[1] = 1;
    w.patch(domain, data);
    expectOk(w.run(attestSenderInstruction(p)));
  });
});

describe('SetRecipientRule / CloseRecipientRule', () => {
  it('creates, replaces and closes the owner’s rule; refuses a zero threshold and a stranger', () => {
    const w = new World();
    const owner = w.user({ defaultPostage: POSTAGE });
    const rule = recipientRuleAddress(w.programId, owner)[0];
    const p = { programId: w.programId, owner, minReputationLamports: 100_000n, postageLamports: 0n };
    const before = w.balance(owner);
    refused(w, setRecipientRuleInstruction({ ...p, minReputationLamports: 0n }), 'InvalidArgument', [
      owner,
      rule,
    ]);
    refused(w, closeRecipientRuleInstruction({ programId: w.programId, owner }), 'NotFound', [owner, rule]);
    expectOk(w.run(setRecipientRuleInstruction(p)));
    expect(w.balance(owner)).toBe(before - rent(RECIPIENT_RULE_SIZE));
    expect(decodeRecipientRule(w.data(rule) as Uint8Array)).toMatchObject({
      minReputationLamports: 100_000n,
      postageLamports: 0n,
    });
    expectOk(w.run(setRecipientRuleInstruction({ ...p, postageLamports: 5_000n })));
    expect(w.balance(owner)).toBe(before - rent(RECIPIENT_RULE_SIZE));
    expect(decodeRecipientRule(w.data(rule) as Uint8Array).postageLamports).toBe(5_000n);
    // A wallet without a mailbox has no rule to set; nobody writes another owner's rule.
    const nobody = w.wallet();
    refused(w, setRecipientRuleInstruction({ ...p, owner: nobody }), 'NotFound', [nobody]);
    const stranger = w.user();
    refused(w, swap(setRecipientRuleInstruction({ ...p, owner: stranger }), 2, rule), 'InvalidPda', [
      stranger,
      rule,
    ]);
    refused(
      w,
      swap(closeRecipientRuleInstruction({ programId: w.programId, owner: stranger }), 1, rule),
      'InvalidPda',
      [stranger, rule],
    );
    expectOk(w.run(closeRecipientRuleInstruction({ programId: w.programId, owner })));
    expect(w.exists(rule)).toBe(false);
    expect(w.balance(owner)).toBe(before);
  });
});

describe('SendMail with the reputation accounts', () => {
  /** A gated recipient, a direct sender with `stamps` stamps toward them. */
  function setup(stamps: bigint) {
    const w = new World();
    const recipient = w.user({ defaultPostage: POSTAGE });
    const sender = w.wallet();
    if (stamps > 0n)
      expectOk(w.run(buyStampsInstruction({ programId: w.programId, buyer: sender, recipient, stamps })));
    const rep = reputationAddress(w.programId, sender)[0];
    const send = (opts: { rule?: boolean; reputation?: boolean } = {}) => {
      const ix = sendMailInstruction({
        programId: w.programId,
        sender,
        recipient,
        index: w.mailbox(recipient).mailCount,
        fromHash: fromHash(sender),
        cid: CID,
      });
      return opts.reputation === false
        ? ix
        : withReputation(ix, { programId: w.programId, sender, recipient, applyRule: opts.rule });
    };
    return { w, recipient, sender, rep, send };
  }

  it('adds a spent stamp’s postage to the sender’s reputation, creating it on first use', () => {
    const { w, recipient, sender, rep, send } = setup(3n);
    const [sb, rb] = [w.balance(sender), w.balance(recipient)];
    expectOk(w.run(send()));
    const email = rent(198 + CID.length);
    // The sender pays the Email and the reputation's rent and gets the surcharge; the recipient the postage.
    expect(w.balance(sender)).toBe(sb - email - rent(SENDER_REPUTATION_SIZE) + SURCHARGE);
    expect(w.balance(recipient)).toBe(rb + POSTAGE);
    const first = decodeSenderReputation(w.data(rep) as Uint8Array);
    expect(first).toMatchObject({ cumulativeSpendLamports: POSTAGE, updatedAt: w.now });
    expect(first.wallet.equals(sender)).toBe(true);
    w.advance(30n);
    expectOk(w.run(send()));
    expect(decodeSenderReputation(w.data(rep) as Uint8Array)).toMatchObject({
      cumulativeSpendLamports: 2n * POSTAGE,
      updatedAt: w.now,
    });
    // Without the account the send still works and records nothing.
    expectOk(w.run(send({ reputation: false })));
    expect(decodeSenderReputation(w.data(rep) as Uint8Array).cumulativeSpendLamports).toBe(2n * POSTAGE);
    expect(w.frombox(fromHash(sender), recipient)?.stamps).toBe(0n);
  });

  it('records nothing for a free send', () => {
    const { w, sender, rep } = setup(0n);
    const open = w.user();
    const ix = withReputation(
      sendMailInstruction({
        programId: w.programId,
        sender,
        recipient: open,
        index: 0n,
        fromHash: fromHash(sender),
        cid: CID,
      }),
      { programId: w.programId, sender, recipient: open, applyRule: true },
    );
    expectOk(w.run(ix));
    expect(w.exists(rep)).toBe(false);
  });

  it('waives or lowers postage under the recipient’s rule once the reputation reaches it', () => {
    const { w, recipient, sender, rep, send } = setup(2n);
    const programId = w.programId;
    expectOk(
      w.run(
        setRecipientRuleInstruction({
          programId,
          owner: recipient,
          minReputationLamports: 2n * POSTAGE,
          postageLamports: 0n,
        }),
      ),
    );
    // Below the threshold the rule does not apply: stamps are spent.
    expectOk(w.run(send({ rule: true })));
    expectOk(w.run(send({ rule: true })));
    expect(w.frombox(fromHash(sender), recipient)?.stamps).toBe(0n);
    expect(decodeSenderReputation(w.data(rep) as Uint8Array).cumulativeSpendLamports).toBe(2n * POSTAGE);
    // Without the rule account a stampless send is refused, as before.
    refused(w, send(), 'PostageRequired', [sender, recipient, rep]);
    // With it, waived: no stamp, no postage, reputation unchanged.
    const [sb, rb] = [w.balance(sender), w.balance(recipient)];
    expectOk(w.run(send({ rule: true })));
    expect(w.balance(sender)).toBe(sb - rent(198 + CID.length));
    expect(w.balance(recipient)).toBe(rb);
    expect(decodeSenderReputation(w.data(rep) as Uint8Array).cumulativeSpendLamports).toBe(2n * POSTAGE);
    // Lowered: the sender pays the rule's postage straight to the recipient, and it counts.
    const LOW = 3_000n;
    expectOk(
      w.run(
        setRecipientRuleInstruction({
          programId,
          owner: recipient,
          minReputationLamports: 2n * POSTAGE,
          postageLamports: LOW,
        }),
      ),
    );
    const [sb2, rb2] = [w.balance(sender), w.balance(recipient)];
    expectOk(w.run(send({ rule: true })));
    expect(w.balance(sender)).toBe(sb2 - rent(198 + CID.length) - LOW);
    expect(w.balance(recipient)).toBe(rb2 + LOW);
    expect(decodeSenderReputation(w.data(rep) as Uint8Array).cumulativeSpendLamports).toBe(
      2n * POSTAGE + LOW,
    );
    // Once the rule is closed, the 9-account form falls back to stamps.
    expectOk(w.run(closeRecipientRuleInstruction({ programId, owner: recipient })));
    refused(w, send({ rule: true }), 'PostageRequired', [sender, recipient, rep]);
  });

  it('refuses a rule without standing, another wallet’s reputation and a relayed send with extras', () => {
    const { w, recipient, sender, rep, send } = setup(1n);
    const programId = w.programId;
    expectOk(
      w.run(
        setRecipientRuleInstruction({
          programId,
          owner: recipient,
          minReputationLamports: 1n,
          postageLamports: 0n,
        }),
      ),
    );
    const watch = [sender, recipient, rep, w.fromboxAddress(fromHash(sender), recipient)];
    // Another wallet's reputation in the 9-account form is not the signer's.
    const other = w.wallet();
    refused(w, swap(send({ rule: true }), 7, reputationAddress(programId, other)[0]), 'InvalidPda', watch);
    // Another recipient's rule.
    const elsewhere = w.user();
    refused(
      w,
      swap(send({ rule: true }), 8, recipientRuleAddress(programId, elsewhere)[0]),
      'InvalidPda',
      watch,
    );
    refused(w, without(send(), 7, 'isWritable'), 'NotWritable', watch);
    // An eighth account that is not the signer's reputation is read as a relayed send's domain.
    refused(w, swap(send(), 7, reputationAddress(programId, other)[0]), 'NotFound', watch);
    // A relayed send takes no reputation accounts.
    const relayed = sendMailInstruction({
      programId,
      sender: w.authority,
      recipient,
      index: w.mailbox(recipient).mailCount,
      fromHash: fromHash('alice@ext.example'),
      cid: CID,
      domain: DOMAIN,
    });
    relayed.keys.push({
      pubkey: recipientRuleAddress(programId, recipient)[0],
      isSigner: false,
      isWritable: false,
    });
    refused(w, relayed, 'InvalidInstruction', watch);
    // The first send spends the one stamp (reputation 0 < 1), the next one is waived.
    expectOk(w.run(send({ rule: true })));
    expectOk(w.run(send({ rule: true })));
    expect(w.mailbox(recipient).mailCount).toBe(2n);
  });
});
