// The real mail program (chain/program/src, run by Agave's runtime through
// litesvm) against the rules of the setup instructions: InitPostoffice,
// CreateMailbox, SetMailboxFlags, PublishKey, RemoveKey, CreateDomain,
// CreateAlias, and instruction decoding. Ported from the devnet program's
// tests (chain/devnet/mail-program/mail-program.test.ts), same expectations.
import { Buffer } from 'node:buffer';
import { PublicKey, SystemProgram, TransactionInstruction } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import {
  ALIAS_SIZE,
  decodeAlias,
  decodeMailboxKey,
  encodeMailDomain,
  MAIL_DOMAIN_FIXED_SIZE,
  MAILBOX_KEY_SIZE,
  MAILBOX_SIZE,
  POSTOFFICE_SIZE,
} from '../../chain/client/accounts/index.ts';
import { ZERO_KEY } from '../../chain/client/bytes.ts';
import { blake3Text } from '../../chain/client/hash.ts';
import {
  createAliasInstruction,
  createDomainInstruction,
  createMailboxInstruction,
  encodeInstructionOf,
  initPostofficeInstruction,
  publishKeyInstruction,
  removeKeyInstruction,
  setMailboxFlagsInstruction,
} from '../../chain/client/instructions.ts';
import {
  aliasAddress,
  domainAddress,
  mailboxAddress,
  mailboxKeyAddress,
  postofficeAddress,
} from '../../chain/client/pda.ts';
import {
  DOMAIN,
  expectErr,
  expectOk,
  FEE,
  rent,
  SURCHARGE,
  World,
  without,
} from '../support/program-world.ts';

function rawIx(
  programId: string,
  keys: TransactionInstruction['keys'],
  data: Uint8Array,
): TransactionInstruction {
  return new TransactionInstruction({ programId: new PublicKey(programId), keys, data: Buffer.from(data) });
}

describe('InitPostoffice', () => {
  it('creates the postoffice once, with the signer as admin and the upgrade authority co-signing', () => {
    const chain = new World({ setup: false });
    const admin = chain.wallet();
    const delegate = chain.address();
    const params = {
      programId: chain.programId,
      admin,
      upgradeAuthority: chain.upgradeAuthority,
      delegateAddress: delegate,
      stampFeeLamports: FEE,
      settlementSurchargeLamports: SURCHARGE,
      rootKsk: new Uint8Array(32).fill(3),
    };
    const before = chain.balance(admin);
    const r = chain.run(initPostofficeInstruction(params));
    expectOk(r);
    expect(r.logs).toContain('Program log: Instruction: InitPostoffice');
    const address = postofficeAddress(chain.programId)[0];
    expect(chain.balance(address)).toBe(rent(POSTOFFICE_SIZE));
    expect(chain.balance(admin)).toBe(before - rent(POSTOFFICE_SIZE));
    const po = chain.postoffice();
    expect(po.admin.equals(admin)).toBe(true);
    expect(po.pendingAdmin.equals(PublicKey.default)).toBe(true);
    expectErr(chain.run(initPostofficeInstruction(params)), 'AlreadyExists');
  });

  it('stores every field', () => {
    const w = new World();
    const po = w.postoffice();
    expect(po.admin.equals(w.admin)).toBe(true);
    expect(po.delegateAddress.equals(w.delegate)).toBe(true);
    expect(po).toMatchObject({
      stampFeeLamports: FEE,
      settlementSurchargeLamports: SURCHARGE,
      feesCollected: 0n,
    });
    expect(po.bump).toBe(postofficeAddress(w.programId)[1]);
  });

  it('refuses a wrong address, a missing signature, a read-only account, a fake System and a poor payer', () => {
    const chain = new World({ setup: false });
    const admin = chain.wallet();
    const make = () =>
      initPostofficeInstruction({
        programId: chain.programId,
        admin,
        upgradeAuthority: chain.upgradeAuthority,
        delegateAddress: admin,
        stampFeeLamports: 0n,
        settlementSurchargeLamports: 0n,
      });
    const wrong = make();
    (wrong.keys[1] as { pubkey: PublicKey }).pubkey = chain.address();
    expectErr(chain.run(wrong), 'InvalidPda');
    expectErr(chain.run(without(make(), 0, 'isSigner')), 'MissingSigner');
    expectErr(chain.run(without(make(), 1, 'isWritable')), 'NotWritable');
    const fakeSystem = make();
    (fakeSystem.keys[2] as { pubkey: PublicKey }).pubkey = chain.address();
    expectErr(chain.run(fakeSystem), 'InvalidAccount');
    const poor = chain.wallet(1000n);
    expectErr(
      chain.run(
        initPostofficeInstruction({
          programId: chain.programId,
          admin: poor,
          upgradeAuthority: chain.upgradeAuthority,
          delegateAddress: poor,
          stampFeeLamports: 0n,
          settlementSurchargeLamports: 0n,
        }),
      ),
      'InsufficientFunds',
    );
    expect(chain.exists(postofficeAddress(chain.programId)[0])).toBe(false);
  });
});

