// The one onRequest hook every route passes through, in this order:
//   1. the session token is verified (not yet answered, so a bad token still
//      counts against the IP);
//   2. rate windows: per client IP always, per wallet once the token is good;
//   3. admin token, or the token's failure (401) and its session epoch;
//   4. on step-up routes, the proof. It runs before the body is read, so
//      every answer after it (including 400/413/415 for the body, 404 for a
//      missing account) comes after verification and the challenge is spent.
//      Only a proof that is not base58 of 64 bytes leaves it intact (400).
import type { FastifyRequest } from 'fastify';
import type { SessionState } from './account-state-cache.ts';
import { STEP_UP_NONCE_PREFIX } from './auth/challenges.ts';
import type { SessionClaims } from './auth/session-tokens.ts';
import { decodeSignature, verifyWalletSignature } from './auth/signatures.ts';
import { type ApiContext, STEP_UP_HEADER } from './context.ts';
import { ApiError, StepUpRequiredError } from './errors.ts';
import type { RateCheck } from './rate-limit.ts';

function bearer(request: FastifyRequest): string {
  const match = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? '');
  if (!match?.[1])
    throw new ApiError(401, 'auth_required', 'send Authorization: Bearer <token> from POST /v1/auth/login');
  return match[1];
}

async function checkStepUp(ctx: ApiContext, request: FastifyRequest): Promise<void> {
  const header = request.headers[STEP_UP_HEADER];
  if (header === undefined || header === '') throw new StepUpRequiredError();
  const signature = typeof header === 'string' ? decodeSignature(header) : null;
  if (!signature) {
    throw new ApiError(
      400,
      'invalid_step_up_proof',
      `${STEP_UP_HEADER} must be one base58 ed25519 signature (64 bytes); the challenge is still valid`,
    );
  }
  const nonce = await ctx.challenges.takeStepUp(request.wallet);
  if (nonce === null) throw new StepUpRequiredError();
  // Spent from here on, whatever the answer. The prefix is checked before
  // the signature so a login nonce can never stand in for a step-up nonce.
  if (!nonce.startsWith(STEP_UP_NONCE_PREFIX) || !verifyWalletSignature(request.wallet, nonce, signature)) {
    throw new ApiError(
      403,
      'step_up_failed',
      "the proof is not the token wallet's signature over the exact step-up nonce; the challenge is spent, request a new one",
    );
  }
}

export function requestGuard(ctx: ApiContext) {
  return async function guard(request: FastifyRequest): Promise<void> {
    const { ipPerMin: ipLimit, walletPerMin: walletLimit } = ctx.rateLimits;
    const config = request.routeOptions.config;
    // Health probes must answer while Redis is down and whatever a client's rate window says.
    if (config.probe) return;
    const auth = config.auth ?? 'none';
    let claims: SessionClaims | null = null;
    let authError: unknown = null;
    if (auth === 'jwt') {
      try {
        const token = bearer(request);
        claims = ctx.tokens.known(token) ?? (await ctx.tokens.verify(token));
      } catch (err) {
        authError = err;
      }
    }
    const checks: RateCheck[] = [{ scope: 'ip', subject: request.ip, bucket: 'api', limit: ipLimit }];
    if (claims) checks.push({ scope: 'wallet', subject: claims.wallet, bucket: 'api', limit: walletLimit });
    // Rate windows (leased, mostly in process: undefined when no round trip was needed)
    // and the session state (cached) are independent.
    const leasing = ctx.limiter.hit(checks);
    const session = claims ? ctx.accountState.session(claims.wallet) : null;
    // Both awaited together, so neither is left to reject unobserved.
    if (leasing) await Promise.all([leasing, session]);

    if (auth === 'admin') ctx.adminAuth.check(request.headers.authorization);
    if (auth === 'jwt') {
      if (!claims) throw authError;
      const state = await (session as Promise<SessionState>);
      if (claims.epoch !== state.epoch) {
        throw new ApiError(401, 'session_revoked', 'this session was revoked; log in again');
      }
      if (state.deletedAt !== null && claims.issuedAtMs <= state.deletedAt) {
        throw new ApiError(401, 'session_revoked', 'the account of this session was deleted; log in again');
      }
      request.wallet = claims.wallet;
      if (config.stepUp) await checkStepUp(ctx, request);
    }
  };
}
