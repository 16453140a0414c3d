// PUT/GET/DELETE /v1/account/pin-provider, to the letter of the reference:
// the body is validated by src/contracts/pin-provider.ts (its messages are the
// binding 400 texts; unknown kind → 422), credentials are sealed under the
// credential key with only the kind in the clear, and GET never returns
// credentials. Writes need a step-up proof (checked by the request guard
// before anything else, so every answer here comes after verification).
import type { FastifyInstance } from 'fastify';
import { parsePinProvider } from '../../../contracts/pin-provider.ts';
import { credentialAad } from '../../../core/crypto/credential-seal.ts';
import { AccountNotFoundError } from '../../../core/store/accounts-repo.ts';
import { PIN_PROVIDER_PURPOSE } from '../../../mail/provider-credentials.ts';
import type { ApiContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import { PIN_PROVIDER_STATUS_SCHEMA } from '../schemas.ts';

const url = { type: 'string', format: 'uri' } as const;
const nonEmpty = { type: 'string', minLength: 1 } as const;

/** Documentation of the body; validation is parsePinProvider's. */
const PIN_PROVIDER_BODY = {
  oneOf: [
    {
      type: 'object',
      title: 'hosted_jwt',
      required: ['kind', 'jwt', 'gateway'],
      additionalProperties: false,
      properties: {
        kind: { const: 'hosted_jwt' },
        jwt: { ...nonEmpty, description: 'API token of the hosted pinning service' },
        gateway: { ...url, description: 'dedicated gateway URL (https)' },
        api_url: { ...url, description: "API base URL; default the service's public API" },
      },
    },
    {
      type: 'object',
      title: 's3_bucket',
      required: ['kind', 'access_key', 'secret_key', 'bucket'],
      additionalProperties: false,
      properties: {
        kind: { const: 's3_bucket' },
        access_key: nonEmpty,
        secret_key: nonEmpty,
        bucket: { ...nonEmpty, description: 'pinning bucket name' },
        endpoint: { ...url, description: "default: the storage service's standard S3 endpoint" },
      },
    },
    {
      type: 'object',
      title: 'remote',
      required: ['kind'],
      additionalProperties: false,
      properties: {
        kind: { const: 'remote' },
        endpoint: { ...url, description: 'pin daemon URL; default http://127.0.0.1:8182' },
        auth_token: { ...nonEmpty, description: "must match the daemon's auth_token" },
      },
    },
  ],
};

export async function pinProviderRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  app.get(
    '/v1/account/pin-provider',
    {
      config: {
        auth: 'jwt',
        doc: {
          summary: 'Whether a personal pin provider is configured, and its kind (never credentials)',
          description: 'A wallet without an account reads as not configured.',
          tags: ['pin-provider'],
          errors: [401, 429],
        },
      },
      schema: { response: { 200: PIN_PROVIDER_STATUS_SCHEMA } },
    },
    async (request) => ctx.accountState.pinProvider(request.wallet),
  );

  app.put(
    '/v1/account/pin-provider',
    {
      config: {
        auth: 'jwt',
        stepUp: true,
        doc: {
          summary: 'Set or replace (rotate) the personal pin provider',
          description:
            'Body: one of the three kind-tagged objects. 400 names a missing field as "<kind>.<field> must not be empty"; 422 for an unknown kind.',
          tags: ['pin-provider'],
          errors: [400, 401, 403, 404, 413, 415, 422, 428, 429],
          body: PIN_PROVIDER_BODY,
          responses: { 204: { description: 'configured; deliveries from now on also pin there' } },
        },
      },
    },
    async (request, reply) => {
      const parsed = parsePinProvider(request.body);
      if (!parsed.ok) {
        if (parsed.reason === 'unknown_kind') throw new ApiError(422, 'unknown_kind', parsed.message);
        throw new ApiError(400, 'invalid_pin_provider', parsed.message);
      }
      const wallet = request.wallet;
      const sealedCredentials = ctx.sealer.seal(
        JSON.stringify(parsed.value),
        credentialAad(PIN_PROVIDER_PURPOSE, wallet),
      );
      try {
        await ctx.accounts.setPinProvider(wallet, { kind: parsed.value.kind, sealedCredentials });
      } catch (err) {
        if (err instanceof AccountNotFoundError) {
          throw new ApiError(404, 'account_not_found', 'this wallet has no account on this server');
        }
        throw err;
      }
      await ctx.accountState.changed(wallet);
      await ctx.accounts.recordAudit({
        actor: wallet,
        action: 'pin_provider.set',
        target: wallet,
        outcome: 'success',
        detail: { kind: parsed.value.kind },
      });
      return reply.code(204).send();
    },
  );

  app.delete(
    '/v1/account/pin-provider',
    {
      config: {
        auth: 'jwt',
        stepUp: true,
        doc: {
          summary: 'Remove the personal pin provider (204 also when none was set)',
          description: 'Copies already pinned at the provider stay there.',
          tags: ['pin-provider'],
          errors: [400, 401, 403, 404, 428, 429],
          responses: { 204: { description: 'not configured (any more)' } },
        },
      },
    },
    async (request, reply) => {
      const wallet = request.wallet;
      if (!(await ctx.accounts.get(wallet))) {
        throw new ApiError(404, 'account_not_found', 'this wallet has no account on this server');
      }
      const removed = await ctx.accounts.deletePinProvider(wallet);
      if (removed) {
        await ctx.accountState.changed(wallet);
        await ctx.accounts.recordAudit({
          actor: wallet,
          action: 'pin_provider.delete',
          target: wallet,
          outcome: 'success',
        });
      }
      return reply.code(204).send();
    },
  );
}