describe('program id', () => {
  it('is read from the invocation: the same binary works deployed at any address', () => {
    const programId = new PublicKey(Uint8Array.from({ length: 32 }, (_, i) => i + 1));
    const w = new World({ seed: 3, programId });
    expect(w.programId).toBe(programId.toBase58());
    const owner = w.user();
    expect(w.mailbox(owner).bump).toBe(mailboxAddress(programId, owner)[1]);
    expect(w.domain().authority.equals(w.authority)).toBe(true);
  });
});

describe('instruction decoding and account counts', () => {
  it('refuses unknown tags, bad data and wrong account counts', () => {
    const w = new World();
    const owner = w.user();
    const keys = setMailboxFlagsInstruction({ programId: w.programId, owner }).keys;
    expectErr(w.run(rawIx(w.programId, keys, Uint8Array.of(99))), 'InvalidInstruction');
    expectErr(w.run(rawIx(w.programId, keys, Uint8Array.of(2, 0, 0, 0))), 'InvalidInstruction');
    expectErr(w.run(rawIx(w.programId, keys, Uint8Array.of(2, 1, 7, 0))), 'InvalidInstruction');
    expectErr(w.run(rawIx(w.programId, keys.slice(0, 1), Uint8Array.of(2, 0, 0))), 'InvalidInstruction');
    const extra = [...keys, { pubkey: owner, isSigner: false, isWritable: false }];
    expectErr(w.run(rawIx(w.programId, extra, Uint8Array.of(2, 0, 0))), 'InvalidInstruction');
  });
});

