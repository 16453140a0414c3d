// `sealpost blobs migrate --to postgres|fs`: moves the spool, the sealed
// bodies and the DMARC reports between the filesystem under the data
// directory and the store's PostgreSQL database (src/core/blobs/migrate.ts).
// Stop `sealpost serve`/`worker` everywhere first: it refuses while BullMQ
// workers are connected to the deployment's Redis (--force overrides). Set
// `[blobs] backend` to the target before starting them again. A run that
// stops half way is run again; it reports what it moved.
import { Queue } from 'bullmq';
import { type Command, InvalidArgumentError } from 'commander';
import { QUEUE_DELIVER } from '../../../contracts/inbound-jobs.ts';
import type { BlobBackend } from '../../../core/blobs/blob-store.ts';
import { type MigrateSummary, migrateBlobs } from '../../../core/blobs/migrate.ts';
import { openBlobStore } from '../../../core/blobs/open-blob-store.ts';
import { openStore } from '../../../core/store/index.ts';
import { CliError, CONFIG_OPTION_HELP, EXIT_FAILURE, loadCliConfig } from '../../common.ts';
import { connectCliRedis } from '../../redis-connect.ts';

interface MigrateOptions {
  to: BlobBackend;
  config?: string;
  dataDir?: string;
  force?: boolean;
  keepSource?: boolean;
}

function parseBackend(value: string): BlobBackend {
  if (value !== 'fs' && value !== 'postgres') throw new InvalidArgumentError('expected "postgres" or "fs"');
  return value;
}

export function summaryLines(s: MigrateSummary): string[] {
  return (['spool', 'sha256', 'dmarc_rua'] as const).map((area) => {
    const c = s[area];
    return `${area}: ${c.moved} moved (${c.bytes} bytes), ${c.already} already on ${s.to}, ${c.left} left on ${s.from}`;
  });
}

/** The deliver queue's connected workers: a running serve or worker process. */
async function runningWorkers(config: ReturnType<typeof loadCliConfig>['config']): Promise<number | null> {
  let redis: Awaited<ReturnType<typeof connectCliRedis>> | undefined;
  try {
    redis = await connectCliRedis(config.redis);
    const queue = new Queue(QUEUE_DELIVER, { connection: redis, prefix: config.redis.prefix });
    try {
      return (await queue.getWorkers()).length;
    } finally {
      await queue.close().catch(() => {});
    }
  } catch {
    return null;
  } finally {
    await redis?.quit().catch(() => redis?.disconnect());
  }
}

async function migrate(opts: MigrateOptions): Promise<void> {
  const { config } = loadCliConfig(opts);
  if (!opts.force) {
    const workers = await runningWorkers(config);
    if (workers === null)
      process.stderr.write(
        'Redis is not reachable: cannot tell whether serve is running; make sure it is not\n',
      );
    else if (workers > 0)
      throw new CliError(
        `${workers} delivery worker${workers === 1 ? ' is' : 's are'} connected to Redis: stop every sealpost serve and worker first (or --force)`,
      );
  }
  const store = await openStore({ url: config.store.url, dataDir: config.store.data_dir });
  try {
    if (store.dialect !== 'postgres')
      throw new CliError('the postgres blob backend needs [store] url to be a postgres:// URL', 2);
    const from = openBlobStore(config, store, opts.to === 'postgres' ? 'fs' : 'postgres');
    const to = openBlobStore(config, store, opts.to);
    const summary = await migrateBlobs(from, to, {
      keepSource: opts.keepSource,
      onLeft: (key, reason) => process.stderr.write(`left ${key}: ${reason}\n`),
    });
    process.stdout.write(`${summaryLines(summary).join('\n')}\n`);
    if (config.blobs?.backend !== opts.to)
      process.stdout.write(`now set [blobs] backend = "${opts.to}" before starting serve again\n`);
    if (summary.spool.left + summary.sha256.left + summary.dmarc_rua.left > 0)
      process.exitCode = EXIT_FAILURE;
  } finally {
    await store.close().catch(() => {});
  }
}

export function register(program: Command): void {
  const blobs = program.command('blobs').description('the blob store (spool, sealed bodies, DMARC reports)');
  blobs
    .command('migrate')
    .description('move every blob to the other backend ([blobs] backend); stop serve first')
    .requiredOption('--to <backend>', '"postgres" or "fs"', parseBackend)
    .option('--config <file>', CONFIG_OPTION_HELP)
    .option('--data-dir <dir>', 'the data directory (overrides [store] data_dir)')
    .option('--keep-source', 'leave the copies in the source backend')
    .option('--force', 'run even when delivery workers are connected to Redis')
    .action(async (opts: MigrateOptions) => {
      await migrate(opts);
    });
}
