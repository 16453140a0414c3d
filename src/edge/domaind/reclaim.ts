// Starts a domain reclaim from a DNSSEC proof (docs/protocol.md "Timelocks",
// "What is verified where in a reclaim"). The new authority sends the proof —
// an RFC 9102-style chain from the root DNSKEY set down to the
// `_solana.authority.<domain>` TXT record naming its key — together with the
// RequestReclaim transaction it has already signed (fee payer: the delegate).
// This service checks the proof against the Postoffice's root_ksk (the
// SHA-256 DS digest of the root key-signing key), checks that the TXT names
// the key that signed and that the transaction is exactly the one
// RequestReclaim it would build itself for that blockhash, then adds the
// delegate's signature and submits it. The transaction message is the
// challenge: its recent blockhash makes the new authority's signature fresh
// and single-use, and nothing but that instruction can ride along.
import { ed25519 } from '@noble/curves/ed25519.js';
import {
  ComputeBudgetProgram,
  type Connection,
  type Keypair,
  PublicKey,
  Transaction,
  type TransactionInstruction,
} from '@solana/web3.js';
import {
  budgetedUnitLimit,
  computeBudgetInstructions,
  DEFAULT_MAX_PRIORITY_FEE_LAMPORTS,
  type PriorityFeePolicy,
  priceBudget,
  priorityFeeLamports,
} from '../../../chain/client/compute-budget.ts';
import {
  getPendingReclaim,
  getPostoffice,
  type PendingReclaim,
  type Postoffice,
  parseMailProgramError,
  pendingReclaimAddress,
  requestReclaimInstruction,
  timelockEndsAt,
} from '../../../chain/client/index.ts';
import { sendRawAndConfirmPolled } from '../../core/chain-rpc.ts';
import { DnssecError, type VerifiedTxt, verifyTxtChain } from '../../core/dns/dnssec-chain.ts';
import { authorityKeyProblem, authorityRecordName, parseDomainInput } from './authority-record.ts';
import { type ChainDeps, chainFailure, mailDomainFacts, readDomain } from './authorize.ts';
import { DomaindError } from './errors.ts';

export interface ReclaimInput {
  domain: string;
  /** The serialized DNSSEC chain (wire-format records, concatenated). */
  proof: Uint8Array;
  /** The RequestReclaim transaction, signed by the new authority (serialized, delegate signature empty). */
  transaction: Uint8Array;
}

export interface ReclaimTransactionParams {
  programId: string;
  delegate: PublicKey;
  newAuthority: PublicKey;
  domain: string;
  recentBlockhash: string;
  /**
   * The price of its compute budget (µlamports per CU); absent: no budget
   * instructions. The limit is always the one sized for RequestReclaim
   * (chain/client/compute-budget.ts), so the price is the only free choice.
   */
  microLamportsPerCu?: bigint;
}

/** RequestReclaim for these parameters. */
function reclaimInstruction(p: Omit<ReclaimTransactionParams, 'recentBlockhash'>): TransactionInstruction {
  return requestReclaimInstruction({
    programId: p.programId,
    delegate: p.delegate,
    newAuthority: p.newAuthority,
    domain: p.domain,
  });
}

/**
 * The one transaction a reclaim start may be: RequestReclaim, paid by the
 * delegate, behind SetComputeUnitLimit (sized for it) and
 * SetComputeUnitPrice when a price is given.
 */
export function reclaimTransaction(p: ReclaimTransactionParams): Transaction {
  const ix = reclaimInstruction(p);
  const tx = new Transaction({ feePayer: p.delegate, recentBlockhash: p.recentBlockhash });
  if (p.microLamportsPerCu !== undefined) {
    const unitLimit = budgetedUnitLimit([ix], p.microLamportsPerCu);
    tx.add(...computeBudgetInstructions({ unitLimit, microLamportsPerCu: p.microLamportsPerCu }));
  }
  return tx.add(ix);
}

/** The price a client offers for the delegate's RequestReclaim: `policy` resolved now for its writable keys. */
export async function reclaimPrice(
  connection: Connection,
  policy: PriorityFeePolicy,
  p: Omit<ReclaimTransactionParams, 'recentBlockhash' | 'microLamportsPerCu'>,
): Promise<bigint> {
  const ix = reclaimInstruction(p);
  return (await priceBudget(connection, policy, [ix], p.delegate)).microLamportsPerCu;
}

/** The SetComputeUnitPrice of a transaction's leading compute-budget instructions, if any. */
function offeredPrice(tx: Transaction): bigint | undefined {
  for (const ix of tx.instructions) {
    if (!ix.programId.equals(ComputeBudgetProgram.programId)) break;
    if (ix.data[0] === 3 && ix.data.length === 9) return ix.data.readBigUInt64LE(1);
  }
  return undefined;
}

export interface ReclaimResult {
  /** `requested`: this call submitted RequestReclaim; `already_authorized`: the TXT's key already holds the domain. */
  status: 'requested' | 'already_authorized';
  body: Record<string, unknown>;
}

const iso = (unix: bigint) => new Date(Number(unix) * 1000).toISOString();

