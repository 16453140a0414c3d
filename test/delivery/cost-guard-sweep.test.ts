// The admin sweep (src/edge/api/account-sweep.ts) against the keys real MX
// traffic made: it removes the wallet's leases, its recipient window and its
// sender windows under every configured local domain, and leaves what the
// reference says it does not reach (the alias form, the null-sender bucket,
// the overall window, other wallets' windows). The export never lists them.
import { describe, expect, it } from 'vitest';
import { RECIPIENT_BUCKET } from '../../src/core/limits/cost-guard.ts';
import { acquireWalletLease } from '../../src/core/limits/lease.ts';
import {
  nullSenderPublicationWindowKey,
  overallPublicationWindowKey,
  senderPublicationWindowKey,
  walletLeasePattern,
  walletRateWindowPattern,
  walletWindowKey,
} from '../../src/core/limits/redis-keys.ts';
import { AccountsRepo } from '../../src/core/store/index.ts';
import { sweepAccount } from '../../src/edge/api/account-sweep.ts';
import { exportDocument } from '../../src/edge/api/export-document.ts';
import { sendOne, waitForInbox } from '../support/cost-guard-helpers.ts';
import { RIG_DOMAIN, startServeRig } from '../support/serve-rig.ts';

describe('admin sweep of cost-guard keys', () => {
  it("removes the wallet's windows and leases, and nothing the reference keeps", async () => {
    // Day-long windows: a window's key lives only until its bucket is full again.
    const rig = await startServeRig({
      extraLocalDomains: ['other.test'],
      extraToml:
        '[limits]\nsender_window_secs = 86400\nrecipient_window_secs = 86400\n' +
        'overall_window_secs = 86400\nnull_sender_window_secs = 86400\n',
    });
    const [dave, bob] = await Promise.all([rig.mail.mailbox({ alias: 'dave' }), rig.mail.mailbox()]);
    const d = dave.publicKey.toBase58();
    const b = bob.publicKey.toBase58();

    // Dave sends under his alias and his wallet form; others (and a bounce) write to him.
    expect((await sendOne(rig.mxPort, `dave@${RIG_DOMAIN}`, `${b}@${RIG_DOMAIN}`, 'from-alias')).code).toBe(
      250,
    );
    expect((await sendOne(rig.mxPort, `${d}@other.test`, `${b}@${RIG_DOMAIN}`, 'from-wallet')).code).toBe(
      250,
    );
    expect((await sendOne(rig.mxPort, 'erin@remote.example', `${d}@${RIG_DOMAIN}`, 'to-dave')).code).toBe(
      250,
    );
    expect((await sendOne(rig.mxPort, '', `${d}@${RIG_DOMAIN}`, 'bounce')).code).toBe(250);
    await waitForInbox(rig.chain.connection, rig.chain.programId, dave.publicKey, 2);
    await waitForInbox(rig.chain.connection, rig.chain.programId, bob.publicKey, 2);
    // A lease left behind by a worker that died holding it.
    const stale = await acquireWalletLease(rig.redis, rig.prefix, d, 'sendmail', {
      ttlMs: 600_000,
      // The worker may still be releasing its own lease for the last delivery.
      waitMs: 10_000,
      keepAlive: false,
    });
    expect(stale).not.toBeNull();

    const swept = [
      senderPublicationWindowKey(rig.prefix, `${d}@${RIG_DOMAIN}`),
      senderPublicationWindowKey(rig.prefix, `${d}@other.test`),
      walletWindowKey(rig.prefix, d, RECIPIENT_BUCKET),
      stale?.key ?? '',
    ];
    const kept = [
      senderPublicationWindowKey(rig.prefix, `dave@${RIG_DOMAIN}`),
      nullSenderPublicationWindowKey(rig.prefix),
      overallPublicationWindowKey(rig.prefix),
      walletWindowKey(rig.prefix, b, RECIPIENT_BUCKET),
    ];
    for (const key of [...swept, ...kept]) expect(await rig.redis.exists(key)).toBe(1);

    // The export carries none of them.
    const account = await new AccountsRepo(rig.serving.store.db).get(d);
    expect(account).toBeDefined();
    let exported = '';
    if (account) for await (const chunk of exportDocument(rig.serving.store.db, account)) exported += chunk;
    expect(JSON.parse(exported).account).toBeDefined();
    expect(exported).not.toContain(rig.prefix);
    expect(exported).not.toMatch(/pubwin|lease|pubrcpt/);

    const result = await sweepAccount(
      {
        db: rig.serving.store.db,
        redis: rig.redis,
        prefix: rig.prefix,
        localDomains: rig.config.smtp.local_domains,
      },
      d,
      { actor: 'admin' },
    );
    expect(result.found).toBe(true);
    for (const key of swept) expect(await rig.redis.exists(key)).toBe(0);
    for (const key of kept) expect(await rig.redis.exists(key)).toBe(1);
    expect(await rig.redis.keys(walletLeasePattern(rig.prefix, d))).toEqual([]);
    expect(await rig.redis.keys(walletRateWindowPattern(rig.prefix, d))).toEqual([]);
    expect(result.redisKeys).toBeGreaterThanOrEqual(swept.length);
    expect(await new AccountsRepo(rig.serving.store.db).get(d)).toBeUndefined();
  }, 120_000);
});
