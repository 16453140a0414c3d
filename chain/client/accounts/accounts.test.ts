import type { PublicKey } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { sampleOf } from '../test-samples.ts';
import {
  ACCOUNT_LAYOUTS,
  ACCOUNT_TAGS,
  type AccountKind,
  aliasLayout,
  DecodeError,
  decodeAccount,
  decodeEmail,
  decodeMailbox,
  EMAIL_CID_OFFSET,
  EMAIL_FIXED_SIZE,
  EMAIL_RECIPIENT_OFFSET,
  EMAIL_RENT_PAYER_OFFSET,
  EMAIL_SENDER_OFFSET,
  emailLayout,
  emailSize,
  encodeAccount,
  encodeMailbox,
  encodeMailDomain,
  FROMBOX_RECIPIENT_OFFSET,
  fromboxLayout,
  type Layout,
  MAIL_DOMAIN_AUTHORITY_OFFSET,
  MAIL_DOMAIN_DOMAIN_OFFSET,
  MAILBOX_DOMAIN_OFFSET,
  type MailAccount,
  mailboxKeyLayout,
  mailboxLayout,
  mailDomainLayout,
  mailDomainSize,
  participantBeaconLayout,
  postofficeLayout,
  rentExemptLamports,
} from './index.ts';
import { defineLayout } from './layout.ts';

// Sizes and tags exactly as docs/protocol.md lists them (fixed part for string-tailed kinds).
const EXPECTED: Record<AccountKind, [tag: number, size: number]> = {
  Mailbox: [1, 83],
  MailboxKey: [2, 66],
  Email: [3, 194],
  Frombox: [4, 91],
  Alias: [5, 98],
  MailDomain: [6, 99],
  Postoffice: [7, 186],
  AliasListing: [8, 139],
  DomainListing: [9, 122],
  AliasEscrow: [10, 122],
  AliasBid: [11, 82],
  ParticipantBeacon: [12, 155],
  SenderAttestation: [13, 138],
  SenderReputation: [14, 50],
  PinLease: [15, 122],
  PendingMailboxClose: [16, 42],
  PendingDeactivation: [17, 42],
  PendingReclaim: [18, 106],
  RecipientRule: [19, 50],
};

