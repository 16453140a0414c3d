// Per-kind encode/decode, the tag-dispatching decodeAccount, sizes, and the
// offsets getProgramAccounts filters use (docs/protocol.md "Accounts").
import type { GetProgramAccountsFilter } from '@solana/web3.js';
import bs58 from 'bs58';
import { type AccountKind, CONSTANTS } from '../../protocol/schema.ts';
import type { AccountData } from '../../protocol/types.ts';
import { utf8 } from '../bytes.ts';
import { DecodeError, type Input, type Layout } from './layout.ts';
import {
  type Alias,
  aliasLayout,
  type Email,
  emailLayout,
  type Frombox,
  fromboxLayout,
  type Mailbox,
  type MailboxKey,
  type MailDomain,
  mailboxKeyLayout,
  mailboxLayout,
  mailDomainLayout,
  type Postoffice,
  postofficeLayout,
} from './mail.ts';
import {
  type AliasBid,
  type AliasEscrow,
  type AliasListing,
  aliasBidLayout,
  aliasEscrowLayout,
  aliasListingLayout,
  type DomainListing,
  domainListingLayout,
  type ParticipantBeacon,
  type PendingDeactivation,
  type PendingMailboxClose,
  type PendingReclaim,
  type PinLease,
  participantBeaconLayout,
  pendingDeactivationLayout,
  pendingMailboxCloseLayout,
  pendingReclaimLayout,
  pinLeaseLayout,
  type RecipientRule,
  recipientRuleLayout,
  type SenderAttestation,
  type SenderReputation,
  senderAttestationLayout,
  senderReputationLayout,
} from './records.ts';

export type { AccountKind } from '../../protocol/schema.ts';
export { DecodeError, type Input, type Layout } from './layout.ts';
export * from './mail.ts';
export * from './records.ts';

/** Any mail-program account, told apart by `kind`. */
export type MailAccount = { [K in AccountKind]: AccountData<K> }[AccountKind];

type LayoutMap = { readonly [K in AccountKind]: Layout<Extract<MailAccount, { kind: K }>> };

/** Every account layout by kind. */
export const ACCOUNT_LAYOUTS: LayoutMap = {
  Mailbox: mailboxLayout,
  MailboxKey: mailboxKeyLayout,
  Email: emailLayout,
  Frombox: fromboxLayout,
  Alias: aliasLayout,
  MailDomain: mailDomainLayout,
  Postoffice: postofficeLayout,
  AliasListing: aliasListingLayout,
  DomainListing: domainListingLayout,
  AliasEscrow: aliasEscrowLayout,
  AliasBid: aliasBidLayout,
  ParticipantBeacon: participantBeaconLayout,
  SenderAttestation: senderAttestationLayout,
  SenderReputation: senderReputationLayout,
  PinLease: pinLeaseLayout,
  PendingMailboxClose: pendingMailboxCloseLayout,
  PendingDeactivation: pendingDeactivationLayout,
  PendingReclaim: pendingReclaimLayout,
  RecipientRule: recipientRuleLayout,
};

export const ACCOUNT_TAGS = Object.fromEntries(
  Object.values(ACCOUNT_LAYOUTS).map((l) => [l.kind, l.tag]),
) as { readonly [K in AccountKind]: number };

const BY_TAG: (Layout<MailAccount> | undefined)[] = [];
for (const l of Object.values(ACCOUNT_LAYOUTS)) BY_TAG[l.tag] = l as unknown as Layout<MailAccount>;

/** The kind named by the tag byte, or null when it is none of ours. */
export function accountKindOf(data: Uint8Array): AccountKind | null {
  const tag = data[0];
  return tag === undefined ? null : (BY_TAG[tag]?.kind ?? null);
}

/** Decodes any mail-program account by its tag; throws DecodeError on an unknown tag, short or trailing data. */
export function decodeAccount(data: Uint8Array): MailAccount {
  const tag = data[0];
  const layout = tag === undefined ? undefined : BY_TAG[tag];
  if (!layout)
    throw new DecodeError(tag === undefined ? 'account: empty data' : `account: unknown kind tag ${tag}`);
  return layout.decode(data);
}

export function encodeAccount(account: MailAccount): Uint8Array {
  const layout = ACCOUNT_LAYOUTS[account.kind] as unknown as Layout<MailAccount>;
  return layout.encode(account);
}

