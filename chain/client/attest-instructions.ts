// Builders for sender attestations, recipient rules and SendMail's
// reputation accounts (docs/protocol.md, "Sender attestations and
// reputation"), with their account lists.
import type { TransactionInstruction } from '@solana/web3.js';
import { type Key, toPublicKey } from './bytes.ts';
import { instruction, schemaMeta } from './ix-helpers.ts';
import { attestationAddress, mailboxAddress, recipientRuleAddress, reputationAddress } from './pda.ts';
import { type DomainRef, domainAccount } from './timelock-instructions.ts';

/** The MailDomain account of `ref` (the same resolution as the timelocks'). */
function domainOf(programId: Key, ref: DomainRef) {
  return toPublicKey(domainAccount(programId, ref));
}

export type AttestSenderParams = DomainRef & {
  programId: Key;
  /** Signer: the domain's authority (the key at `_solana.authority.<domain>`). */
  authority: Key;
  /** Signer; pays the record's rent (defaults to the authority). */
  payer?: Key;
  /** The wallet attested as a sender of the domain. */
  wallet: Key;
};

export function attestSenderInstruction(p: AttestSenderParams): TransactionInstruction {
  const domain = domainOf(p.programId, p);
  const payer = p.payer ?? p.authority;
  const accounts = {
    authority: p.authority,
    payer,
    mailDomain: domain,
    attestation: attestationAddress(p.programId, domain, p.wallet)[0],
  };
  return instruction(p.programId, 'AttestSender', accounts, { wallet: toPublicKey(p.wallet) });
}

export type RevokeAttestationParams = DomainRef & {
  programId: Key;
  /** Signer: the domain's current authority, or the attested wallet itself. */
  signer: Key;
  wallet: Key;
  /** The record's rent_payer, which gets the rent back. */
  rentPayer: Key;
};

export function revokeAttestationInstruction(p: RevokeAttestationParams): TransactionInstruction {
  const domain = domainOf(p.programId, p);
  const accounts = {
    signer: p.signer,
    attestation: attestationAddress(p.programId, domain, p.wallet)[0],
    rentPayer: p.rentPayer,
    mailDomain: domain,
  };
  return instruction(p.programId, 'RevokeAttestation', accounts, {});
}

export interface SetRecipientRuleParams {
  programId: Key;
  /** Signer and rent payer: the mailbox owner. */
  owner: Key;
  /** Reputation (cumulative first-contact postage, lamports) a direct sender needs; at least 1. */
  minReputationLamports: bigint;
  /** Postage such a sender pays per message instead of a stamp; 0 waives it. */
  postageLamports: bigint;
}

export function setRecipientRuleInstruction(p: SetRecipientRuleParams): TransactionInstruction {
  const accounts = {
    owner: p.owner,
    mailbox: mailboxAddress(p.programId, p.owner)[0],
    recipientRule: recipientRuleAddress(p.programId, p.owner)[0],
  };
  return instruction(p.programId, 'SetRecipientRule', accounts, {
    minReputationLamports: p.minReputationLamports,
    postageLamports: p.postageLamports,
  });
}

export function closeRecipientRuleInstruction(p: { programId: Key; owner: Key }): TransactionInstruction {
  const accounts = { owner: p.owner, recipientRule: recipientRuleAddress(p.programId, p.owner)[0] };
  return instruction(p.programId, 'CloseRecipientRule', accounts, {});
}

/**
 * Appends SendMail's optional accounts to a direct send (built by
 * sendMailInstruction without `domain`): the sender's SenderReputation, where
 * the postage this send pays is recorded, and with `applyRule` the
 * recipient's RecipientRule (which may not exist), which can replace the stamp.
 */
export function withReputation(
  sendMail: TransactionInstruction,
  p: { programId: Key; sender: Key; recipient: Key; applyRule?: boolean },
): TransactionInstruction {
  if (sendMail.keys.length !== 7) throw new TypeError('withReputation takes a direct SendMail (7 accounts)');
  sendMail.keys.push(schemaMeta('SendMail', 'senderReputation', reputationAddress(p.programId, p.sender)[0]));
  if (p.applyRule)
    sendMail.keys.push(
      schemaMeta('SendMail', 'recipientRule', recipientRuleAddress(p.programId, p.recipient)[0]),
    );
  return sendMail;
}
