import { Keypair, PublicKey, SystemProgram, type TransactionInstruction } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import type { Layout } from './accounts/layout.ts';
import { ZERO_KEY } from './bytes.ts';
import { blake3Text, fromHash, replyToHash } from './hash.ts';
import {
  acceptAdminInstruction,
  addStampsInstruction,
  beaconTagBits,
  beaconTagList,
  buyStampsInstruction,
  claimBountyInstruction,
  closeBeaconInstruction,
  closePinLeaseInstruction,
  createAliasInstruction,
  createDomainInstruction,
  createFromboxInstruction,
  createMailboxInstruction,
  createPinLeaseInstruction,
  DecodeError,
  decodeInstruction,
  deleteMailInstruction,
  encodeInstruction,
  encodeInstructionOf,
  INSTRUCTION_LAYOUTS,
  INSTRUCTION_TAGS,
  type InstructionKind,
  initPostofficeInstruction,
  type MailInstruction,
  proposeAdminInstruction,
  publishBeaconInstruction,
  publishKeyInstruction,
  reclaimFromboxStampsInstruction,
  removeKeyInstruction,
  sendMailInstruction,
  setMailboxDomainInstruction,
  setMailboxFlagsInstruction,
  topUpStampsInstruction,
  updateFromboxInstruction,
  updatePostofficeInstruction,
  withdrawFeesInstruction,
} from './instructions.ts';
import { programDataAddress } from './loader.ts';
import {
  aliasAddress,
  beaconAddress,
  domainAddress,
  emailAddress,
  fromboxAddress,
  mailboxAddress,
  mailboxKeyAddress,
  pinLeaseAddress,
  postofficeAddress,
} from './pda.ts';
import { DEFAULT_PROGRAM_ID } from './program-id.ts';
import { sampleOf } from './test-samples.ts';

const programId = new PublicKey(DEFAULT_PROGRAM_ID);
const SYSTEM = SystemProgram.programId;
const a = Keypair.generate().publicKey;
const b = Keypair.generate().publicKey;
const c = Keypair.generate().publicKey;

const TAGS: Record<InstructionKind, number> = {
  InitPostoffice: 0,
  CreateMailbox: 1,
  SetMailboxFlags: 2,
  PublishKey: 3,
  RemoveKey: 4,
  CreateDomain: 5,
  SendMail: 6,
  DeleteMail: 7,
  CreateAlias: 8,
  CreateFrombox: 9,
  UpdateFrombox: 10,
  AddStamps: 11,
  BuyStamps: 12,
  TopUpStamps: 13,
  ReclaimFromboxStamps: 14,
  ClaimBounty: 15,
  CreatePinLease: 16,
  ClosePinLease: 17,
  PublishBeacon: 18,
  CloseBeacon: 19,
  ListAlias: 34,
  BidAlias: 35,
  BuyAlias: 36,
  SettleAuction: 37,
  CancelListing: 38,
  OfferAlias: 39,
  AcceptAlias: 40,
  ReclaimAlias: 41,
  ListDomain: 42,
  BuyDomain: 43,
  CancelDomainListing: 44,
  RequestMailboxClose: 20,
  CancelMailboxClose: 21,
  CloseMailbox: 22,
  RequestDeactivation: 23,
  CancelDeactivation: 24,
  RequestReclaim: 25,
  CancelReclaim: 26,
  SettleDomainTimelock: 27,
  AttestSender: 28,
  RevokeAttestation: 29,
  SetRecipientRule: 30,
  CloseRecipientRule: 31,
  SetMailboxDomain: 32,
  UpdatePostoffice: 50,
  WithdrawFees: 51,
  ProposeAdmin: 52,
  AcceptAdmin: 53,
};

type Flags = [PublicKey, 's' | 'w' | 'sw' | ''];

function shape(ix: TransactionInstruction): Flags[] {
  return ix.keys.map((k) => [k.pubkey, `${k.isSigner ? 's' : ''}${k.isWritable ? 'w' : ''}` as Flags[1]]);
}

