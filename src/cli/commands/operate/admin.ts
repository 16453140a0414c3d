// `sealpost admin`: operator tools over the same store the account API uses.
// `admin account create|show|list|delete`; `admin token` lives in
// ./admin-token.ts. Delete runs the API's sweep (src/edge/api/account-sweep.ts),
// audited the same way with actor `cli`.
import { type Command, InvalidArgumentError } from 'commander';
import type { Redis } from 'ioredis';
import type { Config } from '../../../core/config/types.ts';
import {
  createRedis,
  describeRedis,
  type RedisTarget,
  redisKeys,
  sentinelOf,
} from '../../../core/redis/client.ts';
import { AccountsRepo, openStore, type Store } from '../../../core/store/index.ts';
import { sweepAccount } from '../../../edge/api/account-sweep.ts';
import { isWalletAddress } from '../../../edge/api/auth/signatures.ts';
import { canonicalTimeZone } from '../../../edge/api/dnd-schedule.ts';
import { accountFacts } from '../../../edge/api/export-document.ts';
import { addServerOptions, CliError, EXIT_FAILURE, loadCliConfig } from '../../common.ts';
import { registerAdminToken } from './admin-token.ts';

interface StoreOptions {
  config?: string;
  dataDir?: string;
  json?: boolean;
}

function parseWallet(value: string): string {
  if (!isWalletAddress(value)) {
    throw new InvalidArgumentError(`expected a base58 wallet address (32 bytes), got "${value}"`);
  }
  return value;
}

function parseLimit(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 1000) {
    throw new InvalidArgumentError(`expected an integer 1-1000, got "${value}"`);
  }
  return n;
}

async function withStore<T>(
  opts: StoreOptions,
  fn: (store: Store, config: Config) => Promise<T>,
): Promise<T> {
  const { config } = loadCliConfig(opts);
  const store = await openStore({ url: config.store.url, dataDir: config.store.data_dir });
  try {
    return await fn(store, config);
  } finally {
    await store.close();
  }
}

async function connectRedis(target: RedisTarget): Promise<Redis> {
  const redis = createRedis(target, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    retryStrategy: () => null,
    ...(sentinelOf(target) ? { sentinelRetryStrategy: () => null } : {}),
  });
  redis.on('error', () => {}); // reported by connect() below
  try {
    await redis.connect();
  } catch (err) {
    redis.disconnect();
    throw new CliError(
      `cannot reach Redis at ${describeRedis(target)} (${redisKeys(target)}): ${(err as Error).message}; the sweep needs it to enqueue unpin and DeleteMail jobs`,
    );
  }
  return redis;
}

const out = (text: string) => process.stdout.write(text);

function printFacts(facts: Awaited<ReturnType<typeof accountFacts>>): void {
  const a = facts.account as Record<string, unknown>;
  const pin = a.pin_provider as { configured: boolean; kind: string | null };
  const quota = facts.quota as { messages: number; bytes: number };
  out(
    [
      `wallet               ${a.wallet}`,
      `source               ${a.source}`,
      `created              ${a.created_at}`,
      `timezone             ${a.timezone ?? '(none, UTC)'}`,
      `mail password        ${a.mail_password_set ? 'set' : 'not set'}`,
      `pin provider         ${pin.configured ? pin.kind : 'none'}`,
      `dnd schedule         ${facts.away_schedule ? 'set' : 'none'}${a.expose_dnd_schedule ? ' (public)' : ''}`,
      `messages             ${quota.messages} (${quota.bytes} bytes)`,
      `disabled             ${a.disabled_at ?? 'no'}`,
      '',
    ].join('\n'),
  );
}

const EXAMPLES = `
Examples:
  $ sealpost admin account create 4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T --config sealpost.toml
  $ sealpost admin account show 4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T --json
  $ sealpost admin account list --limit 50
  $ sealpost admin account delete 4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T
`;

