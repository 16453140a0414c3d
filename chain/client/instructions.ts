// web3.js instruction builders for mail-program instructions 0–27 (the
// timelocks' 20–27 in timelock-instructions.ts, the alias marketplace's 34–41
// in market-instructions.ts, the domain marketplace's 42–44 in
// domain-market-instructions.ts), with the
// account lists and signer/writable flags of docs/protocol.md. Builders derive
// every PDA themselves from named parameters.
import type { PublicKey, TransactionInstruction } from '@solana/web3.js';
import { type Key, toPublicKey, ZERO_KEY } from './bytes.ts';
import { normalizeAlias, normalizeDomain } from './hash.ts';
import { instruction, ZERO_HASH } from './ix-helpers.ts';
import { programDataAddress } from './loader.ts';
import {
  aliasAddress,
  domainAddress,
  emailAddress,
  fromboxAddress,
  mailboxAddress,
  mailboxKeyAddress,
  postofficeAddress,
} from './pda.ts';

export * from './admin-instructions.ts';
export * from './attest-instructions.ts';
export * from './domain-market-instructions.ts';
export * from './instruction-data.ts';
export * from './market-instructions.ts';
export * from './record-instructions.ts';
export * from './stamp-instructions.ts';
export * from './timelock-instructions.ts';

/** An Email account named by its address or by (recipient, index). */
export type EmailRef = { email: Key } | { recipient: Key; index: bigint };

function emailOf(programId: Key, ref: EmailRef): PublicKey {
  return 'email' in ref ? toPublicKey(ref.email) : emailAddress(programId, ref.recipient, ref.index)[0];
}

export interface InitPostofficeParams {
  programId: Key;
  /** Signer; pays rent and becomes admin. */
  admin: Key;
  /** The program's upgrade authority, which must co-sign (the admin itself when omitted). */
  upgradeAuthority?: Key;
  delegateAddress: Key;
  stampFeeLamports: bigint;
  settlementSurchargeLamports: bigint;
  rootKsk?: Uint8Array;
  commitmentRoot?: Uint8Array;
}

export function initPostofficeInstruction(p: InitPostofficeParams): TransactionInstruction {
  const accounts = {
    admin: p.admin,
    postoffice: postofficeAddress(p.programId)[0],
    programData: programDataAddress(toPublicKey(p.programId)),
    upgradeAuthority: p.upgradeAuthority ?? p.admin,
  };
  return instruction(p.programId, 'InitPostoffice', accounts, {
    rootKsk: p.rootKsk ?? ZERO_HASH,
    delegateAddress: toPublicKey(p.delegateAddress),
    commitmentRoot: p.commitmentRoot ?? ZERO_HASH,
    stampFeeLamports: p.stampFeeLamports,
    settlementSurchargeLamports: p.settlementSurchargeLamports,
  });
}

export interface CreateMailboxParams {
  programId: Key;
  owner: Key;
  /** Pays rent; defaults to the owner. */
  payer?: Key;
  /** Lamports per stamp for first-contact senders; default 0 (open). */
  defaultPostage?: bigint;
  /** Domain name the mailbox belongs to (its MailDomain must be active). */
  domain?: string;
}

export function createMailboxInstruction(p: CreateMailboxParams): TransactionInstruction {
  const payer = p.payer ?? p.owner;
  const mailDomain = p.domain === undefined ? null : domainAddress(p.programId, normalizeDomain(p.domain))[0];
  return instruction(
    p.programId,
    'CreateMailbox',
    { payer, owner: p.owner, mailbox: mailboxAddress(p.programId, p.owner)[0], mailDomain },
    { defaultPostage: p.defaultPostage ?? 0n, domain: mailDomain ?? ZERO_KEY },
  );
}

export interface SetMailboxFlagsParams {
  programId: Key;
  owner: Key;
  /** Left unchanged when omitted. */
  noIpfs?: boolean;
  /** Left unchanged when omitted. */
  defaultPostage?: bigint;
}

export function setMailboxFlagsInstruction(p: SetMailboxFlagsParams): TransactionInstruction {
  const accounts = { owner: p.owner, mailbox: mailboxAddress(p.programId, p.owner)[0] };
  return instruction(p.programId, 'SetMailboxFlags', accounts, {
    noIpfs: p.noIpfs ?? null,
    defaultPostage: p.defaultPostage ?? null,
  });
}

export interface SetMailboxDomainParams {
  programId: Key;
  owner: Key;
  /** Domain name to move the mailbox into (its MailDomain must be active); null leaves every domain. */
  domain: string | null;
}

/** Moves the owner's mailbox into another domain, or out of every domain: its relayed mail then comes only from that domain's authority. */
export function setMailboxDomainInstruction(p: SetMailboxDomainParams): TransactionInstruction {
  const mailDomain = p.domain === null ? null : domainAddress(p.programId, normalizeDomain(p.domain))[0];
  return instruction(
    p.programId,
    'SetMailboxDomain',
    { owner: p.owner, mailbox: mailboxAddress(p.programId, p.owner)[0], mailDomain },
    { domain: mailDomain ?? ZERO_KEY },
  );
}

