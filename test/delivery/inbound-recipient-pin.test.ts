// The recipient's own pin provider at delivery: every kind against its
// double (hosted_jwt, s3_bucket) or a real pind (remote) gets the same CID
// the chain records; an outage of the provider leaves delivery untouched;
// no_ipfs wins over the provider.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Keypair, PublicKey } from '@solana/web3.js';
import nodemailer from 'nodemailer';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { listInbox, setMailboxFlagsInstruction } from '../../chain/client/index.ts';
import { startPind } from '../../pinning/pind/server.ts';
import type { PinProviderConfig } from '../../src/contracts/pin-provider.ts';
import { AccountsRepo } from '../../src/core/store/index.ts';
import { sealPinProvider } from '../../src/mail/provider-credentials.ts';
import { startHostedPinDouble } from '../support/doubles/hosted-pin-double.ts';
import { startS3Double } from '../support/doubles/s3-double.ts';
import { RIG_DOMAIN, type ServeRig, startServeRig } from '../support/serve-rig.ts';
import { tempDir } from '../support/temp-dir.ts';

async function deliverOne(rig: ServeRig, to: Keypair, subject: string): Promise<{ cid: string; ms: number }> {
  const t0 = Date.now();
  await nodemailer
    .createTransport({ host: '127.0.0.1', port: rig.mxPort, secure: false, ignoreTLS: true })
    .sendMail({
      envelope: { from: 'ann@remote.example', to: [`${to.publicKey.toBase58()}@${RIG_DOMAIN}`] },
      raw: `Subject: ${subject}\r\n\r\nbody of ${subject}\r\n`,
    });
  const entry = await waitFirst(rig, to.publicKey);
  return { cid: entry, ms: Date.now() - t0 };
}

async function waitFirst(rig: ServeRig, owner: PublicKey): Promise<string> {
  for (let i = 0; i < 300; i++) {
    const [e] = await listInbox(rig.chain.connection, rig.chain.programId, owner, { limit: 1 });
    if (e) return e.email.cid;
    await sleep(50);
  }
  throw new Error('no Email account');
}

async function withProvider(rig: ServeRig, owner: Keypair, cfg: PinProviderConfig): Promise<void> {
  const accounts = new AccountsRepo(rig.serving.store.db);
  const wallet = owner.publicKey.toBase58();
  await accounts.create(wallet, { source: 'self' });
  await accounts.setPinProvider(wallet, {
    kind: cfg.kind,
    sealedCredentials: sealPinProvider(rig.credentialKey, wallet, cfg),
  });
}

async function until(probe: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(50);
  }
}

describe('recipient pin at delivery', () => {
  it('pins to hosted_jwt, s3_bucket and remote providers with the CID the chain records', async () => {
    const rig = await startServeRig();
    const hosted = await startHostedPinDouble({ jwt: 'jwt-of-the-recipient' });
    const s3 = await startS3Double({
      accessKey: 'AKIDEXAMPLE',
      secretKey: 'secret-example',
      buckets: ['mail'],
    });
    const own = await startPind({
      dataDir: tempDir(),
      pin: { host: '127.0.0.1', port: 0 },
      authToken: 'own-pind-token',
      maxPinBytes: 1 << 20,
      logger: pino({ level: 'silent' }),
    });
    try {
      const [a, b, c] = await Promise.all([rig.mail.mailbox(), rig.mail.mailbox(), rig.mail.mailbox()]);
      if (!a || !b || !c) throw new Error('mailboxes');
      await withProvider(rig, a, {
        kind: 'hosted_jwt',
        jwt: hosted.jwt,
        gateway: 'https://gw.example',
        api_url: hosted.url,
      });
      await withProvider(rig, b, {
        kind: 's3_bucket',
        access_key: 'AKIDEXAMPLE',
        secret_key: 'secret-example',
        bucket: 'mail',
        endpoint: s3.url,
      });
      await withProvider(rig, c, { kind: 'remote', endpoint: own.pinUrl, auth_token: 'own-pind-token' });

      const ra = await deliverOne(rig, a, 'to-hosted');
      const rb = await deliverOne(rig, b, 'to-s3');
      const rc = await deliverOne(rig, c, 'to-remote');

      await until(() => hosted.uploads.length === 1);
      expect(hosted.uploads[0]?.cid).toBe(ra.cid);
      await until(() => (s3.buckets.get('mail')?.size ?? 0) === 1);
      const [object] = [...(s3.buckets.get('mail')?.values() ?? [])];
      expect(object?.cid).toBe(rb.cid);
      let status = 0;
      for (let i = 0; i < 100 && status !== 200; i++) {
        status = (await fetch(`${own.gatewayUrl}/ipfs/${rc.cid}`)).status;
        if (status !== 200) await sleep(50);
      }
      expect(status).toBe(200);
      // The operator's gateway serves the same CID.
      expect((await fetch(`${rig.gatewayUrl}/ipfs/${rc.cid}`)).status).toBe(200);
    } finally {
      await own.close();
      await s3.close();
      await hosted.close();
    }
  });

  it('a hanging or failing provider changes nothing about delivery', async () => {
    const rig = await startServeRig();
    const hosted = await startHostedPinDouble({ jwt: 'jwt-x' });
    try {
      const [plain, hung] = await Promise.all([rig.mail.mailbox(), rig.mail.mailbox()]);
      if (!plain || !hung) throw new Error('mailboxes');
      await withProvider(rig, hung, {
        kind: 'hosted_jwt',
        jwt: 'jwt-x',
        gateway: 'https://gw.example',
        api_url: hosted.url,
      });
      hosted.mode = 'hang';
      const baseline = await deliverOne(rig, plain, 'baseline');
      const withOutage = await deliverOne(rig, hung, 'outage');
      // The provider hangs for the whole timeout (3 s in the rig); delivery does not wait for it.
      expect(withOutage.ms).toBeLessThan(baseline.ms + 2500);
      expect(withOutage.cid).toMatch(/^baf/);
      hosted.mode = 'error';
      const second = await deliverOne(rig, plain, 'after');
      expect(second.cid).toMatch(/^baf/);
      expect(hosted.uploads).toHaveLength(0);
    } finally {
      await hosted.close();
    }
  });

  it('no_ipfs wins over the provider: nothing is pinned anywhere', async () => {
    const rig = await startServeRig();
    const hosted = await startHostedPinDouble({ jwt: 'jwt-y' });
    try {
      const owner = await rig.mail.mailbox();
      await rig.chain.send(
        [
          setMailboxFlagsInstruction({
            programId: rig.chain.programId,
            owner: owner.publicKey,
            noIpfs: true,
          }),
        ],
        [owner],
      );
      await withProvider(rig, owner, {
        kind: 'hosted_jwt',
        jwt: 'jwt-y',
        gateway: 'https://gw.example',
        api_url: hosted.url,
      });
      const r = await deliverOne(rig, owner, 'private');
      expect(r.cid).toMatch(/^b3:/);
      await sleep(1000);
      expect(hosted.requests).toBe(0);
    } finally {
      await hosted.close();
    }
  });
});
