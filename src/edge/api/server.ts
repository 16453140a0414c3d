// The account API: Fastify under /v1, JSON only. buildApi assembles the app
// from its dependencies (store, Redis, keys, clock, randomness) so tests and
// `sealpost serve` share one code path; startApiServer listens on it.
// Extra route plugins (e.g. GET /v1/admin/dmarc-reports) come in through
// `plugins`; their routes pass the same guard and appear in the OpenAPI
// document. Route options: `config.auth` ('none' | 'jwt' | 'admin'),
// `config.stepUp`, `config.doc` (src/edge/api/context.ts).
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyPluginAsync,
  LogController,
} from 'fastify';
import type { Redis } from 'ioredis';
import type { Config } from '../../core/config/types.ts';
import { CredentialSealer, deriveSubkey, loadCredentialKey } from '../../core/crypto/credential-seal.ts';
import { readAdminTokenFile } from '../../core/keys/admin-token.ts';
import { type Logger, newRequestId } from '../../core/log.ts';
import { type DependencyCheck, Readiness } from '../../core/metrics/health.ts';
import { pipelineChecks } from '../../core/metrics/health-checks.ts';
import { AccountsRepo } from '../../core/store/accounts-repo.ts';
import type { Store } from '../../core/store/open-store.ts';
import { SettingsRepo } from '../../core/store/settings-repo.ts';
import { AccountStateCache } from './account-state-cache.ts';
import { AdminAuth } from './auth/admin-auth.ts';
import { ChallengeStore } from './auth/challenges.ts';
import { SessionTokens } from './auth/session-tokens.ts';
import type { ApiContext, ApiRateLimits } from './context.ts';
import { ApiError, toErrorReply } from './errors.ts';
import { buildOpenApi, type CollectedRoute } from './openapi.ts';
import { RateLimiter } from './rate-limit.ts';
import { requestGuard } from './request-guard.ts';
import { accountRoutes } from './routes/account.ts';
import { authRoutes } from './routes/auth.ts';
import { exportRoutes } from './routes/export.ts';
import { healthRoutes } from './routes/health.ts';
import { pinProviderRoutes } from './routes/pin-provider.ts';
import { staticWebmail } from './static-webmail.ts';

export interface ApiDeps {
  config: Config;
  store: Store;
  redis: Redis;
  logger?: Logger;
  /** Default: read from `[api] credential_key_file`. */
  credentialKey?: Uint8Array;
  /** Default: `[api] jwt_secret_file`, else derived from the credential key. */
  jwtKey?: Uint8Array;
  /** Default: read from `[api] admin_token_file` (null: admin routes refuse everyone). */
  adminToken?: string | null;
  /** The admin token holder a reload updates (serve shares it with its reload); wins over `adminToken`. */
  adminAuth?: AdminAuth;
  /** The rate limits a reload updates; default from `[api]`. */
  rateLimits?: ApiRateLimits;
  now?: () => number;
  randomBytes?: (n: number) => Uint8Array;
  /** Extra route plugins, registered after the built-in routes. */
  plugins?: FastifyPluginAsync[];
  /** What GET /ready checks; default: Redis, the store, the chain RPC and the operator pin. */
  readinessChecks?: DependencyCheck[];
}

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
    version?: string;
  };
  return pkg.version ?? '0.0.0';
}

function jwtKeyFrom(config: Config, credentialKey: Uint8Array): Uint8Array {
  const file = config.api.jwt_secret_file;
  if (file === undefined) return deriveSubkey(credentialKey, 'jwt');
  const key = new Uint8Array(readFileSync(file));
  if (key.length < 32)
    throw new Error(`[api] jwt_secret_file ${file} is ${key.length} bytes; expected at least 32`);
  return key;
}

// JSON.parse keeps "__proto__" as an own key; refuse it outright so no
// handler ever spreads such an object.
function parseJson(text: string): unknown {
  return JSON.parse(text, (key, value) => {
    if (key === '__proto__') throw new SyntaxError('forbidden key');
    return value;
  });
}

