// Before sealing: is the envelope sender an attested wallet of its domain?
// (docs/inbound.md, "Attested senders"). Only MX mail whose MAIL FROM is
// `<wallet base58>@<domain>`, whose SPF passed for that domain (so the
// domain's own servers handed us this message), and whose domain authority
// attested that wallet on chain (a SenderAttestation that still counts: the
// domain active, its authority the attesting key). Read fresh from the chain
// on every attempt; an RPC failure is thrown and retried like any stage.
import type { Connection } from '@solana/web3.js';
import { attestedSender } from '../../chain/client/attest-client.ts';
import { isBase58Key, normalizeDomain } from '../../chain/client/hash.ts';
import type { AttestedSenderFact, MxTrace } from '../../src/mail/trace.ts';

export interface AttestDeps {
  connection: Connection;
  programId: string;
}

export async function attestedSenderOf(
  deps: AttestDeps,
  envelopeFrom: string,
  mx: MxTrace | undefined,
): Promise<AttestedSenderFact | undefined> {
  if (!mx?.spfPassDomain) return undefined;
  const at = envelopeFrom.lastIndexOf('@');
  const wallet = envelopeFrom.slice(0, at);
  if (at <= 0 || !isBase58Key(wallet)) return undefined;
  let domain: string;
  try {
    domain = normalizeDomain(envelopeFrom.slice(at + 1));
  } catch {
    return undefined;
  }
  if (domain !== mx.spfPassDomain.toLowerCase().replace(/\.$/, '')) return undefined;
  const hit = await attestedSender(deps.connection, deps.programId, domain, wallet);
  return hit ? { wallet, domain } : undefined;
}
