// The mail store (mailboxes, delivered copies, reader wraps) on both dialects.
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generateKeypair } from '../../src/core/keys/keypair-file.ts';
import {
  AccountsRepo,
  type DeliveredCopy,
  INBOX,
  MessagesRepo,
  openStore,
  type Store,
} from '../../src/core/store/index.ts';
import { dropSchema, TEST_PG_URL, uniqueSchemaName } from '../support/postgres.ts';
import { tempDir } from '../support/temp-dir.ts';

const pgSchemas: string[] = [];
const targets = [
  { name: 'sqlite', setup: () => ({ url: 'sqlite:mail.sqlite', dataDir: tempDir() }) },
  {
    name: 'postgres',
    setup: () => {
      const schema = uniqueSchemaName();
      pgSchemas.push(schema);
      return { url: `${TEST_PG_URL}?schema=${schema}`, dataDir: tempDir() };
    },
  },
];

afterAll(async () => {
  for (const s of pgSchemas.splice(0)) await dropSchema(s);
});

function copy(wallet: string, id: string, extra: Partial<DeliveredCopy> = {}): DeliveredCopy {
  return {
    id,
    wallet,
    blobKey: `sha256/ab/${id}`,
    size: 1234,
    receivedAt: 1_700_000_000_000,
    cid: 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy',
    pinnedByOperator: true,
    chainIndex: '0',
    emailAddress: generateKeypair().address,
    txSignature: 'sig',
    publishedByUs: true,
    ...extra,
  };
}