function pendingFacts(programId: string, domain: string, mailDomain: PublicKey, p: PendingReclaim) {
  return {
    pending_reclaim: pendingReclaimAddress(programId, mailDomain)[0].toBase58(),
    new_authority: p.authority.toBase58(),
    payer: p.payer.toBase58(),
    requested_at: iso(p.requestedAt),
    window_ends_at: iso(timelockEndsAt(p)),
    domain,
  };
}

async function readPostoffice(chain: ChainDeps): Promise<Postoffice> {
  let postoffice: Postoffice | null;
  try {
    postoffice = await getPostoffice(chain.connection, chain.programId);
  } catch (err) {
    throw chainFailure(err, 'reading the Postoffice');
  }
  if (!postoffice) {
    throw new DomaindError(
      'no_postoffice',
      'the mail program has no Postoffice yet, so there is no root_ksk to verify against',
    );
  }
  if (postoffice.rootKsk.every((b) => b === 0)) {
    throw new DomaindError(
      'root_ksk_not_set',
      "the Postoffice's root_ksk is all zeros: no DNSSEC trust anchor is set, so no reclaim proof can be verified",
    );
  }
  return postoffice;
}

function verifyProof(input: ReclaimInput, domain: string, rootKsk: Uint8Array, now: number): VerifiedTxt {
  try {
    return verifyTxtChain(input.proof, { anchorDigest: rootKsk, target: authorityRecordName(domain), now });
  } catch (err) {
    if (!(err instanceof DnssecError)) throw err;
    throw new DomaindError(`dnssec_${err.problem}`, `the DNSSEC proof does not hold: ${err.message}`, {
      domain,
      link: err.link,
      ...(err.zone ? { zone: err.zone } : {}),
    });
  }
}

/** The one authority key the proven TXT RRset names. */
function provenAuthority(domain: string, verified: VerifiedTxt): PublicKey {
  const recordName = authorityRecordName(domain);
  const distinct = [...new Set(verified.values.map((v) => v.trim()))];
  if (distinct.length !== 1) {
    throw new DomaindError(
      'conflicting_authority_records',
      `the proven ${recordName} RRset has ${distinct.length} different TXT records; it must name exactly one key`,
      { domain, record_name: recordName, records: verified.values },
    );
  }
  const value = distinct[0] as string;
  const problem = authorityKeyProblem(value);
  if (problem) {
    throw new DomaindError(
      'malformed_authority_key',
      `the proven TXT record at ${recordName} is not an ed25519 public key: ${problem}`,
      { domain, record_name: recordName, records: verified.values },
    );
  }
  return new PublicKey(value);
}

function parseTransaction(bytes: Uint8Array): Transaction {
  try {
    return Transaction.from(bytes);
  } catch (err) {
    throw new DomaindError(
      'invalid_reclaim_request',
      `"transaction" is not a serialized transaction: ${(err as Error).message}`,
    );
  }
}

/** The transaction must be the expected RequestReclaim, validly signed by the proven authority. */
function checkTransaction(
  tx: Transaction,
  expected: Omit<ReclaimTransactionParams, 'recentBlockhash' | 'microLamportsPerCu'>,
  /** The most priority fee the delegate pays for it (`[chain] max_priority_fee_lamports`). */
  maxPriorityLamports: bigint,
): void {
  const signers = tx.signatures.map((s) => s.publicKey.toBase58());
  const claimed = expected.newAuthority.toBase58();
  if (!signers.includes(claimed)) {
    const others = signers.filter((s) => s !== expected.delegate.toBase58());
    throw new DomaindError(
      'authority_mismatch',
      `the proven TXT record names ${claimed}, but the transaction is signed for ${others.join(', ') || 'nobody'}`,
      { domain: expected.domain, proven_authority: claimed, transaction_signers: others },
    );
  }
  const price = offeredPrice(tx);
  const want = reclaimTransaction({
    ...expected,
    recentBlockhash: tx.recentBlockhash ?? '',
    ...(price !== undefined ? { microLamportsPerCu: price } : {}),
  });
  if (!tx.recentBlockhash || !want.serializeMessage().equals(tx.serializeMessage())) {
    throw new DomaindError(
      'transaction_mismatch',
      `the transaction must be exactly one RequestReclaim of ${expected.domain} for ${claimed}, paid by the delegate ${expected.delegate.toBase58()}, optionally behind SetComputeUnitLimit ${budgetedUnitLimit([reclaimInstruction(expected)], 1n)} and SetComputeUnitPrice`,
      { domain: expected.domain },
    );
  }
  if (price !== undefined) {
    const fee = priorityFeeLamports(budgetedUnitLimit([reclaimInstruction(expected)], price), price);
    if (fee > maxPriorityLamports) {
      throw new DomaindError(
        'priority_fee_too_high',
        `the transaction asks the delegate to pay a priority fee of ${fee} lamports; this service pays at most ${maxPriorityLamports} ([chain] max_priority_fee_lamports)`,
        {
          domain: expected.domain,
          priority_fee_lamports: fee.toString(),
          max_priority_fee_lamports: maxPriorityLamports.toString(),
        },
      );
    }
  }
  const own = tx.signatures.find((s) => s.publicKey.equals(expected.newAuthority))?.signature;
  if (!own || !ed25519.verify(own, tx.serializeMessage(), expected.newAuthority.toBytes())) {
    throw new DomaindError(
      'authority_signature_invalid',
      `the transaction carries no valid signature by ${claimed}; sign the RequestReclaim message with that key`,
      { domain: expected.domain },
    );
  }
}

