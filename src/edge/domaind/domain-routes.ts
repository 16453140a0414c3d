// POST /domain and GET /domain: the DNS-proof domain authorization.
//  - POST: body is the domain name (text/plain), or JSON {"domain": "…"};
//    resolves the authority TXT, validates the key, submits CreateDomain
//    signed by the delegate. 201 created, 200 when already authorized to the
//    same authority, 503 without a delegate key (checked after the DNS
//    lookup, so an operator without a delegate still learns what DNS says).
//  - GET /domain?name=…: what the TXT currently claims, plus the chain state
//    (read only).
//  - POST /domain/reclaim: JSON {"domain", "proof", "transaction"} (both
//    base64): starts a reclaim from a DNSSEC proof (reclaim.ts). 201 requested,
//    200 when the proven key already holds the domain, 4xx naming the link of
//    the proof or the check that failed.
import type { Keypair } from '@solana/web3.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { DnsResolver } from '../../core/dns/resolver.ts';
import type { Logger } from '../../core/log.ts';
import { type AuthorityClaim, lookupAuthority } from './authority-record.ts';
import { authorizeDomain, type ChainDeps, type MailDomainFacts, readAuthorization } from './authorize.ts';
import { DomaindError } from './errors.ts';
import { type ReclaimInput, startReclaim } from './reclaim.ts';

export interface DomainRouteDeps {
  resolver: DnsResolver;
  chain: ChainDeps;
  /** null: `[chain] delegate_key_file` is not configured (POST answers 503). */
  delegate: Keypair | null;
  logger: Logger;
  /** Called (and awaited) after POST /domain finds a domain authorized: GET /ready reads it again. */
  onAuthorized?: (domain: string) => Promise<void>;
}

function domainFromBody(request: FastifyRequest): string {
  const body = request.body;
  if (typeof body === 'string') return body;
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const value = (body as Record<string, unknown>).domain;
    if (typeof value === 'string') return value;
    throw new DomaindError('missing_domain', 'the JSON body needs a string field "domain"');
  }
  throw new DomaindError(
    'missing_domain',
    'send the domain name as the request body (text/plain) or as JSON {"domain": "example.org"}',
  );
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function reclaimInput(body: unknown): ReclaimInput {
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw new DomaindError(
      'invalid_reclaim_request',
      'send JSON {"domain": "…", "proof": "<base64 DNSSEC chain>", "transaction": "<base64 signed RequestReclaim>"}',
    );
  }
  const fields = body as Record<string, unknown>;
  const text = (name: string): string => {
    const value = fields[name];
    if (typeof value !== 'string' || value.trim() === '') {
      throw new DomaindError(
        'invalid_reclaim_request',
        `the JSON body needs a non-empty string field "${name}"`,
      );
    }
    return value.trim();
  };
  const bytes = (name: string): Buffer => {
    const value = text(name);
    if (value.length % 4 !== 0 || !BASE64.test(value)) {
      throw new DomaindError('invalid_reclaim_request', `"${name}" must be standard base64`);
    }
    return Buffer.from(value, 'base64');
  };
  return { domain: text('domain'), proof: bytes('proof'), transaction: bytes('transaction') };
}

function claimBody(claim: AuthorityClaim) {
  return {
    domain: claim.domain.ascii,
    domain_unicode: claim.domain.unicode,
    record_name: claim.recordName,
    records: claim.records,
    authority: claim.authority,
  };
}

export async function domainRoutes(app: FastifyInstance, deps: DomainRouteDeps): Promise<void> {
  app.post('/domain', async (request, reply) => {
    const input = domainFromBody(request).trim();
    if (input === '')
      throw new DomaindError('missing_domain', 'the request body is empty; send the domain name');
    const claim = await lookupAuthority(deps.resolver, input);
    if (!deps.delegate) {
      throw new DomaindError(
        'delegate_not_configured',
        'this service has no delegate key ([chain] delegate_key_file), so it cannot submit CreateDomain; the DNS record was read and is valid',
        { claim: claimBody(claim) },
      );
    }
    const result = await authorizeDomain(deps.chain, deps.delegate, claim);
    deps.logger.info(
      {
        domain: claim.domain.ascii,
        authority: claim.authority,
        status: result.status,
        signature: result.signature,
      },
      result.status === 'created' ? 'domain authorized on chain' : 'domain was already authorized',
    );
    await deps.onAuthorized?.(claim.domain.ascii);
    reply.code(result.status === 'created' ? 201 : 200);
    return {
      status: result.status,
      ...result.facts,
      ...(result.signature ? { signature: result.signature } : {}),
    };
  });

  app.post('/domain/reclaim', async (request, reply) => {
    const input = reclaimInput(request.body);
    const result = await startReclaim(deps.chain, deps.delegate, input);
    deps.logger.info(
      { domain: result.body.domain, new_authority: result.body.new_authority, status: result.status },
      result.status === 'requested'
        ? 'reclaim requested on chain'
        : 'reclaim not needed: already the authority',
    );
    reply.code(result.status === 'requested' ? 201 : 200);
    return result.body;
  });

  app.get('/domain', async (request) => {
    const { name } = (request.query ?? {}) as Record<string, unknown>;
    if (typeof name !== 'string' || name.trim() === '') {
      throw new DomaindError('missing_domain', 'pass the domain as ?name=example.org');
    }
    const claim = await lookupAuthority(deps.resolver, name);
    let onChain: MailDomainFacts | null = null;
    let chainError: string | undefined;
    try {
      onChain = await readAuthorization(deps.chain, claim);
    } catch (err) {
      // The DNS answer is what this route is for; a chain outage only hides the extra facts.
      chainError = err instanceof DomaindError ? err.code : 'chain_unavailable';
      deps.logger.warn({ err, domain: claim.domain.ascii }, 'chain read failed during GET /domain');
    }
    return {
      ...claimBody(claim),
      on_chain: onChain ? { ...onChain, matches_record: onChain.authority === claim.authority } : null,
      ...(chainError ? { chain_error: chainError } : {}),
    };
  });
}
