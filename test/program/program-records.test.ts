import { PublicKey } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import {
  beaconDetailCid,
  decodeParticipantBeacon,
  decodePinLease,
  PARTICIPANT_BEACON_SIZE,
  PIN_LEASE_SIZE,
} from '../../chain/client/accounts/index.ts';
import {
  beaconTagBits,
  closeBeaconInstruction,
  closePinLeaseInstruction,
  createPinLeaseInstruction,
  encodeInstructionOf,
  pinLeaseCidHash,
  publishBeaconInstruction,
} from '../../chain/client/instructions.ts';
import { beaconAddress, pinLeaseAddress } from '../../chain/client/pda.ts';
import { expectOk, refused, rent, SOL, swap, World, without } from '../support/program-world.ts';

const CID = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy';
const FEE = 250_000n;
const DAY = 86_400n;

describe('CreatePinLease / ClosePinLease', () => {
  it('records a paid lease: the fee goes to the operator, the rent into the lease, only blake3(cid) is stored', () => {
    const w = new World();
    const holder = w.wallet();
    const operator = w.wallet();
    const p = {
      programId: w.programId,
      holder,
      operator,
      cid: CID,
      expiresAt: w.now + 30n * DAY,
      feeLamports: FEE,
    };
    const lease = pinLeaseAddress(w.programId, pinLeaseCidHash(CID), holder)[0];
    const [hb, ob] = [w.balance(holder), w.balance(operator)];
    expectOk(w.run(createPinLeaseInstruction(p)));
    expect(w.balance(holder)).toBe(hb - FEE - rent(PIN_LEASE_SIZE));
    expect(w.balance(operator)).toBe(ob + FEE);
    expect(w.balance(lease)).toBe(rent(PIN_LEASE_SIZE));
    const data = w.data(lease) as Uint8Array;
    expect(data.length).toBe(PIN_LEASE_SIZE);
    const stored = decodePinLease(data);
    expect(stored).toMatchObject({ createdAt: w.now, expiresAt: p.expiresAt, feeLamports: FEE });
    expect(stored.cidHash).toEqual(pinLeaseCidHash(CID));
    expect(stored.holder.equals(holder) && stored.operator.equals(operator)).toBe(true);
    expect(Buffer.from(data).includes(Buffer.from(CID))).toBe(false);

    // Duplicate: the same holder and CID.
    refused(w, createPinLeaseInstruction(p), 'AlreadyExists', [holder, operator, lease]);
    // Someone else's lease cannot be closed, even naming its exact address.
    const stranger = w.wallet();
    const steal = swap(
      closePinLeaseInstruction({ programId: w.programId, holder: stranger, cid: CID }),
      1,
      lease,
    );
    refused(w, steal, 'Unauthorized', [stranger, lease]);
    refused(
      w,
      without(closePinLeaseInstruction({ programId: w.programId, holder, cid: CID }), 0, 'isSigner'),
      'MissingSigner',
      [holder, lease],
    );

    w.advance(5n);
    const before = w.balance(holder);
    expectOk(w.run(closePinLeaseInstruction({ programId: w.programId, holder, cid: CID })));
    expect(w.balance(holder)).toBe(before + rent(PIN_LEASE_SIZE));
    expect(w.exists(lease)).toBe(false);
    expect(w.balance(operator)).toBe(ob + FEE);
    refused(w, closePinLeaseInstruction({ programId: w.programId, holder, cid: CID }), 'NotFound', [
      holder,
      lease,
    ]);
    // Another holder's lease on the same CID is its own account.
    expectOk(w.run(createPinLeaseInstruction({ ...p, holder: stranger })));
  });

  it('refuses a lease one did not pay for, an expired term, and bad accounts, moving nothing', () => {
    const w = new World();
    const holder = w.wallet();
    const operator = w.wallet();
    const p = {
      programId: w.programId,
      holder,
      operator,
      cid: CID,
      expiresAt: w.now + DAY,
      feeLamports: FEE,
    };
    const lease = pinLeaseAddress(w.programId, pinLeaseCidHash(CID), holder)[0];
    const watch = [holder, operator, lease];
    refused(w, createPinLeaseInstruction({ ...p, feeLamports: 0n }), 'LeaseUnpaid', watch);
    refused(w, createPinLeaseInstruction({ ...p, operator: holder }), 'LeaseUnpaid', watch);
    refused(w, createPinLeaseInstruction({ ...p, expiresAt: w.now }), 'LeaseExpired', watch);
    refused(w, createPinLeaseInstruction({ ...p, expiresAt: -1n }), 'LeaseExpired', watch);
    refused(
      w,
      createPinLeaseInstruction({
        programId: w.programId,
        holder,
        operator,
        expiresAt: p.expiresAt,
        feeLamports: FEE,
        cidHash: new Uint8Array(32),
      }),
      'InvalidArgument',
      watch,
    );
    // A lease recorded under another holder's address: the signer pays, so the PDA is the signer's.
    const other = w.wallet();
    const foreign = pinLeaseAddress(w.programId, pinLeaseCidHash(CID), other)[0];
    refused(w, swap(createPinLeaseInstruction(p), 2, foreign), 'InvalidPda', [...watch, foreign]);
    refused(w, without(createPinLeaseInstruction(p), 0, 'isSigner'), 'MissingSigner', watch);
    refused(w, without(createPinLeaseInstruction(p), 1, 'isWritable'), 'NotWritable', watch);
    // The fee account must be a wallet: an address someone can sign for (no PDA, whose lamports a
    // program could hand back), a System account without data, and it must end rent-exempt.
    refused(w, createPinLeaseInstruction({ ...p, operator: w.postofficeAddress() }), 'LeaseUnpaid', watch);
    const withData = w.keypair().publicKey;
    w.put(withData, { lamports: SOL, owner: new PublicKey(w.programId), data: new Uint8Array(8) });
    refused(w, createPinLeaseInstruction({ ...p, operator: withData }), 'InvalidAccount', [
      ...watch,
      withData,
    ]);
    const empty = w.keypair().publicKey;
    refused(w, createPinLeaseInstruction({ ...p, operator: empty, feeLamports: 1n }), 'InsufficientFunds', [
      ...watch,
      empty,
    ]);
    const poor = w.wallet(rent(PIN_LEASE_SIZE));
    refused(w, createPinLeaseInstruction({ ...p, holder: poor }), 'InsufficientFunds', [poor, operator]);
    // Trailing data and a wrong account count.
    const long = createPinLeaseInstruction(p);
    long.data = Buffer.concat([long.data, Buffer.of(0)]);
    refused(w, long, 'InvalidInstruction', watch);
    const short = createPinLeaseInstruction(p);
    short.keys.pop();
    refused(w, short, 'InvalidInstruction', watch);
    expectOk(w.run(createPinLeaseInstruction(p)));
  });
});

