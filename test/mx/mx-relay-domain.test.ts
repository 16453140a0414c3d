// Relayed mail reaches a mailbox only through the MailDomain the mailbox
// names (docs/inbound.md, docs/protocol.md "Trust model"), over real SMTP to
// a real MX against a devnet running the real program:
// - RCPT refuses a mailbox of a domain this server does not serve, and one
//   with no domain, with 550 5.7.1 saying why, and queues nothing; the same
//   mailbox is taken once its owner joins a local domain;
// - a mailbox of one local domain addressed at another local domain is
//   taken (deferred while its own domain is listed for sale) and relayed
//   through its own domain (the submit stage, alone and batched, reads the
//   mailbox's domain);
// - the chain view keeps a mailbox of no local domain the shorter time;
// - a wallet's own stamps (BuyStamps) do not open the postage gate for
//   relayed mail, while stamps anyone added for a sender address do;
// - submission names the same reason for a local recipient;
// - the chain's RelayNotAllowed and StampsNotRelayable end a job for good;
// - a message accepted before its recipient left the domain is bounced
//   with a DSN that says so.
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Keypair, Transaction } from '@solana/web3.js';
import { FlowProducer, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import nodemailer from 'nodemailer';
import { pino } from 'pino';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  buyStampsInstruction,
  cancelDomainListingInstruction,
  createAliasInstruction,
  createDomainInstruction,
  createFromboxInstruction,
  createMailboxInstruction,
  domainAddress,
  fromHash,
  getMailbox,
  listDomainInstruction,
  listInbox,
  sendMailInstruction,
  setMailboxDomainInstruction,
  ZERO_KEY,
} from '../../chain/client/index.ts';
import { addStampsInstruction } from '../../chain/client/stamp-instructions.ts';
import { PermanentDeliveryError } from '../../delivery/errors.ts';
import { ownRefusal, SendMailBatcher } from '../../delivery/sendmail/batch.ts';
import { SignatureWatch } from '../../delivery/sendmail/signature-watch.ts';
import { type SubmitDeps, submitSendMail } from '../../delivery/stages/submit.ts';
import { type OutboundJobData, QUEUE_OUTBOUND } from '../../src/contracts/inbound-jobs.ts';
import { BlobStore } from '../../src/core/blobs/blob-store.ts';
import { startMx } from '../../src/edge/mx/mx-server.ts';
import { classifyRecipient } from '../../src/edge/submission/recipients.ts';
import { SubmitError } from '../../src/edge/submission/submit-error.ts';
import { ChainView } from '../../src/mail/chain-view.ts';
import { computeCid } from '../../src/mail/cid.ts';
import { postageGate, resolveRecipient } from '../../src/mail/recipients.ts';
import { startServe } from '../../src/run/serve/serve.ts';
import { startTestChain, type TestChain } from '../support/devnet.ts';
import { type MailChain, prepareMailChain } from '../support/mail-chain.ts';
import { LineClient } from '../support/mx-rig.ts';
import { RIG_DOMAIN, startServeRig } from '../support/serve-rig.ts';
import { tempDir } from '../support/temp-dir.ts';

const DOMAIN = 'mail.test';
/** A second local domain, under the same authority. */
const SECOND = 'second.test';
/** On chain under another authority, not served here. */
const FOREIGN = 'foreign.test';
const SENDER = 'someone@remote.example';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => {});
});

/** The devnet with DOMAIN and SECOND (this server's authority) and FOREIGN (someone else's). */
async function domains(): Promise<{
  chain: TestChain;
  mail: MailChain;
  inDomain: (d?: string) => Promise<Keypair>;
}> {
  const chain = await startTestChain();
  const mail = await prepareMailChain(chain, DOMAIN);
  const p = chain.programId;
  const elsewhere = await chain.funded();
  await chain.send(
    [
      createDomainInstruction({
        programId: p,
        delegate: mail.delegate.publicKey,
        domain: SECOND,
        authority: mail.authority.publicKey,
      }),
      createDomainInstruction({
        programId: p,
        delegate: mail.delegate.publicKey,
        domain: FOREIGN,
        authority: elsewhere.publicKey,
      }),
    ],
    [mail.delegate],
  );
  /** A wallet with a mailbox in `d` (none: no domain), postage 0. */
  const inDomain = async (d?: string) => {
    const owner = await chain.funded();
    await chain.send(
      [createMailboxInstruction({ programId: p, owner: owner.publicKey, domain: d })],
      [owner],
    );
    return owner;
  };
  return { chain, mail, inDomain };
}

