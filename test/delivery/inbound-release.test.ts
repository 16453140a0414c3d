// Deleting a delivered message releases the operator's pin only (rule 6):
// the unpin job removes it from the operator pin (Kubo RPC here, through
// its double), the recipient's own copy stays, and the DeleteMail job closes
// the Email account on chain with the rent going back to the authority.
import { type AddressInfo, createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import nodemailer from 'nodemailer';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { getEmailAt, listInbox } from '../../chain/client/index.ts';
import { startPind } from '../../pinning/pind/server.ts';
import {
  type DeleteMailJobData,
  QUEUE_DELETE_MAIL,
  QUEUE_UNPIN,
  type UnpinJobData,
} from '../../src/contracts/inbound-jobs.ts';
import { AccountsRepo, MessagesRepo } from '../../src/core/store/index.ts';
import { sealPinProvider } from '../../src/mail/provider-credentials.ts';
import { startKuboRpcDouble } from '../support/doubles/kubo-rpc-double.ts';
import { RIG_DOMAIN, startServeRig } from '../support/serve-rig.ts';
import { tempDir } from '../support/temp-dir.ts';

describe('releasing a delivered message', () => {
  it('unpins from the operator only and closes the Email account', async () => {
    const kubo = await startKuboRpcDouble();
    const own = await startPind({
      dataDir: tempDir(),
      pin: { host: '127.0.0.1', port: 0 },
      maxPinBytes: 1 << 20,
      logger: pino({ level: 'silent' }),
    });
    try {
      const rig = await startServeRig({ kuboUrl: kubo.url });
      const owner = await rig.mail.mailbox();
      const wallet = owner.publicKey.toBase58();
      const accounts = new AccountsRepo(rig.serving.store.db);
      await accounts.create(wallet, { source: 'self' });
      await accounts.setPinProvider(wallet, {
        kind: 'remote',
        sealedCredentials: sealPinProvider(rig.credentialKey, wallet, {
          kind: 'remote',
          endpoint: own.pinUrl,
        }),
      });
      await nodemailer
        .createTransport({ host: '127.0.0.1', port: rig.mxPort, secure: false, ignoreTLS: true })
        .sendMail({
          envelope: { from: 'a@remote.example', to: [`${wallet}@${RIG_DOMAIN}`] },
          raw: 'Subject: x\r\n\r\ny\r\n',
        });

      const messages = new MessagesRepo(rig.serving.store.db);
      let copy = (await messages.listForWallet(wallet))[0];
      for (let i = 0; i < 200 && !copy; i++) {
        await sleep(50);
        copy = (await messages.listForWallet(wallet))[0];
      }
      if (!copy?.cid || !copy.emailAddress) throw new Error('not delivered');
      expect(kubo.pins.has(copy.cid)).toBe(true);
      for (let i = 0; i < 100 && (await fetch(`${own.gatewayUrl}/ipfs/${copy.cid}`)).status !== 200; i++)
        await sleep(50);

      // What a deletion enqueues (the admin sweep does exactly this per copy).
      const unpin = new Queue<UnpinJobData>(QUEUE_UNPIN, { connection: rig.redis, prefix: rig.prefix });
      const del = new Queue<DeleteMailJobData>(QUEUE_DELETE_MAIL, {
        connection: rig.redis,
        prefix: rig.prefix,
      });
      await unpin.add('unpin', { cid: copy.cid, wallet, messageId: copy.id });
      await del.add('delete-mail', { wallet, emailAddress: copy.emailAddress, messageId: copy.id });
      for (let i = 0; i < 200 && kubo.pins.has(copy.cid); i++) await sleep(50);
      expect(kubo.pins.has(copy.cid)).toBe(false);
      let email = await getEmailAt(rig.chain.connection, rig.chain.programId, copy.emailAddress);
      for (let i = 0; i < 200 && email; i++) {
        await sleep(50);
        email = await getEmailAt(rig.chain.connection, rig.chain.programId, copy.emailAddress);
      }
      expect(email).toBeNull();
      expect(await listInbox(rig.chain.connection, rig.chain.programId, owner.publicKey)).toHaveLength(0);
      // The recipient's own copy is untouched.
      expect((await fetch(`${own.gatewayUrl}/ipfs/${copy.cid}`)).status).toBe(200);
      await unpin.close();
      await del.close();
    } finally {
      await own.close();
      await kubo.close();
    }
  });

  it('keeps retrying while the operator pin is down and delivers once it is back', async () => {
    const port = await freePort();
    const rig = await startServeRig({ kuboUrl: `http://127.0.0.1:${port}` });
    const owner = await rig.mail.mailbox();
    const wallet = owner.publicKey.toBase58();
    await nodemailer
      .createTransport({ host: '127.0.0.1', port: rig.mxPort, secure: false, ignoreTLS: true })
      .sendMail({
        envelope: { from: 'a@remote.example', to: [`${wallet}@${RIG_DOMAIN}`] },
        raw: 'Subject: x\r\n\r\ny\r\n',
      });
    // Nothing answers on the pin port: attempts fail and are retried, nothing reaches the chain.
    await sleep(2500);
    expect(await listInbox(rig.chain.connection, rig.chain.programId, owner.publicKey)).toHaveLength(0);
    const kubo = await startKuboRpcDouble({ port });
    try {
      let inbox = await listInbox(rig.chain.connection, rig.chain.programId, owner.publicKey);
      for (let i = 0; i < 400 && inbox.length === 0; i++) {
        await sleep(50);
        inbox = await listInbox(rig.chain.connection, rig.chain.programId, owner.publicKey);
      }
      expect(inbox).toHaveLength(1);
      expect(kubo.pins.has(inbox[0]?.email.cid ?? '')).toBe(true);
    } finally {
      await kubo.close();
    }
  }, 60_000);
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as AddressInfo;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}
