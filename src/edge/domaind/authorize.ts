// Puts a DNS-proven authority on chain: CreateDomain naming the claimed key,
// signed and paid by the delegate key. Reads the MailDomain first so a
// repeated request for the same authority is answered without a second
// transaction, and a domain held by another authority is refused before
// anything is sent.

import { type Commitment, type Connection, type Keypair, Transaction } from '@solana/web3.js';
import type { PriorityFeePolicy } from '../../../chain/client/compute-budget.ts';
import {
  createDomainInstruction,
  domainAddress,
  getDomain,
  isDomainListed,
  type MailDomain,
  parseMailProgramError,
} from '../../../chain/client/index.ts';
import { sendAndConfirmPolled } from '../../core/chain-rpc.ts';
import type { AuthorityClaim } from './authority-record.ts';
import { DomaindError } from './errors.ts';

export interface ChainDeps {
  connection: Connection;
  programId: string;
  commitment?: Commitment;
  /** The compute budget of the transactions domaind signs (`[chain] priority_fee`…); none when unset. */
  priorityFee?: PriorityFeePolicy;
}

export interface MailDomainFacts {
  domain: string;
  domain_unicode: string;
  /** Address of the MailDomain account. */
  mail_domain: string;
  authority: string;
  is_active: boolean;
  rent_payer: string;
}

export interface AuthorizeResult {
  /** `created`: this call submitted CreateDomain; `already_authorized`: it was on chain with this authority. */
  status: 'created' | 'already_authorized';
  facts: MailDomainFacts;
  /** Transaction signature when created. */
  signature?: string;
}

export function mailDomainFacts(
  programId: string,
  claimDomain: AuthorityClaim['domain'],
  d: MailDomain,
): MailDomainFacts {
  return {
    domain: claimDomain.ascii,
    domain_unicode: claimDomain.unicode,
    mail_domain: domainAddress(programId, claimDomain.ascii)[0].toBase58(),
    authority: d.authority.toBase58(),
    is_active: d.isActive,
    rent_payer: d.rentPayer.toBase58(),
  };
}

const NETWORK_FAILURE =
  /fetch failed|ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|socket hang up|timed? ?out/i;

export function chainFailure(err: unknown, what: string): DomaindError {
  const message = err instanceof Error ? err.message : String(err);
  if (NETWORK_FAILURE.test(message)) {
    return new DomaindError(
      'chain_unavailable',
      `the chain RPC could not be reached while ${what}: ${message}`,
    );
  }
  return new DomaindError('chain_refused', `the chain refused the transaction while ${what}: ${message}`);
}

export async function readDomain(chain: ChainDeps, domain: string): Promise<MailDomain | null> {
  try {
    return await getDomain(chain.connection, chain.programId, domain);
  } catch (err) {
    throw chainFailure(err, `reading the MailDomain of ${domain}`);
  }
}

// A claim for a domain held by another authority is the case a reclaim exists
// for (docs/protocol.md "Timelocks"): POST /domain/reclaim (reclaim.ts) with a
// DNSSEC proof, not this route. A domain listed for sale (docs/protocol.md
// "Domain marketplace") has its DomainListing as authority until it is bought
// or returned; the claim is refused like any other domain held by another
// key, naming the listing.
function taken(programId: string, claim: AuthorityClaim, facts: MailDomainFacts): DomaindError {
  const listed = isDomainListed(programId, facts.mail_domain, facts.authority);
  const held = listed
    ? `is listed for sale on chain: its authority is its DomainListing ${facts.authority} until it is bought or returned`
    : `is already authorized on chain to ${facts.authority}`;
  const next = listed ? '' : '; a new authority takes it over with a DNSSEC proof at POST /domain/reclaim';
  return new DomaindError('domain_taken', `${claim.domain.ascii} ${held}, not to ${claim.authority}${next}`, {
    domain: claim.domain.ascii,
    on_chain: facts,
    claimed_authority: claim.authority,
    listed,
  });
}

/** The chain state for a claim without writing: null when no MailDomain exists. */
export async function readAuthorization(
  chain: ChainDeps,
  claim: AuthorityClaim,
): Promise<MailDomainFacts | null> {
  const existing = await readDomain(chain, claim.domain.ascii);
  return existing ? mailDomainFacts(chain.programId, claim.domain, existing) : null;
}

export async function authorizeDomain(
  chain: ChainDeps,
  delegate: Keypair,
  claim: AuthorityClaim,
): Promise<AuthorizeResult> {
  const settle = (facts: MailDomainFacts): AuthorizeResult => {
    if (facts.authority !== claim.authority) throw taken(chain.programId, claim, facts);
    return { status: 'already_authorized', facts };
  };
  const before = await readAuthorization(chain, claim);
  if (before) return settle(before);

  const ix = createDomainInstruction({
    programId: chain.programId,
    delegate: delegate.publicKey,
    domain: claim.domain.ascii,
    authority: claim.authority,
  });
  let signature: string;
  try {
    signature = await sendAndConfirmPolled(chain.connection, new Transaction().add(ix), [delegate], {
      commitment: chain.commitment ?? 'confirmed',
      ...(chain.priorityFee ? { priorityFee: chain.priorityFee } : {}),
    });
  } catch (err) {
    const programError = parseMailProgramError(err, chain.programId);
    if (programError?.name === 'AlreadyExists') {
      // Another request won the race: answer from what it wrote.
      const raced = await readAuthorization(chain, claim);
      if (raced) return settle(raced);
    }
    if (programError?.name === 'Unauthorized') {
      throw new DomaindError(
        'delegate_not_authorized',
        `the delegate key ${delegate.publicKey.toBase58()} is not the postoffice's delegate_address, so the program refuses its CreateDomain; configure [chain] delegate_key_file with the delegate key`,
      );
    }
    if (programError) {
      throw new DomaindError('chain_refused', `the mail program refused CreateDomain: ${programError.name}`, {
        program_error: programError.name,
      });
    }
    throw chainFailure(err, 'submitting CreateDomain');
  }
  const after = await readAuthorization(chain, claim);
  if (!after)
    throw new DomaindError(
      'chain_refused',
      `CreateDomain ${signature} confirmed but no MailDomain is readable`,
    );
  return { status: 'created', facts: after, signature };
}
