// The accounts store against both dialects: the same suite runs on a SQLite
// file in a temp dir and on PostgreSQL in a schema made for this run.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generateKeypair } from '../../src/core/keys/keypair-file.ts';
import {
  AccountNotFoundError,
  AccountsRepo,
  InvalidWalletError,
  MIGRATIONS,
  migrateToLatest,
  openStore,
  type Store,
} from '../../src/core/store/index.ts';
import { dropSchema, schemaExists, TEST_PG_URL, uniqueSchemaName } from '../support/postgres.ts';
import { tempDir } from '../support/temp-dir.ts';

interface Target {
  name: string;
  /** Options for openStore; the same value reopens the same database. */
  setup(): { url: string; dataDir: string };
  teardown(): Promise<void>;
}

const pgSchemas: string[] = [];

const targets: Target[] = [
  {
    name: 'sqlite',
    setup: () => ({ url: 'sqlite:accounts.sqlite', dataDir: tempDir() }),
    teardown: async () => {},
  },
  {
    name: 'postgres',
    setup: () => {
      const schema = uniqueSchemaName();
      pgSchemas.push(schema);
      return { url: `${TEST_PG_URL}?schema=${schema}`, dataDir: tempDir() };
    },
    teardown: async () => {
      for (const s of pgSchemas.splice(0)) await dropSchema(s);
    },
  },
];

const wallet = () => generateKeypair().address;