describe('CreateMailbox', () => {
  it('creates one mailbox per owner, paid by the payer', () => {
    const w = new World();
    const owner = w.wallet(0n);
    const payer = w.wallet();
    const before = w.balance(payer);
    expectOk(w.run(createMailboxInstruction({ programId: w.programId, owner, payer, defaultPostage: 42n })));
    const mb = w.mailbox(owner);
    expect(mb).toMatchObject({ mailCount: 0n, defaultPostage: 42n, noIpfs: false });
    expect(mb.owner.equals(owner)).toBe(true);
    expect(mb.domain.equals(ZERO_KEY)).toBe(true);
    expect(mb.bump).toBe(mailboxAddress(w.programId, owner)[1]);
    expect(w.balance(payer)).toBe(before - rent(MAILBOX_SIZE));
    expectErr(w.run(createMailboxInstruction({ programId: w.programId, owner, payer })), 'AlreadyExists');
  });

  it('records an active domain', () => {
    const w = new World();
    const owner = w.user();
    expect(w.mailbox(owner).domain.equals(w.domainAddress())).toBe(true);
  });

  it('needs the owner signature and the owner PDA', () => {
    const w = new World();
    const owner = w.wallet(0n);
    const payer = w.wallet();
    expectErr(
      w.run(without(createMailboxInstruction({ programId: w.programId, owner, payer }), 1, 'isSigner')),
      'MissingSigner',
    );
    const ix = createMailboxInstruction({ programId: w.programId, owner, payer });
    (ix.keys[2] as { pubkey: PublicKey }).pubkey = mailboxAddress(w.programId, payer)[0];
    expectErr(w.run(ix), 'InvalidPda');
  });

  it('checks the domain account', () => {
    const w = new World();
    const programId = w.programId;
    const payer = w.wallet();
    const owner = () => w.wallet(0n);
    // domain set but no fifth account
    const four = createMailboxInstruction({ programId, owner: owner(), payer, domain: DOMAIN });
    four.keys.pop();
    expectErr(w.run(four), 'InvalidInstruction');
    // fifth account is not the domain named in the data
    const other = createMailboxInstruction({ programId, owner: owner(), payer, domain: DOMAIN });
    (other.keys[4] as { pubkey: PublicKey }).pubkey = w.postofficeAddress();
    expectErr(w.run(other), 'InvalidAccount');
    // unknown domain
    expectErr(
      w.run(createMailboxInstruction({ programId, owner: owner(), payer, domain: 'nowhere.test' })),
      'NotFound',
    );
    // a program account of another kind named as the domain
    const data = encodeInstructionOf('CreateMailbox', { defaultPostage: 0n, domain: w.postofficeAddress() });
    const o = owner();
    const keys = createMailboxInstruction({ programId, owner: o, payer, domain: DOMAIN }).keys;
    (keys[4] as { pubkey: PublicKey }).pubkey = w.postofficeAddress();
    expectErr(w.run(rawIx(programId, keys, data)), 'InvalidAccount');
    // inactive domain
    w.patch(w.domainAddress(), encodeMailDomain({ ...w.domain(), isActive: false }));
    expectErr(
      w.run(createMailboxInstruction({ programId, owner: owner(), payer, domain: DOMAIN })),
      'DomainInactive',
    );
  });
});

describe('SetMailboxFlags', () => {
  it('applies each Some field, owner only', () => {
    const w = new World();
    const owner = w.user({ defaultPostage: 5n });
    expectOk(w.run(setMailboxFlagsInstruction({ programId: w.programId, owner, noIpfs: true })));
    expect(w.mailbox(owner)).toMatchObject({ noIpfs: true, defaultPostage: 5n });
    expectOk(w.run(setMailboxFlagsInstruction({ programId: w.programId, owner, defaultPostage: 0n })));
    expect(w.mailbox(owner)).toMatchObject({ noIpfs: true, defaultPostage: 0n });
    expectOk(
      w.run(setMailboxFlagsInstruction({ programId: w.programId, owner, noIpfs: false, defaultPostage: 9n })),
    );
    expect(w.mailbox(owner)).toMatchObject({ noIpfs: false, defaultPostage: 9n });
    expectOk(w.run(setMailboxFlagsInstruction({ programId: w.programId, owner })));
    expect(w.mailbox(owner)).toMatchObject({ noIpfs: false, defaultPostage: 9n });
  });

  it('refuses a stranger and an unsigned owner', () => {
    const w = new World();
    const owner = w.user();
    const stranger = w.wallet();
    const ix = setMailboxFlagsInstruction({ programId: w.programId, owner: stranger, noIpfs: true });
    (ix.keys[1] as { pubkey: PublicKey }).pubkey = mailboxAddress(w.programId, owner)[0];
    expectErr(w.run(ix), 'Unauthorized');
    expectErr(
      w.run(without(setMailboxFlagsInstruction({ programId: w.programId, owner }), 0, 'isSigner')),
      'MissingSigner',
    );
    expectErr(w.run(setMailboxFlagsInstruction({ programId: w.programId, owner: stranger })), 'NotFound');
  });
});