async function mxRig() {
  const { chain, mail, inDomain } = await domains();
  const prefix = `sptest-mxrd-${randomBytes(6).toString('hex')}`;
  const redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
  const flow = new FlowProducer({ connection: redis, prefix });
  const blobDir = join(tempDir(), 'blobs');
  const mx = await startMx({
    host: '127.0.0.1',
    port: 0,
    hostname: 'mx.mail.test',
    policy: { localDomains: [DOMAIN, SECOND] },
    maxMessageBytes: 1024 * 1024,
    maxRecipients: 100,
    maxConnectionsPerIp: 50,
    socketTimeoutMs: 10_000,
    // No cache: every RCPT reads the chain as it is now.
    chain: new ChainView({ connection: chain.connection, programId: chain.programId, ttlMs: 0 }),
    accept: { blobs: new BlobStore(blobDir), flow, attempts: 3, backoffMs: 1000 },
    logger: pino({ level: 'silent' }),
  });
  const keys = () => redis.keys(`${prefix}:*`);
  cleanups.push(async () => {
    await mx.close(100);
    await flow.close();
    const left = await keys();
    if (left.length) await redis.del(...left);
    redis.disconnect();
  });
  const session = async (from = SENDER) => {
    const c = await LineClient.open(mx.port);
    cleanups.push(async () => c.end());
    expect((await c.cmd('EHLO client.example')).code).toBe(250);
    expect((await c.cmd(`MAIL FROM:<${from}>`)).code).toBe(250);
    return c;
  };
  const rcpt = async (c: LineClient, address: string) => {
    const r = await c.cmd(`RCPT TO:<${address}>`);
    return `${r.code} ${r.text}`;
  };
  /** Files under the blob store (spooled messages land there). */
  const spooled = () => {
    try {
      return readdirSync(blobDir, { recursive: true });
    } catch {
      return [];
    }
  };
  return { chain, mail, inDomain, session, rcpt, keys, spooled };
}

const at = (k: Keypair, d: string) => `${k.publicKey.toBase58()}@${d}`;

