// Accounts 8–19 of docs/protocol.md: marketplace, beacon, attestation,
// reputation, lease, pending and recipient-rule records. The program writes
// ParticipantBeacon (PublishBeacon), PinLease (CreatePinLease),
// SenderAttestation (AttestSender), SenderReputation (SendMail with the
// reputation account), RecipientRule (SetRecipientRule), the alias
// marketplace's records and DomainListing (ListDomain).
import type { PublicKey } from '@solana/web3.js';
import { defineLayout } from './layout.ts';

export interface AliasListing {
  kind: 'AliasListing';
  alias: PublicKey;
  holder: PublicKey;
  priceLamports: bigint;
  createdAt: bigint;
  expiresAt: bigint;
  /** 0 fixed price, 1 auction. */
  mode: number;
  antisnipeWindowSecs: bigint;
  highBidLamports: bigint;
  highBidder: PublicKey;
  bump: number;
}

export const aliasListingLayout = defineLayout<AliasListing>('AliasListing', 8, {
  alias: 'key',
  holder: 'key',
  priceLamports: 'u64',
  createdAt: 'i64',
  expiresAt: 'i64',
  mode: 'u8',
  antisnipeWindowSecs: 'i64',
  highBidLamports: 'u64',
  highBidder: 'key',
  bump: 'u8',
});

export interface DomainListing {
  kind: 'DomainListing';
  /** The MailDomain account, the PDA's seed; its authority is this listing while it exists. */
  domain: PublicKey;
  /** The authority that listed it: receives the price and the rent, gets the domain back on cancel. */
  holder: PublicKey;
  /** The only wallet that may buy; the zero key = anyone. */
  buyer: PublicKey;
  /** What the buyer pays the holder; 0 only with a named buyer (a gift). */
  priceLamports: bigint;
  createdAt: bigint;
  expiresAt: bigint;
  bump: number;
}

export const domainListingLayout = defineLayout<DomainListing>('DomainListing', 9, {
  domain: 'key',
  holder: 'key',
  buyer: 'key',
  priceLamports: 'u64',
  createdAt: 'i64',
  expiresAt: 'i64',
  bump: 'u8',
});

export interface AliasEscrow {
  kind: 'AliasEscrow';
  alias: PublicKey;
  holder: PublicKey;
  recipient: PublicKey;
  feeLamports: bigint;
  offeredAt: bigint;
  expiresAt: bigint;
  bump: number;
}

export const aliasEscrowLayout = defineLayout<AliasEscrow>('AliasEscrow', 10, {
  alias: 'key',
  holder: 'key',
  recipient: 'key',
  feeLamports: 'u64',
  offeredAt: 'i64',
  expiresAt: 'i64',
  bump: 'u8',
});

export interface AliasBid {
  kind: 'AliasBid';
  listing: PublicKey;
  bidder: PublicKey;
  amountLamports: bigint;
  bidAt: bigint;
  bump: number;
}

export const aliasBidLayout = defineLayout<AliasBid>('AliasBid', 11, {
  listing: 'key',
  bidder: 'key',
  amountLamports: 'u64',
  bidAt: 'i64',
  bump: 'u8',
});

/** Capacity of ParticipantBeacon.detail_cid. */
export const BEACON_DETAIL_CID_CAPACITY = 96;

export interface ParticipantBeacon {
  kind: 'ParticipantBeacon';
  owner: PublicKey;
  /** Bitmap. */
  tags: bigint;
  createdAt: bigint;
  updatedAt: bigint;
  bump: number;
  detailCidLen: number;
  /** 96 bytes; the first detailCidLen are the CID text (see beaconDetailCid). */
  detailCid: Uint8Array;
}

export const participantBeaconLayout = defineLayout<ParticipantBeacon>('ParticipantBeacon', 12, {
  owner: 'key',
  tags: 'u64',
  createdAt: 'i64',
  updatedAt: 'i64',
  bump: 'u8',
  detailCidLen: 'u8',
  detailCid: { bytes: BEACON_DETAIL_CID_CAPACITY },
});

