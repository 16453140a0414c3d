// The account export (GET /v1/account/export) and the admin routes:
// export any account (audited as a read) and delete any account (the sweep).
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Account } from '../../../core/store/accounts-repo.ts';
import { sweepAccount } from '../account-sweep.ts';
import type { ApiContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import { exportDocument } from '../export-document.ts';
import { WALLET_PARAMS } from '../schemas.ts';

const EXPORT_RESPONSE = {
  200: {
    description: 'the export document (docs/export.md), streamed',
    contentType: 'application/json',
    schema: { type: 'object', description: 'sealpost-account-export, version 1' },
  },
};

function streamExport(ctx: ApiContext, reply: FastifyReply, account: Account): FastifyReply {
  return reply
    .type('application/json; charset=utf-8')
    .header('content-disposition', `attachment; filename="sealpost-export-${account.wallet}.json"`)
    .header('cache-control', 'no-store')
    .send(Readable.from(exportDocument(ctx.db, account, ctx.now)));
}

export async function exportRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  app.get(
    '/v1/account/export',
    {
      config: {
        auth: 'jwt',
        doc: {
          summary: 'Everything the server holds for the token wallet, as one JSON document (streamed)',
          tags: ['account'],
          errors: [401, 404, 429],
          responses: EXPORT_RESPONSE,
        },
      },
    },
    async (request, reply) => {
      const account = await ctx.accounts.get(request.wallet);
      if (!account) throw new ApiError(404, 'account_not_found', 'this wallet has no account on this server');
      return streamExport(ctx, reply, account);
    },
  );

  app.get<{ Params: { wallet: string } }>(
    '/v1/admin/accounts/:wallet/export',
    {
      config: {
        auth: 'admin',
        doc: {
          summary: 'Export any account (audited as a read: account.export)',
          tags: ['admin'],
          errors: [400, 401, 404, 429],
          responses: EXPORT_RESPONSE,
        },
      },
      schema: { params: WALLET_PARAMS },
    },
    async (request, reply) => {
      const wallet = request.params.wallet;
      const account = await ctx.accounts.get(wallet);
      await ctx.accounts.recordAudit({
        actor: 'admin',
        action: 'account.export',
        target: wallet,
        outcome: account ? 'success' : 'failure',
        detail: account ? { ip: request.ip } : { reason: 'not_found', ip: request.ip },
      });
      if (!account) throw new ApiError(404, 'account_not_found', 'no account matches this wallet');
      return streamExport(ctx, reply, account);
    },
  );

  app.delete<{ Params: { wallet: string } }>(
    '/v1/admin/accounts/:wallet',
    {
      config: {
        auth: 'admin',
        doc: {
          summary: 'Delete any account: the full sweep of the reference (audited: account.delete)',
          tags: ['admin'],
          errors: [401, 404, 429, 500],
          responses: { 204: { description: 'the account matched and the sweep completed' } },
        },
      },
      schema: {
        params: { type: 'object', required: ['wallet'], properties: { wallet: { type: 'string' } } },
      },
    },
    async (request, reply) => {
      const result = await sweepAccount(ctx.sweep, request.params.wallet, { actor: 'admin' });
      if (!result.found)
        throw new ApiError(404, 'account_not_found', 'no account matches this wallet; nothing was swept');
      return reply.code(204).send();
    },
  );
}
