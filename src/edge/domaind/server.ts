// `sealpost domaind`: the domain authorization service (POST/GET /domain,
// POST /domain/reclaim with a DNSSEC proof),
// the MTA-STS policy and the autoconfig/autodiscover documents, plus
// GET /health (alive) and GET /ready: the chain RPC's state (503 when it is
// down) and the start-up check of the local domains on chain.

import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Commitment, type Connection, Keypair, PublicKey } from '@solana/web3.js';
import Fastify, { type FastifyError, type FastifyInstance, LogController } from 'fastify';
import { priorityFeePolicyOf } from '../../../chain/client/compute-budget.ts';
import { createConnection } from '../../core/chain-rpc.ts';
import type { Config } from '../../core/config/index.ts';
import { normalizeDomainName } from '../../core/dns/name.ts';
import { createDnsResolver, type DnsResolver } from '../../core/dns/resolver.ts';
import { readKeypairFile } from '../../core/keys/keypair-file.ts';
import { createLogger, type Logger } from '../../core/log.ts';
import { HEALTH_BODY, HEALTH_PATH, READY_PATH, Readiness, readyStatus } from '../../core/metrics/health.ts';
import { chainRpcCheck } from '../../core/metrics/health-checks.ts';
import { documentRoutes } from './document-routes.ts';
import { checkLocalDomains, type DomainCheckResult, domainCheckWarning } from './domain-check.ts';
import { domainRoutes } from './domain-routes.ts';
import { DomaindError } from './errors.ts';
import { mtaStsPolicyInput, renderMtaStsPolicy } from './mta-sts.ts';

/** Request bodies here are a domain name or a small XML request. */
const BODY_LIMIT = 64 * 1024;

export interface DomaindDeps {
  config: Config;
  /** Resolver for `_solana.authority` TXT lookups; default `[domaind] resolver`. */
  resolver?: DnsResolver;
  /** Chain RPC; default `[chain] rpc_url`. */
  connection?: Connection;
  /** Default: read from `[chain] delegate_key_file`; null when not configured. */
  delegate?: Keypair | null;
  /** Default: the public key of `[chain] authority_key_file`; null when not configured. */
  authority?: PublicKey | null;
  logger?: Logger;
}

export interface HealthState {
  status: 'starting' | 'ok' | 'warn' | 'unchecked';
  authority: string | null;
  delegate: string | null;
  checked_at: string | null;
  domains: DomainCheckResult[];
  warnings: string[];
}

export interface Domaind {
  app: FastifyInstance;
  health: HealthState;
  /** Runs the local-domain check now and updates `local_domains` of GET /ready. */
  runStartupCheck(): Promise<HealthState>;
}

function keypairFromFile(path: string): Keypair {
  return Keypair.fromSecretKey(readKeypairFile(path).secretKey);
}

