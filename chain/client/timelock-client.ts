// Readers of the timelock records (docs/protocol.md "Timelocks"): whether a
// mailbox is closing, a domain is in its deactivation notice window, or a
// reclaim of it is pending. Browser-safe.
import type { Commitment, Connection } from '@solana/web3.js';
import {
  decodePendingDeactivation,
  decodePendingMailboxClose,
  decodePendingReclaim,
  type PendingDeactivation,
  type PendingMailboxClose,
  type PendingReclaim,
} from './accounts/index.ts';
import type { Key } from './bytes.ts';
import { fetchDecoded } from './client.ts';
import { normalizeDomain } from './hash.ts';
import {
  domainAddress,
  pendingCloseAddress,
  pendingDeactivationAddress,
  pendingReclaimAddress,
} from './pda.ts';

/** The wallet's pending mailbox close, or null. */
export function getPendingMailboxClose(
  conn: Connection,
  programId: Key,
  wallet: Key,
  commitment?: Commitment,
): Promise<PendingMailboxClose | null> {
  return fetchDecoded(
    conn,
    programId,
    pendingCloseAddress(programId, wallet)[0],
    decodePendingMailboxClose,
    commitment,
  );
}

/** A domain's pending deactivation (by domain name), or null. */
export function getPendingDeactivation(
  conn: Connection,
  programId: Key,
  domain: string,
): Promise<PendingDeactivation | null> {
  const mailDomain = domainAddress(programId, normalizeDomain(domain))[0];
  return fetchDecoded(
    conn,
    programId,
    pendingDeactivationAddress(programId, mailDomain)[0],
    decodePendingDeactivation,
  );
}

/** A domain's pending reclaim (by domain name), or null. */
export function getPendingReclaim(
  conn: Connection,
  programId: Key,
  domain: string,
): Promise<PendingReclaim | null> {
  const mailDomain = domainAddress(programId, normalizeDomain(domain))[0];
  return fetchDecoded(conn, programId, pendingReclaimAddress(programId, mailDomain)[0], decodePendingReclaim);
}
