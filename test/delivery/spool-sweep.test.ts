// The daily blob sweep never removes a spool entry without a finished
// record: an old indexed entry stays while any recipient's copy is neither
// stored nor marked finished, and goes once all are; a sealed body an open
// SendMail intent names stays too. Real SQLite store, real blob directory.
import { randomBytes } from 'node:crypto';
import { utimesSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BlobStore } from '../../src/core/blobs/blob-store.ts';
import { sweepOrphanBlobs } from '../../src/core/blobs/orphan-sweep.ts';
import type { SpoolManifest } from '../../src/core/blobs/spool-manifest.ts';
import { generateKeypair } from '../../src/core/keys/keypair-file.ts';
import {
  AccountsRepo,
  IntentsRepo,
  MessagesRepo,
  openStore,
  type Store,
} from '../../src/core/store/index.ts';
import { tempDir } from '../support/temp-dir.ts';

const DAY = 86_400_000;
const stores: Store[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});

function manifest(msgid: string, wallet: string, recipients: number): SpoolManifest {
  return {
    v: 1,
    msgid,
    from: 'ann@remote.example',
    recipients: Array.from({ length: recipients }, (_, i) => ({
      address: `r${i}@mail.test`,
      wallet,
      form: 'wallet' as const,
    })),
    receivedAt: Date.now(),
    size: 5,
    remoteIp: '127.0.0.1',
  };
}

describe('blob sweep and the spool', () => {
  it('keeps every old spool entry with an unfinished recipient, removes the finished ones', async () => {
    const dir = tempDir();
    const store = await openStore({ url: `sqlite:${join(dir, 'store.sqlite')}`, dataDir: dir });
    stores.push(store);
    const blobs = new BlobStore(join(dir, 'blobs'));
    const wallet = generateKeypair().address;
    await new AccountsRepo(store.db).create(wallet, { source: 'self' });
    const messages = new MessagesRepo(store.db);
    const intents = new IntentsRepo(store.db);
    await blobs.writeSegment(
      ['done-1', 'open-1', 'half-1'].map((id, k) => ({
        id,
        chunks: [Buffer.from('hello')],
        size: 5,
        manifest: manifest(id, wallet, k === 2 ? 2 : 1),
      })),
    );
    await blobs.syncSpool();
    const sealed = await blobs.putContent(randomBytes(64));
    const at = new Date(Date.now() - 10 * DAY);
    for (const id of ['done-1', 'open-1', 'half-1']) utimesSync(join(blobs.root, 'spool', id), at, at);
    utimesSync(join(blobs.root, sealed.key), at, at);
    const copy = (id: string) => ({
      id,
      wallet,
      blobKey: 'sha256/00/none',
      size: 5,
      receivedAt: Date.now(),
      cid: null,
      pinnedByOperator: false,
      chainIndex: null,
      emailAddress: null,
      txSignature: null,
      publishedByUs: true,
    });
    await messages.storeDelivered(copy('done-1.0'));
    await messages.storeDelivered(copy('half-1.0'));
    // open-1.0 is being sent: its intent names the sealed body (a rebuilt job reuses it).
    await intents.record('open-1.0', wallet, {
      seal: { blobKey: sealed.key, size: 64, wraps: [] },
      pin: { cid: 'bafy-test', pinned: true },
      submit: { signature: 'sig', index: '0', emailAddress: 'addr' },
    });

    const first = await sweepOrphanBlobs({ db: store.db, blobs, graceMs: 7 * DAY }, Date.now());
    expect(first).toMatchObject({ spoolRemoved: 1, spoolKept: 2, removed: 0 });
    expect(await blobs.exists('spool/done-1')).toBe(false);
    expect(await blobs.exists('spool/open-1')).toBe(true);
    expect(await blobs.exists('spool/half-1')).toBe(true);
    expect(await blobs.exists(sealed.key)).toBe(true);

    // The last recipient of half-1 bounced for good, open-1 was stored: both finished now.
    await intents.markFinished('half-1.1', 'bounced');
    await messages.storeDelivered(copy('open-1.0'));
    expect((await intents.get('open-1.0'))?.outcome).toBe('stored');
    const second = await sweepOrphanBlobs({ db: store.db, blobs, graceMs: 7 * DAY }, Date.now());
    expect(second).toMatchObject({ spoolRemoved: 2, spoolKept: 0, removed: 1 });
    expect(await blobs.exists('spool/open-1')).toBe(false);
    expect(await blobs.exists('spool/half-1')).toBe(false);
  });
});
