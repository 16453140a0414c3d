// Components under IMAP/POP3 on real SQLite and PostgreSQL and real Redis:
// MailLogin (back-off per IP and per account, disabled accounts, reader
// keys made at first login for passwords older than reader keys, a key the
// current password does not open being replaced) and FoldersRepo (UIDs and
// UIDVALIDITY that never go backwards, wallet scoping).
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { CredentialSealer, credentialAad } from '../../src/core/crypto/credential-seal.ts';
import { generateKeypair } from '../../src/core/keys/keypair-file.ts';
import { AccountsRepo, FolderError, FoldersRepo, openStore, type Store } from '../../src/core/store/index.ts';
import { getReaderKey, MailLogin, type MailLoginError } from '../../src/mail/reader-keys/index.ts';
import { hashMailPassword, setMailPassword } from '../../src/mail/reader-keys/mail-password.ts';
import { dropSchema, TEST_PG_URL, uniqueSchemaName } from '../support/postgres.ts';
import { tempDir } from '../support/temp-dir.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => {});
});

async function storeFor(dialect: 'sqlite' | 'postgres'): Promise<Store> {
  if (dialect === 'sqlite') {
    const dir = tempDir();
    const store = await openStore({ url: `sqlite:${dir}/db.sqlite`, dataDir: dir });
    cleanups.push(() => store.close());
    return store;
  }
  const schema = uniqueSchemaName('sealpost_imap');
  const store = await openStore({ url: `${TEST_PG_URL}?schema=${schema}`, dataDir: tempDir() });
  cleanups.push(async () => {
    await store.close();
    await dropSchema(schema);
  });
  return store;
}

