// Instruction data: a one-byte tag, then the borsh arguments
// (docs/protocol.md "Instructions"). The devnet program decodes with this too.
import type { PublicKey } from '@solana/web3.js';
import { DecodeError, defineLayout, type Input, type Layout } from './accounts/layout.ts';
import { MARKET_INSTRUCTION_LAYOUTS, type MarketInstruction } from './market-instruction-data.ts';

export { DecodeError } from './accounts/layout.ts';

export interface InitPostofficeData {
  kind: 'InitPostoffice';
  rootKsk: Uint8Array;
  delegateAddress: PublicKey;
  commitmentRoot: Uint8Array;
  stampFeeLamports: bigint;
  settlementSurchargeLamports: bigint;
}
export interface CreateMailboxData {
  kind: 'CreateMailbox';
  defaultPostage: bigint;
  /** MailDomain account; ZERO_KEY = none. */
  domain: PublicKey;
}
export interface SetMailboxFlagsData {
  kind: 'SetMailboxFlags';
  noIpfs: boolean | null;
  defaultPostage: bigint | null;
}
export interface PublishKeyData {
  kind: 'PublishKey';
  pubKey: PublicKey;
}
export interface RemoveKeyData {
  kind: 'RemoveKey';
}
export interface CreateDomainData {
  kind: 'CreateDomain';
  domain: string;
  authority: PublicKey;
}
export interface SendMailData {
  kind: 'SendMail';
  fromHash: Uint8Array;
  cid: string;
  bountyLamports: bigint;
  expiresAt: bigint;
  replyToHash: Uint8Array;
}
export interface DeleteMailData {
  kind: 'DeleteMail';
}
export interface CreateAliasData {
  kind: 'CreateAlias';
  name: string;
}
export interface CreateFromboxData {
  kind: 'CreateFrombox';
  fromHash: Uint8Array;
  requiredPostage: bigint;
}
export interface UpdateFromboxData {
  kind: 'UpdateFrombox';
  fromHash: Uint8Array;
  requiredPostage: bigint;
}
export interface AddStampsData {
  kind: 'AddStamps';
  fromHash: Uint8Array;
  stamps: bigint;
  /** Refused (PriceAboveCeiling) when one stamp would cost more: postage + surcharge + fee. */
  maxPriceLamports: bigint | null;
}
export interface BuyStampsData {
  kind: 'BuyStamps';
  stamps: bigint;
  maxPriceLamports: bigint | null;
}
export interface TopUpStampsData {
  kind: 'TopUpStamps';
  stamps: bigint;
  maxPriceLamports: bigint | null;
}
export interface ReclaimFromboxStampsData {
  kind: 'ReclaimFromboxStamps';
}
export interface ClaimBountyData {
  kind: 'ClaimBounty';
}
export interface CreatePinLeaseData {
  kind: 'CreatePinLease';
  /** blake3 of the CID text. */
  cidHash: Uint8Array;
  expiresAt: bigint;
  feeLamports: bigint;
}
export interface ClosePinLeaseData {
  kind: 'ClosePinLease';
}
export interface PublishBeaconData {
  kind: 'PublishBeacon';
  /** Bitmap. */
  tags: bigint;
  detailCid: string;
}
export interface CloseBeaconData {
  kind: 'CloseBeacon';
}
// Timelocks (docs/protocol.md "Timelocks"): no arguments; the accounts say it all.
export interface RequestMailboxCloseData {
  kind: 'RequestMailboxClose';
}
export interface CancelMailboxCloseData {
  kind: 'CancelMailboxClose';
}
export interface CloseMailboxData {
  kind: 'CloseMailbox';
}
export interface RequestDeactivationData {
  kind: 'RequestDeactivation';
}
export interface CancelDeactivationData {
  kind: 'CancelDeactivation';
}
export interface RequestReclaimData {
  kind: 'RequestReclaim';
}
export interface CancelReclaimData {
  kind: 'CancelReclaim';
}
export interface SettleDomainTimelockData {
  kind: 'SettleDomainTimelock';
}

export interface SetMailboxDomainData {
  kind: 'SetMailboxDomain';
  /** MailDomain account; ZERO_KEY = leave every domain. */
  domain: PublicKey;
}
// The postoffice's admin (tags 50-53).
export interface UpdatePostofficeData {
  kind: 'UpdatePostoffice';
  stampFeeLamports: bigint | null;
  settlementSurchargeLamports: bigint | null;
  delegateAddress: PublicKey | null;
  rootKsk: Uint8Array | null;
}
export interface WithdrawFeesData {
  kind: 'WithdrawFees';
  amountLamports: bigint;
}
export interface ProposeAdminData {
  kind: 'ProposeAdmin';
  /** ZERO_KEY withdraws the proposal. */
  newAdmin: PublicKey;
}
export interface AcceptAdminData {
  kind: 'AcceptAdmin';
}