export const encodeMailbox = (v: Input<Mailbox>): Uint8Array => mailboxLayout.encode(v);
export const decodeMailbox = (data: Uint8Array): Mailbox => mailboxLayout.decode(data);
export const encodeMailboxKey = (v: Input<MailboxKey>): Uint8Array => mailboxKeyLayout.encode(v);
export const decodeMailboxKey = (data: Uint8Array): MailboxKey => mailboxKeyLayout.decode(data);
export const encodeEmail = (v: Input<Email>): Uint8Array => emailLayout.encode(v);
export const decodeEmail = (data: Uint8Array): Email => emailLayout.decode(data);
export const encodeFrombox = (v: Input<Frombox>): Uint8Array => fromboxLayout.encode(v);
export const decodeFrombox = (data: Uint8Array): Frombox => fromboxLayout.decode(data);
export const encodeAlias = (v: Input<Alias>): Uint8Array => aliasLayout.encode(v);
export const decodeAlias = (data: Uint8Array): Alias => aliasLayout.decode(data);
export const encodeMailDomain = (v: Input<MailDomain>): Uint8Array => mailDomainLayout.encode(v);
export const decodeMailDomain = (data: Uint8Array): MailDomain => mailDomainLayout.decode(data);
export const encodePostoffice = (v: Input<Postoffice>): Uint8Array => postofficeLayout.encode(v);
export const decodePostoffice = (data: Uint8Array): Postoffice => postofficeLayout.decode(data);
export const encodeAliasListing = (v: Input<AliasListing>): Uint8Array => aliasListingLayout.encode(v);
export const decodeAliasListing = (data: Uint8Array): AliasListing => aliasListingLayout.decode(data);
export const encodeDomainListing = (v: Input<DomainListing>): Uint8Array => domainListingLayout.encode(v);
export const decodeDomainListing = (data: Uint8Array): DomainListing => domainListingLayout.decode(data);
export const encodeAliasEscrow = (v: Input<AliasEscrow>): Uint8Array => aliasEscrowLayout.encode(v);
export const decodeAliasEscrow = (data: Uint8Array): AliasEscrow => aliasEscrowLayout.decode(data);
export const encodeAliasBid = (v: Input<AliasBid>): Uint8Array => aliasBidLayout.encode(v);
export const decodeAliasBid = (data: Uint8Array): AliasBid => aliasBidLayout.decode(data);
export const encodeParticipantBeacon = (v: Input<ParticipantBeacon>): Uint8Array =>
  participantBeaconLayout.encode(v);
export const decodeParticipantBeacon = (data: Uint8Array): ParticipantBeacon =>
  participantBeaconLayout.decode(data);
export const encodeSenderAttestation = (v: Input<SenderAttestation>): Uint8Array =>
  senderAttestationLayout.encode(v);
export const decodeSenderAttestation = (data: Uint8Array): SenderAttestation =>
  senderAttestationLayout.decode(data);
export const encodeSenderReputation = (v: Input<SenderReputation>): Uint8Array =>
  senderReputationLayout.encode(v);
export const decodeSenderReputation = (data: Uint8Array): SenderReputation =>
  senderReputationLayout.decode(data);
export const encodePinLease = (v: Input<PinLease>): Uint8Array => pinLeaseLayout.encode(v);
export const decodePinLease = (data: Uint8Array): PinLease => pinLeaseLayout.decode(data);
export const encodePendingMailboxClose = (v: Input<PendingMailboxClose>): Uint8Array =>
  pendingMailboxCloseLayout.encode(v);
export const decodePendingMailboxClose = (data: Uint8Array): PendingMailboxClose =>
  pendingMailboxCloseLayout.decode(data);
export const encodePendingDeactivation = (v: Input<PendingDeactivation>): Uint8Array =>
  pendingDeactivationLayout.encode(v);
export const decodePendingDeactivation = (data: Uint8Array): PendingDeactivation =>
  pendingDeactivationLayout.decode(data);
export const encodePendingReclaim = (v: Input<PendingReclaim>): Uint8Array => pendingReclaimLayout.encode(v);
export const decodePendingReclaim = (data: Uint8Array): PendingReclaim => pendingReclaimLayout.decode(data);
export const encodeRecipientRule = (v: Input<RecipientRule>): Uint8Array => recipientRuleLayout.encode(v);
export const decodeRecipientRule = (data: Uint8Array): RecipientRule => recipientRuleLayout.decode(data);