export async function buildApi(deps: ApiDeps): Promise<FastifyInstance> {
  const { config } = deps;
  const now = deps.now ?? Date.now;
  const credentialKey = deps.credentialKey ?? loadCredentialKey(config.api.credential_key_file);
  const db = deps.store.db;
  const jwtKey = deps.jwtKey ?? jwtKeyFrom(config, credentialKey);
  const accounts = new AccountsRepo(db, { now });
  const settings = new SettingsRepo(db, { now });
  const accountState = new AccountStateCache({
    redis: deps.redis,
    prefix: config.redis.prefix,
    accounts,
    settings,
  });
  const ctx: ApiContext = {
    config,
    db,
    redis: deps.redis,
    accounts,
    settings,
    sealer: new CredentialSealer(credentialKey),
    tokens: new SessionTokens(jwtKey, now),
    challenges: new ChallengeStore({
      redis: deps.redis,
      prefix: config.redis.prefix,
      secret: jwtKey,
      now,
      randomBytes: deps.randomBytes,
    }),
    adminAuth:
      deps.adminAuth ??
      new AdminAuth(
        deps.adminToken !== undefined ? deps.adminToken : readAdminTokenFile(config.api.admin_token_file),
      ),
    limiter: new RateLimiter(deps.redis, config.redis.prefix, now),
    rateLimits: deps.rateLimits ?? {
      ipPerMin: config.api.rate_limit_ip_per_min,
      walletPerMin: config.api.rate_limit_wallet_per_min,
    },
    accountState,
    sweep: {
      db,
      redis: deps.redis,
      prefix: config.redis.prefix,
      localDomains: config.smtp.local_domains,
      now,
    },
    now,
  };

  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger | undefined,
    logController: new LogController({
      requestIdLogLabel: 'reqid',
      disableRequestLogging: deps.logger === undefined,
    }),
    genReqId: () => newRequestId(),
    bodyLimit: config.api.max_body_bytes,
    exposeHeadRoutes: false,
    // request.ip: the X-Forwarded-For client only behind a configured proxy.
    trustProxy: config.api.trusted_proxies.length > 0 ? config.api.trusted_proxies : false,
    // Validation must reject, never repair: no coercion, no silently dropped fields.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false } },
  });

  const routes: CollectedRoute[] = [];
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      if (method === 'HEAD' || route.url === '*' || route.url.endsWith('*')) continue;
      routes.push({
        method,
        url: route.url,
        schema: route.schema,
        auth: route.config?.auth ?? 'none',
        stepUp: route.config?.stepUp ?? false,
        doc: route.config?.doc,
      });
    }
  });

  app.decorateRequest('wallet', '');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, parseJson(text));
    } catch {
      done(new ApiError(400, 'bad_json', 'request body is not valid JSON'), undefined);
    }
  });
  app.addHook('onRequest', requestGuard(ctx));
  accountState.start();
  app.addHook('onClose', async () => accountState.close());
  app.setErrorHandler((err, request, reply) => {
    const out = toErrorReply(err);
    if (out.status >= 500) request.log.error({ err }, 'request failed');
    return reply.code(out.status).headers(out.headers).send(out.body);
  });
  app.setNotFoundHandler((request, reply) =>
    reply
      .code(404)
      .send({ error: 'not_found', message: `no route ${request.method} ${request.url.split('?')[0]}` }),
  );

  await healthRoutes(
    app,
    new Readiness(deps.readinessChecks ?? pipelineChecks({ config, redis: deps.redis, db: deps.store.db })),
  );
  await authRoutes(app, ctx);
  await accountRoutes(app, ctx);
  await pinProviderRoutes(app, ctx);
  await exportRoutes(app, ctx);
  for (const plugin of deps.plugins ?? []) await app.register(plugin);
  await staticWebmail(app, config);

  let openapi: unknown = null;
  app.get(
    '/v1/openapi.json',
    {
      config: {
        doc: { summary: 'This OpenAPI 3.1 document', tags: ['meta'], errors: [429] },
      },
    },
    async () => {
      openapi ??= buildOpenApi(routes, { version: packageVersion(), serverUrl: config.api.public_url });
      return openapi;
    },
  );
  await app.ready();
  return app;
}

export interface StartApiOptions {
  config: Config;
  host?: string;
  port?: number;
  store: Store;
  redis: Redis;
  logger: Logger;
  plugins?: FastifyPluginAsync[];
  readinessChecks?: DependencyCheck[];
  adminAuth?: AdminAuth;
  rateLimits?: ApiRateLimits;
}

export interface ApiServer {
  /** `http://host:port` actually bound (port 0 resolved). */
  url: string;
  app: FastifyInstance;
  close(): Promise<void>;
}

/** Builds the API and listens; the caller owns (and closes) store, Redis and logger. */
export async function startApiServer(opts: StartApiOptions): Promise<ApiServer> {
  const app = await buildApi({
    config: opts.config,
    store: opts.store,
    redis: opts.redis,
    logger: opts.logger,
    plugins: opts.plugins,
    readinessChecks: opts.readinessChecks,
    adminAuth: opts.adminAuth,
    rateLimits: opts.rateLimits,
  });
  const host = opts.host ?? opts.config.api.host;
  await app.listen({ host, port: opts.port ?? opts.config.api.port });
  const address = app.server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return { url: `http://${shown}:${address.port}`, app, close: () => app.close() };
}
