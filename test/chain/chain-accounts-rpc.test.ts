// The mail program over real JSON-RPC: web3.js Connection → devnet. Each
// instruction's success and its refusals (postoffice, mailboxes, keys,
// domains, aliases). Sends and stamps are in chain-sendmail-rpc.test.ts.
import { Keypair, PublicKey } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import {
  createAliasInstruction,
  createDomainInstruction,
  createMailboxInstruction,
  domainAddress,
  getAlias,
  getDomain,
  getMailbox,
  getMailboxKey,
  getPostoffice,
  initPostofficeInstruction,
  mailboxAddress,
  postofficeAddress,
  publishKeyInstruction,
  removeKeyInstruction,
  resolveAlias,
  setMailboxFlagsInstruction,
} from '../../chain/client/index.ts';
import { startTestChain, type TestChain } from '../support/devnet.ts';

async function withPostoffice(chain: TestChain) {
  const delegate = await chain.funded();
  await chain.send(
    [
      initPostofficeInstruction({
        programId: chain.programId,
        admin: delegate.publicKey,
        upgradeAuthority: chain.upgradeAuthority.publicKey,
        delegateAddress: delegate.publicKey,
        stampFeeLamports: 1000n,
        settlementSurchargeLamports: 5000n,
      }),
    ],
    [delegate, chain.upgradeAuthority],
  );
  return delegate;
}

describe('mail program over JSON-RPC: postoffice, domains', () => {
  it('InitPostoffice once; CreateDomain by the delegate only, once per name, valid names only', async () => {
    const chain = await startTestChain();
    const delegate = await withPostoffice(chain);
    const po = await getPostoffice(chain.connection, chain.programId);
    expect(po?.delegateAddress.equals(delegate.publicKey)).toBe(true);
    expect(po?.stampFeeLamports).toBe(1000n);

    const again = initPostofficeInstruction({
      programId: chain.programId,
      admin: delegate.publicKey,
      upgradeAuthority: chain.upgradeAuthority.publicKey,
      delegateAddress: delegate.publicKey,
      stampFeeLamports: 1n,
      settlementSurchargeLamports: 1n,
    });
    expect(await chain.refusal([again], [delegate, chain.upgradeAuthority])).toBe('AlreadyExists');

    // A postoffice account that is not the PDA.
    const wrongPda = initPostofficeInstruction({
      programId: chain.programId,
      admin: delegate.publicKey,
      upgradeAuthority: chain.upgradeAuthority.publicKey,
      delegateAddress: delegate.publicKey,
      stampFeeLamports: 1n,
      settlementSurchargeLamports: 1n,
    });
    const stray = Keypair.generate().publicKey;
    const slot = wrongPda.keys.findIndex((k) => k.pubkey.equals(postofficeAddress(chain.programId)[0]));
    wrongPda.keys[slot] = { pubkey: stray, isSigner: false, isWritable: true };
    expect(await chain.refusal([wrongPda], [delegate, chain.upgradeAuthority])).toBe('InvalidPda');

    const authority = Keypair.generate();
    await chain.send(
      [
        createDomainInstruction({
          programId: chain.programId,
          delegate: delegate.publicKey,
          domain: 'example.org',
          authority: authority.publicKey,
        }),
      ],
      [delegate],
    );
    const domain = await getDomain(chain.connection, chain.programId, 'Example.ORG');
    expect(domain).toMatchObject({ isActive: true, domain: 'example.org' });
    expect(domain?.authority.equals(authority.publicKey)).toBe(true);
    expect(domain?.rentPayer.equals(delegate.publicKey)).toBe(true);

    // The same authority may claim any number of domains.
    await chain.send(
      [
        createDomainInstruction({
          programId: chain.programId,
          delegate: delegate.publicKey,
          domain: 'example.net',
          authority: authority.publicKey,
        }),
      ],
      [delegate],
    );
    const stranger = await chain.funded();
    const notDelegate = createDomainInstruction({
      programId: chain.programId,
      delegate: stranger.publicKey,
      domain: 'stranger.org',
      authority: stranger.publicKey,
    });
    expect(await chain.refusal([notDelegate], [stranger])).toBe('Unauthorized');
    const taken = createDomainInstruction({
      programId: chain.programId,
      delegate: delegate.publicKey,
      domain: 'example.org',
      authority: stranger.publicKey,
    });
    expect(await chain.refusal([taken], [delegate])).toBe('AlreadyExists');
    expect(
      (await getDomain(chain.connection, chain.programId, 'example.org'))?.authority.equals(
        authority.publicKey,
      ),
    ).toBe(true);
  });

  it('CreateDomain refuses a malformed name even when the PDA matches it', async () => {
    const chain = await startTestChain();
    const delegate = await withPostoffice(chain);
    const ix = createDomainInstruction({
      programId: chain.programId,
      delegate: delegate.publicKey,
      domain: 'ok.example',
      authority: delegate.publicKey,
    });
    // Swap in a bad name in the data, with the PDA derived from that bad name.
    const bad = '-bad-.example';
    const { encodeInstruction } = await import('../../chain/client/index.ts');
    ix.data = Buffer.from(
      encodeInstruction({ kind: 'CreateDomain', domain: bad, authority: delegate.publicKey }),
    );
    ix.keys[2] = { pubkey: domainAddress(chain.programId, bad)[0], isSigner: false, isWritable: true };
    expect(await chain.refusal([ix], [delegate])).toBe('InvalidArgument');
  });
});