describe('RCPT and the mailbox domain', () => {
  it('refuses with 550 5.7.1 a mailbox of another domain and one with no domain, queues nothing, and takes it once its owner joins', async () => {
    const { chain, inDomain, session, rcpt, keys, spooled } = await mxRig();
    const p = chain.programId;
    const away = await inDomain(FOREIGN);
    await chain.send(
      [createAliasInstruction({ programId: p, owner: away.publicKey, name: 'faraway' })],
      [away],
    );
    const loose = await inDomain();

    const c = await session();
    expect(await rcpt(c, at(away, DOMAIN))).toBe(
      `550 5.7.1 <${at(away, DOMAIN)}>: this mailbox takes relayed mail only through its own domain (${FOREIGN}), not through this server`,
    );
    expect(await rcpt(c, `faraway@${SECOND}`)).toBe(
      `550 5.7.1 <faraway@${SECOND}>: this mailbox takes relayed mail only through its own domain (${FOREIGN}), not through this server`,
    );
    expect(await rcpt(c, at(loose, DOMAIN))).toBe(
      `550 5.7.1 <${at(loose, DOMAIN)}>: this mailbox has no mail domain; its owner can join one (sealpost mailbox domain set)`,
    );
    // Nothing was accepted, so DATA has no recipient, and nothing reached Redis or the spool.
    expect((await c.cmd('DATA')).code).toBeGreaterThanOrEqual(500);
    expect(await keys()).toEqual([]);
    expect(spooled()).toEqual([]);

    // Submission (SMTP and the account API's POST /v1/mail/send) says the same as a bad recipient.
    const view = new ChainView({ connection: chain.connection, programId: p, ttlMs: 0 });
    const submitted = await classifyRecipient(
      { policy: { localDomains: [DOMAIN, SECOND] }, chain: view },
      SENDER,
      at(loose, DOMAIN),
    ).catch((e: unknown) => e);
    expect(submitted).toBeInstanceOf(SubmitError);
    expect(submitted).toMatchObject({
      code: 'bad_recipient',
      message: `<${at(loose, DOMAIN)}>: this mailbox has no mail domain; its owner can join one (sealpost mailbox domain set)`,
    });

    // The owners join a local domain: their mail is taken (relayed through that domain).
    await chain.send(
      [setMailboxDomainInstruction({ programId: p, owner: away.publicKey, domain: DOMAIN })],
      [away],
    );
    await chain.send(
      [setMailboxDomainInstruction({ programId: p, owner: loose.publicKey, domain: SECOND })],
      [loose],
    );
    const again = await session();
    expect(await rcpt(again, at(away, DOMAIN))).toMatch(/^250 /);
    expect(await rcpt(again, `faraway@${SECOND}`)).toMatch(/^250 /);
    expect(await rcpt(again, at(loose, DOMAIN))).toMatch(/^250 /);
    expect((await again.cmd('DATA')).code).toBe(354);
    expect((await again.cmd('Subject: joined\r\n\r\nhello\r\n.')).code).toBe(250);
    expect((await keys()).length).toBeGreaterThan(0);

    // Leaving every domain closes the door to relayed mail again.
    await chain.send(
      [setMailboxDomainInstruction({ programId: p, owner: away.publicKey, domain: null })],
      [away],
    );
    const after = await session();
    expect(await rcpt(after, at(away, DOMAIN))).toMatch(/^550 5\.7\.1 .*has no mail domain/);
  }, 60_000);

  it("takes a mailbox of the other local domain at this domain's address, and defers it while its own domain is listed", async () => {
    const { chain, mail, inDomain, session, rcpt } = await mxRig();
    const p = chain.programId;
    const second = await inDomain(SECOND);
    const c = await session();
    expect(await rcpt(c, at(second, DOMAIN))).toMatch(/^250 /);

    // The relayed send would go through SECOND, whose authority is its listing while it is for sale.
    const holder = mail.authority.publicKey;
    await chain.send(
      [
        listDomainInstruction({
          programId: p,
          domain: SECOND,
          holder,
          priceLamports: 1_000_000n,
          expiresAt: BigInt(Math.floor(Date.now() / 1000)) + 3_600n,
        }),
      ],
      [mail.authority],
    );
    const listed = await session();
    expect(await rcpt(listed, at(second, DOMAIN))).toMatch(
      /^451 4\.2\.0 Domain second\.test is being transferred on chain/,
    );
    await chain.send(
      [cancelDomainListingInstruction({ programId: p, domain: SECOND, signer: holder, holder })],
      [mail.authority],
    );
    const again = await session();
    expect(await rcpt(again, at(second, DOMAIN))).toMatch(/^250 /);
  }, 60_000);

  it("does not count a wallet's own stamps for relayed mail, but does count stamps added for a sender address", async () => {
    const { chain, mail, session, rcpt } = await mxRig();
    const p = chain.programId;
    const gated = await mail.mailbox({ postage: 5000n });
    const buyer = await chain.funded();
    const wallet = buyer.publicKey.toBase58();
    // The wallet buys stamps for its own direct sends: its frombox is keyed on blake3(wallet).
    await chain.send(
      [
        buyStampsInstruction({
          programId: p,
          buyer: buyer.publicKey,
          recipient: gated.publicKey,
          stamps: 2n,
        }),
      ],
      [buyer],
    );
    const view = new ChainView({ connection: chain.connection, programId: p, ttlMs: 0 });
    const box = await view.frombox(fromHash(wallet), gated.publicKey.toBase58());
    expect([box?.stamps, box?.walletStamps]).toEqual([2n, true]);
    const resolved = await resolveRecipient(at(gated, DOMAIN), { localDomains: [DOMAIN] }, view);
    if (!resolved.ok) throw new Error(resolved.reason);
    // The gate asks postage of relayed mail that would claim the wallet's hash. (No SMTP
    // sender can: the MX takes no MAIL FROM without a domain, and any address with one
    // hashes otherwise; the gate holds for whatever reaches it.)
    expect(await postageGate(wallet, resolved.recipient, view)).toEqual({
      ok: false,
      requiredPostage: 5000n,
    });

    // Stamps a third party added for a sender address are relayed mail's to spend.
    await chain.send(
      [
        createFromboxInstruction({
          programId: p,
          owner: gated.publicKey,
          fromHash: fromHash(SENDER),
          requiredPostage: 5000n,
        }),
      ],
      [gated],
    );
    const unpaid = await session(SENDER);
    expect(await rcpt(unpaid, at(gated, DOMAIN))).toMatch(
      /^550 5\.7\.1 Recipient \S+ asks first-contact senders for postage of 5000 lamports per message: buy a stamp toward this wallet for your sender address/,
    );
    const sponsor = await chain.funded();
    await chain.send(
      [
        addStampsInstruction({
          programId: p,
          payer: sponsor.publicKey,
          recipient: gated.publicKey,
          fromHash: fromHash(SENDER),
          stamps: 1n,
          maxPriceLamports: 5000n,
        }),
      ],
      [sponsor],
    );
    expect((await view.frombox(fromHash(SENDER), gated.publicKey.toBase58()))?.walletStamps).toBe(false);
    const ok = await session(SENDER);
    expect(await rcpt(ok, at(gated, DOMAIN))).toMatch(/^250 /);
  }, 60_000);
});

