// CreateMailbox, SetMailboxFlags, PublishKey, RemoveKey and CreateAlias: what
// a wallet holder does to its own mailbox.
import { PublicKey } from '@solana/web3.js';
import {
  aliasLayout,
  type Mailbox,
  mailboxKeyLayout,
  mailboxLayout,
  mailDomainLayout,
} from '../../accounts/mail.ts';
import { isZeroBytes } from '../../bytes.ts';
import { blake3Text, isNormalizedAlias } from '../../hash.ts';
import type {
  CreateAliasData,
  CreateMailboxData,
  PublishKeyData,
  RemoveKeyData,
  SetMailboxFlagsData,
} from '../../instruction-data.ts';
import { seeds } from '../../pda.ts';
import type { Address } from '../program-api.ts';
import { addressBytes, E, fail, type Run } from './runtime.ts';

/** The signer's own mailbox, which must be passed at its PDA and exist. */
export function requireOwnMailbox(run: Run, address: Address, owner: Address): Mailbox {
  run.expectPda(address, seeds.mailbox(addressBytes(owner)), 'mailbox');
  return run.require(address, mailboxLayout);
}

/** A mailbox read by address (someone else's): decoded, then checked against its stored bump. */
export function requireMailbox(run: Run, address: Address): Mailbox {
  const mailbox = run.require(address, mailboxLayout);
  run.expectStoredPda(address, seeds.mailbox(mailbox.owner.toBytes()), mailbox.bump, 'mailbox');
  return mailbox;
}

export function createMailbox(run: Run, ix: CreateMailboxData): void {
  const withDomain = !isZeroBytes(ix.domain.toBytes());
  run.expectAccounts(withDomain ? 5 : 4);
  const payer = run.signer(0, true);
  const owner = run.signer(1);
  const mailbox = run.writable(2);
  run.system(3);
  const bump = run.expectPda(mailbox, seeds.mailbox(addressBytes(owner)), 'mailbox');
  run.expectAbsent(mailbox, 'Mailbox');
  if (withDomain) {
    const domainAddress = run.readonly(4);
    if (domainAddress !== ix.domain.toBase58())
      fail(E.InvalidAccount, 'account 4 must be the MailDomain in `domain`');
    const domain = run.require(domainAddress, mailDomainLayout);
    run.expectStoredPda(domainAddress, seeds.domain(domain.nameHash), domain.bump, 'mail domain');
    if (!domain.isActive) fail(E.DomainInactive, `domain ${domain.domain} is not active`);
  }
  run.create(
    mailbox,
    mailboxLayout,
    {
      owner: new PublicKey(owner),
      mailCount: 0n,
      defaultPostage: ix.defaultPostage,
      domain: ix.domain,
      noIpfs: false,
      createdAt: run.now,
      bump,
    },
    payer,
  );
}

export function setMailboxFlags(run: Run, ix: SetMailboxFlagsData): void {
  run.expectAccounts(2);
  const owner = run.signer(0);
  const address = run.writable(1);
  const mailbox = requireMailbox(run, address);
  if (mailbox.owner.toBase58() !== owner) fail(E.Unauthorized, 'only the mailbox owner may set its flags');
  if (ix.noIpfs === null && ix.defaultPostage === null) return;
  run.write(address, mailboxLayout, {
    ...mailbox,
    noIpfs: ix.noIpfs ?? mailbox.noIpfs,
    defaultPostage: ix.defaultPostage ?? mailbox.defaultPostage,
  });
}

export function publishKey(run: Run, ix: PublishKeyData): void {
  run.expectAccounts(4);
  const owner = run.signer(0, true);
  const mailboxAddress = run.readonly(1);
  const keyAddress = run.writable(2);
  run.system(3);
  requireOwnMailbox(run, mailboxAddress, owner);
  const bump = run.expectPda(keyAddress, seeds.mailboxKey(addressBytes(owner)), 'mailbox key');
  if (isZeroBytes(ix.pubKey.toBytes())) fail(E.InvalidArgument, 'the zero key cannot be published');
  const existing = run.read(keyAddress, mailboxKeyLayout);
  const value = { owner: new PublicKey(owner), pubKey: ix.pubKey, updatedAt: run.now, bump };
  if (existing) run.write(keyAddress, mailboxKeyLayout, value);
  else run.create(keyAddress, mailboxKeyLayout, value, owner);
}

export function removeKey(run: Run, _ix: RemoveKeyData): void {
  run.expectAccounts(2);
  const owner = run.signer(0, true);
  const keyAddress = run.writable(1);
  run.expectPda(keyAddress, seeds.mailboxKey(addressBytes(owner)), 'mailbox key');
  run.require(keyAddress, mailboxKeyLayout);
  run.close(keyAddress, owner);
}

export function createAlias(run: Run, ix: CreateAliasData): void {
  run.expectAccounts(4);
  const owner = run.signer(0, true);
  const mailboxAddress = run.readonly(1);
  const aliasAddress = run.writable(2);
  run.system(3);
  requireOwnMailbox(run, mailboxAddress, owner);
  if (!isNormalizedAlias(ix.name))
    fail(E.InvalidArgument, `alias ${JSON.stringify(ix.name)} is not normalized`);
  const nameHash = blake3Text(ix.name);
  const bump = run.expectPda(aliasAddress, seeds.alias(nameHash), 'alias');
  run.expectAbsent(aliasAddress, `Alias ${ix.name}`);
  const wallet = new PublicKey(owner);
  run.create(
    aliasAddress,
    aliasLayout,
    { nameHash, address: wallet, owner: wallet, createdAt: run.now, bump },
    owner,
  );
}
