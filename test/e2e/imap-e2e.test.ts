// IMAP end to end with imapflow over TLS: a message delivered over SMTP
// (MX → pipeline → chain → store) is listed, fetched with its exact bytes,
// flagged, searched, moved, expunged (which releases its pin and closes its
// Email account); a client's APPEND is stored sealed to the wallet and
// wrapped for the reader key; IDLE reports a new delivery.
import { setTimeout as sleep } from 'node:timers/promises';
import { type FetchQueryObject, ImapFlow } from 'imapflow';
import { describe, expect, it } from 'vitest';
import { listInbox } from '../../chain/client/index.ts';
import { BlobStore } from '../../src/core/blobs/blob-store.ts';
import { MessagesRepo } from '../../src/core/store/index.ts';
import { openSealed, walletEncryptionKeypair } from '../../src/mail/seal/index.ts';
import { deliver, imapFlow, mailUser, rawMessage, startMailRig, waitForCopies } from '../support/imap-rig.ts';
import { withoutTrace } from '../support/trace.ts';

async function one(client: ImapFlow, range: string, query: FetchQueryObject, opts?: { uid?: boolean }) {
  const m = await client.fetchOne(range, query, opts);
  if (!m) throw new Error(`no message ${range}`);
  return m;
}

async function count(client: ImapFlow, path: string): Promise<number | undefined> {
  const st = await client.status(path, { messages: true });
  if (!st) throw new Error(`no status for ${path}`);
  return st.messages;
}