describe('account codecs', () => {
  for (const kind of Object.keys(EXPECTED) as AccountKind[]) {
    const [tag, size] = EXPECTED[kind];
    it(`${kind}: tag ${tag}, size ${size}, round-trips`, () => {
      const layout = ACCOUNT_LAYOUTS[kind] as unknown as Layout<MailAccount>;
      expect(layout.tag).toBe(tag);
      expect(ACCOUNT_TAGS[kind]).toBe(tag);
      expect(layout.fixedSize).toBe(size);
      for (const seed of [1, 2, 3]) {
        const value = sampleOf(layout, seed);
        const bytes = encodeAccount(value);
        expect(bytes[0]).toBe(tag);
        if (layout.isFixed) expect(bytes.length).toBe(size);
        expect(decodeAccount(bytes)).toEqual(value);
        expect(layout.decode(bytes)).toEqual(value);
      }
    });
  }

  it('puts fields at the documented offsets', () => {
    const mb = sampleOf(mailboxLayout);
    const bytes = encodeMailbox(mb);
    expect(bytes.subarray(1, 33)).toEqual(new Uint8Array(mb.owner.toBytes()));
    expect(new DataView(bytes.buffer).getBigUint64(33, true)).toBe(mb.mailCount);
    expect(new DataView(bytes.buffer).getBigUint64(41, true)).toBe(mb.defaultPostage);
    expect(bytes.subarray(MAILBOX_DOMAIN_OFFSET, MAILBOX_DOMAIN_OFFSET + 32)).toEqual(
      new Uint8Array(mb.domain.toBytes()),
    );
    expect(bytes[81]).toBe(mb.noIpfs ? 1 : 0);
    expect(bytes[82]).toBe(mb.bump);
    expect(bytes.length).toBe(83);
    expect(mailboxLayout.offsets).toEqual({
      owner: 1,
      mailCount: 33,
      defaultPostage: 41,
      domain: 49,
      noIpfs: 81,
      bump: 82,
    });
    expect(emailLayout.offsets).toMatchObject({
      recipient: EMAIL_RECIPIENT_OFFSET,
      sender: EMAIL_SENDER_OFFSET,
      fromHash: 65,
      index: 97,
      epoch: 105,
      bountyLamports: 113,
      expiresAt: 121,
      replyToHash: 129,
      rentPayer: EMAIL_RENT_PAYER_OFFSET,
      bump: 193,
      cid: EMAIL_CID_OFFSET,
    });
    expect(fromboxLayout.offsets.recipient).toBe(FROMBOX_RECIPIENT_OFFSET);
    expect(fromboxLayout.offsets).toEqual({
      fromHash: 1,
      recipient: FROMBOX_RECIPIENT_OFFSET,
      requiredPostage: 65,
      stamps: 73,
      postageEscrow: 81,
      walletStamps: 89,
      bump: 90,
    });
    expect(mailboxKeyLayout.offsets).toEqual({ owner: 1, pubKey: 33, bump: 65 });
    expect(aliasLayout.offsets).toEqual({ nameHash: 1, address: 33, owner: 65, bump: 97 });
    expect(mailDomainLayout.offsets).toMatchObject({
      authority: MAIL_DOMAIN_AUTHORITY_OFFSET,
      domain: MAIL_DOMAIN_DOMAIN_OFFSET,
    });
    expect(mailDomainLayout.offsets).toEqual({
      isActive: 1,
      authority: 2,
      rentPayer: 34,
      nameHash: 66,
      bump: 98,
      domain: 99,
    });
    expect(postofficeLayout.offsets).toMatchObject({
      stampFeeLamports: 129,
      settlementSurchargeLamports: 137,
      feesCollected: 145,
      pendingAdmin: 153,
      bump: 185,
    });
    expect(participantBeaconLayout.offsets).toMatchObject({ bump: 57, detailCidLen: 58, detailCid: 59 });
  });

  it('sizes string-tailed accounts as fixed part + 4 + byte length', () => {
    const email = { ...sampleOf(emailLayout), cid: 'bafkreigh2akiscaildc' };
    expect(emailLayout.encode(email).length).toBe(emailSize(email.cid));
    expect(emailSize('x')).toBe(EMAIL_FIXED_SIZE + 5);
    expect(emailSize('é')).toBe(200);
    const domain = { ...sampleOf(mailDomainLayout), domain: 'mail.example.org' };
    expect(encodeMailDomain(domain).length).toBe(mailDomainSize(domain.domain));
    expect(mailDomainSize('a.b')).toBe(106);
    expect(rentExemptLamports(83)).toBe((128n + 83n) * 6960n);
  });

  it('refuses a wrong tag, short data and trailing bytes', () => {
    const bytes = encodeMailbox(sampleOf(mailboxLayout));
    expect(() => decodeEmail(bytes)).toThrow(/Email: wrong tag 1 \(expected 3\)/);
    expect(() => decodeMailbox(bytes.subarray(0, 82))).toThrow(DecodeError);
    expect(() => decodeMailbox(bytes.subarray(0, 82))).toThrow(/too short/);
    expect(() => decodeMailbox(Uint8Array.of(...bytes, 0))).toThrow(/1 trailing bytes/);
    expect(() => decodeMailbox(new Uint8Array(0))).toThrow(/empty/);
    expect(() => decodeAccount(Uint8Array.of(0, 1, 2))).toThrow(/unknown kind tag 0/);
    expect(() => decodeAccount(Uint8Array.of(20))).toThrow(/unknown kind tag 20/);
    const email = emailLayout.encode(sampleOf(emailLayout, 2));
    expect(() => decodeEmail(email.subarray(0, email.length - 1))).toThrow(/too short/);
    expect(() => decodeEmail(Uint8Array.of(...email, 7))).toThrow(/trailing/);
  });

  it('refuses non-canonical bools and invalid UTF-8', () => {
    const bytes = encodeMailbox(sampleOf(mailboxLayout));
    bytes[81] = 2;
    expect(() => decodeMailbox(bytes)).toThrow(/invalid bool/);
    const email = emailLayout.encode({ ...sampleOf(emailLayout), cid: 'ab' });
    email[EMAIL_CID_OFFSET + 4] = 0xff;
    expect(() => decodeEmail(email)).toThrow(/UTF-8/);
  });

  it('ties each field type to its TS type at compile time', () => {
    // @ts-expect-error a key field cannot be described as a hash
    const bad = defineLayout<{ kind: 'X'; a: PublicKey }>('X', 250, { a: 'hash' });
    expect(bad.fixedSize).toBe(33);
  });

  it('range-checks values on encode', () => {
    const mb = sampleOf(mailboxLayout);
    expect(() => encodeMailbox({ ...mb, mailCount: -1n })).toThrow(/mailCount/);
    expect(() => encodeMailbox({ ...mb, mailCount: 1n << 64n })).toThrow(RangeError);
    expect(() => emailLayout.encode({ ...sampleOf(emailLayout), epoch: 1n << 63n })).toThrow(/i64/);
    expect(() => encodeMailbox({ ...mb, bump: 256 })).toThrow(/u8/);
    expect(() => encodeMailbox({ ...mb, owner: 'x' as unknown as PublicKey })).toThrow(/PublicKey/);
    const email = sampleOf(emailLayout);
    expect(() => emailLayout.encode({ ...email, fromHash: new Uint8Array(31) })).toThrow(/32 bytes/);
  });
});
