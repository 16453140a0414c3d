// `sealpost queue list|show|retry|delete|hold|release|summary|reconcile`: the mail queues of a running
// deployment, read and steered through the Redis named in the config with
// BullMQ's own API. "inbound" is the pipeline's deliver queue (one job per
// recipient copy); "outbound" is the spooler's intake (whole messages, split
// within moments) and its per-domain delivery jobs, which carry the
// per-recipient state and the last deferral reason (docs/operations.md, Queue).

import { type Command, InvalidArgumentError } from 'commander';
import { DELIVERY_ATTEMPTS } from '../../../../delivery/backoff.ts';
import { RECONCILE_GRACE_MS, reconcileSpool } from '../../../../delivery/reconcile.ts';
import { openBlobStore } from '../../../core/blobs/open-blob-store.ts';
import { heldField, readHolds } from '../../../core/queue/hold.ts';
import { openStore } from '../../../core/store/index.ts';
import { CliError, CONFIG_OPTION_HELP } from '../../common.ts';
import {
  type CommonOptions,
  findJob,
  HELP_AFTER,
  listRows,
  parseWhich,
  reconcileText,
  retryJob,
  showOf,
  showText,
  table,
  WHICH,
  type Which,
  withSession,
} from './queue-session.ts';
import { registerQueueTools, showMessage } from './queue-tools.ts';

export function register(program: Command): void {
  const queue = program
    .command('queue')
    .description(
      'list, inspect, retry, hold, release or delete queued mail (inbound pipeline and outbound spooler)',
    )
    .addHelpText('after', HELP_AFTER);

  const withCommon = (cmd: Command) =>
    cmd
      .option('--config <file>', CONFIG_OPTION_HELP)
      .option('--queue <queue>', `which queue: ${WHICH.join(', ')}`, parseWhich, 'all' as Which);

  withCommon(
    queue
      .command('list')
      .description('one row per queued message: id, age, attempts, next attempt, recipients, last reason'),
  )
    .option('--json', 'print the rows as a JSON array')
    .option(
      '--failed',
      'only jobs that failed for good (e.g. a SendMail never confirmed; retry requeues them)',
    )
    .action(async (opts: CommonOptions & { failed?: boolean }) => {
      const all = await withSession(opts, listRows);
      const rows = opts.failed ? all.filter((r) => r.state === 'failed') : all;
      if (opts.json) process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
      else if (rows.length === 0) process.stdout.write('the queue is empty\n');
      else process.stdout.write(table(rows));
    });

  withCommon(
    queue
      .command('show')
      .argument('<id>', 'job id (from queue list)')
      .description('everything about one queued job'),
  )
    .option('--json', 'print as JSON')
    .option('--message', "the queued message itself, envelope, headers and body (as Postfix's postcat -q)")
    .action(async (id: string, opts: CommonOptions & { message?: boolean }) => {
      if (opts.message) return withSession(opts, (s) => showMessage(s, id, opts));
      const view = await withSession(opts, async (s) => {
        const { ref, job, state } = await findJob(s, id);
        return showOf(ref, job, state);
      });
      process.stdout.write(opts.json ? `${JSON.stringify(view, null, 2)}\n` : showText(view));
    });

  withCommon(
    queue
      .command('retry')
      .argument('[id]', 'job id (from queue list)')
      .description('try now: promote a delayed job, retry a failed one (or every one with --all)'),
  )
    .option('--all', 'every delayed and failed job in the selected queue(s)')
    .action(async (id: string | undefined, opts: CommonOptions & { all?: boolean }) => {
      if ((id === undefined) === !opts.all) throw new CliError('give one job id or --all', 2);
      await withSession(opts, async (s) => {
        if (id !== undefined) {
          const { job, state } = await findJob(s, id);
          if (state === 'held') throw new CliError(`${id} is held; sealpost queue release ${id} first`);
          const done = await retryJob(job, state);
          process.stdout.write(
            done === 'waiting' ? `${id}: already ${state}; nothing to do\n` : `${id}: ${done}, runs now\n`,
          );
          return;
        }
        let n = 0;
        const holds = await readHolds(s.redis, s.config.redis.prefix);
        for (const { ref, queue: q } of s.queues) {
          for (const state of ['delayed', 'failed'] as const) {
            for (const job of await q.getJobs([state], 0, -1, true)) {
              if (!job || holds.has(heldField(ref.name, String(job.id)))) continue;
              await retryJob(job, state);
              n++;
            }
          }
        }
        process.stdout.write(`${n} job${n === 1 ? '' : 's'} set to run now\n`);
      });
    });

  // hold, release, delete (by id, selectors or message) and summary: ./queue-tools.ts.
  registerQueueTools(queue, withCommon);

  queue
    .command('reconcile')
    .description(
      'queue again the spool entries and outbound messages that have no job in Redis (whatever Redis lost), remove finished ones, move unreadable ones to spool-corrupt/',
    )
    .option('--config <file>', CONFIG_OPTION_HELP)
    .option('--data-dir <dir>', 'data directory (overrides [store] data_dir): where the spool is')
    .option('--dry-run', 'report what would be done; change nothing')
    .option('--json', 'print the result as JSON')
    .option(
      '--grace-secs <n>',
      'leave spool entries younger than this alone (their acceptance may be in flight)',
      (v: string) => {
        const n = Number(v);
        if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError('a number of seconds, 0 or more');
        return n;
      },
      RECONCILE_GRACE_MS / 1000,
    )
    .action(
      async (opts: {
        config?: string;
        dataDir?: string;
        dryRun?: boolean;
        json?: boolean;
        graceSecs: number;
      }) => {
        const result = await withSession(
          { config: opts.config, dataDir: opts.dataDir, queue: 'inbound' },
          async (s) => {
            const store = await openStore({ url: s.config.store.url, dataDir: s.config.store.data_dir });
            try {
              return await reconcileSpool({
                redis: s.redis,
                prefix: s.config.redis.prefix,
                blobs: openBlobStore(s.config, store),
                db: store.db,
                policy: { attempts: DELIVERY_ATTEMPTS, backoffMs: 2000 },
                graceMs: opts.graceSecs * 1000,
                dryRun: opts.dryRun,
              });
            } finally {
              await store.close();
            }
          },
        );
        process.stdout.write(opts.json ? `${JSON.stringify(result, null, 2)}\n` : reconcileText(result));
        if (result.outcome === 'busy') process.exitCode = 75;
      },
    );
}
