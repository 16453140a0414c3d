import type { PublicKey } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { PIN_LEASE_SIZE } from '../../chain/client/accounts/index.ts';
import {
  closePinLeaseInstruction,
  createPinLeaseInstruction,
  pinLeaseCidHash,
} from '../../chain/client/instructions.ts';
import { beaconAddress, mailboxAddress, pinLeaseAddress } from '../../chain/client/pda.ts';
import { expectOk, refusedUnchanged, rent, SOL, World } from '../support/program-world.ts';

const CID = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy';
const DAY = 86_400n;
// Large enough that an absent operator ends rent-exempt: on the audited
// binary each attack below went through.
const FEE = SOL / 10n;

function setup() {
  const w = new World();
  const holder = w.wallet();
  const lease = pinLeaseAddress(w.programId, pinLeaseCidHash(CID), holder)[0];
  const beacon = beaconAddress(w.programId, holder)[0];
  const mailbox = mailboxAddress(w.programId, holder)[0];
  const create = (operator: PublicKey) =>
    createPinLeaseInstruction({
      programId: w.programId,
      holder,
      operator,
      cid: CID,
      expiresAt: w.now + 30n * DAY,
      feeLamports: FEE,
    });
  return { w, holder, lease, beacon, mailbox, create, watch: [holder, lease, beacon, mailbox] };
}

describe('finding 6: a pin lease paid to an account the holder controls', () => {
  it('refuses the lease PDA itself as operator', () => {
    const { w, lease, create, watch } = setup();
    // The attack: operator = the lease account. The audited binary created the
    // lease and moved the fee into it; ClosePinLease then returned rent + fee.
    const ix = create(lease);
    expect(ix.keys[1]?.pubkey.equals(ix.keys[2]?.pubkey as PublicKey)).toBe(true);
    refusedUnchanged(w, ix, 'LeaseUnpaid', watch);
    expect(w.exists(lease)).toBe(false);
  });

  it("refuses the holder's own absent beacon PDA as operator", () => {
    const { w, beacon, create, watch } = setup();
    expect(w.exists(beacon)).toBe(false);
    // The audited binary paid the fee to the beacon address; the holder's
    // PublishBeacon then kept it in the beacon and CloseBeacon returned it.
    refusedUnchanged(w, create(beacon), 'LeaseUnpaid', watch);
    expect(w.exists(beacon)).toBe(false);
  });

  it('refuses any other off-curve address: the holder’s absent mailbox PDA, a program account', () => {
    const { w, mailbox, create, watch } = setup();
    expect(w.exists(mailbox)).toBe(false);
    refusedUnchanged(w, create(mailbox), 'LeaseUnpaid', watch);
    // Another wallet's mailbox (a program account, with data) is no fee wallet either.
    const other = w.user();
    refusedUnchanged(w, create(mailboxAddress(w.programId, other)[0]), 'LeaseUnpaid', watch);
    refusedUnchanged(w, create(w.postofficeAddress()), 'LeaseUnpaid', watch);
  });

  it('a wallet operator still works, funded or new; the fee stays with it when the holder closes the lease', () => {
    const { w, holder, lease, create } = setup();
    const operator = w.wallet();
    const [h0, o0] = [w.balance(holder), w.balance(operator)];
    expectOk(w.run(create(operator)));
    expect(w.balance(operator)).toBe(o0 + FEE);
    expect(w.balance(holder)).toBe(h0 - FEE - rent(PIN_LEASE_SIZE));
    expect(w.balance(lease)).toBe(rent(PIN_LEASE_SIZE));
    expectOk(w.run(closePinLeaseInstruction({ programId: w.programId, holder, cid: CID })));
    expect(w.balance(holder)).toBe(h0 - FEE);
    expect(w.balance(operator)).toBe(o0 + FEE);

    // A wallet that does not exist yet (an ed25519 key nobody funded) is paid into existence.
    const fresh = w.keypair().publicKey;
    expect(w.exists(fresh)).toBe(false);
    const second = createPinLeaseInstruction({
      programId: w.programId,
      holder,
      operator: fresh,
      cidHash: pinLeaseCidHash(`${CID}x`),
      expiresAt: w.now + DAY,
      feeLamports: FEE,
    });
    expectOk(w.run(second));
    expect(w.balance(fresh)).toBe(FEE);
    expect(w.rt.account(fresh)?.data.length).toBe(0);
  });
});
