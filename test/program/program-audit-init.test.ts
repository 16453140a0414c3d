import { type Keypair, PublicKey, Transaction } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { POSTOFFICE_SIZE } from '../../chain/client/accounts/index.ts';
import { ZERO_KEY } from '../../chain/client/bytes.ts';
import {
  acceptAdminInstruction,
  buyStampsInstruction,
  createDomainInstruction,
  initPostofficeInstruction,
  proposeAdminInstruction,
  updatePostofficeInstruction,
  withdrawFeesInstruction,
} from '../../chain/client/instructions.ts';
import {
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

// UpgradeableLoaderState::ProgramData: u32 tag 3, u64 slot, Option<Pubkey> authority (flag at 12, key at 13).
const PD_AUTHORITY_FLAG = 12;
const PD_AUTHORITY = 13;
const PROGRAM_DATA_HEADER = 45;
const FEES_COLLECTED = 145;

function keypairOf(w: World, key: PublicKey): Keypair {
  const kp = w.keys.get(key.toBase58());
  if (!kp) throw new Error('not a key of the world');
  return kp;
}

function init(w: World, admin: PublicKey, upgradeAuthority?: PublicKey) {
  return initPostofficeInstruction({
    programId: w.programId,
    admin,
    ...(upgradeAuthority ? { upgradeAuthority } : {}),
    delegateAddress: admin,
    stampFeeLamports: FEE,
    settlementSurchargeLamports: SURCHARGE,
  });
}

describe('finding 4: InitPostoffice by someone other than the deployer', () => {
  it('refuses a stranger signing as admin and as upgrade authority (NotUpgradeAuthority)', () => {
    const w = new World({ setup: false });
    const stranger = w.wallet();
    const accomplice = w.wallet();
    const watch = [w.postofficeAddress(), w.rt.programData, w.programKey];
    // The attack: right after the deploy, a stranger sends InitPostoffice
    // first, naming itself admin and delegate. The audited binary (three
    // accounts, no ProgramData) made it the admin for good.
    refusedUnchanged(w, init(w, stranger), 'NotUpgradeAuthority', watch);
    refusedUnchanged(w, init(w, stranger, accomplice), 'NotUpgradeAuthority', watch);
    // The audited three-account form is no longer an InitPostoffice.
    const old = init(w, stranger);
    old.keys = old.keys.slice(0, 3);
    refusedUnchanged(w, old, 'InvalidInstruction', watch);
    expect(w.exists(w.postofficeAddress())).toBe(false);
  });

  it('refuses a ProgramData account that is not the program’s', () => {
    const w = new World({ setup: false });
    const stranger = w.wallet();
    const watch = [w.postofficeAddress(), w.rt.programData];
    refusedUnchanged(w, swap(init(w, stranger), 3, w.address()), 'InvalidPda', watch);
    // A fake ProgramData naming the stranger as upgrade authority, at an address of its own:
    // System-owned, and loader-owned (as another program's would be).
    const header = new Uint8Array(PROGRAM_DATA_HEADER);
    header[0] = 3;
    header[PD_AUTHORITY_FLAG] = 1;
    header.set(stranger.toBytes(), PD_AUTHORITY);
    const loader = (w.rt.account(w.rt.programData) as { owner: PublicKey }).owner;
    for (const owner of [PublicKey.default, loader]) {
      const fake = w.address();
      w.put(fake, { lamports: rent(PROGRAM_DATA_HEADER), owner, data: header });
      refusedUnchanged(w, swap(init(w, stranger), 3, fake), 'InvalidPda', [...watch, fake]);
    }
    // The program account itself is not its ProgramData.
    refusedUnchanged(w, swap(init(w, stranger), 3, w.programKey), 'InvalidPda', watch);
    expect(w.exists(w.postofficeAddress())).toBe(false);
  });

  it('refuses an upgrade authority that did not sign (MissingSigner)', () => {
    const w = new World({ setup: false });
    const admin = w.wallet();
    const watch = [w.postofficeAddress(), w.rt.programData];
    // The real upgrade authority named but not signing: another fee payer sends it.
    const ix = without(init(w, admin, w.upgradeAuthority), 4, 'isSigner');
    const send = () => w.rt.run(new Transaction({ feePayer: admin }).add(ix), [keypairOf(w, admin)]);
    refusedUnchanged(w, ix, 'MissingSigner', watch, send, admin);
    // Another key named as upgrade authority, not signing.
    const other = w.wallet();
    refusedUnchanged(w, without(init(w, admin, other), 4, 'isSigner'), 'MissingSigner', [...watch, other]);
    expect(w.exists(w.postofficeAddress())).toBe(false);
  });

  it('refuses everyone once the program is immutable (no upgrade authority)', () => {
    const w = new World({ setup: false });
    const admin = w.wallet();
    const data = Uint8Array.from(w.data(w.rt.programData) as Uint8Array);
    expect(data[PD_AUTHORITY_FLAG]).toBe(1);
    data[PD_AUTHORITY_FLAG] = 0;
    w.patch(w.rt.programData, data);
    refusedUnchanged(w, init(w, admin, w.upgradeAuthority), 'NotUpgradeAuthority', [w.postofficeAddress()]);
    refusedUnchanged(w, init(w, w.upgradeAuthority), 'NotUpgradeAuthority', [w.postofficeAddress()]);
    expect(w.exists(w.postofficeAddress())).toBe(false);
  });

  it('the real upgrade authority co-signing with a separate admin works once; AlreadyExists afterwards', () => {
    const w = new World({ setup: false });
    const admin = w.wallet();
    const before = w.balance(admin);
    expectOk(w.run(init(w, admin, w.upgradeAuthority)));
    expect(w.balance(admin)).toBe(before - rent(POSTOFFICE_SIZE));
    expect(w.balance(w.postofficeAddress())).toBe(rent(POSTOFFICE_SIZE));
    const po = w.postoffice();
    expect(po.admin.equals(admin) && po.delegateAddress.equals(admin)).toBe(true);
    expect(po.pendingAdmin.equals(ZERO_KEY)).toBe(true);
    expect(po).toMatchObject({
      stampFeeLamports: FEE,
      settlementSurchargeLamports: SURCHARGE,
      feesCollected: 0n,
    });
    const watch = [w.rt.programData];
    refusedUnchanged(w, init(w, admin, w.upgradeAuthority), 'AlreadyExists', watch);
    refusedUnchanged(w, init(w, w.wallet(), w.upgradeAuthority), 'AlreadyExists', watch);
    refusedUnchanged(w, init(w, w.wallet()), 'NotUpgradeAuthority', watch);

    // The upgrade authority may also be the admin itself.
    const solo = new World({ setup: false, seed: 2 });
    solo.fund(solo.upgradeAuthority, SOL);
    expectOk(solo.run(init(solo, solo.upgradeAuthority)));
    expect(solo.postoffice().admin.equals(solo.upgradeAuthority)).toBe(true);
  });
});

describe("finding 5: the admin's instructions", () => {
  const stampsFor = (w: World, stamps: bigint) => {
    const recipient = w.user({ defaultPostage: 10_000n });
    const buyer = w.wallet();
    expectOk(w.run(buyStampsInstruction({ programId: w.programId, buyer, recipient, stamps })));
  };

  it('refuses UpdatePostoffice, WithdrawFees, ProposeAdmin and AcceptAdmin from anyone but the admin', () => {
    const w = new World();
    stampsFor(w, 3n);
    const programId = w.programId;
    const watch = [w.admin];
    // The delegate, the domain authority, the upgrade authority and a stranger are not the admin.
    for (const who of [w.wallet(), w.delegate, w.authority, w.upgradeAuthority]) {
      refusedUnchanged(
        w,
        updatePostofficeInstruction({ programId, admin: who, stampFeeLamports: 0n, delegateAddress: who }),
        'Unauthorized',
        watch,
      );
      refusedUnchanged(
        w,
        withdrawFeesInstruction({ programId, admin: who, to: who, amountLamports: FEE }),
        'Unauthorized',
        watch,
      );
      refusedUnchanged(
        w,
        proposeAdminInstruction({ programId, admin: who, newAdmin: who }),
        'Unauthorized',
        watch,
      );
      refusedUnchanged(w, acceptAdminInstruction({ programId, newAdmin: who }), 'Unauthorized', watch);
    }
    refusedUnchanged(
      w,
      without(
        updatePostofficeInstruction({ programId, admin: w.admin, stampFeeLamports: 0n }),
        0,
        'isSigner',
      ),
      'MissingSigner',
    );
    expect(w.postoffice()).toMatchObject({ stampFeeLamports: FEE, feesCollected: 3n * FEE });
  });

  it('UpdatePostoffice replaces each Some field and refuses a zero delegate', () => {
    const w = new World();
    const programId = w.programId;
    const delegate = w.wallet();
    const ksk = new Uint8Array(32).fill(7);
    refusedUnchanged(
      w,
      updatePostofficeInstruction({ programId, admin: w.admin, delegateAddress: ZERO_KEY }),
      'InvalidArgument',
    );
    expectOk(
      w.run(
        updatePostofficeInstruction({
          programId,
          admin: w.admin,
          stampFeeLamports: 7n,
          delegateAddress: delegate,
          rootKsk: ksk,
        }),
      ),
    );
    const po = w.postoffice();
    expect(po).toMatchObject({ stampFeeLamports: 7n, settlementSurchargeLamports: SURCHARGE, rootKsk: ksk });
    expect(po.delegateAddress.equals(delegate) && po.admin.equals(w.admin)).toBe(true);
    // The new delegate creates domains; the old one no longer can.
    const authority = w.address();
    refusedUnchanged(
      w,
      createDomainInstruction({ programId, delegate: w.delegate, domain: 'b.example', authority }),
      'Unauthorized',
    );
    expectOk(w.run(createDomainInstruction({ programId, delegate, domain: 'b.example', authority })));
  });

  it('WithdrawFees moves collected fees to a wallet, never more than collected, never below rent', () => {
    const w = new World();
    stampsFor(w, 3n);
    const programId = w.programId;
    const po = w.postofficeAddress();
    expect(w.balance(po)).toBe(rent(POSTOFFICE_SIZE) + 3n * FEE);
    const to = w.wallet();
    const take = (amountLamports: bigint, dest: PublicKey = to) =>
      withdrawFeesInstruction({ programId, admin: w.admin, to: dest, amountLamports });
    refusedUnchanged(w, take(0n), 'InvalidArgument');
    refusedUnchanged(w, take(3n * FEE + 1n), 'InsufficientFunds');
    refusedUnchanged(w, take(FEE, po), 'InvalidAccount');
    // A new account credited less than its rent would not be rent-exempt.
    refusedUnchanged(w, take(FEE, w.address()), 'InsufficientFunds');
    // Two withdrawals in one transaction, each within what was collected, together over it: the
    // second is refused and the first is undone with it.
    const twice = take(2n * FEE);
    refusedUnchanged(w, twice, 'InsufficientFunds', [to, po], () => w.run(take(2n * FEE), twice));

    const [t0, p0] = [w.balance(to), w.balance(po)];
    expectOk(w.run(take(2n * FEE)));
    expect(w.balance(to)).toBe(t0 + 2n * FEE);
    expect(w.balance(po)).toBe(p0 - 2n * FEE);
    expect(w.postoffice().feesCollected).toBe(FEE);
    expectOk(w.run(take(FEE)));
    expect(w.balance(po)).toBe(rent(POSTOFFICE_SIZE));
    expect(w.postoffice().feesCollected).toBe(0n);
    refusedUnchanged(w, take(1n), 'InsufficientFunds');
  });

  it('WithdrawFees refuses to take the postoffice below rent even when fees_collected says more', () => {
    const w = new World();
    stampsFor(w, 3n);
    const po = w.postofficeAddress();
    const data = Uint8Array.from(w.data(po) as Uint8Array);
    new DataView(data.buffer).setBigUint64(FEES_COLLECTED, 100n * FEE, true);
    w.patch(po, data);
    expect(w.postoffice().feesCollected).toBe(100n * FEE);
    const to = w.wallet();
    const take = (amountLamports: bigint) =>
      withdrawFeesInstruction({ programId: w.programId, admin: w.admin, to, amountLamports });
    refusedUnchanged(w, take(3n * FEE + 1n), 'InsufficientFunds');
    refusedUnchanged(w, take(100n * FEE), 'InsufficientFunds');
    expectOk(w.run(take(3n * FEE)));
    expect(w.balance(po)).toBe(rent(POSTOFFICE_SIZE));
    expect(w.postoffice().feesCollected).toBe(97n * FEE);
    refusedUnchanged(w, take(1n), 'InsufficientFunds');
  });

  it('hands the admin role over in two steps; a third key cannot take it; a zero proposal withdraws it', () => {
    const w = new World();
    const programId = w.programId;
    const old = w.admin;
    const next = w.wallet();
    const third = w.wallet();
    refusedUnchanged(w, proposeAdminInstruction({ programId, admin: old, newAdmin: old }), 'InvalidArgument');
    expectOk(w.run(proposeAdminInstruction({ programId, admin: old, newAdmin: next })));
    expect(w.postoffice().pendingAdmin.equals(next)).toBe(true);
    expect(w.postoffice().admin.equals(old)).toBe(true);

    refusedUnchanged(w, acceptAdminInstruction({ programId, newAdmin: third }), 'Unauthorized');
    refusedUnchanged(w, acceptAdminInstruction({ programId, newAdmin: old }), 'Unauthorized');
    refusedUnchanged(
      w,
      without(acceptAdminInstruction({ programId, newAdmin: next }), 0, 'isSigner'),
      'MissingSigner',
    );
    expectOk(w.run(acceptAdminInstruction({ programId, newAdmin: next })));
    const po = w.postoffice();
    expect(po.admin.equals(next) && po.pendingAdmin.equals(ZERO_KEY)).toBe(true);
    refusedUnchanged(w, acceptAdminInstruction({ programId, newAdmin: next }), 'Unauthorized');

    // The old admin has no power left.
    refusedUnchanged(
      w,
      updatePostofficeInstruction({ programId, admin: old, stampFeeLamports: 0n }),
      'Unauthorized',
    );
    refusedUnchanged(w, proposeAdminInstruction({ programId, admin: old, newAdmin: old }), 'Unauthorized');
    refusedUnchanged(
      w,
      withdrawFeesInstruction({ programId, admin: old, to: old, amountLamports: 1n }),
      'Unauthorized',
    );
    expectOk(w.run(updatePostofficeInstruction({ programId, admin: next, stampFeeLamports: 2n * FEE })));
    expect(w.postoffice().stampFeeLamports).toBe(2n * FEE);

    // A proposal withdrawn with the zero key cannot be accepted.
    expectOk(w.run(proposeAdminInstruction({ programId, admin: next, newAdmin: third })));
    expect(w.postoffice().pendingAdmin.equals(third)).toBe(true);
    expectOk(w.run(proposeAdminInstruction({ programId, admin: next, newAdmin: null })));
    expect(w.postoffice().pendingAdmin.equals(ZERO_KEY)).toBe(true);
    refusedUnchanged(w, acceptAdminInstruction({ programId, newAdmin: third }), 'Unauthorized');
    expect(w.postoffice().admin.equals(next)).toBe(true);
  });
});