describe('the chain view and the mailbox domain', () => {
  it('keeps a mailbox of no local domain the shorter time, one of a local domain the longer', async () => {
    const { chain, inDomain } = await domains();
    const p = chain.programId;
    let clock = 1_000_000;
    const view = new ChainView({
      connection: chain.connection,
      programId: p,
      ttlMs: 30_000,
      refusalTtlMs: 5_000,
      localDomains: [DOMAIN, SECOND],
      now: () => clock,
    });
    const away = await inDomain(FOREIGN);
    const home = await inDomain(DOMAIN);
    const domainOf = async (k: Keypair) => (await view.mailbox(k.publicKey.toBase58()))?.domain.toBase58();
    expect(await domainOf(away)).toBe(domainAddress(p, FOREIGN)[0].toBase58());
    expect(await domainOf(home)).toBe(domainAddress(p, DOMAIN)[0].toBase58());
    // Both owners move: the foreign one in, the local one out.
    await chain.send(
      [setMailboxDomainInstruction({ programId: p, owner: away.publicKey, domain: SECOND })],
      [away],
    );
    await chain.send(
      [setMailboxDomainInstruction({ programId: p, owner: home.publicKey, domain: null })],
      [home],
    );
    clock += 5_001;
    expect(await domainOf(away)).toBe(domainAddress(p, SECOND)[0].toBase58());
    expect(await domainOf(home)).toBe(domainAddress(p, DOMAIN)[0].toBase58());
    clock += 25_000;
    expect(await domainOf(home)).toBe(ZERO_KEY.toBase58());
  }, 60_000);
});

describe('the submit stage and the mailbox domain', () => {
  const redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
  afterAll(() => redis.disconnect());

  async function stage() {
    const { chain, mail, inDomain } = await domains();
    const prefix = `sptest-relay-${randomBytes(6).toString('hex')}`;
    cleanups.push(async () => {
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length) await redis.del(...keys);
    });
    const deps: SubmitDeps = {
      connection: chain.connection,
      programId: chain.programId,
      authority: mail.authority,
      redis,
      lockPrefix: prefix,
    };
    const input = async (wallet: Keypair, checkpoints: unknown[] = []) => ({
      wallet: wallet.publicKey.toBase58(),
      envelopeFrom: SENDER,
      localDomains: [DOMAIN, SECOND],
      cid: await computeCid(randomBytes(64)),
      checkpoint: async (s: unknown) => {
        checkpoints.push(s);
      },
    });
    return { chain, mail, inDomain, deps, input };
  }

  it('relays a mailbox of the other local domain through its own, alone and batched', async () => {
    const { chain, inDomain, deps, input } = await stage();
    const second = await inDomain(SECOND);
    const alone = await submitSendMail(deps, await input(second));
    expect(alone.confirmed).toBe(true);
    const tx = await chain.connection.getTransaction(alone.signature, {
      commitment: 'confirmed',
      maxSupportedTransactionVersion: 0,
    });
    const keys = tx?.transaction.message.staticAccountKeys.map((k) => k.toBase58()) ?? [];
    expect(keys).toContain(domainAddress(chain.programId, SECOND)[0].toBase58());
    expect(keys).not.toContain(domainAddress(chain.programId, DOMAIN)[0].toBase58());

    const watch = new SignatureWatch(chain.connection);
    const batcher = new SendMailBatcher({ ...deps, watch, pipelined: true, maxPerTx: 8, lingerMs: 5 });
    cleanups.push(async () => {
      batcher.close();
      watch.close();
    });
    const other = await inDomain(DOMAIN);
    const batched = await Promise.all([
      submitSendMail({ ...deps, batcher, watch, pipelined: true }, await input(second)),
      submitSendMail({ ...deps, batcher, watch, pipelined: true }, await input(other)),
    ]);
    expect(batched.map((b) => b.confirmed)).toEqual([true, true]);
    expect(await listInbox(chain.connection, chain.programId, second.publicKey)).toHaveLength(2);
    expect(await listInbox(chain.connection, chain.programId, other.publicKey)).toHaveLength(1);
  }, 60_000);

  it('refuses unsent a mailbox that left the local domains; the chain refusals end the job', async () => {
    const { chain, mail, inDomain, deps, input } = await stage();
    const p = chain.programId;
    const leaving = await inDomain(DOMAIN);
    await chain.send(
      [setMailboxDomainInstruction({ programId: p, owner: leaving.publicKey, domain: FOREIGN })],
      [leaving],
    );
    const checkpoints: unknown[] = [];
    const refused = await submitSendMail(deps, await input(leaving, checkpoints)).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(PermanentDeliveryError);
    expect((refused as PermanentDeliveryError).code).toBe('RelayNotAllowed');
    expect(checkpoints).toEqual([]);
    expect((await getMailbox(chain.connection, p, leaving.publicKey))?.mailCount).toBe(0n);

    // What a send that raced the move meets on chain: RelayNotAllowed, a permanent refusal of its own.
    const failed = async (wallet: Keypair, from: string) => {
      const latest = await chain.connection.getLatestBlockhash('confirmed');
      const tx = new Transaction({ feePayer: mail.authority.publicKey, ...latest }).add(
        sendMailInstruction({
          programId: p,
          sender: mail.authority.publicKey,
          recipient: wallet.publicKey,
          index: 0n,
          fromHash: fromHash(from),
          cid: await computeCid(randomBytes(64)),
          domain: DOMAIN,
        }),
      );
      tx.sign(mail.authority);
      const signature = await chain.connection.sendRawTransaction(tx.serialize(), { skipPreflight: true });
      for (let i = 0; i < 200; i++) {
        const { value } = await chain.connection.getSignatureStatus(signature);
        if (value?.err) return value.err;
        if (value?.confirmationStatus === 'confirmed') throw new Error('the send landed');
        await sleep(50);
      }
      throw new Error('the send did not settle');
    };
    const moved = ownRefusal(await failed(leaving, SENDER), 0, p);
    expect(moved?.code).toBe('RelayNotAllowed');

    // A wallet's own stamps, spent by a relayed send that claims the wallet's hash: StampsNotRelayable.
    const gated = await mail.mailbox({ postage: 5000n });
    const buyer = await chain.funded();
    await chain.send(
      [
        buyStampsInstruction({
          programId: p,
          buyer: buyer.publicKey,
          recipient: gated.publicKey,
          stamps: 1n,
          maxPriceLamports: 5000n,
        }),
      ],
      [buyer],
    );
    const spent = ownRefusal(await failed(gated, buyer.publicKey.toBase58()), 0, p);
    expect(spent?.code).toBe('StampsNotRelayable');
  }, 60_000);
});