describe('PublishBeacon / CloseBeacon', () => {
  it('publishes, updates in place and closes a beacon', () => {
    const w = new World();
    const owner = w.wallet();
    const beacon = beaconAddress(w.programId, owner)[0];
    const tags = beaconTagBits([1, 7]);
    const before = w.balance(owner);
    expectOk(w.run(publishBeaconInstruction({ programId: w.programId, owner, tags, detailCid: CID })));
    expect(w.balance(owner)).toBe(before - rent(PARTICIPANT_BEACON_SIZE));
    const created = decodeParticipantBeacon(w.data(beacon) as Uint8Array);
    expect(created).toMatchObject({ tags, createdAt: w.now, updatedAt: w.now, detailCidLen: CID.length });
    expect(created.owner.equals(owner)).toBe(true);
    expect(beaconDetailCid(created)).toBe(CID);

    w.advance(60n);
    const shorter = 'bafyshort';
    expectOk(
      w.run(publishBeaconInstruction({ programId: w.programId, owner, tags: 1n, detailCid: shorter })),
    );
    expect(w.balance(owner)).toBe(before - rent(PARTICIPANT_BEACON_SIZE));
    const updated = decodeParticipantBeacon(w.data(beacon) as Uint8Array);
    expect(updated).toMatchObject({ tags: 1n, createdAt: created.createdAt, updatedAt: w.now });
    expect(beaconDetailCid(updated)).toBe(shorter);
    // The rest of the old CID is cleared.
    expect(updated.detailCid.subarray(shorter.length).every((b) => b === 0)).toBe(true);

    expectOk(w.run(closeBeaconInstruction({ programId: w.programId, owner })));
    expect(w.exists(beacon)).toBe(false);
    expect(w.balance(owner)).toBe(before);
  });

  it("refuses bad CIDs, another owner's beacon and a missing one, changing nothing", () => {
    const w = new World();
    const owner = w.wallet();
    const beacon = beaconAddress(w.programId, owner)[0];
    const p = { programId: w.programId, owner, tags: 3n, detailCid: CID };
    const watch = [owner, beacon];
    refused(w, closeBeaconInstruction({ programId: w.programId, owner }), 'NotFound', watch);
    for (const detailCid of ['', 'x'.repeat(97), 'has space', 'tab\there', 'é'])
      refused(w, publishBeaconInstruction({ ...p, detailCid }), 'InvalidArgument', watch);
    expectOk(w.run(publishBeaconInstruction({ ...p, detailCid: 'x'.repeat(96) })));
    const stored = w.data(beacon);
    const stranger = w.wallet();
    refused(w, swap(publishBeaconInstruction({ ...p, owner: stranger }), 1, beacon), 'InvalidPda', [
      ...watch,
      stranger,
    ]);
    refused(
      w,
      swap(closeBeaconInstruction({ programId: w.programId, owner: stranger }), 1, beacon),
      'InvalidPda',
      [...watch, stranger],
    );
    refused(w, without(publishBeaconInstruction(p), 0, 'isSigner'), 'MissingSigner', watch);
    refused(
      w,
      without(closeBeaconInstruction({ programId: w.programId, owner }), 1, 'isWritable'),
      'NotWritable',
      watch,
    );
    // A string that is not UTF-8 does not decode.
    const bad = publishBeaconInstruction(p);
    bad.data = Buffer.from([
      ...encodeInstructionOf('PublishBeacon', { tags: 1n, detailCid: 'ab' }).slice(0, 13),
      0xff,
    ]);
    refused(w, bad, 'InvalidInstruction', watch);
    expect(w.data(beacon)).toEqual(stored);
  });
});