describe('PublishKey / RemoveKey', () => {
  it('creates, replaces and removes the key, returning rent', () => {
    const w = new World();
    const owner = w.user();
    const k1 = w.address();
    const k2 = w.address();
    const start = w.balance(owner);
    expectOk(w.run(publishKeyInstruction({ programId: w.programId, owner, pubKey: k1 })));
    const address = mailboxKeyAddress(w.programId, owner)[0];
    expect(w.balance(owner)).toBe(start - rent(MAILBOX_KEY_SIZE));
    expect(decodeMailboxKey(w.data(address) as Uint8Array).pubKey.equals(k1)).toBe(true);
    w.advance(10n);
    expectOk(w.run(publishKeyInstruction({ programId: w.programId, owner, pubKey: k2 })));
    const key = decodeMailboxKey(w.data(address) as Uint8Array);
    expect(key.pubKey.equals(k2)).toBe(true);
    expect(w.balance(owner)).toBe(start - rent(MAILBOX_KEY_SIZE));
    expectOk(w.run(removeKeyInstruction({ programId: w.programId, owner })));
    expect(w.exists(address)).toBe(false);
    expect(w.balance(owner)).toBe(start);
    expectErr(w.run(removeKeyInstruction({ programId: w.programId, owner })), 'NotFound');
  });

  it('closes the key account for good: publishing again in the same transaction creates it anew', () => {
    const w = new World();
    const owner = w.user();
    const programId = w.programId;
    const k1 = w.address();
    const k2 = w.address();
    const start = w.balance(owner);
    expectOk(
      w.run(
        publishKeyInstruction({ programId, owner, pubKey: k1 }),
        removeKeyInstruction({ programId, owner }),
        publishKeyInstruction({ programId, owner, pubKey: k2 }),
      ),
    );
    const address = mailboxKeyAddress(programId, owner)[0];
    expect(decodeMailboxKey(w.data(address) as Uint8Array).pubKey.equals(k2)).toBe(true);
    expect(w.balance(owner)).toBe(start - rent(MAILBOX_KEY_SIZE));
    expectErr(
      w.run(removeKeyInstruction({ programId, owner }), removeKeyInstruction({ programId, owner })),
      'NotFound',
    );
    expect(w.exists(address)).toBe(true);
  });

  it('refuses the zero key and wallets without a mailbox', () => {
    const w = new World();
    const owner = w.user();
    expectErr(
      w.run(publishKeyInstruction({ programId: w.programId, owner, pubKey: ZERO_KEY })),
      'InvalidArgument',
    );
    const nobody = w.wallet();
    expectErr(
      w.run(publishKeyInstruction({ programId: w.programId, owner: nobody, pubKey: owner })),
      'NotFound',
    );
  });

  it("refuses another wallet's key account", () => {
    const w = new World();
    const owner = w.user();
    const other = w.user();
    expectOk(w.run(publishKeyInstruction({ programId: w.programId, owner: other, pubKey: owner })));
    const ix = removeKeyInstruction({ programId: w.programId, owner });
    (ix.keys[1] as { pubkey: PublicKey }).pubkey = mailboxKeyAddress(w.programId, other)[0];
    expectErr(w.run(ix), 'InvalidPda');
  });
});

