// The Sent copy of submitted mail against the real store (SQLite), a real
// submission listener (SMTP over TLS) and the webmail hand-off: stored only
// once the message is queued, sealed to the wallet and wrapped for the
// account's reader key, \Seen, idempotent per submission; a refused
// submission keeps none and a failing copy neither fails nor repeats the send.
import { randomBytes } from 'node:crypto';
import nodemailer from 'nodemailer';
import { describe, expect, it } from 'vitest';
import { FoldersRepo, MessagesRepo } from '../../src/core/store/index.ts';
import { type SentCopy, sentCopyId, storeSentCopy } from '../../src/edge/submission/sent-copy.ts';
import { submitMessage } from '../../src/edge/submission/submit.ts';
import { SubmitError } from '../../src/edge/submission/submit-error.ts';
import { readerPublicKeys } from '../../src/mail/reader-keys/index.ts';
import { openSealed, walletEncryptionKeypair } from '../../src/mail/seal/index.ts';
import {
  DOMAIN,
  message,
  PASSWORD,
  type SubmissionRig,
  startSubmissionRig,
} from '../support/submission-rig.ts';

function wireSentCopy(r: SubmissionRig): void {
  const deps = { db: r.store.db, blobs: r.blobs, readerKeys: readerPublicKeys(r.store.db) };
  r.deps.sentCopy = (copy: SentCopy) => storeSentCopy(deps, copy);
}

async function sentRows(r: SubmissionRig, wallet: string) {
  const folders = new FoldersRepo(r.store.db);
  const box = await folders.getMailbox(wallet, 'Sent');
  if (!box) return [];
  return (await new MessagesRepo(r.store.db).listForWallet(wallet)).filter((m) => m.mailboxId === box.id);
}

async function openCopy(r: SubmissionRig, blobKey: string) {
  const sealed = await r.blobs.read(blobKey);
  return openSealed(new Uint8Array(sealed), walletEncryptionKeypair(r.alice.secretKey));
}

