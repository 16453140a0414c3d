// The IMAP/POP reader key: created when the mail password is set, locked
// under it (and sealed under the credential key), unlocked only for a
// session; delivery wraps for it from then on (no backfill); changing the
// password re-locks it (old password) or replaces it (reset path); the
// admin sweep removes it with the wraps. Plus the password route over HTTP
// on SQLite and PostgreSQL.

import { ImapFlow } from 'imapflow';
import { describe, expect, it } from 'vitest';
import { CredentialSealer, credentialAad } from '../../src/core/crypto/credential-seal.ts';
import { createRedis } from '../../src/core/redis/client.ts';
import { sweepAccount } from '../../src/edge/api/account-sweep.ts';
import { getReaderKey, openReaderKey, unlockSecret } from '../../src/mail/reader-keys/index.ts';
import { DIALECTS, newWallet, startRig } from '../support/api-rig.ts';
import {
  deliver,
  imapFlow,
  type MailUser,
  mailUser,
  rawMessage,
  setPassword,
  startMailRig,
  waitForCopies,
} from '../support/imap-rig.ts';
import type { ServeRig } from '../support/serve-rig.ts';

const STEP_UP = 'x-sealpost-step-up';

async function subjects(rig: ServeRig, user: MailUser, password = user.password): Promise<string[]> {
  const client: ImapFlow = imapFlow(rig, user.address, password);
  await client.connect();
  try {
    await client.mailboxOpen('INBOX');
    const out: string[] = [];
    for await (const m of client.fetch('1:*', { envelope: true })) out.push(m.envelope?.subject ?? '');
    return out;
  } finally {
    await client.logout().catch(() => client.close());
  }
}

async function wrapCount(rig: ServeRig, wallet: string): Promise<number> {
  const rows = await rig.serving.store.db
    .selectFrom('reader_wraps')
    .select('reader_id')
    .where('wallet', '=', wallet)
    .execute();
  return rows.length;
}

describe('reader keys', () => {
  it('wraps only mail delivered after the password; re-lock keeps it readable; reset does not; the sweep removes it', async () => {
    const rig = await startMailRig();
    const user = await mailUser(rig, { password: null });
    await deliver(rig, user.address, rawMessage('before the password'));
    await waitForCopies(rig, user.wallet, 1);
    expect(await getReaderKey(rig.serving.store.db, user.wallet)).toBeUndefined();

    await setPassword(rig, user.wallet, 'first password here');
    const key = await getReaderKey(rig.serving.store.db, user.wallet);
    if (!key) throw new Error('no reader key');
    // Stored: public key in the clear, the secret sealed under the credential key around a password lock.
    const sealer = new CredentialSealer(rig.credentialKey);
    const lock = sealer.open(key.lockedSecret, credentialAad('reader-key', user.wallet));
    expect(lock).toMatch(/^p1\$ln=15,r=8,p=1\$/);
    const aad = `sealpost-reader-key:v1:${user.wallet}:${key.readerId}`;
    expect(await unlockSecret(lock, 'not the password', aad)).toBeNull();
    const opened = await openReaderKey({ db: rig.serving.store.db, sealer }, key, 'first password here');
    expect(Buffer.from(opened?.keypair.publicKey ?? []).equals(Buffer.from(key.publicKey))).toBe(true);

    await deliver(rig, user.address, rawMessage('after the password'));
    await waitForCopies(rig, user.wallet, 2);
    const u1 = { ...user, password: 'first password here' };
    // No backfill: only the message delivered after the password shows over IMAP.
    expect(await subjects(rig, u1)).toEqual(['after the password']);
    expect(await wrapCount(rig, user.wallet)).toBe(1);

    // Re-lock with the old password: same key, the old wrap still opens.
    await setPassword(rig, user.wallet, 'second password here', 'first password here');
    const relocked = await getReaderKey(rig.serving.store.db, user.wallet);
    expect(relocked?.readerId).toBe(key.readerId);
    const u2 = { ...user, password: 'second password here' };
    expect(await subjects(rig, u2)).toEqual(['after the password']);
    const stale = new ImapFlow({
      host: '127.0.0.1',
      port: rig.imapPort as number,
      secure: true,
      tls: { rejectUnauthorized: false },
      auth: { user: user.address, pass: 'first password here' },
      logger: false,
    });
    await expect(stale.connect()).rejects.toThrow();
    stale.close();

    // Reset (no old password): a new key that cannot open the older mail; its wraps are gone.
    await setPassword(rig, user.wallet, 'third password here');
    const reset = await getReaderKey(rig.serving.store.db, user.wallet);
    expect(reset?.readerId).not.toBe(key.readerId);
    expect(await wrapCount(rig, user.wallet)).toBe(0);
    const u3 = { ...user, password: 'third password here' };
    expect(await subjects(rig, u3)).toEqual([]);
    await deliver(rig, user.address, rawMessage('after the reset'));
    await waitForCopies(rig, user.wallet, 3);
    expect(await subjects(rig, u3)).toEqual(['after the reset']);

    // The admin sweep removes the reader key and every wrap with the account.
    const redis = createRedis(rig.config.redis);
    try {
      const swept = await sweepAccount(
        { db: rig.serving.store.db, redis, prefix: rig.prefix, localDomains: rig.config.smtp.local_domains },
        user.wallet,
        { actor: 'admin' },
      );
      expect(swept.found).toBe(true);
    } finally {
      redis.disconnect();
    }
    expect(await getReaderKey(rig.serving.store.db, user.wallet)).toBeUndefined();
    expect(await wrapCount(rig, user.wallet)).toBe(0);
  }, 180_000);
});