describe.each(['sqlite', 'postgres'] as const)('mail login and folders on %s', (dialect) => {
  async function setup(
    backoff = { windowMs: 60_000, maxPerIp: 5, maxPerAccount: 3, baseDelayMs: 10, maxDelayMs: 40 },
  ) {
    const store = await storeFor(dialect);
    const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    const prefix = `sptest-${randomBytes(6).toString('hex')}`;
    cleanups.push(async () => {
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    });
    const sealer = new CredentialSealer(new Uint8Array(randomBytes(32)));
    const accounts = new AccountsRepo(store.db);
    const delays: number[] = [];
    const login = new MailLogin({
      db: store.db,
      accounts,
      sealer,
      redis,
      prefix,
      walletOf: async (name) => (name.length > 30 ? name : null),
      backoff,
      sleep: async (ms) => {
        delays.push(ms);
      },
    });
    const user = async (password = 'a good mail password') => {
      const wallet = generateKeypair().address;
      await accounts.create(wallet, { source: 'self' });
      await setMailPassword({ accounts, sealer, db: store.db }, wallet, password);
      return wallet;
    };
    return { store, redis, prefix, sealer, accounts, login, delays, user };
  }

  it('backs off per account and per IP, and refuses disabled accounts', async () => {
    const s = await setup();
    const a = await s.user();
    const fail = (ip: string, name: string, pw = 'wrong password!') =>
      s.login.login(ip, name, pw).then(
        () => 'ok',
        (e: MailLoginError) => e.kind,
      );
    expect(await fail('10.0.0.1', a)).toBe('invalid');
    expect(await fail('10.0.0.2', a)).toBe('invalid');
    expect(await fail('10.0.0.3', a)).toBe('invalid');
    expect(s.delays).toEqual([10, 20, 40]);
    // The account's window is full, from any address and with the right password.
    expect(await fail('10.0.0.4', a, 'a good mail password')).toBe('locked');
    // Per IP: unknown names count too, then that address is refused for everyone.
    for (let i = 0; i < 5; i++) expect(await fail('10.9.9.9', `nobody-${i}`)).toBe('invalid');
    const b = await s.user();
    expect(await fail('10.9.9.9', b, 'a good mail password')).toBe('locked');
    expect(await fail('10.9.9.8', b, 'a good mail password')).toBe('ok');
    // A disabled account cannot log in.
    await s.accounts.update(b, { disabledAt: Date.now() });
    expect(await fail('10.9.9.7', b, 'a good mail password')).toBe('invalid');
  });

  it('makes a reader key at first login for an older password, and replaces one the password does not open', async () => {
    const s = await setup();
    const wallet = generateKeypair().address;
    await s.accounts.create(wallet, { source: 'self' });
    // A password stored before reader keys existed: the hash only.
    const sealed = s.sealer.seal(
      await hashMailPassword('an older password'),
      credentialAad('mail-password', wallet),
    );
    await s.accounts.update(wallet, { mailPasswordSealed: sealed });
    expect(await getReaderKey(s.store.db, wallet)).toBeUndefined();
    const first = await s.login.login('127.0.0.1', wallet, 'an older password');
    const stored = await getReaderKey(s.store.db, wallet);
    expect(stored?.readerId).toBe(first.readerId);
    // A second session unlocks the same key.
    const again = await s.login.login('127.0.0.1', wallet, 'an older password');
    expect(again.readerId).toBe(first.readerId);
    expect(Buffer.from(again.keypair.secretKey).equals(Buffer.from(first.keypair.secretKey))).toBe(true);
    // The hash changed behind the key's back (not through setMailPassword): the key is replaced.
    const other = s.sealer.seal(
      await hashMailPassword('a different one'),
      credentialAad('mail-password', wallet),
    );
    await s.accounts.update(wallet, { mailPasswordSealed: other });
    const replaced = await s.login.login('127.0.0.1', wallet, 'a different one');
    expect(replaced.readerId).not.toBe(first.readerId);
  });

  it('keeps UIDs and UIDVALIDITY growing, and every folder operation scoped to its wallet', async () => {
    const s = await setup();
    const a = await s.user();
    const b = await s.user();
    const folders = new FoldersRepo(s.store.db, { now: () => 1_800_000_000_000 });
    const boxes = await folders.ensureDefaultFolders(a);
    expect(boxes.map((x) => x.name)).toEqual(['Drafts', 'INBOX', 'Junk', 'Sent', 'Trash']);
    const x1 = await folders.createMailbox(a, 'X');
    await expect(folders.createMailbox(a, 'X')).rejects.toMatchObject({ code: 'exists' });
    await expect(folders.createMailbox(a, 'a//b')).rejects.toBeInstanceOf(FolderError);
    await folders.deleteMailbox(a, 'X');
    const x2 = await folders.createMailbox(a, 'X');
    // Same clock second, still a new UIDVALIDITY: old UIDs can never be mistaken for new ones.
    expect(x2.uidValidity).toBeGreaterThan(x1.uidValidity);
    const inbox = boxes.find((x) => x.name === 'INBOX');
    if (!inbox) throw new Error('no INBOX');
    const msg = (n: number) => ({
      wallet: a,
      mailboxId: inbox.id,
      blobKey: `sha256/00/${'0'.repeat(63)}${n}`,
      size: 100,
      receivedAt: 1,
      flags: [],
      wraps: [{ readerId: 'r', wrap: 'w' }],
    });
    const m1 = await folders.appendMessage(msg(1));
    const m2 = await folders.appendMessage(msg(2));
    expect([m1.uid, m2.uid]).toEqual([1, 2]);
    const moved = await folders.moveMessages(a, [m1.id], x2.id);
    expect(moved).toEqual([{ id: m1.id, uid: 1 }]);
    await folders.moveMessages(a, [m1.id], inbox.id);
    // Back in INBOX it gets a new, larger UID; 1 is never handed out again.
    expect((await folders.listReadable(a, inbox.id, 'r')).map((m) => m.uid)).toEqual([2, 3]);
    const copies = await folders.copyMessages(a, [m2.id], x2.id);
    expect(copies[0]?.uid).toBe(2);
    // Another wallet cannot move, copy, expunge or flag these rows.
    await expect(folders.moveMessages(b, [m2.id], x2.id)).rejects.toBeInstanceOf(FolderError);
    await expect(folders.copyMessages(b, [m2.id], x2.id)).rejects.toBeInstanceOf(FolderError);
    expect(await folders.expunge(b, inbox.id, [m2.id])).toEqual([]);
    await folders.writeFlags(b, [{ id: m2.id, flags: ['\\Deleted'] }]);
    expect((await folders.listReadable(a, inbox.id, 'r')).find((m) => m.id === m2.id)?.flags).toEqual([]);
    expect(await folders.listReadable(b, inbox.id, 'r')).toEqual([]);
    // Renaming INBOX moves its messages to the new folder; INBOX stays, empty.
    await folders.renameMailbox(a, 'INBOX', 'Old mail');
    const old = await folders.getMailbox(a, 'Old mail');
    expect((await folders.listReadable(a, old?.id ?? '', 'r')).length).toBe(2);
    expect((await folders.listReadable(a, inbox.id, 'r')).length).toBe(0);
    await folders.createMailbox(a, 'P');
    await folders.createMailbox(a, 'P/Q');
    await folders.renameMailbox(a, 'P', 'R');
    expect((await folders.listMailboxes(a)).map((x) => x.name)).toContain('R/Q');
    await expect(folders.deleteMailbox(a, 'R')).rejects.toMatchObject({ code: 'has_children' });
  });
});