describe.each(targets)('accounts store on $name', (target) => {
  let opts: { url: string; dataDir: string };
  let store: Store;
  let repo: AccountsRepo;
  let clock: number;

  beforeEach(async () => {
    opts = target.setup();
    store = await openStore(opts);
    clock = 1_700_000_000_000;
    repo = new AccountsRepo(store.db, { now: () => clock });
  });

  afterEach(async () => {
    await store.close();
    await target.teardown();
  });

  afterAll(async () => {
    await target.teardown();
  });

  it('opens the right dialect in the right place', async () => {
    expect(store.dialect).toBe(target.name);
    if (target.name === 'sqlite') {
      expect(existsSync(join(opts.dataDir, 'accounts.sqlite'))).toBe(true);
      const mode = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(store.db);
      expect(mode.rows[0]?.journal_mode).toBe('wal');
      const fk = await sql<{ foreign_keys: number }>`pragma foreign_keys`.execute(store.db);
      expect(fk.rows[0]?.foreign_keys).toBe(1);
    } else {
      expect(store.schema).toMatch(/^sealpost_test_/);
      expect(await schemaExists(store.schema ?? '')).toBe(true);
    }
  });

  it('migrates idempotently and reopens without migrating again', async () => {
    const again = await migrateToLatest(store.db, store.schema);
    expect(again.results).toEqual([]);
    const w = wallet();
    await repo.create(w, { source: 'admin' });
    await store.close();

    store = await openStore(opts);
    repo = new AccountsRepo(store.db, { now: () => clock });
    expect((await repo.get(w))?.source).toBe('admin');
    const applied = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(
      store.db,
    );
    expect(applied.rows.map((r) => r.name)).toEqual(Object.keys(MIGRATIONS));
  });

  it('creates an account once and reports whether it was created', async () => {
    const w = wallet();
    const first = await repo.create(w, { source: 'self', timezone: 'Europe/Berlin' });
    expect(first.created).toBe(true);
    expect(first.account).toEqual({
      wallet: w,
      createdAt: clock,
      updatedAt: clock,
      source: 'self',
      mailPasswordSealed: null,
      timezone: 'Europe/Berlin',
      exposeDndSchedule: false,
      disabledAt: null,
      pop3DeleClosesOnChain: false,
    });
    clock += 1000;
    const second = await repo.create(w, { source: 'delivery' });
    expect(second.created).toBe(false);
    expect(second.account).toEqual(first.account);
  });

  it('rejects what is not a wallet address', async () => {
    await expect(repo.create('not-a-wallet', { source: 'admin' })).rejects.toBeInstanceOf(InvalidWalletError);
    await expect(repo.create('11111', { source: 'admin' })).rejects.toBeInstanceOf(InvalidWalletError);
  });

  it('gets, updates and deletes', async () => {
    const w = wallet();
    expect(await repo.get(w)).toBeUndefined();
    expect(await repo.update(w, { timezone: 'UTC' })).toBe(false);
    expect(await repo.delete(w)).toBe(false);

    await repo.create(w, { source: 'admin' });
    clock += 5;
    expect(
      await repo.update(w, {
        mailPasswordSealed: 'v1:x:y',
        exposeDndSchedule: true,
        disabledAt: clock,
        timezone: 'UTC',
      }),
    ).toBe(true);
    const got = await repo.get(w);
    expect(got).toMatchObject({
      mailPasswordSealed: 'v1:x:y',
      exposeDndSchedule: true,
      disabledAt: clock,
      timezone: 'UTC',
      updatedAt: clock,
    });
    expect(typeof got?.createdAt).toBe('number');

    await repo.update(w, { exposeDndSchedule: false, disabledAt: null });
    expect(await repo.get(w)).toMatchObject({ exposeDndSchedule: false, disabledAt: null, timezone: 'UTC' });
    await repo.update(w, { pop3DeleClosesOnChain: true });
    expect(await repo.get(w)).toMatchObject({ pop3DeleClosesOnChain: true, timezone: 'UTC' });
    await repo.update(w, { pop3DeleClosesOnChain: false });
    expect((await repo.get(w))?.pop3DeleClosesOnChain).toBe(false);

    expect(await repo.delete(w)).toBe(true);
    expect(await repo.get(w)).toBeUndefined();
  });

  it('lists accounts in pages', async () => {
    const wallets = Array.from({ length: 5 }, wallet);
    for (const w of wallets) await repo.create(w, { source: 'delivery' });
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await repo.list({ after, limit: 2 });
      expect(page.accounts.length).toBeLessThanOrEqual(2);
      seen.push(...page.accounts.map((a) => a.wallet));
      if (!page.next) break;
      after = page.next;
    }
    expect(seen).toEqual([...wallets].sort());
  });

  it('keeps one pin provider per wallet and drops it with the account', async () => {
    const w = wallet();
    await expect(
      repo.setPinProvider(w, { kind: 'remote', sealedCredentials: 'v1:a:b' }),
    ).rejects.toBeInstanceOf(AccountNotFoundError);
    await repo.create(w, { source: 'self' });
    expect(await repo.getPinProvider(w)).toBeUndefined();

    await repo.setPinProvider(w, { kind: 'remote', sealedCredentials: 'v1:a:b' });
    clock += 10;
    await repo.setPinProvider(w, { kind: 's3_bucket', sealedCredentials: 'v1:c:d' });
    expect(await repo.getPinProvider(w)).toEqual({
      wallet: w,
      kind: 's3_bucket',
      sealedCredentials: 'v1:c:d',
      updatedAt: clock,
    });

    expect(await repo.deletePinProvider(w)).toBe(true);
    expect(await repo.deletePinProvider(w)).toBe(false);
    expect(await repo.getPinProvider(w)).toBeUndefined();

    await repo.setPinProvider(w, { kind: 'hosted_jwt', sealedCredentials: 'v1:e:f' });
    await repo.delete(w);
    expect(await repo.getPinProvider(w)).toBeUndefined();
  });

  it('records audit events, newest first', async () => {
    const w = wallet();
    const a = await repo.recordAudit({
      actor: 'admin',
      action: 'account.delete',
      target: w,
      outcome: 'failure',
    });
    clock += 1;
    const b = await repo.recordAudit({
      actor: 'admin',
      action: 'account.export',
      target: w,
      outcome: 'success',
      detail: { bytes: 1234, note: 'read' },
    });
    await repo.recordAudit({ actor: 'system', action: 'startup', outcome: 'success' });

    const events = await repo.listAudit({ target: w });
    expect(events.map((e) => e.id)).toEqual([b.id, a.id]);
    expect(events[0]).toEqual({
      id: b.id,
      at: clock,
      actor: 'admin',
      action: 'account.export',
      target: w,
      outcome: 'success',
      detail: { bytes: 1234, note: 'read' },
    });
    expect(events[1]?.detail).toBeNull();
    expect(await repo.listAudit()).toHaveLength(3);
  });
});

describe('accounts store on postgres, several schemas', () => {
  it('migrates each schema on its own even while another is migrated', async () => {
    const schemas = [uniqueSchemaName(), uniqueSchemaName()];
    const dataDir = tempDir();
    const stores: Store[] = [];
    try {
      // The second opens through the searchPath option rather than the URL.
      const a = await openStore({ url: `${TEST_PG_URL}?schema=${schemas[0]}`, dataDir });
      stores.push(a);
      const b = await openStore({ url: TEST_PG_URL, dataDir, searchPath: schemas[1] });
      stores.push(b);
      const w = wallet();
      await new AccountsRepo(a.db).create(w, { source: 'admin' });
      expect(await new AccountsRepo(b.db).get(w)).toBeUndefined();
      expect(stores.map((s) => s.schema)).toEqual(schemas);
    } finally {
      for (const s of stores) await s.close();
      for (const s of schemas) await dropSchema(s);
    }
  });
});

describe('accounts store on in-memory SQLite', () => {
  it('opens sqlite::memory: without touching the data dir', async () => {
    const dataDir = join(tempDir(), 'never-created');
    const store = await openStore({ url: 'sqlite::memory:', dataDir });
    try {
      const w = wallet();
      expect((await new AccountsRepo(store.db).create(w, { source: 'self' })).created).toBe(true);
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      await store.close();
    }
  });
});