export function register(program: Command): void {
  const admin = program.command('admin').description('operator tools: accounts and the admin token');
  const account = admin
    .command('account')
    .description('create, inspect, list and delete accounts in the store the account API uses')
    .addHelpText('after', EXAMPLES);

  addServerOptions(account.command('create'), { listen: false })
    .description('create an account for a wallet (source "admin"); an existing account is left as it is')
    .argument('<wallet>', 'base58 wallet address', parseWallet)
    .option('--timezone <tz>', 'IANA time zone of the new account, e.g. Europe/Berlin')
    .option('--json', 'print {"created", "account"} as JSON')
    .addHelpText(
      'after',
      `\nExample:\n  $ sealpost admin account create <wallet> --timezone Europe/Berlin --config sealpost.toml\n`,
    )
    .action(async (wallet: string, opts: StoreOptions & { timezone?: string }) => {
      let timezone: string | null = null;
      if (opts.timezone !== undefined) {
        timezone = canonicalTimeZone(opts.timezone);
        if (!timezone) throw new CliError(`--timezone ${opts.timezone} is not an IANA time zone name`, 2);
      }
      await withStore(opts, async (store) => {
        const accounts = new AccountsRepo(store.db);
        const { created, account: row } = await accounts.create(wallet, { source: 'admin', timezone });
        if (created) {
          await accounts.recordAudit({
            actor: 'cli',
            action: 'account.create',
            target: wallet,
            outcome: 'success',
          });
        }
        const facts = await accountFacts(store.db, row);
        if (opts.json) out(`${JSON.stringify({ created, ...facts })}\n`);
        else out(`${created ? 'created' : 'already exists:'} account ${wallet}\n`);
      });
    });

  addServerOptions(account.command('show'), { listen: false })
    .description('print an account: settings, pin provider kind, message count (never secrets)')
    .argument('<wallet>', 'base58 wallet address', parseWallet)
    .option('--json', 'print the account facts as JSON (the head of the export document)')
    .addHelpText('after', `\nExample:\n  $ sealpost admin account show <wallet> --json\n`)
    .action(async (wallet: string, opts: StoreOptions) => {
      await withStore(opts, async (store) => {
        const row = await new AccountsRepo(store.db).get(wallet);
        if (!row) throw new CliError(`no account for wallet ${wallet}`, EXIT_FAILURE);
        const facts = await accountFacts(store.db, row);
        if (opts.json) out(`${JSON.stringify(facts)}\n`);
        else printFacts(facts);
      });
    });

  addServerOptions(account.command('list'), { listen: false })
    .description('list accounts in wallet order, one page at a time')
    .option('--limit <n>', 'accounts per page (1-1000)', parseLimit, 100)
    .option('--after <wallet>', 'start after this wallet (the "next" of the previous page)')
    .option('--json', 'print {"accounts": [...], "next"} as JSON')
    .addHelpText('after', `\nExample:\n  $ sealpost admin account list --limit 2 --json\n`)
    .action(async (opts: StoreOptions & { limit: number; after?: string }) => {
      await withStore(opts, async (store) => {
        const page = await new AccountsRepo(store.db).list({ after: opts.after, limit: opts.limit });
        if (opts.json) {
          const accounts = page.accounts.map((a) => ({
            wallet: a.wallet,
            source: a.source,
            created_at: new Date(a.createdAt).toISOString(),
            timezone: a.timezone,
          }));
          out(`${JSON.stringify({ accounts, next: page.next })}\n`);
          return;
        }
        for (const a of page.accounts) {
          out(`${a.wallet}  ${a.source.padEnd(8)}  ${new Date(a.createdAt).toISOString()}\n`);
        }
        if (page.next) process.stderr.write(`more: --after ${page.next}\n`);
      });
    });

  addServerOptions(account.command('delete'), { listen: false })
    .description(
      'delete an account with the full sweep of DELETE /v1/admin/accounts/{wallet} (mail rows, unpin and DeleteMail jobs, Redis windows, then the row); audited',
    )
    .argument('<wallet>', 'base58 wallet address', parseWallet)
    .option('--json', 'print what the sweep did as JSON')
    .addHelpText('after', `\nExample:\n  $ sealpost admin account delete <wallet> --config sealpost.toml\n`)
    .action(async (wallet: string, opts: StoreOptions) => {
      await withStore(opts, async (store, config) => {
        const redis = await connectRedis(config.redis);
        try {
          process.stderr.write(`sweeping account ${wallet} …\n`);
          const r = await sweepAccount(
            { db: store.db, redis, prefix: config.redis.prefix, localDomains: config.smtp.local_domains },
            wallet,
            { actor: 'cli' },
          );
          if (!r.found)
            throw new CliError(`no account for wallet ${wallet}; nothing was swept`, EXIT_FAILURE);
          if (opts.json) out(`${JSON.stringify({ deleted: true, ...r })}\n`);
          else {
            out(
              `deleted account ${wallet}: ${r.copies} message copies, ${r.unpinJobs} unpin jobs and ` +
                `${r.deleteMailJobs} DeleteMail jobs enqueued, ${r.redisKeys} Redis keys removed\n`,
            );
          }
        } finally {
          await redis.quit();
        }
      });
    });

  registerAdminToken(admin);
}
