// Inbound sender checks over real SMTP against a DNS double on loopback:
// SPF at MAIL FROM (fail → 550 5.7.23, DNS trouble → 451 4.7.24) and
// dmarc-lite at the end of DATA (p=reject failure → 550 5.7.1), each
// evaluation recorded with its source IP, nothing queued for a refusal.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { FlowProducer, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import nodemailer from 'nodemailer';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type DeliverJobData, QUEUE_DELIVER } from '../../src/contracts/inbound-jobs.ts';
import { BlobStore } from '../../src/core/blobs/blob-store.ts';
import { startMx } from '../../src/edge/mx/mx-server.ts';
import { SenderAuth, type SenderAuthMode, type SenderEvaluation } from '../../src/edge/mx/sender-auth.ts';
import { ChainView } from '../../src/mail/chain-view.ts';
import { startTestChain } from '../support/devnet.ts';
import { type DnsDouble, startDnsDouble } from '../support/doubles/dns-server.ts';
import { prepareMailChain } from '../support/mail-chain.ts';
import { tempDir } from '../support/temp-dir.ts';

const DOMAIN = 'mail.test';
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function rig(mode: SenderAuthMode, dns: DnsDouble) {
  const chain = await startTestChain();
  const mail = await prepareMailChain(chain, DOMAIN);
  const owner = await mail.mailbox();
  const prefix = `sptest-${randomBytes(6).toString('hex')}`;
  const edge = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
  const flow = new FlowProducer({ connection: edge, prefix });
  const evaluations: SenderEvaluation[] = [];
  const mx = await startMx({
    host: '127.0.0.1',
    port: 0,
    hostname: 'mx.mail.test',
    policy: { localDomains: [DOMAIN] },
    maxMessageBytes: 1 << 20,
    maxRecipients: 5,
    maxConnectionsPerIp: 20,
    socketTimeoutMs: 10_000,
    chain: new ChainView({ connection: chain.connection, programId: chain.programId }),
    senderAuth: new SenderAuth({ mode, mta: 'mx.mail.test', resolvers: [dns.address], timeoutMs: 1000 }),
    onEvaluation: (e) => evaluations.push(e),
    accept: { blobs: new BlobStore(join(tempDir(), 'blobs')), flow, attempts: 3, backoffMs: 1000 },
    logger: pino({ level: 'silent' }),
  });
  const deliver = new Queue<DeliverJobData>(QUEUE_DELIVER, { connection: edge, prefix });
  cleanups.push(async () => {
    await mx.close(100);
    await flow.close();
    await deliver.close();
    // Every queue of this test (deliver children and their spool parents) lives under its prefix.
    const keys = await edge.keys(`${prefix}:*`);
    if (keys.length) await edge.del(...keys);
    edge.disconnect();
  });
  const rcpt = `${owner.publicKey.toBase58()}@${DOMAIN}`;
  const send = (from: string, raw = `From: ${from}\r\nSubject: t\r\n\r\nbody\r\n`) =>
    nodemailer
      .createTransport({ host: '127.0.0.1', port: mx.port, secure: false, ignoreTLS: true })
      .sendMail({ envelope: { from, to: [rcpt] }, raw });
  return { send, evaluations, deliver };
}

describe('sender checks', () => {
  it('spf: refuses a fail, defers a DNS error, accepts a pass and records each', async () => {
    const dns = await startDnsDouble({
      'forbidden.example': { TXT: ['v=spf1 ip4:192.0.2.1 -all'] },
      'allowed.example': { TXT: ['v=spf1 ip4:127.0.0.1 -all'] },
    });
    cleanups.push(() => dns.close());
    dns.setFault('broken.example', 'servfail');
    const r = await rig('spf', dns);

    await expect(r.send('a@forbidden.example')).rejects.toMatchObject({ responseCode: 550 });
    await expect(r.send('a@forbidden.example')).rejects.toThrow(/5\.7\.23/);
    await expect(r.send('a@broken.example')).rejects.toMatchObject({ responseCode: 451 });
    const ok = await r.send('a@allowed.example');
    expect(ok.response).toMatch(/^250/);
    expect(await r.deliver.count()).toBe(1);
    // The job carries the Authentication-Results value: SPF from MAIL FROM, DKIM checked at DATA.
    const [accepted] = await r.deliver.getJobs(['waiting', 'waiting-children']);
    expect(accepted?.data.trace?.authResults).toMatch(/^mx\.mail\.test;\r\n dkim=none[^;]*;\r\n spf=pass /);

    const byDomain = (d: string) => r.evaluations.filter((e) => e.mailFrom.endsWith(d));
    expect(byDomain('forbidden.example')[0]).toMatchObject({
      spf: 'fail',
      disposition: 'reject',
      sourceIp: '127.0.0.1',
    });
    expect(byDomain('broken.example')[0]).toMatchObject({ spf: 'temperror', disposition: 'defer' });
    expect(byDomain('allowed.example')[0]).toMatchObject({ spf: 'pass', disposition: 'accept' });
  });

  it('dmarc-lite: refuses a DMARC failure under p=reject at DATA, accepts p=none', async () => {
    const dns = await startDnsDouble({
      'strict.example': { TXT: ['v=spf1 ip4:192.0.2.1 -all'] },
      '_dmarc.strict.example': { TXT: ['v=DMARC1; p=reject'] },
      'relaxed.example': { TXT: ['v=spf1 ip4:192.0.2.1 -all'] },
      '_dmarc.relaxed.example': { TXT: ['v=DMARC1; p=none'] },
    });
    cleanups.push(() => dns.close());
    const r = await rig('dmarc-lite', dns);
    // SPF fails for both, but only DMARC decides under dmarc-lite.
    await expect(r.send('a@strict.example')).rejects.toMatchObject({ responseCode: 550 });
    expect(await r.deliver.count()).toBe(0);
    const ok = await r.send('a@relaxed.example');
    expect(ok.response).toMatch(/^250/);
    expect(await r.deliver.count()).toBe(1);
    const [accepted] = await r.deliver.getJobs(['waiting', 'waiting-children']);
    expect(accepted?.data.trace?.authResults).toMatch(
      / spf=fail .*;\r\n dmarc=fail \(p=NONE\) header\.from=relaxed\.example/s,
    );
    const strict = r.evaluations.find((e) => e.mailFrom === 'a@strict.example');
    expect(strict).toMatchObject({
      dmarc: 'fail',
      dmarcPolicy: 'reject',
      disposition: 'reject',
      spf: 'fail',
    });
    const relaxed = r.evaluations.find((e) => e.mailFrom === 'a@relaxed.example');
    expect(relaxed).toMatchObject({ dmarc: 'fail', disposition: 'accept' });
  });
});