const PROGRAM_REFUSALS: Readonly<Record<string, [ConstructorParameters<typeof DomaindError>[0], string]>> = {
  AlreadyExists: ['reclaim_pending', 'a reclaim of this domain is already pending'],
  DomainInactive: ['domain_inactive', 'the domain is inactive'],
  Unauthorized: ['delegate_not_authorized', "the delegate key is not the postoffice's delegate_address"],
};

export async function startReclaim(
  chain: ChainDeps,
  delegate: Keypair | null,
  input: ReclaimInput,
  now = Math.floor(Date.now() / 1000),
): Promise<ReclaimResult> {
  const domain = parseDomainInput(input.domain).ascii;
  const postoffice = await readPostoffice(chain);
  const verified = verifyProof(input, domain, postoffice.rootKsk, now);
  const newAuthority = provenAuthority(domain, verified);
  const proof = { zones: verified.zones, root_key_tag: verified.anchorKeyTag };
  const claim = { domain, new_authority: newAuthority.toBase58(), proof };
  if (!delegate) {
    throw new DomaindError(
      'delegate_not_configured',
      'this service has no delegate key ([chain] delegate_key_file), so it cannot start a reclaim; the proof was verified',
      claim,
    );
  }
  if (!delegate.publicKey.equals(postoffice.delegateAddress)) {
    throw new DomaindError(
      'delegate_not_authorized',
      `the delegate key ${delegate.publicKey.toBase58()} is not the postoffice's delegate_address ${postoffice.delegateAddress.toBase58()}`,
    );
  }
  const tx = parseTransaction(input.transaction);
  checkTransaction(
    tx,
    { programId: chain.programId, delegate: delegate.publicKey, newAuthority, domain },
    chain.priorityFee?.maxLamports ?? DEFAULT_MAX_PRIORITY_FEE_LAMPORTS,
  );

  const mailDomain = await readDomain(chain, domain);
  if (!mailDomain) {
    throw new DomaindError(
      'unknown_domain',
      `${domain} has no MailDomain on chain; authorize it with POST /domain`,
      {
        domain,
      },
    );
  }
  const parsed = parseDomainInput(domain);
  const facts = mailDomainFacts(chain.programId, parsed, mailDomain);
  const mailDomainKey = new PublicKey(facts.mail_domain);
  if (!mailDomain.isActive) {
    throw new DomaindError(
      'domain_inactive',
      `${domain} is inactive; an inactive domain cannot be reclaimed`,
      {
        on_chain: facts,
      },
    );
  }
  if (mailDomain.authority.equals(newAuthority)) {
    return {
      status: 'already_authorized',
      body: { status: 'already_authorized', ...facts, new_authority: newAuthority.toBase58(), proof },
    };
  }
  const readPending = async () => {
    try {
      return await getPendingReclaim(chain.connection, chain.programId, domain);
    } catch (err) {
      throw chainFailure(err, `reading the pending reclaim of ${domain}`);
    }
  };
  const pending = await readPending();
  if (pending) {
    throw new DomaindError('reclaim_pending', `a reclaim of ${domain} is already pending`, {
      on_chain: facts,
      ...pendingFacts(chain.programId, domain, mailDomainKey, pending),
    });
  }

  tx.partialSign(delegate);
  let signature: string;
  try {
    signature = await sendRawAndConfirmPolled(chain.connection, tx.serialize(), {
      commitment: chain.commitment ?? 'confirmed',
      preflightCommitment: chain.commitment ?? 'confirmed',
    });
  } catch (err) {
    const refused = parseMailProgramError(err, chain.programId);
    const mapped = refused ? PROGRAM_REFUSALS[refused.name] : undefined;
    if (mapped)
      throw new DomaindError(mapped[0], `the mail program refused RequestReclaim: ${mapped[1]}`, { domain });
    if (refused) {
      throw new DomaindError('chain_refused', `the mail program refused RequestReclaim: ${refused.name}`, {
        program_error: refused.name,
      });
    }
    throw chainFailure(
      err,
      'submitting RequestReclaim (a blockhash older than about a minute is refused: sign a fresh transaction)',
    );
  }
  const after = await readPending();
  if (!after) {
    throw new DomaindError(
      'chain_refused',
      `RequestReclaim ${signature} confirmed but no PendingReclaim is readable`,
    );
  }
  return {
    status: 'requested',
    body: {
      status: 'requested',
      ...facts,
      ...pendingFacts(chain.programId, domain, mailDomainKey, after),
      proof,
      signature,
    },
  };
}