export interface AttestSenderData {
  kind: 'AttestSender';
  wallet: PublicKey;
}
export interface RevokeAttestationData {
  kind: 'RevokeAttestation';
}
export interface SetRecipientRuleData {
  kind: 'SetRecipientRule';
  minReputationLamports: bigint;
  postageLamports: bigint;
}
export interface CloseRecipientRuleData {
  kind: 'CloseRecipientRule';
}

export type MailInstruction =
  | InitPostofficeData
  | CreateMailboxData
  | SetMailboxFlagsData
  | PublishKeyData
  | RemoveKeyData
  | CreateDomainData
  | SendMailData
  | DeleteMailData
  | CreateAliasData
  | CreateFromboxData
  | UpdateFromboxData
  | AddStampsData
  | BuyStampsData
  | TopUpStampsData
  | ReclaimFromboxStampsData
  | ClaimBountyData
  | CreatePinLeaseData
  | ClosePinLeaseData
  | PublishBeaconData
  | CloseBeaconData
  | MarketInstruction
  | RequestMailboxCloseData
  | CancelMailboxCloseData
  | CloseMailboxData
  | RequestDeactivationData
  | CancelDeactivationData
  | RequestReclaimData
  | CancelReclaimData
  | SettleDomainTimelockData
  | AttestSenderData
  | RevokeAttestationData
  | SetRecipientRuleData
  | CloseRecipientRuleData
  | SetMailboxDomainData
  | UpdatePostofficeData
  | WithdrawFeesData
  | ProposeAdminData
  | AcceptAdminData;

export type InstructionKind = MailInstruction['kind'];

type LayoutMap = { readonly [K in InstructionKind]: Layout<Extract<MailInstruction, { kind: K }>> };