// Sizes (tag included), from the schema. Accounts with a trailing string have a fixed part plus 4 + its byte length.
export const MAILBOX_SIZE = mailboxLayout.fixedSize;
export const MAILBOX_KEY_SIZE = mailboxKeyLayout.fixedSize;
export const EMAIL_FIXED_SIZE = emailLayout.fixedSize;
export const FROMBOX_SIZE = fromboxLayout.fixedSize;
export const ALIAS_SIZE = aliasLayout.fixedSize;
export const MAIL_DOMAIN_FIXED_SIZE = mailDomainLayout.fixedSize;
export const POSTOFFICE_SIZE = postofficeLayout.fixedSize;
export const ALIAS_LISTING_SIZE = aliasListingLayout.fixedSize;
export const DOMAIN_LISTING_SIZE = domainListingLayout.fixedSize;
export const ALIAS_ESCROW_SIZE = aliasEscrowLayout.fixedSize;
export const ALIAS_BID_SIZE = aliasBidLayout.fixedSize;
export const PARTICIPANT_BEACON_SIZE = participantBeaconLayout.fixedSize;
export const SENDER_ATTESTATION_SIZE = senderAttestationLayout.fixedSize;
export const SENDER_REPUTATION_SIZE = senderReputationLayout.fixedSize;
export const PIN_LEASE_SIZE = pinLeaseLayout.fixedSize;
export const PENDING_MAILBOX_CLOSE_SIZE = pendingMailboxCloseLayout.fixedSize;
export const PENDING_DEACTIVATION_SIZE = pendingDeactivationLayout.fixedSize;
export const PENDING_RECLAIM_SIZE = pendingReclaimLayout.fixedSize;
export const RECIPIENT_RULE_SIZE = recipientRuleLayout.fixedSize;

export const CID_MAX_BYTES = CONSTANTS.cidMax.value;
export const DOMAIN_MAX_BYTES = CONSTANTS.domainMax.value;

/** Email account size for a cid: 198 + its UTF-8 length. */
export function emailSize(cid: string): number {
  return EMAIL_FIXED_SIZE + 4 + utf8(cid).length;
}

/** MailDomain account size for a name: 103 + its UTF-8 length. */
export function mailDomainSize(domain: string): number {
  return MAIL_DOMAIN_FIXED_SIZE + 4 + utf8(domain).length;
}

/** Rent-exempt minimum the program funds an account of `size` bytes with: (128 + size) × 6960. */
export function rentExemptLamports(size: number): bigint {
  return (128n + BigInt(size)) * 6960n;
}

// Offsets for memcmp filters (tag at 0), from the schema.
export const KIND_TAG_OFFSET = 0;
export const MAILBOX_OWNER_OFFSET = mailboxLayout.offsets.owner;
export const MAILBOX_DOMAIN_OFFSET = mailboxLayout.offsets.domain;
export const MAILBOX_KEY_OWNER_OFFSET = mailboxKeyLayout.offsets.owner;
export const EMAIL_RECIPIENT_OFFSET = emailLayout.offsets.recipient;
export const EMAIL_SENDER_OFFSET = emailLayout.offsets.sender;
export const EMAIL_FROM_HASH_OFFSET = emailLayout.offsets.fromHash;
export const EMAIL_INDEX_OFFSET = emailLayout.offsets.index;
export const EMAIL_REPLY_TO_HASH_OFFSET = emailLayout.offsets.replyToHash;
export const EMAIL_RENT_PAYER_OFFSET = emailLayout.offsets.rentPayer;
export const EMAIL_CID_OFFSET = emailLayout.offsets.cid;
export const FROMBOX_FROM_HASH_OFFSET = fromboxLayout.offsets.fromHash;
export const FROMBOX_RECIPIENT_OFFSET = fromboxLayout.offsets.recipient;
export const ALIAS_NAME_HASH_OFFSET = aliasLayout.offsets.nameHash;
export const ALIAS_ADDRESS_OFFSET = aliasLayout.offsets.address;
export const ALIAS_OWNER_OFFSET = aliasLayout.offsets.owner;
export const MAIL_DOMAIN_IS_ACTIVE_OFFSET = mailDomainLayout.offsets.isActive;
export const MAIL_DOMAIN_AUTHORITY_OFFSET = mailDomainLayout.offsets.authority;
export const MAIL_DOMAIN_RENT_PAYER_OFFSET = mailDomainLayout.offsets.rentPayer;
export const MAIL_DOMAIN_NAME_HASH_OFFSET = mailDomainLayout.offsets.nameHash;
export const MAIL_DOMAIN_DOMAIN_OFFSET = mailDomainLayout.offsets.domain;

/** getProgramAccounts filter selecting one account kind by its tag byte. */
export function kindFilter(kind: AccountKind): GetProgramAccountsFilter {
  return { memcmp: { offset: KIND_TAG_OFFSET, bytes: bs58.encode([ACCOUNT_TAGS[kind]]) } };
}

/** getProgramAccounts filter matching 32 bytes (a key or hash) at `offset`. */
export function bytesFilter(
  offset: number,
  bytes: Uint8Array | { toBytes(): Uint8Array },
): GetProgramAccountsFilter {
  const raw = bytes instanceof Uint8Array ? bytes : bytes.toBytes();
  return { memcmp: { offset, bytes: bs58.encode(raw) } };
}