describe('instruction data', () => {
  for (const kind of Object.keys(TAGS) as InstructionKind[]) {
    it(`${kind} has tag ${TAGS[kind]} and round-trips`, () => {
      const layout = INSTRUCTION_LAYOUTS[kind] as unknown as Layout<MailInstruction>;
      expect(INSTRUCTION_TAGS[kind]).toBe(TAGS[kind]);
      for (const seed of [1, 2]) {
        const value = sampleOf(layout, seed);
        const data = encodeInstruction(value);
        expect(data[0]).toBe(TAGS[kind]);
        expect(decodeInstruction(data)).toEqual(value);
      }
    });
  }

  it('encodes SendMail args in borsh order', () => {
    const data = encodeInstructionOf('SendMail', {
      fromHash: new Uint8Array(32).fill(1),
      cid: 'abc',
      bountyLamports: 5n,
      expiresAt: -2n,
      replyToHash: new Uint8Array(32).fill(2),
    });
    expect(data.length).toBe(1 + 32 + 4 + 3 + 8 + 8 + 32);
    expect(Array.from(data.subarray(33, 40))).toEqual([3, 0, 0, 0, 97, 98, 99]);
    expect(new DataView(data.buffer).getBigUint64(40, true)).toBe(5n);
    expect(new DataView(data.buffer).getBigInt64(48, true)).toBe(-2n);
  });

  it('encodes options as a flag byte', () => {
    expect(
      Array.from(encodeInstructionOf('SetMailboxFlags', { noIpfs: null, defaultPostage: null })),
    ).toEqual([2, 0, 0]);
    expect(Array.from(encodeInstructionOf('SetMailboxFlags', { noIpfs: true, defaultPostage: 1n }))).toEqual([
      2, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0,
    ]);
    expect(Array.from(encodeInstructionOf('BuyStamps', { stamps: 2n, maxPriceLamports: null }))).toEqual([
      12, 2, 0, 0, 0, 0, 0, 0, 0, 0,
    ]);
  });

  it('refuses unknown tags, short, trailing and non-canonical data', () => {
    expect(() => decodeInstruction(new Uint8Array(0))).toThrow(DecodeError);
    expect(() => decodeInstruction(Uint8Array.of(33))).toThrow(/unknown tag 33/);
    expect(() => decodeInstruction(Uint8Array.of(45))).toThrow(/unknown tag 45/);
    expect(() => decodeInstruction(Uint8Array.of(54))).toThrow(/unknown tag 54/);
    expect(() => decodeInstruction(Uint8Array.of(32))).toThrow(/too short/);
    expect(() => decodeInstruction(Uint8Array.of(4, 0))).toThrow(/trailing/);
    expect(() => decodeInstruction(Uint8Array.of(12, 1, 0, 0))).toThrow(/too short/);
    expect(() => decodeInstruction(Uint8Array.of(2, 2, 0))).toThrow(/option flag/);
    expect(() => decodeInstruction(Uint8Array.of(2, 1, 2, 0))).toThrow(/invalid bool/);
    expect(() => decodeInstruction(Uint8Array.of(8, 5, 0, 0, 0, 97))).toThrow(/too short/);
    // ListAlias's mode is 0 or 1 (the schema bounds it, as the program does).
    const listAlias = new Uint8Array(26);
    listAlias[0] = 34;
    listAlias[1] = 1;
    expect(decodeInstruction(listAlias)).toMatchObject({ kind: 'ListAlias', mode: 1 });
    listAlias[1] = 2;
    expect(() => decodeInstruction(listAlias)).toThrow(/ListAlias.mode: 2 is above 1/);
    expect(() =>
      encodeInstructionOf('ListAlias', {
        mode: 2,
        priceLamports: 1n,
        expiresAt: 0n,
        antisnipeWindowSecs: 0n,
      }),
    ).toThrow(DecodeError);
  });
});

