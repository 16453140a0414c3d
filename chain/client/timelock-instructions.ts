// Builders for the timelock instructions (docs/protocol.md "Timelocks"):
// closing a mailbox, deactivating a domain and reclaiming a domain, each a
// pending record that can be completed only after its window and cancelled
// until then. The windows are the program's constants, repeated here.
import type { TransactionInstruction } from '@solana/web3.js';
import type { Key } from './bytes.ts';
import { normalizeDomain } from './hash.ts';
import { instruction } from './ix-helpers.ts';
import {
  domainAddress,
  mailboxAddress,
  pendingCloseAddress,
  pendingDeactivationAddress,
  pendingReclaimAddress,
  postofficeAddress,
} from './pda.ts';

const DAY = 86_400n;

/** Seconds between RequestMailboxClose and the earliest CloseMailbox. */
export const MAILBOX_CLOSE_WINDOW_SECS = 7n * DAY;
/** Seconds between RequestDeactivation and the earliest settlement (the notice window). */
export const DEACTIVATION_WINDOW_SECS = 30n * DAY;
/** Seconds between RequestReclaim and the earliest settlement. */
export const RECLAIM_WINDOW_SECS = 14n * DAY;

export type TimelockKind = 'PendingMailboxClose' | 'PendingDeactivation' | 'PendingReclaim';

export const TIMELOCK_WINDOW_SECS: Readonly<Record<TimelockKind, bigint>> = {
  PendingMailboxClose: MAILBOX_CLOSE_WINDOW_SECS,
  PendingDeactivation: DEACTIVATION_WINDOW_SECS,
  PendingReclaim: RECLAIM_WINDOW_SECS,
};

/** Chain time (Unix seconds) from which a pending record can be completed. */
export function timelockEndsAt(record: { kind: TimelockKind; requestedAt: bigint }): bigint {
  return record.requestedAt + TIMELOCK_WINDOW_SECS[record.kind];
}

/** The MailDomain account of a domain given by name, or the account itself. */
export type DomainRef = { domain: string } | { mailDomain: Key };

export function domainAccount(programId: Key, ref: DomainRef): Key {
  return 'domain' in ref ? domainAddress(programId, normalizeDomain(ref.domain))[0] : ref.mailDomain;
}

export interface MailboxCloseParams {
  programId: Key;
  /** Signer: the mailbox's owner (pays the pending record's rent, receives the rents back). */
  owner: Key;
}

export function requestMailboxCloseInstruction(p: MailboxCloseParams): TransactionInstruction {
  const accounts = {
    owner: p.owner,
    mailbox: mailboxAddress(p.programId, p.owner)[0],
    pendingClose: pendingCloseAddress(p.programId, p.owner)[0],
  };
  return instruction(p.programId, 'RequestMailboxClose', accounts, {});
}

export function cancelMailboxCloseInstruction(p: MailboxCloseParams): TransactionInstruction {
  const accounts = { owner: p.owner, pendingClose: pendingCloseAddress(p.programId, p.owner)[0] };
  return instruction(p.programId, 'CancelMailboxClose', accounts, {});
}

export function closeMailboxInstruction(p: MailboxCloseParams): TransactionInstruction {
  const accounts = {
    owner: p.owner,
    mailbox: mailboxAddress(p.programId, p.owner)[0],
    pendingClose: pendingCloseAddress(p.programId, p.owner)[0],
  };
  return instruction(p.programId, 'CloseMailbox', accounts, {});
}

export type DeactivationParams = DomainRef & {
  programId: Key;
  /** Signer: the domain's current authority (pays the record's rent / receives it back). */
  authority: Key;
};

export function requestDeactivationInstruction(p: DeactivationParams): TransactionInstruction {
  const mailDomain = domainAccount(p.programId, p);
  const accounts = {
    authority: p.authority,
    mailDomain,
    pendingDeactivation: pendingDeactivationAddress(p.programId, mailDomain)[0],
  };
  return instruction(p.programId, 'RequestDeactivation', accounts, {});
}

export function cancelDeactivationInstruction(p: DeactivationParams): TransactionInstruction {
  const mailDomain = domainAccount(p.programId, p);
  const accounts = {
    authority: p.authority,
    mailDomain,
    pendingDeactivation: pendingDeactivationAddress(p.programId, mailDomain)[0],
  };
  return instruction(p.programId, 'CancelDeactivation', accounts, {});
}

export type RequestReclaimParams = DomainRef & {
  programId: Key;
  /** Signer and payer: the postoffice's delegate (the domain service that checked the DNSSEC proof). */
  delegate: Key;
  /** Signer: the authority that takes the domain when the reclaim settles. */
  newAuthority: Key;
};

export function requestReclaimInstruction(p: RequestReclaimParams): TransactionInstruction {
  const mailDomain = domainAccount(p.programId, p);
  const accounts = {
    delegate: p.delegate,
    newAuthority: p.newAuthority,
    postoffice: postofficeAddress(p.programId)[0],
    mailDomain,
    pendingReclaim: pendingReclaimAddress(p.programId, mailDomain)[0],
  };
  return instruction(p.programId, 'RequestReclaim', accounts, {});
}

export type CancelReclaimParams = DomainRef & {
  programId: Key;
  /** Signer: the domain's current authority, or the reclaim's payer withdrawing it. */
  signer: Key;
  /** The reclaim's payer (PendingReclaim.payer), which receives the record's rent. */
  payer: Key;
};

export function cancelReclaimInstruction(p: CancelReclaimParams): TransactionInstruction {
  const mailDomain = domainAccount(p.programId, p);
  // A payer withdrawing its own reclaim is both the signer and the payer: the
  // transaction's message merges the two entries into one signing, writable key.
  const accounts = {
    signer: p.signer,
    mailDomain,
    pendingReclaim: pendingReclaimAddress(p.programId, mailDomain)[0],
    payer: p.payer,
  };
  return instruction(p.programId, 'CancelReclaim', accounts, {});
}

export type SettleDomainTimelockParams = DomainRef & {
  programId: Key;
  /** Which pending record to settle. */
  record: 'deactivation' | 'reclaim';
  /** Receives the record's rent: the domain's authority (deactivation) or the reclaim's payer. */
  rentTo: Key;
};

/** Completes a deactivation or a reclaim after its window; any fee payer may send it. */
export function settleDomainTimelockInstruction(p: SettleDomainTimelockParams): TransactionInstruction {
  const mailDomain = domainAccount(p.programId, p);
  const pending =
    p.record === 'deactivation'
      ? pendingDeactivationAddress(p.programId, mailDomain)[0]
      : pendingReclaimAddress(p.programId, mailDomain)[0];
  return instruction(p.programId, 'SettleDomainTimelock', { mailDomain, pending, rentTo: p.rentTo }, {});
}
