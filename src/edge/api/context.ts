// What every route module receives, plus the per-route options that drive
// authentication, step-up and the OpenAPI document.
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import type { Config } from '../../core/config/types.ts';
import type { CredentialSealer } from '../../core/crypto/credential-seal.ts';
import type { AccountsRepo } from '../../core/store/accounts-repo.ts';
import type { SettingsRepo } from '../../core/store/settings-repo.ts';
import type { Database } from '../../core/store/types.ts';
import type { AccountStateCache } from './account-state-cache.ts';
import type { SweepDeps } from './account-sweep.ts';
import type { AdminAuth } from './auth/admin-auth.ts';
import type { ChallengeStore } from './auth/challenges.ts';
import type { SessionTokens } from './auth/session-tokens.ts';
import type { RateLimiter } from './rate-limit.ts';

export interface ApiContext {
  config: Config;
  db: Kysely<Database>;
  redis: Redis;
  accounts: AccountsRepo;
  settings: SettingsRepo;
  sealer: CredentialSealer;
  tokens: SessionTokens;
  challenges: ChallengeStore;
  adminAuth: AdminAuth;
  limiter: RateLimiter;
  /** `[api] rate_limit_ip_per_min` / `rate_limit_wallet_per_min`, read per request (a reload replaces them). */
  rateLimits: ApiRateLimits;
  /** Session state and pin-provider status per wallet, invalidated across processes. */
  accountState: AccountStateCache;
  sweep: SweepDeps;
  now: () => number;
}

export interface ApiRateLimits {
  ipPerMin: number;
  walletPerMin: number;
}

/** `jwt`: a wallet's login token; `admin`: the admin bearer token; `none`: anonymous. */
export type AuthMode = 'none' | 'jwt' | 'admin';

export interface RouteDoc {
  summary: string;
  description?: string;
  tags: string[];
  /** Error statuses the route can answer (documented with the Error schema). */
  errors: number[];
  /** A request body schema that is documented but validated by the handler itself. */
  body?: Record<string, unknown>;
  /** Responses not described by the route's response schema, e.g. 204 or a stream. */
  responses?: Record<number, { description: string; contentType?: string; schema?: Record<string, unknown> }>;
}

export const STEP_UP_HEADER = 'x-sealpost-step-up';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthMode;
    /** Needs a fresh step-up proof in the x-sealpost-step-up header. */
    stepUp?: boolean;
    /** A health probe (/health, /ready): skips the guard entirely (no auth, no rate windows, no Redis). */
    probe?: boolean;
    doc?: RouteDoc;
  }
  interface FastifyRequest {
    /** The token's wallet on `jwt` routes ('' elsewhere). */
    wallet: string;
  }
}
