// The store side of rent recovery (migration 0011-rent-recovery) on both
// dialects: which copies the sweep may close, paged oldest first, and the
// mark that keeps a copy from being swept again.
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generateKeypair } from '../../src/core/keys/keypair-file.ts';
import { type DeliveredCopy, MessagesRepo, openStore, type Store } from '../../src/core/store/index.ts';
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

const T0 = 1_700_000_000_000;

function copy(wallet: string, id: string, extra: Partial<DeliveredCopy> = {}): DeliveredCopy {
  return {
    id,
    wallet,
    blobKey: `sha256/ab/${id}`,
    size: 100,
    receivedAt: T0,
    cid: 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy',
    pinnedByOperator: true,
    chainIndex: '0',
    emailAddress: generateKeypair().address,
    txSignature: 'sig',
    publishedByUs: true,
    ...extra,
  };
}

describe.each(targets)('rent recovery in the store on $name', (target) => {
  let store: Store;
  let messages: MessagesRepo;

  beforeEach(async () => {
    store = await openStore(target.setup());
    messages = new MessagesRepo(store.db);
  });
  afterEach(async () => {
    await store.close();
  });

  it('lists only our open copies received before the cutoff, oldest first, in pages', async () => {
    const w = generateKeypair().address;
    // Five at the same instant (paged by id), one later, one too new, and two that are not ours to close.
    for (const id of ['m.5', 'm.3', 'm.1', 'm.4', 'm.2']) await messages.storeDelivered(copy(w, id));
    await messages.storeDelivered(copy(w, 'm.0', { receivedAt: T0 + 1000 }));
    await messages.storeDelivered(copy(w, 'new.1', { receivedAt: T0 + 10_000 }));
    await messages.storeDelivered(copy(w, 'theirs.1', { publishedByUs: false }));
    await messages.storeDelivered(copy(w, 'local.1', { emailAddress: null, chainIndex: null }));
    const cutoff = T0 + 5000;

    const first = await messages.listRentRecoverable(cutoff, { limit: 4 });
    expect(first.map((m) => m.id)).toEqual(['m.1', 'm.2', 'm.3', 'm.4']);
    const last = first[3] as (typeof first)[number];
    const rest = await messages.listRentRecoverable(cutoff, {
      limit: 4,
      after: { receivedAt: last.receivedAt, id: last.id },
    });
    expect(rest.map((m) => m.id)).toEqual(['m.5', 'm.0']);
    expect(first.every((m) => m.rentRecoveredAt === null)).toBe(true);
  });

  it('marks a copy once, for its own account only, and never lists it again', async () => {
    const w = generateKeypair().address;
    const { message: a } = await messages.storeDelivered(copy(w, 'a.1'));
    const { message: b } = await messages.storeDelivered(copy(w, 'b.1'));
    expect(await messages.markRentRecovered(a.id, generateKeypair().address, T0)).toBe(false);
    expect(await messages.markRentRecovered(a.id, a.emailAddress as string, T0 + 1)).toBe(true);
    expect(await messages.markRentRecovered(a.id, a.emailAddress as string, T0 + 2)).toBe(false);
    expect((await messages.get(a.id))?.rentRecoveredAt).toBe(T0 + 1);
    expect((await messages.listRentRecoverable(T0 + 1)).map((m) => m.id)).toEqual(['b.1']);
    expect([...(await messages.rentUnrecovered([a.id, b.id, 'gone.1']))]).toEqual([b.id]);
    // A copy deleted meanwhile (IMAP EXPUNGE) has nothing to mark.
    await messages.delete(b.id);
    expect(await messages.markRentRecovered(b.id, b.emailAddress as string, T0)).toBe(false);
  });
});
