// The wallet's own account: create (open registration), view, settings,
// mail password (step-up), delete (step-up, the admin sweep), and the
// anonymous "away now?" answer.
import type { FastifyInstance } from 'fastify';
import {
  MAIL_PASSWORD_MAX,
  MAIL_PASSWORD_MIN,
  MailPasswordMismatchError,
  mailPasswordProblem,
  setMailPassword,
} from '../../../mail/reader-keys/mail-password.ts';
import { sweepAccount } from '../account-sweep.ts';
import { isWalletAddress } from '../auth/signatures.ts';
import type { ApiContext } from '../context.ts';
import {
  canonicalTimeZone,
  DND_SCHEDULE_SCHEMA,
  type DndSchedule,
  dndScheduleProblem,
  isAway,
} from '../dnd-schedule.ts';
import { ApiError } from '../errors.ts';
import { accountFacts } from '../export-document.ts';
import { PIN_PROVIDER_STATUS_SCHEMA, WALLET_PARAMS } from '../schemas.ts';

const noAccount = () => new ApiError(404, 'account_not_found', 'this wallet has no account on this server');

const ACCOUNT_VIEW_SCHEMA = {
  type: 'object',
  description: 'The account facts of the export document, with the away schedule and quota usage.',
  required: ['account', 'away_schedule', 'quota'],
  properties: {
    account: {
      type: 'object',
      additionalProperties: false,
      required: ['wallet', 'created_at', 'source', 'pin_provider'],
      properties: {
        wallet: { type: 'string' },
        created_at: { type: 'string', format: 'date-time' },
        updated_at: { type: 'string', format: 'date-time' },
        source: { type: 'string', enum: ['self', 'admin', 'delivery'] },
        timezone: { type: ['string', 'null'] },
        expose_dnd_schedule: { type: 'boolean' },
        mail_password_set: { type: 'boolean' },
        disabled_at: { type: ['string', 'null'], format: 'date-time' },
        pop3_dele_closes_on_chain: { type: 'boolean' },
        pin_provider: PIN_PROVIDER_STATUS_SCHEMA,
      },
    },
    away_schedule: { anyOf: [DND_SCHEDULE_SCHEMA, { type: 'null' }] },
    quota: {
      type: 'object',
      required: ['messages', 'bytes'],
      additionalProperties: false,
      properties: { messages: { type: 'integer' }, bytes: { type: 'integer' } },
    },
  },
} as const;

interface SettingsBody {
  timezone?: string | null;
  expose_dnd_schedule?: boolean;
  pop3_dele_closes_on_chain?: boolean;
  dnd_schedule?: DndSchedule | null;
}

