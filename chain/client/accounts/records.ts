// Accounts 8–19 of docs/protocol.md: marketplace, beacon, attestation,
// reputation, lease, pending and recipient-rule records. The program writes
// ParticipantBeacon (PublishBeacon), PinLease (CreatePinLease),
// SenderAttestation (AttestSender), SenderReputation (SendMail with the
// reputation account), RecipientRule (SetRecipientRule), the alias
// marketplace's records and DomainListing (ListDomain).
import { ACCOUNTS, CONSTANTS } from '../../protocol/schema.ts';
import type { AccountData } from '../../protocol/types.ts';
import { schemaLayout } from './layout.ts';

export type AliasListing = AccountData<'AliasListing'>;

export const aliasListingLayout = schemaLayout<AliasListing>('AliasListing', ACCOUNTS.AliasListing);

export type DomainListing = AccountData<'DomainListing'>;

export const domainListingLayout = schemaLayout<DomainListing>('DomainListing', ACCOUNTS.DomainListing);

export type AliasEscrow = AccountData<'AliasEscrow'>;

export const aliasEscrowLayout = schemaLayout<AliasEscrow>('AliasEscrow', ACCOUNTS.AliasEscrow);

export type AliasBid = AccountData<'AliasBid'>;

export const aliasBidLayout = schemaLayout<AliasBid>('AliasBid', ACCOUNTS.AliasBid);

/** Capacity of ParticipantBeacon.detail_cid. */
export const BEACON_DETAIL_CID_CAPACITY = CONSTANTS.beaconCidMax.value;

export type ParticipantBeacon = AccountData<'ParticipantBeacon'>;

export const participantBeaconLayout = schemaLayout<ParticipantBeacon>(
  'ParticipantBeacon',
  ACCOUNTS.ParticipantBeacon,
);

/** The CID text a beacon points at. */
export function beaconDetailCid(beacon: ParticipantBeacon): string {
  const len = Math.min(beacon.detailCidLen, BEACON_DETAIL_CID_CAPACITY);
  return new TextDecoder().decode(beacon.detailCid.subarray(0, len));
}

export type SenderAttestation = AccountData<'SenderAttestation'>;

export const senderAttestationLayout = schemaLayout<SenderAttestation>(
  'SenderAttestation',
  ACCOUNTS.SenderAttestation,
);

export type SenderReputation = AccountData<'SenderReputation'>;

export const senderReputationLayout = schemaLayout<SenderReputation>(
  'SenderReputation',
  ACCOUNTS.SenderReputation,
);

export type RecipientRule = AccountData<'RecipientRule'>;

export const recipientRuleLayout = schemaLayout<RecipientRule>('RecipientRule', ACCOUNTS.RecipientRule);

export type PinLease = AccountData<'PinLease'>;

export const pinLeaseLayout = schemaLayout<PinLease>('PinLease', ACCOUNTS.PinLease);

export type PendingMailboxClose = AccountData<'PendingMailboxClose'>;

export const pendingMailboxCloseLayout = schemaLayout<PendingMailboxClose>(
  'PendingMailboxClose',
  ACCOUNTS.PendingMailboxClose,
);

export type PendingDeactivation = AccountData<'PendingDeactivation'>;

export const pendingDeactivationLayout = schemaLayout<PendingDeactivation>(
  'PendingDeactivation',
  ACCOUNTS.PendingDeactivation,
);

export type PendingReclaim = AccountData<'PendingReclaim'>;

export const pendingReclaimLayout = schemaLayout<PendingReclaim>('PendingReclaim', ACCOUNTS.PendingReclaim);