describe.each(targets)('mail store on $name', (target) => {
  let store: Store;
  let messages: MessagesRepo;
  let accounts: AccountsRepo;

  beforeEach(async () => {
    store = await openStore(target.setup());
    messages = new MessagesRepo(store.db);
    accounts = new AccountsRepo(store.db);
  });
  afterEach(async () => {
    await store.close();
  });

  it('creates the account and INBOX on first delivery and numbers copies by UID', async () => {
    const w = generateKeypair().address;
    const a = await messages.storeDelivered(copy(w, 'm1.0', { wraps: [{ readerId: 'imap', wrap: 'AAAA' }] }));
    const b = await messages.storeDelivered(copy(w, 'm2.0', { cid: null, pinnedByOperator: false }));
    expect(a.created && b.created).toBe(true);
    expect([a.message.uid, b.message.uid]).toEqual([1, 2]);
    expect((await accounts.get(w))?.source).toBe('delivery');
    const boxes = await messages.listMailboxes(w);
    expect(boxes.map((m) => [m.name, m.uidNext])).toEqual([[INBOX, 3]]);
    expect(a.message).toMatchObject({
      pinnedByOperator: true,
      publishedByUs: true,
      flags: [],
      chainIndex: '0',
    });
    expect(b.message).toMatchObject({ cid: null, pinnedByOperator: false });
    // The returned copy is the row as stored (it is not read back).
    expect(a.message).toEqual(await messages.get('m1.0'));
    expect(b.message).toEqual(await messages.get('m2.0'));
    expect((await messages.getReaderWrap('m1.0', 'imap'))?.wrap).toBe('AAAA');
    expect((await messages.listMessages(boxes[0]?.id ?? '')).map((m) => m.id)).toEqual(['m1.0', 'm2.0']);
  });

  it('is idempotent per copy id (a retried job stores nothing twice)', async () => {
    const w = generateKeypair().address;
    await messages.storeDelivered(copy(w, 'x.0'));
    const again = await messages.storeDelivered(copy(w, 'x.0', { size: 99 }));
    expect(again.created).toBe(false);
    expect(again.message.size).toBe(1234);
    expect(await messages.listForWallet(w)).toHaveLength(1);
    expect((await messages.listMailboxes(w))[0]?.uidNext).toBe(2);
  });

  it('keeps an existing account as it was, and concurrent deliveries get distinct UIDs', async () => {
    const w = generateKeypair().address;
    await accounts.create(w, { source: 'self' });
    await Promise.all(Array.from({ length: 8 }, (_, i) => messages.storeDelivered(copy(w, `c${i}.0`))));
    const uids = (await messages.listForWallet(w)).map((m) => m.uid).sort((x, y) => x - y);
    expect(uids).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect((await accounts.get(w))?.source).toBe('self');
    // A wallet with neither account nor INBOX yet: concurrent first deliveries make one of each.
    const fresh = generateKeypair().address;
    await Promise.all(Array.from({ length: 4 }, (_, i) => messages.storeDelivered(copy(fresh, `f${i}.0`))));
    expect((await messages.listMailboxes(fresh)).map((m) => [m.name, m.uidNext])).toEqual([[INBOX, 5]]);
    expect((await messages.listForWallet(fresh)).map((m) => m.uid).sort((x, y) => x - y)).toEqual([
      1, 2, 3, 4,
    ]);
  });

  it('deletes one copy with its wraps, and everything of a wallet', async () => {
    const w = generateKeypair().address;
    const other = generateKeypair().address;
    await messages.storeDelivered(copy(w, 'd1.0', { wraps: [{ readerId: 'imap', wrap: 'W1' }] }));
    await messages.storeDelivered(copy(w, 'd2.0', { wraps: [{ readerId: 'imap', wrap: 'W2' }] }));
    await messages.storeDelivered(copy(other, 'o1.0', { wraps: [{ readerId: 'imap', wrap: 'W3' }] }));
    expect((await messages.delete('d1.0'))?.id).toBe('d1.0');
    expect(await messages.getReaderWrap('d1.0', 'imap')).toBeUndefined();
    expect(await messages.delete('d1.0')).toBeUndefined();
    expect(await messages.deleteAllForWallet(w)).toBe(1);
    expect(await messages.listForWallet(w)).toEqual([]);
    expect(await messages.listMailboxes(w)).toEqual([]);
    expect((await messages.getReaderWrap('o1.0', 'imap'))?.wrap).toBe('W3');
  });

  it('sets flags as a sorted set', async () => {
    const w = generateKeypair().address;
    await messages.storeDelivered(copy(w, 'f.0'));
    expect(await messages.setFlags('f.0', ['\\Seen', '\\Answered', '\\Seen'])).toBe(true);
    expect((await messages.get('f.0'))?.flags).toEqual(['\\Answered', '\\Seen']);
    expect(await messages.setFlags('nope', [])).toBe(false);
  });

  it('group commit: concurrent copies share transactions, each numbered as if stored alone', async () => {
    const grouped = new MessagesRepo(store.db, { groupCommit: true });
    const wallets = Array.from({ length: 5 }, () => generateKeypair().address);
    await accounts.create(wallets[0] as string, { source: 'self' });
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        grouped.storeDelivered(
          copy(wallets[i % 5] as string, `g${i}.0`, { wraps: [{ readerId: 'imap', wrap: `W${i}` }] }),
        ),
      ),
    );
    expect(results.every((r) => r.created)).toBe(true);
    // Forty callers in one turn: far fewer commits than copies, none of them a fallback.
    expect(grouped.groupStats.copies).toBe(40);
    expect(grouped.groupStats.groups).toBeLessThan(5);
    expect(grouped.groupStats.fallbacks).toBe(0);
    for (const w of wallets) {
      const stored = await messages.listForWallet(w);
      expect(stored.map((m) => m.uid).sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect((await messages.listMailboxes(w)).map((m) => [m.name, m.uidNext])).toEqual([[INBOX, 9]]);
    }
    // Each caller got its own row back, as written.
    results.forEach((r, i) => {
      expect(r.message.id).toBe(`g${i}.0`);
      expect(r.message.wallet).toBe(wallets[i % 5]);
    });
    expect((await messages.getReaderWrap('g7.0', 'imap'))?.wrap).toBe('W7');
    expect((await accounts.get(wallets[0] as string))?.source).toBe('self');
  });

  it('group commit: a bad copy fails alone, a copy id given twice is stored once', async () => {
    const grouped = new MessagesRepo(store.db, { groupCommit: true });
    const w = generateKeypair().address;
    const settled = await Promise.allSettled([
      grouped.storeDelivered(copy(w, 'b1.0')),
      // blob_key is NOT NULL: this copy's insert fails inside the group.
      grouped.storeDelivered(copy(w, 'b2.0', { blobKey: null as unknown as string })),
      grouped.storeDelivered(copy(w, 'b3.0')),
      grouped.storeDelivered(copy(w, 'b1.0', { size: 99 })),
    ]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect(grouped.groupStats.fallbacks).toBe(1);
    const values = settled.map((s) => (s.status === 'fulfilled' ? s.value : undefined));
    // Stored again one by one after the group rolled back: one b1 row, the second caller is told it existed.
    expect(values.filter((v) => v?.message.id === 'b1.0').map((v) => v?.created)).toEqual([true, false]);
    expect(values[3]?.message.size).toBe(1234);
    const stored = await messages.listForWallet(w);
    expect(stored.map((m) => m.id).sort()).toEqual(['b1.0', 'b3.0']);
    expect(stored.map((m) => m.uid).sort((x, y) => x - y)).toEqual([1, 2]);
    // Nothing is left waiting: a later copy is stored at once.
    expect((await grouped.storeDelivered(copy(w, 'b4.0'))).message.uid).toBe(3);
  });
});