describe('CreateDomain', () => {
  it('stores the authority, active, paid by the delegate', () => {
    const w = new World();
    const d = w.domain();
    expect(d).toMatchObject({
      isActive: true,
      domain: DOMAIN,
      nameHash: blake3Text(DOMAIN),
    });
    expect(d.authority.equals(w.authority)).toBe(true);
    expect(d.rentPayer.equals(w.delegate)).toBe(true);
    expect(w.balance(w.domainAddress())).toBe(rent(MAIL_DOMAIN_FIXED_SIZE + 4 + DOMAIN.length));
  });

  it('refuses a non-delegate, a taken domain, bad names and a missing postoffice', () => {
    const w = new World();
    const programId = w.programId;
    const stranger = w.wallet();
    const authority = w.address();
    expectErr(
      w.run(createDomainInstruction({ programId, delegate: stranger, domain: 'b.test', authority })),
      'Unauthorized',
    );
    expectErr(
      w.run(createDomainInstruction({ programId, delegate: w.delegate, domain: DOMAIN, authority })),
      'AlreadyExists',
    );
    const keysFor = (name: string) => [
      { pubkey: w.delegate, isSigner: true, isWritable: true },
      { pubkey: w.postofficeAddress(), isSigner: false, isWritable: false },
      { pubkey: domainAddress(programId, name)[0], isSigner: false, isWritable: true },
      { pubkey: SystemProgram.programId, isSigner: false, isWritable: false },
    ];
    for (const bad of ['Upper.test', '-x.test', 'a..test', '', 'a_b.test', `${'a'.repeat(64)}.test`]) {
      const data = encodeInstructionOf('CreateDomain', { domain: bad, authority });
      expectErr(w.run(rawIx(programId, keysFor(bad), data)), 'InvalidArgument');
    }
    expectOk(
      w.run(createDomainInstruction({ programId, delegate: w.delegate, domain: 'localhost', authority })),
    );
    const wrongPda = rawIx(
      programId,
      keysFor('other.test'),
      encodeInstructionOf('CreateDomain', { domain: 'x.test', authority }),
    );
    expectErr(w.run(wrongPda), 'InvalidPda');
    const bare = new World({ setup: false });
    const delegate = bare.wallet();
    expectErr(
      bare.run(createDomainInstruction({ programId, delegate, domain: 'x.test', authority })),
      'NotFound',
    );
  });
});

describe('CreateAlias', () => {
  it('registers a normalized name to the signer', () => {
    const w = new World();
    const owner = w.user();
    const before = w.balance(owner);
    expectOk(w.run(createAliasInstruction({ programId: w.programId, owner, name: 'Bob@mail.test' })));
    const alias = decodeAlias(w.data(aliasAddress(w.programId, 'bob')[0]) as Uint8Array);
    expect(alias.address.equals(owner) && alias.owner.equals(owner)).toBe(true);
    expect(alias.nameHash).toEqual(blake3Text('bob'));
    expect(w.balance(owner)).toBe(before - rent(ALIAS_SIZE));
    const other = w.user();
    expectErr(
      w.run(createAliasInstruction({ programId: w.programId, owner: other, name: 'bob' })),
      'AlreadyExists',
    );
  });

  it('refuses names that are not normalized, and wallets without a mailbox', () => {
    const w = new World();
    const owner = w.user();
    const keysFor = (name: string) => [
      { pubkey: owner, isSigner: true, isWritable: true },
      { pubkey: mailboxAddress(w.programId, owner)[0], isSigner: false, isWritable: false },
      { pubkey: aliasAddress(w.programId, name)[0], isSigner: false, isWritable: true },
      { pubkey: SystemProgram.programId, isSigner: false, isWritable: false },
    ];
    for (const bad of ['Bob', 'bob@mail.test', '.bob', 'a..b', '', 'z'.repeat(43), 'x'.repeat(65)]) {
      expectErr(
        w.run(rawIx(w.programId, keysFor(bad), encodeInstructionOf('CreateAlias', { name: bad }))),
        'InvalidArgument',
      );
    }
    const nobody = w.wallet();
    expectErr(
      w.run(createAliasInstruction({ programId: w.programId, owner: nobody, name: 'nobody' })),
      'NotFound',
    );
    const mismatched = rawIx(
      w.programId,
      keysFor('alice'),
      encodeInstructionOf('CreateAlias', { name: 'carol' }),
    );
    expectErr(w.run(mismatched), 'InvalidPda');
  });
});