export interface PublishKeyParams {
  programId: Key;
  owner: Key;
  /** Delegated X25519 public key (32 bytes, as a key or base58). */
  pubKey: Key;
}

export function publishKeyInstruction(p: PublishKeyParams): TransactionInstruction {
  const accounts = {
    owner: p.owner,
    mailbox: mailboxAddress(p.programId, p.owner)[0],
    mailboxKey: mailboxKeyAddress(p.programId, p.owner)[0],
  };
  return instruction(p.programId, 'PublishKey', accounts, { pubKey: toPublicKey(p.pubKey) });
}

export function removeKeyInstruction(p: { programId: Key; owner: Key }): TransactionInstruction {
  const accounts = { owner: p.owner, mailboxKey: mailboxKeyAddress(p.programId, p.owner)[0] };
  return instruction(p.programId, 'RemoveKey', accounts, {});
}

export interface CreateDomainParams {
  programId: Key;
  /** The postoffice's delegate_address; signs and pays rent. */
  delegate: Key;
  /** DNS name (normalized here: lowercased, root dot dropped). */
  domain: string;
  authority: Key;
}

export function createDomainInstruction(p: CreateDomainParams): TransactionInstruction {
  const domain = normalizeDomain(p.domain);
  const accounts = {
    delegate: p.delegate,
    postoffice: postofficeAddress(p.programId)[0],
    mailDomain: domainAddress(p.programId, domain)[0],
  };
  return instruction(p.programId, 'CreateDomain', accounts, { domain, authority: toPublicKey(p.authority) });
}

export interface SendMailParams {
  programId: Key;
  /** Signer and payer: the domain authority (relayed) or the sender's wallet (direct). */
  sender: Key;
  /** Recipient wallet. */
  recipient: Key;
  /** The recipient mailbox's current mail_count. */
  index: bigint;
  /** blake3 of the envelope from (relayed) or of the sender wallet's base58 (direct); see fromHash(). */
  fromHash: Uint8Array;
  cid: string;
  bountyLamports?: bigint;
  expiresAt?: bigint;
  /** replyToHash(parent Email address); omitted = not a reply. */
  replyToHash?: Uint8Array;
  /** Relayed sends: the signing authority's domain name (adds the MailDomain account). */
  domain?: string;
}

export function sendMailInstruction(p: SendMailParams): TransactionInstruction {
  const accounts = {
    sender: p.sender,
    mailbox: mailboxAddress(p.programId, p.recipient)[0],
    email: emailAddress(p.programId, p.recipient, p.index)[0],
    frombox: fromboxAddress(p.programId, p.fromHash, p.recipient)[0],
    recipientWallet: p.recipient,
    postoffice: postofficeAddress(p.programId)[0],
    mailDomain: p.domain === undefined ? null : domainAddress(p.programId, normalizeDomain(p.domain))[0],
  };
  return instruction(p.programId, 'SendMail', accounts, {
    fromHash: p.fromHash,
    cid: p.cid,
    bountyLamports: p.bountyLamports ?? 0n,
    expiresAt: p.expiresAt ?? 0n,
    replyToHash: p.replyToHash ?? ZERO_HASH,
  });
}

export type DeleteMailParams = EmailRef & {
  programId: Key;
  /** The email's recipient or sender. */
  signer: Key;
  /** The Email's rent_payer (gets rent and any unclaimed bounty). */
  rentPayer: Key;
};

export function deleteMailInstruction(p: DeleteMailParams): TransactionInstruction {
  const accounts = { signer: p.signer, email: emailOf(p.programId, p), rentPayer: p.rentPayer };
  return instruction(p.programId, 'DeleteMail', accounts, {});
}

export interface CreateAliasParams {
  programId: Key;
  owner: Key;
  /** Alias as typed; normalized here (throws when invalid). */
  name: string;
}

export function createAliasInstruction(p: CreateAliasParams): TransactionInstruction {
  const name = normalizeAlias(p.name);
  const accounts = {
    owner: p.owner,
    mailbox: mailboxAddress(p.programId, p.owner)[0],
    alias: aliasAddress(p.programId, name)[0],
  };
  return instruction(p.programId, 'CreateAlias', accounts, { name });
}

export type ClaimBountyParams = { programId: Key; recipient: Key } & ({ email: Key } | { index: bigint });

export function claimBountyInstruction(p: ClaimBountyParams): TransactionInstruction {
  const email = 'email' in p ? toPublicKey(p.email) : emailAddress(p.programId, p.recipient, p.index)[0];
  return instruction(p.programId, 'ClaimBounty', { recipient: p.recipient, email }, {});
}