describe('a message accepted before its recipient left the domain', () => {
  it('bounces with 5.7.1 and a DSN that says the mailbox left this server', async () => {
    // The MX alone accepts; the worker starts only after the owner left the domain.
    const rig = await startServeRig({
      serve: { components: { smtp: true, workers: false, spooler: false } },
    });
    const p = rig.chain.programId;
    const owner = await rig.mail.mailbox();
    const to = `${owner.publicKey.toBase58()}@${RIG_DOMAIN}`;
    const sender = 'ann@remote.example';
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: rig.mxPort,
      secure: false,
      ignoreTLS: true,
    });
    await transport.sendMail({
      envelope: { from: sender, to: [to] },
      raw: `From: ${sender}\r\nTo: ${to}\r\nSubject: moved-away\r\n\r\nhello\r\n`,
    });
    transport.close();
    await rig.chain.send(
      [setMailboxDomainInstruction({ programId: p, owner: owner.publicKey, domain: null })],
      [owner],
    );

    const worker = await startServe({
      config: rig.config,
      logger: pino({ level: 'silent' }),
      components: { smtp: false, workers: true, api: false, spooler: false },
      singletons: false,
    });
    cleanups.push(() => worker.close());
    const outbound = new Queue<OutboundJobData>(QUEUE_OUTBOUND, {
      connection: rig.redis,
      prefix: rig.prefix,
    });
    cleanups.push(() => outbound.close());
    let dsns: OutboundJobData[] = [];
    for (let i = 0; i < 200 && dsns.length === 0; i++) {
      dsns = (await outbound.getJobs(['waiting', 'delayed', 'prioritized'])).map((j) => j.data);
      if (dsns.length === 0) await sleep(100);
    }
    expect(dsns).toHaveLength(1);
    expect(dsns[0]).toMatchObject({ from: '', to: [sender], kind: 'dsn' });
    const dsn = (await new BlobStore(join(rig.dataDir, 'blobs')).read(dsns[0]?.blobKey ?? '')).toString(
      'utf8',
    );
    expect(dsn).toMatch(/Status: 5\.7\.1/);
    expect(dsn).toContain(`Final-Recipient: rfc822; ${to}`);
    expect(dsn.replace(/\r\n\s+/g, ' ')).toContain(
      "the recipient's mailbox no longer belongs to this server's mail domain, so this server cannot deliver to it; its mail must come through its own domain",
    );
    expect(await listInbox(rig.chain.connection, p, owner.publicKey)).toHaveLength(0);
  }, 90_000);
});