export async function accountRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const view = async (wallet: string) => {
    const account = await ctx.accounts.get(wallet);
    if (!account) throw noAccount();
    return accountFacts(ctx.db, account);
  };

  app.post(
    '/v1/account',
    {
      config: {
        auth: 'jwt',
        doc: {
          summary: 'Create the account of the token wallet (open registration)',
          description:
            'No body. 201 when created, 200 when it already existed. 403 when [api] open_registration is false.',
          tags: ['account'],
          errors: [401, 403, 429],
        },
      },
      schema: { response: { 200: ACCOUNT_VIEW_SCHEMA, 201: ACCOUNT_VIEW_SCHEMA } },
    },
    async (request, reply) => {
      const wallet = request.wallet;
      if (!(await ctx.accounts.get(wallet))) {
        if (!ctx.config.api.open_registration) {
          throw new ApiError(
            403,
            'registration_closed',
            'this server creates accounts only through its operator',
          );
        }
        const { created } = await ctx.accounts.create(wallet, { source: 'self' });
        if (created) {
          await ctx.accounts.recordAudit({
            actor: wallet,
            action: 'account.create',
            target: wallet,
            outcome: 'success',
          });
          return reply.code(201).send(await view(wallet));
        }
      }
      return view(wallet);
    },
  );

  app.get(
    '/v1/account',
    {
      config: {
        auth: 'jwt',
        doc: { summary: 'The account of the token wallet', tags: ['account'], errors: [401, 404, 429] },
      },
      schema: { response: { 200: ACCOUNT_VIEW_SCHEMA } },
    },
    async (request) => view(request.wallet),
  );

  app.delete(
    '/v1/account',
    {
      config: {
        auth: 'jwt',
        stepUp: true,
        doc: {
          summary: 'Delete the account of the token wallet (the same sweep as the admin delete)',
          tags: ['account'],
          errors: [400, 401, 403, 404, 428, 429],
          responses: { 204: { description: 'account and its data deleted' } },
        },
      },
    },
    async (request, reply) => {
      const result = await sweepAccount(ctx.sweep, request.wallet, { actor: request.wallet });
      if (!result.found) throw noAccount();
      return reply.code(204).send();
    },
  );

  app.patch<{ Body: SettingsBody }>(
    '/v1/account/settings',
    {
      config: {
        auth: 'jwt',
        doc: {
          summary:
            'Change timezone, do-not-disturb schedule, whether the schedule is public, and what a POP3 DELE does',
          description:
            'Fields left out stay as they are; null clears timezone or schedule. pop3_dele_closes_on_chain (default false): ' +
            "false means a POP3 DELE removes only the copy in this server's store; true means it also releases the operator pin " +
            'and closes the Email account on chain, so the message leaves the trustless webmail too.',
          tags: ['account'],
          errors: [400, 401, 404, 413, 415, 429],
        },
      },
      schema: {
        body: {
          type: 'object',
          additionalProperties: false,
          minProperties: 1,
          properties: {
            timezone: { type: ['string', 'null'], description: 'IANA name, e.g. Europe/Berlin' },
            expose_dnd_schedule: { type: 'boolean' },
            dnd_schedule: { anyOf: [DND_SCHEDULE_SCHEMA, { type: 'null' }] },
            pop3_dele_closes_on_chain: {
              type: 'boolean',
              description: 'true: a POP3 DELE also closes the Email account on chain (default false)',
            },
          },
        },
        response: { 200: ACCOUNT_VIEW_SCHEMA },
      },
    },
    async (request) => {
      const body = request.body;
      let timezone = body.timezone;
      if (typeof timezone === 'string') {
        const canonical = canonicalTimeZone(timezone);
        if (!canonical) {
          throw new ApiError(
            400,
            'invalid_timezone',
            `timezone ${JSON.stringify(timezone)} is not an IANA time zone name`,
          );
        }
        timezone = canonical;
      }
      if (body.dnd_schedule) {
        const problem = dndScheduleProblem(body.dnd_schedule);
        if (problem) throw new ApiError(400, 'invalid_dnd_schedule', problem);
      }
      const ok = await ctx.settings.applySettings(request.wallet, {
        timezone,
        exposeDndSchedule: body.expose_dnd_schedule,
        dndSchedule: body.dnd_schedule,
        pop3DeleClosesOnChain: body.pop3_dele_closes_on_chain,
      });
      if (!ok) throw noAccount();
      return view(request.wallet);
    },
  );

  app.put<{ Body: { password: string; old_password?: string } }>(
    '/v1/account/mail-password',
    {
      config: {
        auth: 'jwt',
        stepUp: true,
        doc: {
          summary: 'Set the password for IMAP, POP3 and submission',
          tags: ['account'],
          errors: [400, 401, 403, 404, 413, 415, 428, 429],
          responses: { 204: { description: 'password set' } },
        },
      },
      schema: {
        body: {
          type: 'object',
          required: ['password'],
          additionalProperties: false,
          properties: {
            password: {
              type: 'string',
              description: `${MAIL_PASSWORD_MIN}-${MAIL_PASSWORD_MAX} characters, no control characters`,
            },
            old_password: {
              type: 'string',
              description:
                'The current password: re-locks the IMAP/POP reader key so older mail stays readable there. Without it the reader key is replaced (docs/imap-pop3.md); a wrong one answers 403.',
            },
          },
        },
      },
    },
    async (request, reply) => {
      const problem = mailPasswordProblem(request.body.password);
      if (problem) throw new ApiError(400, 'invalid_password', problem);
      let set: boolean;
      try {
        set = await setMailPassword(ctx, request.wallet, request.body.password, {
          oldPassword: request.body.old_password,
        });
      } catch (err) {
        if (err instanceof MailPasswordMismatchError)
          throw new ApiError(403, 'old_password_mismatch', err.message);
        throw err;
      }
      if (!set) throw noAccount();
      await ctx.accounts.recordAudit({
        actor: request.wallet,
        action: 'mail_password.set',
        target: request.wallet,
        outcome: 'success',
      });
      return reply.code(204).send();
    },
  );

  app.get<{ Params: { wallet: string } }>(
    '/v1/away/:wallet',
    {
      config: {
        doc: {
          summary: 'Whether the wallet is in a do-not-disturb window now (anonymous)',
          description:
            'Only {away} unless the owner set expose_dnd_schedule; then also the timezone and schedule. A wallet without an account is never away.',
          tags: ['account'],
          errors: [400, 429],
        },
      },
      schema: {
        params: WALLET_PARAMS,
        response: {
          200: {
            type: 'object',
            required: ['away'],
            additionalProperties: false,
            properties: {
              away: { type: 'boolean' },
              timezone: { type: 'string' },
              dnd_schedule: { anyOf: [DND_SCHEDULE_SCHEMA, { type: 'null' }] },
            },
          },
        },
      },
    },
    async (request) => {
      const wallet = request.params.wallet;
      if (!isWalletAddress(wallet)) {
        throw new ApiError(400, 'invalid_wallet', 'wallet must be a base58 public key of 32 bytes');
      }
      const account = await ctx.accounts.get(wallet);
      if (!account) return { away: false };
      const schedule = (await ctx.settings.getDndSchedule(wallet)) as DndSchedule | null;
      const timezone = account.timezone ?? 'UTC';
      const away = isAway(schedule, timezone, ctx.now());
      return account.exposeDndSchedule ? { away, timezone, dnd_schedule: schedule } : { away };
    },
  );
}