export const INSTRUCTION_LAYOUTS: LayoutMap = {
  InitPostoffice: defineLayout<InitPostofficeData>('InitPostoffice', 0, {
    rootKsk: 'hash',
    delegateAddress: 'key',
    commitmentRoot: 'hash',
    stampFeeLamports: 'u64',
    settlementSurchargeLamports: 'u64',
  }),
  CreateMailbox: defineLayout<CreateMailboxData>('CreateMailbox', 1, {
    defaultPostage: 'u64',
    domain: 'key',
  }),
  SetMailboxFlags: defineLayout<SetMailboxFlagsData>('SetMailboxFlags', 2, {
    noIpfs: { option: 'bool' },
    defaultPostage: { option: 'u64' },
  }),
  PublishKey: defineLayout<PublishKeyData>('PublishKey', 3, { pubKey: 'key' }),
  RemoveKey: defineLayout<RemoveKeyData>('RemoveKey', 4, {}),
  CreateDomain: defineLayout<CreateDomainData>('CreateDomain', 5, { domain: 'string', authority: 'key' }),
  SendMail: defineLayout<SendMailData>('SendMail', 6, {
    fromHash: 'hash',
    cid: 'string',
    bountyLamports: 'u64',
    expiresAt: 'i64',
    replyToHash: 'hash',
  }),
  DeleteMail: defineLayout<DeleteMailData>('DeleteMail', 7, {}),
  CreateAlias: defineLayout<CreateAliasData>('CreateAlias', 8, { name: 'string' }),
  CreateFrombox: defineLayout<CreateFromboxData>('CreateFrombox', 9, {
    fromHash: 'hash',
    requiredPostage: 'u64',
  }),
  UpdateFrombox: defineLayout<UpdateFromboxData>('UpdateFrombox', 10, {
    fromHash: 'hash',
    requiredPostage: 'u64',
  }),
  AddStamps: defineLayout<AddStampsData>('AddStamps', 11, {
    fromHash: 'hash',
    stamps: 'u64',
    maxPriceLamports: { option: 'u64' },
  }),
  BuyStamps: defineLayout<BuyStampsData>('BuyStamps', 12, {
    stamps: 'u64',
    maxPriceLamports: { option: 'u64' },
  }),
  TopUpStamps: defineLayout<TopUpStampsData>('TopUpStamps', 13, {
    stamps: 'u64',
    maxPriceLamports: { option: 'u64' },
  }),
  ReclaimFromboxStamps: defineLayout<ReclaimFromboxStampsData>('ReclaimFromboxStamps', 14, {}),
  ClaimBounty: defineLayout<ClaimBountyData>('ClaimBounty', 15, {}),
  CreatePinLease: defineLayout<CreatePinLeaseData>('CreatePinLease', 16, {
    cidHash: 'hash',
    expiresAt: 'i64',
    feeLamports: 'u64',
  }),
  ClosePinLease: defineLayout<ClosePinLeaseData>('ClosePinLease', 17, {}),
  PublishBeacon: defineLayout<PublishBeaconData>('PublishBeacon', 18, { tags: 'u64', detailCid: 'string' }),
  CloseBeacon: defineLayout<CloseBeaconData>('CloseBeacon', 19, {}),
  ...MARKET_INSTRUCTION_LAYOUTS,
  RequestMailboxClose: defineLayout<RequestMailboxCloseData>('RequestMailboxClose', 20, {}),
  CancelMailboxClose: defineLayout<CancelMailboxCloseData>('CancelMailboxClose', 21, {}),
  CloseMailbox: defineLayout<CloseMailboxData>('CloseMailbox', 22, {}),
  RequestDeactivation: defineLayout<RequestDeactivationData>('RequestDeactivation', 23, {}),
  CancelDeactivation: defineLayout<CancelDeactivationData>('CancelDeactivation', 24, {}),
  RequestReclaim: defineLayout<RequestReclaimData>('RequestReclaim', 25, {}),
  CancelReclaim: defineLayout<CancelReclaimData>('CancelReclaim', 26, {}),
  SettleDomainTimelock: defineLayout<SettleDomainTimelockData>('SettleDomainTimelock', 27, {}),
  // Sender attestations and recipient rules: tags 28-31.
  AttestSender: defineLayout<AttestSenderData>('AttestSender', 28, { wallet: 'key' }),
  RevokeAttestation: defineLayout<RevokeAttestationData>('RevokeAttestation', 29, {}),
  SetRecipientRule: defineLayout<SetRecipientRuleData>('SetRecipientRule', 30, {
    minReputationLamports: 'u64',
    postageLamports: 'u64',
  }),
  CloseRecipientRule: defineLayout<CloseRecipientRuleData>('CloseRecipientRule', 31, {}),
  SetMailboxDomain: defineLayout<SetMailboxDomainData>('SetMailboxDomain', 32, { domain: 'key' }),
  // The postoffice's admin: tags 50-53.
  UpdatePostoffice: defineLayout<UpdatePostofficeData>('UpdatePostoffice', 50, {
    stampFeeLamports: { option: 'u64' },
    settlementSurchargeLamports: { option: 'u64' },
    delegateAddress: { option: 'key' },
    rootKsk: { option: 'hash' },
  }),
  WithdrawFees: defineLayout<WithdrawFeesData>('WithdrawFees', 51, { amountLamports: 'u64' }),
  ProposeAdmin: defineLayout<ProposeAdminData>('ProposeAdmin', 52, { newAdmin: 'key' }),
  AcceptAdmin: defineLayout<AcceptAdminData>('AcceptAdmin', 53, {}),
};

export const INSTRUCTION_TAGS = Object.fromEntries(
  Object.values(INSTRUCTION_LAYOUTS).map((l) => [l.kind, l.tag]),
) as { readonly [K in InstructionKind]: number };

const BY_TAG: (Layout<MailInstruction> | undefined)[] = [];
for (const l of Object.values(INSTRUCTION_LAYOUTS)) BY_TAG[l.tag] = l as unknown as Layout<MailInstruction>;

/** Instruction data for `ix` (its kind picks the tag). */
export function encodeInstruction(ix: MailInstruction): Uint8Array {
  return (INSTRUCTION_LAYOUTS[ix.kind] as unknown as Layout<MailInstruction>).encode(ix);
}

/** Encodes arguments for one kind without spelling `kind` in the object. */
export function encodeInstructionOf<K extends InstructionKind>(
  kind: K,
  args: Input<Extract<MailInstruction, { kind: K }>>,
): Uint8Array {
  return (INSTRUCTION_LAYOUTS[kind] as unknown as Layout<MailInstruction>).encode(
    args as Input<MailInstruction>,
  );
}

/** Decodes instruction data; throws DecodeError on an unknown tag, short, non-canonical or trailing data. */
export function decodeInstruction(data: Uint8Array): MailInstruction {
  const tag = data[0];
  const layout = tag === undefined ? undefined : BY_TAG[tag];
  if (!layout) {
    throw new DecodeError(tag === undefined ? 'instruction: empty data' : `instruction: unknown tag ${tag}`);
  }
  return layout.decode(data);
}