describe('instruction builders', () => {
  const P = postofficeAddress(programId)[0];
  const mb = (o: PublicKey) => mailboxAddress(programId, o)[0];

  it('InitPostoffice', () => {
    const ix = initPostofficeInstruction({
      programId,
      admin: a,
      delegateAddress: b,
      stampFeeLamports: 10n,
      settlementSurchargeLamports: 20n,
    });
    expect(ix.programId.equals(programId)).toBe(true);
    // The upgrade authority co-signs (the admin itself unless named), next to the ProgramData it is read from.
    const programData = programDataAddress(programId);
    expect(shape(ix)).toEqual([
      [a, 'sw'],
      [P, 'w'],
      [SYSTEM, ''],
      [programData, ''],
      [a, 's'],
    ]);
    expect(decodeInstruction(ix.data)).toMatchObject({ kind: 'InitPostoffice', stampFeeLamports: 10n });
    const coSigned = initPostofficeInstruction({
      programId,
      admin: a,
      upgradeAuthority: c,
      delegateAddress: b,
      stampFeeLamports: 10n,
      settlementSurchargeLamports: 20n,
    });
    expect(shape(coSigned).slice(3)).toEqual([
      [programData, ''],
      [c, 's'],
    ]);
  });

  it('SetMailboxDomain, into a domain and out of every domain', () => {
    const d = domainAddress(programId, 'example.org')[0];
    const into = setMailboxDomainInstruction({ programId, owner: a, domain: 'Example.ORG' });
    expect(shape(into)).toEqual([
      [a, 's'],
      [mb(a), 'w'],
      [d, ''],
    ]);
    expect(decodeInstruction(into.data)).toEqual({ kind: 'SetMailboxDomain', domain: d });
    const out = setMailboxDomainInstruction({ programId, owner: a, domain: null });
    expect(shape(out)).toEqual([
      [a, 's'],
      [mb(a), 'w'],
    ]);
    expect(decodeInstruction(out.data)).toEqual({ kind: 'SetMailboxDomain', domain: ZERO_KEY });
  });

  it('the postoffice admin: UpdatePostoffice, WithdrawFees, ProposeAdmin, AcceptAdmin', () => {
    const update = updatePostofficeInstruction({ programId, admin: a, settlementSurchargeLamports: 7n });
    expect(shape(update)).toEqual([
      [a, 's'],
      [P, 'w'],
    ]);
    expect(decodeInstruction(update.data)).toEqual({
      kind: 'UpdatePostoffice',
      stampFeeLamports: null,
      settlementSurchargeLamports: 7n,
      delegateAddress: null,
      rootKsk: null,
    });
    const rootKsk = new Uint8Array(32).fill(9);
    const all = updatePostofficeInstruction({
      programId,
      admin: a,
      stampFeeLamports: 1n,
      settlementSurchargeLamports: 2n,
      delegateAddress: b,
      rootKsk,
    });
    // tag, Some(1), Some(2), Some(delegate), Some(root_ksk)
    expect(all.data.length).toBe(1 + 9 + 9 + 33 + 33);
    expect(decodeInstruction(all.data)).toEqual({
      kind: 'UpdatePostoffice',
      stampFeeLamports: 1n,
      settlementSurchargeLamports: 2n,
      delegateAddress: b,
      rootKsk,
    });
    const withdraw = withdrawFeesInstruction({ programId, admin: a, to: c, amountLamports: 5n });
    expect(shape(withdraw)).toEqual([
      [a, 's'],
      [P, 'w'],
      [c, 'w'],
    ]);
    expect(decodeInstruction(withdraw.data)).toEqual({ kind: 'WithdrawFees', amountLamports: 5n });
    const propose = proposeAdminInstruction({ programId, admin: a, newAdmin: b });
    expect(decodeInstruction(propose.data)).toEqual({ kind: 'ProposeAdmin', newAdmin: b });
    expect(decodeInstruction(proposeAdminInstruction({ programId, admin: a, newAdmin: null }).data)).toEqual({
      kind: 'ProposeAdmin',
      newAdmin: ZERO_KEY,
    });
    const accept = acceptAdminInstruction({ programId, newAdmin: b });
    expect(shape(accept)).toEqual([
      [b, 's'],
      [P, 'w'],
    ]);
    expect(Array.from(accept.data)).toEqual([53]);
  });

  it('CreateMailbox with and without a domain', () => {
    const plain = createMailboxInstruction({ programId, owner: a });
    expect(shape(plain)).toEqual([
      [a, 'sw'],
      [a, 's'],
      [mb(a), 'w'],
      [SYSTEM, ''],
    ]);
    expect(decodeInstruction(plain.data)).toEqual({
      kind: 'CreateMailbox',
      defaultPostage: 0n,
      domain: ZERO_KEY,
    });
    const d = domainAddress(programId, 'example.org')[0];
    const withDomain = createMailboxInstruction({
      programId,
      owner: a,
      payer: b,
      defaultPostage: 7n,
      domain: 'Example.ORG',
    });
    expect(shape(withDomain)).toEqual([
      [b, 'sw'],
      [a, 's'],
      [mb(a), 'w'],
      [SYSTEM, ''],
      [d, ''],
    ]);
    expect(decodeInstruction(withDomain.data)).toEqual({
      kind: 'CreateMailbox',
      defaultPostage: 7n,
      domain: d,
    });
  });

  it('SetMailboxFlags, PublishKey, RemoveKey', () => {
    const flags = setMailboxFlagsInstruction({ programId, owner: a, noIpfs: true });
    expect(shape(flags)).toEqual([
      [a, 's'],
      [mb(a), 'w'],
    ]);
    expect(decodeInstruction(flags.data)).toEqual({
      kind: 'SetMailboxFlags',
      noIpfs: true,
      defaultPostage: null,
    });
    const mk = mailboxKeyAddress(programId, a)[0];
    const pub = publishKeyInstruction({ programId, owner: a, pubKey: c.toBase58() });
    expect(shape(pub)).toEqual([
      [a, 'sw'],
      [mb(a), ''],
      [mk, 'w'],
      [SYSTEM, ''],
    ]);
    expect(decodeInstruction(pub.data)).toEqual({ kind: 'PublishKey', pubKey: c });
    expect(shape(removeKeyInstruction({ programId, owner: a }))).toEqual([
      [a, 'sw'],
      [mk, 'w'],
    ]);
  });

  it('CreateDomain normalizes the name', () => {
    const ix = createDomainInstruction({ programId, delegate: a, domain: 'Mail.Example.org.', authority: b });
    const d = domainAddress(programId, 'mail.example.org')[0];
    expect(shape(ix)).toEqual([
      [a, 'sw'],
      [P, ''],
      [d, 'w'],
      [SYSTEM, ''],
    ]);
    expect(decodeInstruction(ix.data)).toEqual({
      kind: 'CreateDomain',
      domain: 'mail.example.org',
      authority: b,
    });
    expect(() =>
      createDomainInstruction({ programId, delegate: a, domain: '-bad-', authority: b }),
    ).toThrow();
  });

  it('SendMail direct and relayed', () => {
    const fh = fromHash(a);
    const direct = sendMailInstruction({
      programId,
      sender: a,
      recipient: b,
      index: 3n,
      fromHash: fh,
      cid: 'bafy',
      bountyLamports: 9n,
      expiresAt: 100n,
      replyToHash: replyToHash(c),
    });
    const email = emailAddress(programId, b, 3n)[0];
    const fb = fromboxAddress(programId, fh, b)[0];
    expect(shape(direct)).toEqual([
      [a, 'sw'],
      [mb(b), 'w'],
      [email, 'w'],
      [fb, 'w'],
      [b, 'w'],
      [P, ''],
      [SYSTEM, ''],
    ]);
    expect(decodeInstruction(direct.data)).toEqual({
      kind: 'SendMail',
      fromHash: fh,
      cid: 'bafy',
      bountyLamports: 9n,
      expiresAt: 100n,
      replyToHash: replyToHash(c),
    });
    const relayed = sendMailInstruction({
      programId,
      sender: c,
      recipient: b,
      index: 0n,
      fromHash: fromHash('x@y.z'),
      cid: 'bafy',
      domain: 'y.z',
    });
    expect(relayed.keys).toHaveLength(8);
    expect(shape(relayed)[7]).toEqual([domainAddress(programId, 'y.z')[0], '']);
    expect(decodeInstruction(relayed.data)).toMatchObject({
      bountyLamports: 0n,
      expiresAt: 0n,
      replyToHash: new Uint8Array(32),
    });
  });

  it('DeleteMail and ClaimBounty by address or index', () => {
    const email = emailAddress(programId, b, 4n)[0];
    const byIndex = deleteMailInstruction({ programId, signer: b, recipient: b, index: 4n, rentPayer: a });
    const byAddress = deleteMailInstruction({ programId, signer: b, email, rentPayer: a });
    expect(shape(byIndex)).toEqual([
      [b, 's'],
      [email, 'w'],
      [a, 'w'],
    ]);
    expect(shape(byAddress)).toEqual(shape(byIndex));
    expect(shape(claimBountyInstruction({ programId, recipient: b, index: 4n }))).toEqual([
      [b, 'sw'],
      [email, 'w'],
    ]);
    expect(shape(claimBountyInstruction({ programId, recipient: b, email }))).toEqual([
      [b, 'sw'],
      [email, 'w'],
    ]);
  });

  it('CreateAlias normalizes and derives', () => {
    const ix = createAliasInstruction({ programId, owner: a, name: 'Bob.Smith@example.org' });
    expect(shape(ix)).toEqual([
      [a, 'sw'],
      [mb(a), ''],
      [aliasAddress(programId, 'bob.smith')[0], 'w'],
      [SYSTEM, ''],
    ]);
    expect(decodeInstruction(ix.data)).toEqual({ kind: 'CreateAlias', name: 'bob.smith' });
  });

  it('frombox and stamp instructions', () => {
    const fh = fromHash('alice@example.org');
    const fb = fromboxAddress(programId, fh, a)[0];
    expect(
      shape(createFromboxInstruction({ programId, owner: a, fromHash: fh, requiredPostage: 1n })),
    ).toEqual([
      [a, 'sw'],
      [mb(a), ''],
      [fb, 'w'],
      [SYSTEM, ''],
    ]);
    expect(
      shape(updateFromboxInstruction({ programId, owner: a, fromHash: fh, requiredPostage: 1n })),
    ).toEqual([
      [a, 's'],
      [mb(a), ''],
      [fb, 'w'],
    ]);
    expect(
      shape(addStampsInstruction({ programId, payer: c, recipient: a, fromHash: fh, stamps: 2n })),
    ).toEqual([
      [c, 'sw'],
      [mb(a), ''],
      [fb, 'w'],
      [P, 'w'],
      [SYSTEM, ''],
    ]);
    const own = fromboxAddress(programId, fromHash(c), a)[0];
    const buy = buyStampsInstruction({ programId, buyer: c, recipient: a, stamps: 2n, maxPriceLamports: 5n });
    expect(shape(buy)).toEqual([
      [c, 'sw'],
      [mb(a), ''],
      [own, 'w'],
      [P, 'w'],
      [SYSTEM, ''],
    ]);
    expect(decodeInstruction(buy.data)).toEqual({ kind: 'BuyStamps', stamps: 2n, maxPriceLamports: 5n });
    const top = topUpStampsInstruction({ programId, buyer: c, recipient: a, stamps: 1n });
    expect(decodeInstruction(top.data)).toEqual({ kind: 'TopUpStamps', stamps: 1n, maxPriceLamports: null });
    expect(shape(reclaimFromboxStampsInstruction({ programId, sender: c, recipient: a }))).toEqual([
      [c, 'sw'],
      [mb(a), ''],
      [own, 'w'],
    ]);
  });

  it('pin lease and beacon instructions', () => {
    const cid = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy';
    const lease = pinLeaseAddress(programId, blake3Text(cid), a)[0];
    const create = createPinLeaseInstruction({
      programId,
      holder: a,
      operator: b,
      cid,
      expiresAt: 1_800_000_000n,
      feeLamports: 7n,
    });
    expect(shape(create)).toEqual([
      [a, 'sw'],
      [b, 'w'],
      [lease, 'w'],
      [SYSTEM, ''],
    ]);
    expect(decodeInstruction(create.data)).toEqual({
      kind: 'CreatePinLease',
      cidHash: blake3Text(cid),
      expiresAt: 1_800_000_000n,
      feeLamports: 7n,
    });
    expect(shape(closePinLeaseInstruction({ programId, holder: a, cidHash: blake3Text(cid) }))).toEqual([
      [a, 'sw'],
      [lease, 'w'],
    ]);
    const beacon = beaconAddress(programId, c)[0];
    const publish = publishBeaconInstruction({
      programId,
      owner: c,
      tags: beaconTagBits([0, 5, 63]),
      detailCid: cid,
    });
    expect(shape(publish)).toEqual([
      [c, 'sw'],
      [beacon, 'w'],
      [SYSTEM, ''],
    ]);
    expect(decodeInstruction(publish.data)).toEqual({
      kind: 'PublishBeacon',
      tags: (1n << 63n) | 33n,
      detailCid: cid,
    });
    expect(beaconTagList((1n << 63n) | 33n)).toEqual([0, 5, 63]);
    expect(() => beaconTagBits([64])).toThrow(RangeError);
    expect(shape(closeBeaconInstruction({ programId, owner: c }))).toEqual([
      [c, 'sw'],
      [beacon, 'w'],
    ]);
  });
});
