// The reader actions' server side over real HTTP (src/edge/api/routes/mail.ts):
// move (a Junk move trains a real rspamd with Bayes from the plaintext the
// client sends), expunge (the copy's release queued on real Redis), drafts
// stored like IMAP APPEND (sealed to the wallet, replaced, refused in words),
// and every change told to the store's mail-change sink, which is how IMAP
// IDLE sessions hear of it. SQLite, real Redis, no double of our modules.
import { Keypair } from '@solana/web3.js';
import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { QUEUE_DELETE_MAIL } from '../../src/contracts/inbound-jobs.ts';
import type { MailRouteDeps } from '../../src/edge/api/routes/mail.ts';
import { createCopyReleaser } from '../../src/edge/imap/mail/release.ts';
import { openSealed, walletEncryptionKeypair } from '../../src/mail/seal/index.ts';
import { SpamLearner } from '../../src/mail/spam/learn.ts';
import { RspamdClient } from '../../src/mail/spam/rspamd.ts';
import { call, deliverSealed, login, type MailApiRig, useMailApiRigs } from '../support/mail-api-rig.ts';
import { rspamdLearned, startTestRspamd } from '../support/rspamd.ts';

type Rig = MailApiRig;
const startMailRig = useMailApiRigs();
const startRig = (extra: (r: Omit<Rig, 'url' | 'app'>) => Partial<MailRouteDeps> = () => ({})) =>
  startMailRig({ mail: extra });

/** Long enough for rspamd's Bayes classifier to learn from. */
function longBody(seed: string): string {
  const lines: string[] = [];
  for (let i = 0; i < 9; i++)
    lines.push(
      Array.from({ length: 10 }, (_, j) => `${seed}${(i * 10 + j) % 23} weekly discount offer`).join(' '),
    );
  return lines.join('\r\n');
}

function rawOf(subject: string, text = `body ${subject}`): Buffer {
  return Buffer.from(
    `From: a@remote.example\r\nSubject: ${subject}\r\nMessage-ID: <${subject}@remote.example>\r\n\r\n${text}\r\n`,
  );
}

/** A delivered copy as the pipeline stores it: sealed to the wallet. */
async function deliver(rig: Rig, kp: Keypair, id: string, raw: Buffer, chain = false): Promise<void> {
  await deliverSealed(rig, kp, id, new Uint8Array(raw), { chain });
}

async function folderOf(rig: Rig, id: string): Promise<string | undefined> {
  const m = await rig.messages.get(id);
  if (!m) return undefined;
  return (await rig.messages.listMailboxes(m.wallet)).find((b) => b.id === m.mailboxId)?.name;
}

