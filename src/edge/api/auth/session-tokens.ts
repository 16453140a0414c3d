// Login JWTs: HS256 under the API's signing key, one hour, bound to the
// wallet (`sub`) and to the account's session epoch (`sep`) so revoking all
// sessions invalidates every token issued before. Verification pins the
// algorithm: `none` and any other alg are refused before the signature.
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { ApiError } from '../errors.ts';

export const TOKEN_LIFETIME_SECS = 3600;
const ISSUER = 'sealpost';
const AUDIENCE = 'sealpost-api';
const ALG = 'HS256';

export interface SessionClaims {
  wallet: string;
  epoch: number;
  /** When the token was issued, Unix ms (the `iam` claim; `iat` × 1000 for tokens without it). */
  issuedAtMs: number;
}

/** Verified tokens remembered (by their full text, signature included) to skip repeated HMAC checks. */
const CACHE_MAX = 10_000;

export class SessionTokens {
  private readonly verified = new Map<string, { claims: SessionClaims; expMs: number }>();

  constructor(
    private readonly key: Uint8Array,
    private readonly now: () => number = Date.now,
  ) {
    if (key.length < 32) throw new Error(`JWT signing key must be at least 32 bytes, got ${key.length}`);
  }

  async issue(wallet: string, epoch: number): Promise<string> {
    const nowMs = this.now();
    const iat = Math.floor(nowMs / 1000);
    // `iam`: the issue time in ms, so a deletion mark can tell apart a token
    // issued just before the deletion from a login just after it.
    return new SignJWT({ sep: epoch, iam: nowMs })
      .setProtectedHeader({ alg: ALG, typ: 'JWT' })
      .setSubject(wallet)
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt(iat)
      .setExpirationTime(iat + TOKEN_LIFETIME_SECS)
      .sign(this.key);
  }

  /** Verifies signature, algorithm, issuer, audience and expiry; throws a 401 ApiError. */
  async verify(token: string): Promise<SessionClaims> {
    return this.known(token) ?? this.verifyFully(token);
  }

  /** The claims of a token this process verified before and that has not expired; else undefined. */
  known(token: string): SessionClaims | undefined {
    const known = this.verified.get(token);
    if (known === undefined) return undefined;
    if (known.expMs > this.now()) return known.claims;
    this.verified.delete(token);
    return undefined;
  }

  private async verifyFully(token: string): Promise<SessionClaims> {
    try {
      const { payload } = await jwtVerify(token, this.key, {
        algorithms: [ALG],
        issuer: ISSUER,
        audience: AUDIENCE,
        currentDate: new Date(this.now()),
        requiredClaims: ['sub', 'exp', 'iat', 'sep'],
      });
      if (
        typeof payload.sub !== 'string' ||
        typeof payload.sep !== 'number' ||
        typeof payload.exp !== 'number' ||
        typeof payload.iat !== 'number'
      ) {
        throw new ApiError(401, 'invalid_token', 'token claims are malformed');
      }
      const claims = {
        wallet: payload.sub,
        epoch: payload.sep,
        issuedAtMs: typeof payload.iam === 'number' ? payload.iam : payload.iat * 1000,
      };
      if (this.verified.size >= CACHE_MAX) this.verified.clear();
      this.verified.set(token, { claims: Object.freeze(claims), expMs: payload.exp * 1000 });
      return claims;
    } catch (err) {
      if (err instanceof ApiError) throw err;
      if (err instanceof joseErrors.JWTExpired) {
        throw new ApiError(401, 'token_expired', 'the token has expired; log in again');
      }
      throw new ApiError(401, 'invalid_token', 'the bearer token is not a valid session token');
    }
  }
}