describe.each(DIALECTS)('mail password route and reader key on %s', (dialect) => {
  it('creates, re-locks with old_password, refuses a wrong one (403) and resets without it', async () => {
    const rig = await startRig(dialect);
    try {
      const alice = newWallet();
      const token = await rig.login(alice);
      await rig.request('POST', '/v1/account', { token });
      const put = async (json: unknown) =>
        rig.request('PUT', '/v1/account/mail-password', {
          token,
          json,
          headers: { [STEP_UP]: (await rig.stepUp(token, alice)).proof },
        });
      expect((await put({ password: 'first password here' })).status).toBe(204);
      const first = await getReaderKey(rig.store.db, alice.address);
      expect(first?.readerId).toMatch(/^imap\./);

      const wrong = await put({ password: 'second password here', old_password: 'not it at all' });
      expect([wrong.status, wrong.body.error]).toEqual([403, 'old_password_mismatch']);
      expect((await getReaderKey(rig.store.db, alice.address))?.lockedSecret).toBe(first?.lockedSecret);

      expect(
        (await put({ password: 'second password here', old_password: 'first password here' })).status,
      ).toBe(204);
      const relocked = await getReaderKey(rig.store.db, alice.address);
      expect(relocked?.readerId).toBe(first?.readerId);
      expect(relocked?.lockedSecret).not.toBe(first?.lockedSecret);
      const sealer = new CredentialSealer(rig.credentialKey);
      if (!relocked) throw new Error('no key');
      expect(
        await openReaderKey({ db: rig.store.db, sealer }, relocked, 'second password here'),
      ).not.toBeNull();
      expect(await openReaderKey({ db: rig.store.db, sealer }, relocked, 'first password here')).toBeNull();

      expect((await put({ password: 'third password here' })).status).toBe(204);
      const reset = await getReaderKey(rig.store.db, alice.address);
      expect(reset?.readerId).not.toBe(first?.readerId);
      expect(Buffer.from(reset?.publicKey ?? []).equals(Buffer.from(first?.publicKey ?? []))).toBe(false);
      const bad = await put({ password: 'fourth password', old_password: 42 });
      expect(bad.status).toBe(400);
    } finally {
      await rig.close();
    }
  }, 60_000);
});