export async function buildDomaind(deps: DomaindDeps): Promise<Domaind> {
  const { config } = deps;
  const logger =
    deps.logger ?? createLogger({ name: 'domaind', level: config.log.level, format: config.log.format });
  const resolver = deps.resolver ?? createDnsResolver({ servers: [config.domaind.resolver] });
  // Every chain read has a deadline: a node that goes away mid-answer never leaves one pending.
  const connection =
    deps.connection ??
    createConnection(config.chain.rpc_url, {
      commitment: config.chain.commitment,
      maxRps: config.chain.max_rps,
      maxWaitMs: config.chain.rpc_max_wait_secs * 1000,
      log: logger.child({ component: 'chain-rpc' }),
    });
  const delegate =
    deps.delegate !== undefined
      ? deps.delegate
      : config.chain.delegate_key_file
        ? keypairFromFile(config.chain.delegate_key_file)
        : null;
  const authority =
    deps.authority !== undefined
      ? deps.authority
      : config.chain.authority_key_file
        ? new PublicKey(readKeypairFile(config.chain.authority_key_file).publicKey)
        : null;
  const localDomains = config.smtp.local_domains.map((d) => normalizeDomainName(d).ascii);
  const chain = {
    connection,
    programId: config.chain.program_id,
    commitment: config.chain.commitment as Commitment,
    priorityFee: priorityFeePolicyOf(config.chain),
  };

  const tls =
    config.domaind.tls_cert_file && config.domaind.tls_key_file
      ? { cert: readFileSync(config.domaind.tls_cert_file), key: readFileSync(config.domaind.tls_key_file) }
      : null;
  // The https variant has a different server type; the routes do not care.
  const options = {
    loggerInstance: logger,
    bodyLimit: BODY_LIMIT,
    logController: new LogController({ requestIdLogLabel: 'reqid' }),
  };
  const app = (tls ? Fastify({ ...options, https: tls }) : Fastify(options)) as unknown as FastifyInstance;

  for (const type of ['text/xml', 'application/xml']) {
    app.addContentTypeParser(type, { parseAs: 'string' }, (_req, body, done) => done(null, body));
  }
  // `curl --data example.org` sends the bare name as a form: take it as the name, or a `domain=` field.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    const text = String(body);
    const field = /^domain=/.test(text) ? new URLSearchParams(text).get('domain') : null;
    done(null, field ?? text);
  });

  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (err instanceof DomaindError) return reply.code(err.status).send(err.toBody());
    const status = err.statusCode ?? 500;
    if (status === 415) {
      return reply.code(415).send({
        error: 'unsupported_media_type',
        message: `content type ${JSON.stringify(request.headers['content-type'] ?? '')} is not accepted here; use text/plain or application/json (XML for autodiscover)`,
      });
    }
    if (status === 413) {
      return reply
        .code(413)
        .send({ error: 'body_too_large', message: `request bodies are limited to ${BODY_LIMIT} bytes` });
    }
    if (status < 500) return reply.code(status).send({ error: 'bad_request', message: err.message });
    request.log.error({ err }, 'unhandled error');
    return reply.code(500).send({ error: 'internal', message: 'internal error; see the service log' });
  });
  app.setNotFoundHandler((request, reply) =>
    reply
      .code(404)
      .send({ error: 'not_found', message: `no route for ${request.method} ${request.url.split('?')[0]}` }),
  );

  const health: HealthState = {
    status: authority ? 'starting' : 'unchecked',
    authority: authority?.toBase58() ?? null,
    delegate: delegate?.publicKey.toBase58() ?? null,
    checked_at: null,
    domains: [],
    warnings: authority
      ? []
      : ['[chain] authority_key_file is not configured; local domains are not checked on chain'],
  };

  // Each run reads the chain afresh; a run that started before another one
  // finished last (the start-up check overtaken by a POST /domain) is dropped.
  let runs = 0;
  const runStartupCheck = async (): Promise<HealthState> => {
    if (!authority) return health;
    const run = ++runs;
    try {
      const results = await checkLocalDomains({
        connection,
        programId: config.chain.program_id,
        domains: localDomains,
        authority,
      });
      if (run !== runs) return health;
      const warnings = results.flatMap((r) => domainCheckWarning(r, authority.toBase58()) ?? []);
      // Logged when new: a periodic re-read of a domain still missing says nothing again.
      const known = new Set(health.warnings);
      for (const w of warnings) if (!known.has(w)) logger.warn(w);
      Object.assign(health, {
        status: warnings.length > 0 ? 'warn' : 'ok',
        domains: results,
        warnings,
        checked_at: new Date().toISOString(),
      });
    } catch (err) {
      if (run !== runs) return health;
      const warning = `could not read the local domains from the chain: ${(err as Error).message}`;
      if (!health.warnings.includes(warning)) logger.warn({ err }, warning);
      Object.assign(health, { status: 'warn', warnings: [warning], checked_at: new Date().toISOString() });
    }
    return health;
  };

  await app.register(async (scope) =>
    domainRoutes(scope, {
      resolver,
      chain,
      delegate,
      logger,
      // A local domain this service just authorized (or found authorized) is read back for GET /ready.
      onAuthorized: async (domain) => {
        if (localDomains.includes(domain)) await runStartupCheck();
      },
    }),
  );
  await app.register(async (scope) =>
    documentRoutes(scope, {
      localDomains,
      mailHosts: config.mail_hosts,
      mtaStsPolicy: renderMtaStsPolicy(mtaStsPolicyInput(config)),
    }),
  );
  // Probes: no per-request info lines. The local-domain check is information
  // (a domain not yet authorized is what this service is for), not readiness.
  const readiness = new Readiness([chainRpcCheck(connection.rpcEndpoint)]);
  app.get(HEALTH_PATH, { logLevel: 'warn' }, async () => HEALTH_BODY);
  app.get(READY_PATH, { logLevel: 'warn' }, async (_request, reply) => {
    const report = await readiness.report();
    return reply.code(readyStatus(report)).send({ ...report, local_domains: health });
  });

  return { app, health, runStartupCheck };
}

export interface StartDomaindOptions extends DomaindDeps {
  host?: string;
  port?: number;
  /** While a local domain is not ok on chain, it is read again this often (default 60 s; 0: never). */
  recheckMs?: number;
}

export const DEFAULT_RECHECK_MS = 60_000;

export interface RunningDomaind extends Domaind {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Listens (port 0 picks a free one) and starts the local-domain check in the background. */
export async function startDomaind(opts: StartDomaindOptions): Promise<RunningDomaind> {
  const d = await buildDomaind(opts);
  const host = opts.host ?? opts.config.domaind.host;
  await d.app.listen({ host, port: opts.port ?? opts.config.domaind.port });
  const address = d.app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const scheme = opts.config.domaind.tls_cert_file ? 'https' : 'http';
  const checking = d.runStartupCheck();
  // A domain authorized elsewhere (another domaind, `sealpost dev`, a reclaim) shows up in GET /ready too.
  const recheckMs = opts.recheckMs ?? DEFAULT_RECHECK_MS;
  const recheck =
    recheckMs > 0
      ? setInterval(() => {
          if (d.health.status === 'warn') d.runStartupCheck().catch(() => {});
        }, recheckMs).unref()
      : null;
  return {
    ...d,
    url: `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    async close() {
      if (recheck) clearInterval(recheck);
      // A check still reading the chain is waited for briefly, never without end.
      await Promise.race([checking.catch(() => {}), sleep(2000, undefined, { ref: false })]);
      await d.app.close();
    },
  };
}
