// The server's Sent copy over IMAP (imapflow against the serve stack): the
// \Sent folder lists it, it opens with the reader key, and a client that
// appends its own copy of the same message right after sending (same
// Message-ID) gets the server's copy back instead of a duplicate.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { ImapFlow } from 'imapflow';
import { describe, expect, it } from 'vitest';
import { BlobStore } from '../../src/core/blobs/blob-store.ts';
import { storeSentCopy } from '../../src/edge/submission/sent-copy.ts';
import { readerPublicKeys } from '../../src/mail/reader-keys/index.ts';
import { imapFlow, mailUser, startMailRig } from '../support/imap-rig.ts';
import { RIG_DOMAIN } from '../support/serve-rig.ts';

async function count(client: ImapFlow, path: string): Promise<number | undefined> {
  const st = await client.status(path, { messages: true });
  if (!st) throw new Error(`no status for ${path}`);
  return st.messages;
}

function sentMessage(from: string, messageId: string, subject: string): Buffer {
  return Buffer.from(
    `From: ${from}\r\nTo: friend@remote.example\r\nSubject: ${subject}\r\nMessage-ID: <${messageId}>\r\n` +
      `Date: Wed, 25 Nov 2026 10:00:00 +0000\r\n\r\nSent through the server.\r\n`,
  );
}

describe('the Sent copy over IMAP', () => {
  it('is in \\Sent, opens with the reader key, and an APPEND of the same message returns it instead of a duplicate', async () => {
    const rig = await startMailRig();
    const ann = await mailUser(rig);
    const messageId = `${randomBytes(6).toString('hex')}@${RIG_DOMAIN}`;
    const raw = sentMessage(ann.address, messageId, 'Filed by the server');
    const kept = await storeSentCopy(
      {
        db: rig.serving.store.db,
        blobs: new BlobStore(join(rig.config.store.data_dir, 'blobs')),
        readerKeys: readerPublicKeys(rig.serving.store.db),
      },
      {
        wallet: ann.wallet,
        msgid: randomBytes(8).toString('hex'),
        raw,
        envelopeFrom: ann.address,
        recipients: ['friend@remote.example'],
        sentAt: Date.now(),
      },
    );
    expect(kept).toMatchObject({ stored: true, created: true });

    const client = imapFlow(rig, ann.address, ann.password);
    await client.connect();
    try {
      const sent = (await client.list()).find((b) => b.path === 'Sent');
      expect(sent?.specialUse).toBe('\\Sent');
      const lock = await client.getMailboxLock('Sent');
      try {
        const m = await client.fetchOne('1', { source: true, flags: true, uid: true });
        if (!m) throw new Error('no message in Sent');
        expect(m.source?.equals(raw)).toBe(true);
        expect([...(m.flags ?? [])]).toEqual(['\\Seen']);

        // The client's own copy of the same send: no second message.
        const again = await client.append('Sent', raw, ['\\Seen']);
        expect(again ? again.uid : null).toBe(m.uid);
        expect(await count(client, 'Sent')).toBe(1);
        // Another message, or the same one in another folder, is stored as usual.
        const other = await client.append('Sent', sentMessage(ann.address, `x${messageId}`, 'Another'), [
          '\\Seen',
        ]);
        expect(other ? other.uid : 0).toBeGreaterThan(m.uid);
        expect(await count(client, 'Sent')).toBe(2);
        await client.append('Drafts', raw);
        expect(await count(client, 'Drafts')).toBe(1);
      } finally {
        lock.release();
      }
    } finally {
      await client.logout().catch(() => client.close());
    }
  }, 120_000);
});
