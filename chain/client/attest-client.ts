// Readers for sender attestations, sender reputation and recipient rules
// (docs/protocol.md, "Sender attestations and reputation"). Browser-safe.
import type { Connection } from '@solana/web3.js';
import {
  decodeMailDomain,
  decodeRecipientRule,
  decodeSenderAttestation,
  decodeSenderReputation,
  type MailDomain,
  type RecipientRule,
  SENDER_ATTESTATION_SIZE,
  type SenderAttestation,
  type SenderReputation,
  senderAttestationLayout,
} from './accounts/index.ts';
import { type Key, keyBytes, toPublicKey } from './bytes.ts';
import { fetchDecoded, type Located, listKind } from './client.ts';
import { normalizeDomain } from './hash.ts';
import { attestationAddress, domainAddress, recipientRuleAddress, reputationAddress } from './pda.ts';

/** The SenderAttestation of (domain, wallet) as stored, or null; see attestedSender for whether it counts. */
export function getAttestation(
  conn: Connection,
  programId: Key,
  domain: string,
  wallet: Key,
): Promise<SenderAttestation | null> {
  const account = domainAddress(programId, normalizeDomain(domain))[0];
  return fetchDecoded(
    conn,
    programId,
    attestationAddress(programId, account, wallet)[0],
    decodeSenderAttestation,
  );
}

/**
 * Whether an attestation counts: the domain exists and is active, and the
 * key that signed the attestation is still the domain's authority (a domain
 * that changed hands does not carry its old authority's attestations).
 */
export function attestationCounts(att: SenderAttestation, domain: MailDomain | null): boolean {
  return !!domain && domain.isActive && att.authority.equals(domain.authority);
}

export interface AttestedSender {
  domain: MailDomain;
  attestation: SenderAttestation;
}

/** The domain's attestation of `wallet` when it counts (attestationCounts), else null. */
export async function attestedSender(
  conn: Connection,
  programId: Key,
  domain: string,
  wallet: Key,
): Promise<AttestedSender | null> {
  const name = normalizeDomain(domain);
  const domainKey = domainAddress(programId, name)[0];
  const [domainInfo, attInfo] = await conn.getMultipleAccountsInfo([
    domainKey,
    attestationAddress(programId, domainKey, wallet)[0],
  ]);
  const program = toPublicKey(programId);
  if (!domainInfo?.owner.equals(program) || !attInfo?.owner.equals(program)) return null;
  const md = decodeMailDomain(new Uint8Array(domainInfo.data));
  const attestation = decodeSenderAttestation(new Uint8Array(attInfo.data));
  return attestationCounts(attestation, md) ? { domain: md, attestation } : null;
}

export interface ListedAttestation extends Located<SenderAttestation> {
  /** attestationCounts against the domain as it is now. */
  counts: boolean;
}

/** Every attestation recorded for a domain (memcmp on the domain field), sorted by wallet. */
export async function listAttestations(
  conn: Connection,
  programId: Key,
  domain: string,
): Promise<ListedAttestation[]> {
  const domainKey = domainAddress(programId, normalizeDomain(domain))[0];
  const md = await fetchDecoded(conn, programId, domainKey, decodeMailDomain);
  const found = await listKind(conn, programId, 13, SENDER_ATTESTATION_SIZE, decodeSenderAttestation, [
    { offset: senderAttestationLayout.offsets.domain, bytes: keyBytes(domainKey) },
  ]);
  return found
    .map((a) => ({ ...a, counts: attestationCounts(a.account, md) }))
    .sort((x, y) => x.account.wallet.toBase58().localeCompare(y.account.wallet.toBase58()));
}

/** The wallet's SenderReputation, or null when it never paid first-contact postage on a recorded send. */
export function getReputation(
  conn: Connection,
  programId: Key,
  wallet: Key,
): Promise<SenderReputation | null> {
  return fetchDecoded(conn, programId, reputationAddress(programId, wallet)[0], decodeSenderReputation);
}

/** The recipient's RecipientRule, or null. */
export function getRecipientRule(
  conn: Connection,
  programId: Key,
  owner: Key,
): Promise<RecipientRule | null> {
  return fetchDecoded(conn, programId, recipientRuleAddress(programId, owner)[0], decodeRecipientRule);
}