describe('IMAP with imapflow', () => {
  it('lists, fetches exact bytes, flags, searches, moves, appends, expunges and IDLEs', async () => {
    const rig = await startMailRig();
    const bob = await mailUser(rig);
    const raw1 = rawMessage('first message');
    await deliver(rig, bob.address, raw1);
    await waitForCopies(rig, bob.wallet, 1);

    const client = imapFlow(rig, bob.address, bob.password);
    await client.connect();
    try {
      const boxes = await client.list();
      expect(boxes.map((b) => b.path).sort()).toEqual(['Drafts', 'INBOX', 'Junk', 'Sent', 'Trash']);
      expect(boxes.find((b) => b.path === 'Sent')?.specialUse).toBe('\\Sent');
      expect(boxes.find((b) => b.path === 'Trash')?.specialUse).toBe('\\Trash');

      const inbox = await client.mailboxOpen('INBOX');
      expect(inbox.exists).toBe(1);
      const msg = await one(client, '*', {
        uid: true,
        source: true,
        envelope: true,
        flags: true,
        bodyStructure: true,
        size: true,
      });
      // The stored copy: the message as sent under its trace fields.
      expect(withoutTrace((msg.source as Buffer).toString('utf8'))).toBe(raw1);
      expect(msg.size).toBe((msg.source as Buffer).length);
      expect(msg.envelope?.subject).toBe('first message');
      expect(msg.envelope?.from?.[0]).toMatchObject({ name: 'Ann Example', address: 'ann@remote.example' });
      expect(msg.bodyStructure?.type).toBe('text/plain');
      // BODY[] without PEEK (imapflow peeks) leaves it unseen.
      expect(msg.flags?.has('\\Seen')).toBe(false);

      await client.messageFlagsAdd({ uid: String(msg.uid) }, ['\\Flagged', '$Important'], { uid: true });
      const flagged = await one(client, String(msg.uid), { flags: true }, { uid: true });
      expect([...(flagged.flags ?? [])].sort()).toEqual(['$Important', '\\Flagged']);
      const rows = await new MessagesRepo(rig.serving.store.db).listForWallet(bob.wallet);
      expect(rows[0]?.flags).toEqual(['$Important', '\\Flagged']);

      expect(await client.search({ subject: 'first' }, { uid: true })).toEqual([msg.uid]);
      expect(await client.search({ body: 'LEADING DOT' }, { uid: true })).toEqual([msg.uid]);
      expect(await client.search({ subject: 'nothing like it' }, { uid: true })).toEqual([]);

      await client.mailboxCreate('Archive/2026');
      const moved = await client.messageMove({ uid: String(msg.uid) }, 'Archive/2026', { uid: true });
      expect(moved ? moved.uidMap?.size : 0).toBe(1);
      expect(await count(client, 'INBOX')).toBe(0);
      const archive = await client.mailboxOpen('Archive/2026');
      expect(archive.exists).toBe(1);
      const again = await one(client, '1', { source: true, flags: true });
      expect(Buffer.compare(again.source as Buffer, msg.source as Buffer)).toBe(0);
      expect(again.flags?.has('\\Flagged')).toBe(true);

      // APPEND a Sent copy: stored sealed to the wallet key and wrapped for the reader key.
      const sentRaw = rawMessage('a sent copy', 'Sent from a mail client\r\n');
      const appended = await client.append('Sent', sentRaw, ['\\Seen']);
      expect(appended ? appended.uid : 0).toBe(1);
      const sentRow = (await new MessagesRepo(rig.serving.store.db).listForWallet(bob.wallet)).find((r) =>
        r.id.startsWith('a.'),
      );
      if (!sentRow) throw new Error('no appended row');
      const blobs = new BlobStore(`${rig.dataDir}/blobs`);
      const sealed = await blobs.read(sentRow.blobKey);
      const opened = await openSealed(new Uint8Array(sealed), walletEncryptionKeypair(bob.key.secretKey));
      expect(Buffer.from(opened.raw).toString('utf8')).toBe(sentRaw);
      await client.mailboxOpen('Sent');
      const sent = await one(client, '1', { source: true, flags: true });
      expect(sent.source?.toString('utf8')).toBe(sentRaw);
      expect(sent.flags?.has('\\Seen')).toBe(true);

      // Expunge the moved delivery: its row goes, the pin is released and the Email account closes.
      await client.mailboxOpen('Archive/2026');
      await client.messageDelete('1');
      expect(await count(client, 'Archive/2026')).toBe(0);
      const left = await new MessagesRepo(rig.serving.store.db).listForWallet(bob.wallet);
      expect(left.map((r) => r.id)).toEqual([sentRow.id]);
      const deadline = Date.now() + 20_000;
      while ((await listInbox(rig.chain.connection, rig.chain.programId, bob.key.publicKey)).length > 0) {
        if (Date.now() > deadline) throw new Error('the Email account was not closed');
        await sleep(200);
      }

      // IDLE: a new delivery shows up as EXISTS without the client asking.
      await client.mailboxOpen('INBOX');
      const exists = new Promise<{ count: number }>((resolve) => client.once('exists', resolve));
      const idling = client.idle();
      const raw2 = rawMessage('second message');
      await deliver(rig, bob.address, raw2);
      expect((await exists).count).toBe(1);
      const second = await one(client, '1', { source: true });
      await idling;
      expect(withoutTrace(second.source?.toString('utf8') ?? '')).toBe(raw2);
    } finally {
      await client.logout().catch(() => client.close());
    }
  }, 120_000);

  it('logs in with the alias address and with the bare wallet; a wrong password fails', async () => {
    const rig = await startMailRig();
    const carol = await mailUser(rig, { alias: 'carol' });
    for (const user of ['carol@mail.test', carol.wallet]) {
      const c = imapFlow(rig, user, carol.password);
      await c.connect();
      expect(c.authenticated).toBeTruthy();
      await c.logout();
    }
    const bad = new ImapFlow({
      host: '127.0.0.1',
      port: rig.imapPort as number,
      secure: true,
      tls: { rejectUnauthorized: false },
      auth: { user: carol.address, pass: 'not the password' },
      logger: false,
    });
    await expect(bad.connect()).rejects.toThrow();
    bad.close();
  }, 120_000);
});
