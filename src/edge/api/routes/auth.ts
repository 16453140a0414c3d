// Login (challenge → signed nonce → JWT), step-up challenges, and revoking
// every session of the wallet.
import type { FastifyInstance } from 'fastify';
import { TOKEN_LIFETIME_SECS } from '../auth/session-tokens.ts';
import { decodeSignature, isWalletAddress, verifyWalletSignature } from '../auth/signatures.ts';
import type { ApiContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import { CHALLENGE_SCHEMA, WALLET_SCHEMA } from '../schemas.ts';

interface LoginBody {
  wallet: string;
  signature: string;
}

function assertWallet(wallet: string): void {
  if (!isWalletAddress(wallet)) {
    throw new ApiError(400, 'invalid_wallet', 'wallet must be a base58 public key of 32 bytes');
  }
}

export async function authRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  app.post<{ Body: { wallet: string } }>(
    '/v1/auth/challenge',
    {
      config: {
        doc: {
          summary: 'Start a login: a nonce for the wallet to sign',
          description:
            'The nonce begins with "Sealpost login nonce: "; expires_in (150-300 s) says how long it stays valid. Stores nothing, so requests for a wallet by anyone never cancel its owner\'s pending challenge; everyone asking for one wallet within the same 150 s gets the same nonce, and only that wallet\'s key can sign it.',
          tags: ['auth'],
          errors: [400, 413, 415, 429],
        },
      },
      schema: {
        body: {
          type: 'object',
          required: ['wallet'],
          additionalProperties: false,
          properties: { wallet: WALLET_SCHEMA },
        },
        response: { 200: CHALLENGE_SCHEMA },
      },
    },
    async (request) => {
      assertWallet(request.body.wallet);
      return ctx.challenges.issueLogin(request.body.wallet);
    },
  );

  app.post<{ Body: LoginBody }>(
    '/v1/auth/login',
    {
      config: {
        doc: {
          summary: 'Finish a login: the signed nonce for a session token (JWT, 1 hour)',
          description:
            'signature: base58 ed25519 signature by the wallet over the exact nonce of POST /v1/auth/challenge. Each nonce logs in once.',
          tags: ['auth'],
          errors: [400, 401, 413, 415, 429],
        },
      },
      schema: {
        body: {
          type: 'object',
          required: ['wallet', 'signature'],
          additionalProperties: false,
          properties: {
            wallet: WALLET_SCHEMA,
            signature: { type: 'string', description: 'base58 ed25519 signature (64 bytes)' },
          },
        },
        response: {
          200: {
            type: 'object',
            required: ['token', 'expires_in'],
            additionalProperties: false,
            properties: { token: { type: 'string' }, expires_in: { type: 'integer' } },
          },
        },
      },
    },
    async (request) => {
      const { wallet, signature } = request.body;
      assertWallet(wallet);
      const sig = decodeSignature(signature);
      if (!sig) {
        throw new ApiError(
          400,
          'invalid_signature',
          'signature must be base58 of a 64-byte ed25519 signature',
        );
      }
      const ok = await ctx.challenges.takeLogin(wallet, (nonce) => verifyWalletSignature(wallet, nonce, sig));
      if (!ok) {
        throw new ApiError(
          401,
          'login_failed',
          'no pending login challenge of this wallet matches the signature (expired, used, or signed by another key)',
        );
      }
      const token = await ctx.tokens.issue(wallet, await ctx.settings.sessionEpoch(wallet));
      return { token, expires_in: TOKEN_LIFETIME_SECS };
    },
  );

  app.post(
    '/v1/auth/step-up',
    {
      config: {
        auth: 'jwt',
        doc: {
          summary: 'A step-up challenge for the token wallet',
          description:
            'No body. The nonce begins with "Sealpost step-up nonce: ", is valid for 300 seconds and replaces any earlier one. Sign its exact UTF-8 bytes and send the base58 signature in x-sealpost-step-up with one write.',
          tags: ['auth'],
          errors: [401, 429],
        },
      },
      schema: { response: { 200: CHALLENGE_SCHEMA } },
    },
    async (request) => ctx.challenges.issueStepUp(request.wallet),
  );

  app.post(
    '/v1/auth/revoke-sessions',
    {
      config: {
        auth: 'jwt',
        stepUp: true,
        doc: {
          summary: 'Revoke every session token of the wallet (this one included)',
          tags: ['auth'],
          errors: [400, 401, 403, 404, 428, 429],
          responses: { 204: { description: 'every token issued so far is invalid' } },
        },
      },
    },
    async (request, reply) => {
      const epoch = await ctx.settings.bumpSessionEpoch(request.wallet);
      if (epoch === null)
        throw new ApiError(404, 'account_not_found', 'this wallet has no account on this server');
      await ctx.accountState.changed(request.wallet);
      await ctx.accounts.recordAudit({
        actor: request.wallet,
        action: 'sessions.revoke',
        target: request.wallet,
        outcome: 'success',
      });
      return reply.code(204).send();
    },
  );
}