/** The CID text a beacon points at. */
export function beaconDetailCid(beacon: ParticipantBeacon): string {
  const len = Math.min(beacon.detailCidLen, BEACON_DETAIL_CID_CAPACITY);
  return new TextDecoder().decode(beacon.detailCid.subarray(0, len));
}

export interface SenderAttestation {
  kind: 'SenderAttestation';
  /** The MailDomain account. */
  domain: PublicKey;
  /** The attested sender wallet. */
  wallet: PublicKey;
  /** The domain authority that signed AttestSender; the record counts only while it is still the domain's. */
  authority: PublicKey;
  /** Paid the rent; RevokeAttestation returns it here. */
  rentPayer: PublicKey;
  attestedAt: bigint;
  bump: number;
}

export const senderAttestationLayout = defineLayout<SenderAttestation>('SenderAttestation', 13, {
  domain: 'key',
  wallet: 'key',
  authority: 'key',
  rentPayer: 'key',
  attestedAt: 'i64',
  bump: 'u8',
});

export interface SenderReputation {
  kind: 'SenderReputation';
  wallet: PublicKey;
  cumulativeSpendLamports: bigint;
  updatedAt: bigint;
  bump: number;
}

export const senderReputationLayout = defineLayout<SenderReputation>('SenderReputation', 14, {
  wallet: 'key',
  cumulativeSpendLamports: 'u64',
  updatedAt: 'i64',
  bump: 'u8',
});

export interface RecipientRule {
  kind: 'RecipientRule';
  /** The recipient wallet (its Mailbox's owner). */
  owner: PublicKey;
  /** A direct sender whose cumulative_spend_lamports reaches this skips the stamp. */
  minReputationLamports: bigint;
  /** What such a sender pays the recipient per message instead; 0 = waived. */
  postageLamports: bigint;
  bump: number;
}

export const recipientRuleLayout = defineLayout<RecipientRule>('RecipientRule', 19, {
  owner: 'key',
  minReputationLamports: 'u64',
  postageLamports: 'u64',
  bump: 'u8',
});

export interface PinLease {
  kind: 'PinLease';
  /** blake3 of the leased CID's text (see pinLeaseCidHash). */
  cidHash: Uint8Array;
  /** The wallet that paid; the only one that may close the lease. */
  holder: PublicKey;
  /** The pin operator's fee wallet the fee was paid to. */
  operator: PublicKey;
  createdAt: bigint;
  /** The lease is live while chain time < expiresAt. */
  expiresAt: bigint;
  /** Lamports paid to the operator by CreatePinLease. */
  feeLamports: bigint;
  bump: number;
}

export const pinLeaseLayout = defineLayout<PinLease>('PinLease', 15, {
  cidHash: 'hash',
  holder: 'key',
  operator: 'key',
  createdAt: 'i64',
  expiresAt: 'i64',
  feeLamports: 'u64',
  bump: 'u8',
});

export interface PendingMailboxClose {
  kind: 'PendingMailboxClose';
  wallet: PublicKey;
  requestedAt: bigint;
  bump: number;
}

export const pendingMailboxCloseLayout = defineLayout<PendingMailboxClose>('PendingMailboxClose', 16, {
  wallet: 'key',
  requestedAt: 'i64',
  bump: 'u8',
});

export interface PendingDeactivation {
  kind: 'PendingDeactivation';
  domain: PublicKey;
  requestedAt: bigint;
  bump: number;
}

export const pendingDeactivationLayout = defineLayout<PendingDeactivation>('PendingDeactivation', 17, {
  domain: 'key',
  requestedAt: 'i64',
  bump: 'u8',
});

export interface PendingReclaim {
  kind: 'PendingReclaim';
  domain: PublicKey;
  requestedAt: bigint;
  authority: PublicKey;
  payer: PublicKey;
  bump: number;
}

export const pendingReclaimLayout = defineLayout<PendingReclaim>('PendingReclaim', 18, {
  domain: 'key',
  requestedAt: 'i64',
  authority: 'key',
  payer: 'key',
  bump: 'u8',
});
