// Deleting an account, exactly as the reference lists it (DELETE
// /v1/admin/accounts/{wallet}, `sealpost admin account delete`, and a
// holder's own DELETE /v1/account):
//   1. for every stored copy: enqueue the release of the operator's pin
//      (QUEUE_UNPIN; not for `b3:` local-only markers) and, for mail this
//      deployment published, a DeleteMail job (QUEUE_DELETE_MAIL) — enqueued
//      first, with job ids derived from the copy, so a sweep interrupted
//      later and run again enqueues nothing twice;
//   2. per-reader wraps, copies and mailboxes;
//   3. wallet-keyed leases and rate windows; the per-sender
//      chain-publication windows of `<wallet>@<domain>` for each configured
//      local domain (not alias forms, not the null-sender bucket);
//   4. the DND schedule and pending login (and step-up) challenges, then
//      the account row (pin provider and session epoch go with it).
// Audited as `account.delete`: success only for a completed sweep, failure
// for a missing account and for any error on the way.
import { type JobsOptions, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import {
  type DeleteMailJobData,
  QUEUE_DELETE_MAIL,
  QUEUE_UNPIN,
  type UnpinJobData,
} from '../../contracts/inbound-jobs.ts';
import {
  accountDeletedKey,
  loginChallengeKey,
  senderPublicationWindowKey,
  stepUpChallengeKey,
  walletLeasePattern,
  walletRateWindowPattern,
} from '../../core/limits/redis-keys.ts';
import { AccountsRepo } from '../../core/store/accounts-repo.ts';
import { MessagesRepo } from '../../core/store/messages-repo.ts';
import { SettingsRepo } from '../../core/store/settings-repo.ts';
import type { Database } from '../../core/store/types.ts';
import { publishAccountChange } from './account-state-cache.ts';
import { TOKEN_LIFETIME_SECS } from './auth/session-tokens.ts';

export interface SweepDeps {
  db: Kysely<Database>;
  redis: Redis;
  /** `[redis] prefix`: BullMQ queue prefix and the key prefix of src/core/limits/redis-keys.ts. */
  prefix: string;
  /** `[smtp] local_domains`. */
  localDomains: string[];
  now?: () => number;
}

export interface SweepResult {
  found: boolean;
  copies: number;
  unpinJobs: number;
  deleteMailJobs: number;
  redisKeys: number;
}

const PAGE = 500;
const JOB_OPTIONS: JobsOptions = {
  attempts: 20,
  backoff: { type: 'exponential', delay: 30_000 },
  removeOnComplete: true,
  removeOnFail: 1000,
};

async function deleteByPattern(redis: Redis, pattern: string): Promise<number> {
  let deleted = 0;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
    cursor = next;
    if (keys.length > 0) deleted += await redis.del(...keys);
  } while (cursor !== '0');
  return deleted;
}

async function enqueueReleases(
  deps: SweepDeps,
  wallet: string,
): Promise<{ unpinJobs: number; deleteMailJobs: number }> {
  const messages = new MessagesRepo(deps.db);
  const connection = { connection: deps.redis, prefix: deps.prefix };
  const unpin = new Queue<UnpinJobData>(QUEUE_UNPIN, connection);
  const deleteMail = new Queue<DeleteMailJobData>(QUEUE_DELETE_MAIL, connection);
  let unpinJobs = 0;
  let deleteMailJobs = 0;
  try {
    let after: string | undefined;
    for (;;) {
      const page = await messages.listForWallet(wallet, { after, limit: PAGE });
      if (page.length === 0) break;
      after = page[page.length - 1]?.id;
      const unpins = page
        .filter((m) => m.pinnedByOperator && m.cid !== null && !m.cid.startsWith('b3:'))
        .map((m) => ({
          name: 'unpin',
          data: { cid: m.cid as string, wallet, messageId: m.id },
          opts: { ...JOB_OPTIONS, jobId: `unpin-${m.id}` },
        }));
      const deletes = page
        .filter((m) => m.publishedByUs && m.emailAddress !== null)
        .map((m) => ({
          name: 'delete-mail',
          data: { wallet, emailAddress: m.emailAddress as string, messageId: m.id },
          opts: { ...JOB_OPTIONS, jobId: `delete-mail-${m.id}` },
        }));
      if (unpins.length > 0) await unpin.addBulk(unpins);
      if (deletes.length > 0) await deleteMail.addBulk(deletes);
      unpinJobs += unpins.length;
      deleteMailJobs += deletes.length;
      if (page.length < PAGE) break;
    }
  } finally {
    await Promise.all([unpin.close(), deleteMail.close()]);
  }
  return { unpinJobs, deleteMailJobs };
}

/** Runs the sweep for `wallet` and records the audit event under `actor`. */
export async function sweepAccount(
  deps: SweepDeps,
  wallet: string,
  opts: { actor: string },
): Promise<SweepResult> {
  const accounts = new AccountsRepo(deps.db, { now: deps.now });
  const audit = (outcome: 'success' | 'failure', detail: unknown) =>
    accounts.recordAudit({ actor: opts.actor, action: 'account.delete', target: wallet, outcome, detail });
  try {
    if (!(await accounts.get(wallet))) {
      await audit('failure', { reason: 'not_found' });
      return { found: false, copies: 0, unpinJobs: 0, deleteMailJobs: 0, redisKeys: 0 };
    }
    // First, so no token issued until now acts for this wallet again, whatever happens below.
    const nowMs = (deps.now ?? Date.now)();
    await deps.redis.set(
      accountDeletedKey(deps.prefix, wallet),
      String(nowMs),
      'EX',
      TOKEN_LIFETIME_SECS + 300,
    );
    // Every API process drops what it cached of the wallet before this answers.
    await publishAccountChange(deps.redis, deps.prefix, wallet);
    const jobs = await enqueueReleases(deps, wallet);
    const copies = await new MessagesRepo(deps.db).deleteAllForWallet(wallet);
    let redisKeys = await deleteByPattern(deps.redis, walletLeasePattern(deps.prefix, wallet));
    redisKeys += await deleteByPattern(deps.redis, walletRateWindowPattern(deps.prefix, wallet));
    const windows = deps.localDomains.map((d) => senderPublicationWindowKey(deps.prefix, `${wallet}@${d}`));
    if (windows.length > 0) redisKeys += await deps.redis.del(...windows);
    await new SettingsRepo(deps.db).deleteDndSchedule(wallet);
    redisKeys += await deps.redis.del(
      loginChallengeKey(deps.prefix, wallet),
      stepUpChallengeKey(deps.prefix, wallet),
    );
    await accounts.delete(wallet);
    await publishAccountChange(deps.redis, deps.prefix, wallet);
    const result = { found: true, copies, ...jobs, redisKeys };
    await audit('success', {
      copies,
      unpin_jobs: jobs.unpinJobs,
      delete_mail_jobs: jobs.deleteMailJobs,
      redis_keys: redisKeys,
    });
    return result;
  } catch (err) {
    try {
      await audit('failure', { reason: 'error', error: (err as Error).message });
    } catch {
      // The store itself failed; the original error is what the caller needs.
    }
    throw err;
  }
}