describe('mail program over JSON-RPC: mailboxes, keys, aliases', () => {
  it('CreateMailbox and SetMailboxFlags with their refusals', async () => {
    const chain = await startTestChain();
    const delegate = await withPostoffice(chain);
    const authority = Keypair.generate();
    await chain.send(
      [
        createDomainInstruction({
          programId: chain.programId,
          delegate: delegate.publicKey,
          domain: 'mail.test',
          authority: authority.publicKey,
        }),
      ],
      [delegate],
    );
    const owner = await chain.funded();
    await chain.send(
      [
        createMailboxInstruction({
          programId: chain.programId,
          owner: owner.publicKey,
          defaultPostage: 2500n,
          domain: 'mail.test',
        }),
      ],
      [owner],
    );
    const mailbox = await getMailbox(chain.connection, chain.programId, owner.publicKey);
    expect(mailbox).toMatchObject({ mailCount: 0n, defaultPostage: 2500n, noIpfs: false });
    expect(mailbox?.domain.equals(domainAddress(chain.programId, 'mail.test')[0])).toBe(true);

    const dup = createMailboxInstruction({ programId: chain.programId, owner: owner.publicKey });
    expect(await chain.refusal([dup], [owner])).toBe('AlreadyExists');

    // Someone else pays, but the owner did not sign.
    const payer = await chain.funded();
    const victim = Keypair.generate();
    const unsigned = createMailboxInstruction({
      programId: chain.programId,
      owner: victim.publicKey,
      payer: payer.publicKey,
    });
    unsigned.keys[1] = { pubkey: victim.publicKey, isSigner: false, isWritable: false };
    expect(await chain.refusal([unsigned], [payer])).toBe('MissingSigner');

    const noDomain = await chain.funded();
    const unknownDomain = createMailboxInstruction({
      programId: chain.programId,
      owner: noDomain.publicKey,
      domain: 'nowhere.test',
    });
    expect(await chain.refusal([unknownDomain], [noDomain])).toBe('NotFound');

    await chain.send(
      [
        setMailboxFlagsInstruction({
          programId: chain.programId,
          owner: owner.publicKey,
          noIpfs: true,
          defaultPostage: 0n,
        }),
      ],
      [owner],
    );
    expect(await getMailbox(chain.connection, chain.programId, owner.publicKey)).toMatchObject({
      noIpfs: true,
      defaultPostage: 0n,
    });
    await chain.send(
      [setMailboxFlagsInstruction({ programId: chain.programId, owner: owner.publicKey, noIpfs: false })],
      [owner],
    );
    expect(await getMailbox(chain.connection, chain.programId, owner.publicKey)).toMatchObject({
      noIpfs: false,
      defaultPostage: 0n,
    });

    // A stranger signing for the owner's mailbox.
    const stranger = await chain.funded();
    const hijack = setMailboxFlagsInstruction({
      programId: chain.programId,
      owner: stranger.publicKey,
      noIpfs: true,
    });
    hijack.keys[1] = {
      pubkey: mailboxAddress(chain.programId, owner.publicKey)[0],
      isSigner: false,
      isWritable: true,
    };
    expect(['Unauthorized', 'InvalidPda']).toContain(await chain.refusal([hijack], [stranger]));
    expect((await getMailbox(chain.connection, chain.programId, owner.publicKey))?.noIpfs).toBe(false);
  });

  it('PublishKey, replacing it, RemoveKey, and their refusals', async () => {
    const chain = await startTestChain();
    const owner = await chain.funded();
    const x25519 = Keypair.generate().publicKey;
    const noMailbox = publishKeyInstruction({
      programId: chain.programId,
      owner: owner.publicKey,
      pubKey: x25519,
    });
    expect(await chain.refusal([noMailbox], [owner])).toBe('NotFound');

    await chain.send(
      [createMailboxInstruction({ programId: chain.programId, owner: owner.publicKey })],
      [owner],
    );
    await chain.send(
      [publishKeyInstruction({ programId: chain.programId, owner: owner.publicKey, pubKey: x25519 })],
      [owner],
    );
    expect(
      (await getMailboxKey(chain.connection, chain.programId, owner.publicKey))?.pubKey.equals(x25519),
    ).toBe(true);

    const next = Keypair.generate().publicKey;
    await chain.send(
      [publishKeyInstruction({ programId: chain.programId, owner: owner.publicKey, pubKey: next })],
      [owner],
    );
    expect(
      (await getMailboxKey(chain.connection, chain.programId, owner.publicKey))?.pubKey.equals(next),
    ).toBe(true);

    const zero = publishKeyInstruction({
      programId: chain.programId,
      owner: owner.publicKey,
      pubKey: new PublicKey(new Uint8Array(32)),
    });
    expect(await chain.refusal([zero], [owner])).toBe('InvalidArgument');

    const before = await chain.balance(owner.publicKey);
    await chain.send([removeKeyInstruction({ programId: chain.programId, owner: owner.publicKey })], [owner]);
    expect(await getMailboxKey(chain.connection, chain.programId, owner.publicKey)).toBeNull();
    // Rent comes back (minus the 5000-lamport fee).
    expect(await chain.balance(owner.publicKey)).toBeGreaterThan(before);
    expect(
      await chain.refusal(
        [removeKeyInstruction({ programId: chain.programId, owner: owner.publicKey })],
        [owner],
      ),
    ).toBe('NotFound');
  });

  it('CreateAlias resolves to the owner; refuses duplicates, unnormalized names and owners without a mailbox', async () => {
    const chain = await startTestChain();
    const owner = await chain.funded();
    const orphan = await chain.funded();
    expect(
      await chain.refusal(
        [createAliasInstruction({ programId: chain.programId, owner: orphan.publicKey, name: 'orphan' })],
        [orphan],
      ),
    ).toBe('NotFound');

    await chain.send(
      [createMailboxInstruction({ programId: chain.programId, owner: owner.publicKey })],
      [owner],
    );
    await chain.send(
      [
        createAliasInstruction({
          programId: chain.programId,
          owner: owner.publicKey,
          name: 'Alice@Example.org',
        }),
      ],
      [owner],
    );
    expect((await resolveAlias(chain.connection, chain.programId, 'alice'))?.equals(owner.publicKey)).toBe(
      true,
    );
    expect(
      (await getAlias(chain.connection, chain.programId, 'ALICE@sealpost.localhost'))?.owner.equals(
        owner.publicKey,
      ),
    ).toBe(true);

    const other = await chain.funded();
    await chain.send(
      [createMailboxInstruction({ programId: chain.programId, owner: other.publicKey })],
      [other],
    );
    expect(
      await chain.refusal(
        [createAliasInstruction({ programId: chain.programId, owner: other.publicKey, name: 'alice' })],
        [other],
      ),
    ).toBe('AlreadyExists');

    // Bypass the builder's normalization: upper case reaches the program.
    const ix = createAliasInstruction({ programId: chain.programId, owner: other.publicKey, name: 'bob' });
    const { encodeInstruction, aliasAddress, blake3Text } = await import('../../chain/client/index.ts');
    ix.data = Buffer.from(encodeInstruction({ kind: 'CreateAlias', name: 'Bob' }));
    const aliasSlot = ix.keys.findIndex((k) => k.pubkey.equals(aliasAddress(chain.programId, 'bob')[0]));
    expect(aliasSlot).toBeGreaterThan(-1);
    // The account is the PDA of the unnormalized name, so only the name rule can refuse it.
    const [pda] = PublicKey.findProgramAddressSync(
      [Buffer.from('alias'), blake3Text('Bob')],
      new PublicKey(chain.programId),
    );
    ix.keys[aliasSlot] = { pubkey: pda, isSigner: false, isWritable: true };
    expect(await chain.refusal([ix], [other])).toBe('InvalidArgument');
  });
});