describe('reader actions: move, expunge, drafts', { timeout: 120_000 }, () => {
  it('moves to Trash and back, refuses in words, and tells IMAP IDLE of each change', async () => {
    const rig = await startRig();
    const ann = Keypair.generate();
    const bob = Keypair.generate();
    await deliver(rig, ann, 'm1.0', rawOf('one'));
    await deliver(rig, bob, 'm2.0', rawOf('bob'));
    const token = await login(rig, ann);
    const wallet = ann.publicKey.toBase58();

    rig.changes.length = 0;
    const moved = await call(rig, 'POST', '/v1/mail/messages/m1.0/move', {
      token,
      json: { mailbox: 'Trash' },
    });
    expect(moved.status).toBe(200);
    expect(moved.body.learned).toBeNull();
    expect((moved.body.mailbox as { name: string }).name).toBe('Trash');
    expect(await folderOf(rig, 'm1.0')).toBe('Trash');
    // The same announcement IMAP MOVE makes (every folder of the wallet).
    expect(rig.changes.some((c) => c.wallet === wallet)).toBe(true);
    const trash = await call(rig, 'GET', '/v1/mail/messages?mailbox=Trash', { token });
    expect((trash.body.messages as { id: string }[]).map((m) => m.id)).toEqual(['m1.0']);

    // Refusals name the problem.
    const again = await call(rig, 'POST', '/v1/mail/messages/m1.0/move', {
      token,
      json: { mailbox: 'Trash' },
    });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('already_in_mailbox');
    const nowhere = await call(rig, 'POST', '/v1/mail/messages/m1.0/move', {
      token,
      json: { mailbox: 'Nope' },
    });
    expect(nowhere.status).toBe(400);
    expect(nowhere.body).toEqual({ error: 'unknown_mailbox', message: 'you have no folder "Nope"' });
    for (const id of ['m9.9', 'm2.0']) {
      const r = await call(rig, 'POST', `/v1/mail/messages/${id}/move`, {
        token,
        json: { mailbox: 'INBOX' },
      });
      expect(r.status).toBe(404);
      expect(r.body.error).toBe('message_not_found');
    }
    const badRaw = await call(rig, 'POST', '/v1/mail/messages/m1.0/move', {
      token,
      json: { mailbox: 'INBOX', learn_raw: 'not base64!' },
    });
    expect(badRaw.status).toBe(400);
    expect(badRaw.body.error).toBe('invalid_request');
    expect(await folderOf(rig, 'm1.0')).toBe('Trash');

    // Archive is made on first use; a user folder by id works too.
    const archived = await call(rig, 'POST', '/v1/mail/messages/m1.0/move', {
      token,
      json: { mailbox: 'Archive' },
    });
    expect(archived.status).toBe(200);
    expect(await folderOf(rig, 'm1.0')).toBe('Archive');
    const inbox = (await rig.messages.listMailboxes(wallet)).find((b) => b.name === 'INBOX');
    const back = await call(rig, 'POST', '/v1/mail/messages/m1.0/move', {
      token,
      json: { mailbox: inbox?.id },
    });
    expect(back.status).toBe(200);
    expect(await folderOf(rig, 'm1.0')).toBe('INBOX');
  });

  it('expunges for good, queues the release of a chain-published copy, and announces it', async () => {
    const rig = await startRig((r) => {
      const releaser = createCopyReleaser(r.redis, r.prefix);
      return { releaseCopies: (rows) => releaser.release(rows) };
    });
    const ann = Keypair.generate();
    await deliver(rig, ann, 'm1.0', rawOf('gone'), true);
    const token = await login(rig, ann);
    const boxId = (await rig.messages.get('m1.0'))?.mailboxId;
    rig.changes.length = 0;
    const del = await call(rig, 'DELETE', '/v1/mail/messages/m1.0', { token });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ deleted: 'm1.0' });
    expect(await rig.messages.get('m1.0')).toBeUndefined();
    expect(rig.changes).toEqual([{ wallet: ann.publicKey.toBase58(), mailboxIds: [boxId] }]);
    const queue = new Queue(QUEUE_DELETE_MAIL, { connection: rig.redis, prefix: rig.prefix });
    try {
      expect((await queue.getJob('delete-mail-m1.0'))?.data).toMatchObject({ messageId: 'm1.0' });
    } finally {
      await queue.close();
    }
    const twice = await call(rig, 'DELETE', '/v1/mail/messages/m1.0', { token });
    expect(twice.status).toBe(404);
    expect(twice.body.error).toBe('message_not_found');
  });

  it('a move into Junk trains a real rspamd (Bayes) as spam, out of Junk as ham, into Trash not at all', async () => {
    const rspamd = await startTestRspamd({ bayes: true });
    let learner: SpamLearner | undefined;
    const rig = await startRig(() => {
      learner = new SpamLearner({
        client: new RspamdClient({ url: rspamd.controllerUrl, timeoutMs: 5000, password: rspamd.password }),
      });
      return { learner };
    });
    const ann = Keypair.generate();
    const raw = rawOf('newsletter', longBody('junky'));
    await deliver(rig, ann, 'm1.0', raw);
    const token = await login(rig, ann);
    expect(await rspamdLearned(rspamd)).toBe(0);

    const learn_raw = raw.toString('base64');
    const junk = await call(rig, 'POST', '/v1/mail/messages/m1.0/move', {
      token,
      json: { mailbox: 'Junk', learn_raw },
    });
    expect(junk.status).toBe(200);
    expect(junk.body.learned).toBe('spam');
    await learner?.settled();
    expect(learner?.stats.learned).toBe(1);
    expect(await rspamdLearned(rspamd)).toBe(1);

    const ham = await call(rig, 'POST', '/v1/mail/messages/m1.0/move', {
      token,
      json: { mailbox: 'INBOX', learn_raw },
    });
    expect(ham.body.learned).toBe('ham');
    await learner?.settled();
    expect(await rspamdLearned(rspamd)).toBe(2);

    // Junk → Trash is no verdict; nor INBOX → Trash.
    await call(rig, 'POST', '/v1/mail/messages/m1.0/move', { token, json: { mailbox: 'Junk', learn_raw } });
    await learner?.settled();
    const toTrash = await call(rig, 'POST', '/v1/mail/messages/m1.0/move', {
      token,
      json: { mailbox: 'Trash', learn_raw },
    });
    expect(toTrash.body.learned).toBeNull();
    await learner?.settled();
    expect(learner?.stats.learned).toBe(3);

    // With the controller gone the move still succeeds; the failure is counted.
    await rspamd.close();
    await call(rig, 'POST', '/v1/mail/messages/m1.0/move', { token, json: { mailbox: 'INBOX' } });
    const late = await call(rig, 'POST', '/v1/mail/messages/m1.0/move', {
      token,
      json: { mailbox: 'Junk', learn_raw },
    });
    expect(late.status).toBe(200);
    await learner?.settled();
    expect(learner?.stats.failed).toBe(1);
    expect(await folderOf(rig, 'm1.0')).toBe('Junk');
  });

  it('stores drafts sealed to the wallet in Drafts, replaces them, and refuses in words', async () => {
    const rig = await startRig();
    const ann = Keypair.generate();
    const token = await login(rig, ann);
    const draft = Buffer.from('To: bob@example.org\r\nSubject: plan\r\n\r\nfirst words\r\n');
    const early = await call(rig, 'POST', '/v1/mail/drafts', {
      token,
      json: { raw: draft.toString('base64') },
    });
    expect(early.status).toBe(409);
    expect(early.body.error).toBe('account_missing');
    expect((await call(rig, 'POST', '/v1/account', { token })).status).toBe(201);

    rig.changes.length = 0;
    const first = await call(rig, 'POST', '/v1/mail/drafts', {
      token,
      json: { raw: draft.toString('base64') },
    });
    expect(first.status).toBe(201);
    expect(first.body.flags).toEqual(['\\Draft', '\\Seen']);
    const id = first.body.id as string;
    expect(await folderOf(rig, id)).toBe('Drafts');
    expect(rig.changes.length).toBeGreaterThan(0);
    // Sealed to the wallet's key: the wallet opens it, the server keeps only ciphertext.
    const stored = await rig.messages.get(id);
    const sealed = await rig.blobs.read(stored?.blobKey as string);
    expect(sealed.includes(Buffer.from('first words'))).toBe(false);
    const opened = await openSealed(new Uint8Array(sealed), walletEncryptionKeypair(ann.secretKey));
    expect(Buffer.from(opened.raw).toString()).toBe(draft.toString());

    const next = Buffer.from('To: bob@example.org\r\nSubject: plan\r\n\r\nsecond words\r\n');
    const replaced = await call(rig, 'POST', '/v1/mail/drafts', {
      token,
      json: { raw: next.toString('base64'), replaces: id },
    });
    expect(replaced.status).toBe(201);
    expect(await rig.messages.get(id)).toBeUndefined();
    const drafts = await call(rig, 'GET', '/v1/mail/messages?mailbox=Drafts', { token });
    expect((drafts.body.messages as { id: string }[]).map((m) => m.id)).toEqual([replaced.body.id]);

    await deliver(rig, ann, 'm1.0', rawOf('inbox'));
    const notDraft = await call(rig, 'POST', '/v1/mail/drafts', {
      token,
      json: { raw: next.toString('base64'), replaces: 'm1.0' },
    });
    expect(notDraft.status).toBe(409);
    expect(notDraft.body.error).toBe('not_a_draft');
    const unknown = await call(rig, 'POST', '/v1/mail/drafts', {
      token,
      json: { raw: next.toString('base64'), replaces: 'nope' },
    });
    expect(unknown.status).toBe(404);
    // A sent draft is removed like any message.
    expect((await call(rig, 'DELETE', `/v1/mail/messages/${replaced.body.id}`, { token })).status).toBe(200);
  });

  it('the routes are in the OpenAPI document', async () => {
    const rig = await startRig();
    const doc = (await call(rig, 'GET', '/v1/openapi.json')).body as {
      paths: Record<string, Record<string, unknown>>;
    };
    expect(Object.keys(doc.paths['/v1/mail/messages/{id}/move'] ?? {})).toEqual(['post']);
    expect(Object.keys(doc.paths['/v1/mail/messages/{id}'] ?? {}).sort()).toEqual(['delete', 'patch']);
    expect(Object.keys(doc.paths['/v1/mail/drafts'] ?? {})).toEqual(['post']);
  });
});