describe('the Sent copy of submitted mail', () => {
  it('webmail hand-off: the queued message, sealed to the wallet, wrapped for the reader key, \\Seen, in Sent', async () => {
    const r = await startSubmissionRig();
    wireSentCopy(r);
    const wallet = r.alice.publicKey.toBase58();
    const raw = Buffer.from(message(r.aliceAddress, r.bobAddress, 'kept in Sent', 'Body of the sent mail.'));
    const out = await submitMessage(r.deps, {
      wallet,
      raw,
      envelopeFrom: r.aliceAddress,
      recipients: [r.bobAddress, 'friend@remote.example'],
    });
    const rows = await sentRows(r, wallet);
    expect(rows).toHaveLength(1);
    const [row] = rows;
    expect(row).toMatchObject({
      id: sentCopyId(out.msgid),
      uid: 1,
      flags: ['\\Seen'],
      cid: null,
      publishedByUs: false,
      pinnedByOperator: false,
      emailAddress: null,
    });
    const opened = await openCopy(r, row?.blobKey ?? '');
    const text = Buffer.from(opened.raw).toString('utf8');
    // What the recipients got: the trace fields on top, then the bytes as submitted.
    expect(text).toContain(`\tby mx.mail.test (Sealpost) with HTTP id ${out.msgid};`);
    expect(text).toContain(`Message-ID: <${out.msgid}@mx.mail.test>`);
    expect(text.endsWith(raw.toString('utf8'))).toBe(true);
    expect(opened.envelope).toMatchObject({
      from: r.aliceAddress,
      to: `${r.bobAddress}, friend@remote.example`,
    });
    // The IMAP reader key holds a wrap: the folder is readable over IMAP.
    const readerId = (await readerPublicKeys(r.store.db)(wallet))[0]?.readerId ?? '';
    const box = await new FoldersRepo(r.store.db).getMailbox(wallet, 'Sent');
    const readable = await new FoldersRepo(r.store.db).listReadable(wallet, box?.id ?? '', readerId);
    expect(readable.map((m) => m.id)).toEqual([sentCopyId(out.msgid)]);
    // Sealed at rest: the blob holds no plaintext.
    expect((await r.blobs.read(row?.blobKey ?? '')).includes(Buffer.from('Body of the sent mail.'))).toBe(
      false,
    );
  });

  it('SMTP submission on the listener keeps the copy too; the SMTP client sees 250 once', async () => {
    const r = await startSubmissionRig();
    wireSentCopy(r);
    const wallet = r.alice.publicKey.toBase58();
    const info = await nodemailer
      .createTransport({
        host: '127.0.0.1',
        port: r.port,
        secure: true,
        auth: { user: r.aliceAddress, pass: PASSWORD },
        tls: { rejectUnauthorized: false },
      })
      .sendMail({
        envelope: { from: r.aliceAddress, to: ['friend@remote.example'] },
        raw: message(r.aliceAddress, 'friend@remote.example', 'over SMTP', 'Sent with a mail client.'),
      });
    expect(info.response).toMatch(/^250 /);
    const rows = await sentRows(r, wallet);
    expect(rows).toHaveLength(1);
    const text = Buffer.from((await openCopy(r, rows[0]?.blobKey ?? '')).raw).toString('utf8');
    expect(text).toMatch(/\r\n\tby mx\.mail\.test \(Sealpost\) with ESMTPSA id /);
    expect(text).toContain('Sent with a mail client.');
    expect(await r.outbound.count()).toBe(1);
  });

  it('a refused submission keeps no copy; a failing copy neither fails nor repeats the send', async () => {
    const r = await startSubmissionRig();
    wireSentCopy(r);
    const wallet = r.alice.publicKey.toBase58();
    const gated = `${r.gated.publicKey.toBase58()}@${DOMAIN}`;
    const err = await submitMessage(r.deps, {
      wallet,
      raw: Buffer.from(message(r.aliceAddress, gated)),
      envelopeFrom: r.aliceAddress,
      recipients: [r.bobAddress, gated],
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SubmitError);
    expect((err as SubmitError).code).toBe('postage_required');
    // Only the held recipient is named; bob passed.
    expect((err as SubmitError).detail.postage).toEqual([
      { address: gated, wallet: r.gated.publicKey.toBase58(), requiredPostage: 5000n },
    ]);
    expect(await sentRows(r, wallet)).toEqual([]);
    expect(await r.deliver.count()).toBe(0);

    let calls = 0;
    r.deps.sentCopy = async () => {
      calls++;
      throw new Error('store is read-only');
    };
    const out = await submitMessage(r.deps, {
      wallet,
      raw: Buffer.from(message(r.aliceAddress, 'friend@remote.example')),
      envelopeFrom: r.aliceAddress,
      recipients: ['friend@remote.example'],
    });
    expect(out.remote).toBe(1);
    expect(calls).toBe(1);
    const jobs = await r.outbound.getJobs(['waiting']);
    expect(jobs.map((j) => j.id)).toEqual([out.msgid]);
  });

  it('stores once per submission, and none for a wallet without an account', async () => {
    const r = await startSubmissionRig();
    const wallet = r.alice.publicKey.toBase58();
    const deps = { db: r.store.db, blobs: r.blobs };
    const copy: SentCopy = {
      wallet,
      msgid: randomBytes(8).toString('hex'),
      raw: Buffer.from(message(r.aliceAddress, r.bobAddress)),
      envelopeFrom: r.aliceAddress,
      recipients: [r.bobAddress],
      sentAt: Date.now(),
    };
    const first = await storeSentCopy(deps, copy);
    const second = await storeSentCopy(deps, copy);
    expect(first).toMatchObject({ stored: true, created: true });
    expect(second).toMatchObject({ stored: true, created: false });
    expect(await sentRows(r, wallet)).toHaveLength(1);
    // The first copy made the account's default folders, as a first IMAP login would.
    expect((await new FoldersRepo(r.store.db).listMailboxes(wallet)).map((b) => b.name).sort()).toEqual([
      'Drafts',
      'INBOX',
      'Junk',
      'Sent',
      'Trash',
    ]);
    const stranger = await storeSentCopy(deps, { ...copy, wallet: r.bob.publicKey.toBase58() });
    expect(stranger).toEqual({ stored: false, reason: 'no_account' });
  });
});
