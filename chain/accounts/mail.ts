// Accounts 1–7 of docs/protocol.md: the ones the program writes in this version.
// Keys are web3.js PublicKeys, hashes Uint8Arrays, u64/i64 bigints.
import type { PublicKey } from '@solana/web3.js';
import { defineLayout } from './layout.ts';

export interface Mailbox {
  kind: 'Mailbox';
  owner: PublicKey;
  /** Number of Email accounts ever created for this wallet; the next message's index. */
  mailCount: bigint;
  /** Lamports per stamp a first-contact sender pays; 0 = open mailbox. */
  defaultPostage: bigint;
  /** MailDomain account the mailbox belongs to; ZERO_KEY = none. */
  domain: PublicKey;
  noIpfs: boolean;
  bump: number;
}

export const mailboxLayout = defineLayout<Mailbox>('Mailbox', 1, {
  owner: 'key',
  mailCount: 'u64',
  defaultPostage: 'u64',
  domain: 'key',
  noIpfs: 'bool',
  bump: 'u8',
});

export interface MailboxKey {
  kind: 'MailboxKey';
  owner: PublicKey;
  /** Delegated X25519 encryption key, shown base58 like a wallet. */
  pubKey: PublicKey;
  bump: number;
}

export const mailboxKeyLayout = defineLayout<MailboxKey>('MailboxKey', 2, {
  owner: 'key',
  pubKey: 'key',
  bump: 'u8',
});

export interface Email {
  kind: 'Email';
  recipient: PublicKey;
  /** Wallet that signed SendMail: a domain authority (relayed) or the sender's wallet (direct). */
  sender: PublicKey;
  fromHash: Uint8Array;
  index: bigint;
  epoch: bigint;
  bountyLamports: bigint;
  expiresAt: bigint;
  /** blake3 of the parent Email account's base58 address; zero = not a reply. */
  replyToHash: Uint8Array;
  rentPayer: PublicKey;
  bump: number;
  /** CIDv1 text, or `b3:` + 64 hex when the mailbox has no_ipfs. */
  cid: string;
}

export const emailLayout = defineLayout<Email>('Email', 3, {
  recipient: 'key',
  sender: 'key',
  fromHash: 'hash',
  index: 'u64',
  epoch: 'i64',
  bountyLamports: 'u64',
  expiresAt: 'i64',
  replyToHash: 'hash',
  rentPayer: 'key',
  bump: 'u8',
  cid: 'string',
});

export interface Frombox {
  kind: 'Frombox';
  fromHash: Uint8Array;
  recipient: PublicKey;
  /** Lamports a stamp must carry toward this recipient; 0 = this sender is allowed free. */
  requiredPostage: bigint;
  stamps: bigint;
  /** Postage lamports held for the unspent stamps (paid in at purchase). */
  postageEscrow: bigint;
  /**
   * True once the wallet whose address hashes to `fromHash` paid stamps in
   * itself (BuyStamps, TopUpStamps, or AddStamps on its own hash): the
   * stamps are then spent only by that wallet's own direct sends.
   */
  walletStamps: boolean;
  bump: number;
}

export const fromboxLayout = defineLayout<Frombox>('Frombox', 4, {
  fromHash: 'hash',
  recipient: 'key',
  requiredPostage: 'u64',
  stamps: 'u64',
  postageEscrow: 'u64',
  walletStamps: 'bool',
  bump: 'u8',
});

export interface Alias {
  kind: 'Alias';
  nameHash: Uint8Array;
  /** Target wallet. */
  address: PublicKey;
  /** Wallet that controls the alias (the creator). */
  owner: PublicKey;
  bump: number;
}

export const aliasLayout = defineLayout<Alias>('Alias', 5, {
  nameHash: 'hash',
  address: 'key',
  owner: 'key',
  bump: 'u8',
});

export interface MailDomain {
  kind: 'MailDomain';
  isActive: boolean;
  /** Key published at `_solana.authority.<domain>`; signs relayed SendMail. */
  authority: PublicKey;
  rentPayer: PublicKey;
  nameHash: Uint8Array;
  bump: number;
  /** Lowercased DNS name. */
  domain: string;
}

export const mailDomainLayout = defineLayout<MailDomain>('MailDomain', 6, {
  isActive: 'bool',
  authority: 'key',
  rentPayer: 'key',
  nameHash: 'hash',
  bump: 'u8',
  domain: 'string',
});

export interface Postoffice {
  kind: 'Postoffice';
  admin: PublicKey;
  /** SHA-256 DS digest of the DNSSEC root key-signing key: the domain service's anchor for reclaim proofs (the program does not read it). */
  rootKsk: Uint8Array;
  /** The domain authorization service's key; signs CreateDomain. */
  delegateAddress: PublicKey;
  /** Opaque Merkle root committing to the postmaster key. */
  commitmentRoot: Uint8Array;
  stampFeeLamports: bigint;
  settlementSurchargeLamports: bigint;
  feesCollected: bigint;
  /** The key ProposeAdmin named to take the admin role (AcceptAdmin); ZERO_KEY = none. */
  pendingAdmin: PublicKey;
  bump: number;
}

export const postofficeLayout = defineLayout<Postoffice>('Postoffice', 7, {
  admin: 'key',
  rootKsk: 'hash',
  delegateAddress: 'key',
  commitmentRoot: 'hash',
  stampFeeLamports: 'u64',
  settlementSurchargeLamports: 'u64',
  feesCollected: 'u64',
  pendingAdmin: 'key',
  bump: 'u8',
});
