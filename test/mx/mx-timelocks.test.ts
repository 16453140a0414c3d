// The MX over real SMTP against a devnet running the real program, for the
// timelocks (docs/inbound.md): a mailbox with a pending close is refused with
// 550 5.2.1 (and takes mail again once the close is cancelled, and is unknown
// once completed); a local domain whose deactivation has settled on chain is
// refused with 550 5.1.2, while it still takes mail during its notice window;
// a domain listed for sale (docs/protocol.md "Domain marketplace") is deferred
// with 451 4.2.0 until its listing closes. The devnet's clock is moved forward
// to pass the windows.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Keypair } from '@solana/web3.js';
import { FlowProducer } from 'bullmq';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import {
  cancelDomainListingInstruction,
  cancelMailboxCloseInstruction,
  closeMailboxInstruction,
  createDomainInstruction,
  createMailboxInstruction,
  DEACTIVATION_WINDOW_SECS,
  listDomainInstruction,
  MAILBOX_CLOSE_WINDOW_SECS,
  requestDeactivationInstruction,
  requestMailboxCloseInstruction,
  settleDomainTimelockInstruction,
} from '../../chain/client/index.ts';
import { BlobStore } from '../../src/core/blobs/blob-store.ts';
import { startMx } from '../../src/edge/mx/mx-server.ts';
import { ChainView } from '../../src/mail/chain-view.ts';
import { startTestChain } from '../support/devnet.ts';
import { prepareMailChain } from '../support/mail-chain.ts';
import { LineClient } from '../support/mx-rig.ts';
import { tempDir } from '../support/temp-dir.ts';

const DOMAIN = 'mail.test';
const OLD = 'old.test';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => {});
});

async function rig() {
  // The devnet's block time is the system clock plus `skew`, so a test can pass a window.
  let skew = 0;
  const chain = await startTestChain({ clock: () => Date.now() / 1000 + skew });
  const p = chain.programId;
  const mail = await prepareMailChain(chain, DOMAIN);
  await chain.send(
    [
      createDomainInstruction({
        programId: p,
        delegate: mail.delegate.publicKey,
        domain: OLD,
        authority: mail.authority.publicKey,
      }),
    ],
    [mail.delegate],
  );
  const prefix = `sptest-mxtl-${randomBytes(6).toString('hex')}`;
  const redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
  const flow = new FlowProducer({ connection: redis, prefix });
  const mx = await startMx({
    host: '127.0.0.1',
    port: 0,
    hostname: 'mx.mail.test',
    policy: { localDomains: [DOMAIN, OLD], postmasterWallet: (await chain.funded()).publicKey.toBase58() },
    maxMessageBytes: 1024 * 1024,
    maxRecipients: 100,
    maxConnectionsPerIp: 50,
    socketTimeoutMs: 10_000,
    // No cache: every RCPT reads the chain as it is now.
    chain: new ChainView({ connection: chain.connection, programId: p, ttlMs: 0 }),
    accept: { blobs: new BlobStore(join(tempDir(), 'blobs')), flow, attempts: 3, backoffMs: 1000 },
    logger: pino({ level: 'silent' }),
  });
  cleanups.push(async () => {
    await mx.close(100);
    await flow.close();
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });
  /** Moves the chain's clock forward and waits until a block carries the new time. */
  const passTime = async (seconds: bigint) => {
    skew += Number(seconds) + 1;
    const target = Math.floor(Date.now() / 1000 + skew);
    for (let i = 0; i < 100; i++) {
      const slot = await chain.connection.getSlot('confirmed');
      const time = await chain.connection.getBlockTime(slot);
      if (time !== null && time >= target) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('the devnet clock did not move');
  };
  const session = async () => {
    const c = await LineClient.open(mx.port);
    cleanups.push(async () => c.end());
    expect((await c.cmd('EHLO client.example')).code).toBe(250);
    expect((await c.cmd('MAIL FROM:<someone@remote.example>')).code).toBe(250);
    return c;
  };
  const rcpt = async (c: LineClient, address: string) => {
    const r = await c.cmd(`RCPT TO:<${address}>`);
    return `${r.code} ${r.text}`;
  };
  /** An address of a new mailbox in OLD, and one in DOMAIN. */
  const addresses = async () => {
    const owner = await chain.funded();
    await chain.send(
      [createMailboxInstruction({ programId: p, owner: owner.publicKey, domain: OLD })],
      [owner],
    );
    return {
      inOld: `${owner.publicKey.toBase58()}@${OLD}`,
      inMain: `${(await mail.mailbox()).publicKey.toBase58()}@${DOMAIN}`,
    };
  };
  return { chain, mail, p, passTime, session, rcpt, addresses };
}

describe('MX and the timelocks', () => {
  it('refuses a closing mailbox with 550 5.2.1, by wallet and by alias, until the close is cancelled', async () => {
    const { chain, mail, p, passTime, session, rcpt } = await rig();
    const closing: Keypair = await mail.mailbox({ alias: 'leaving' });
    const staying = await mail.mailbox();
    const wallet = closing.publicKey.toBase58();
    await chain.send([requestMailboxCloseInstruction({ programId: p, owner: closing.publicKey })], [closing]);

    const c = await session();
    expect(await rcpt(c, `${wallet}@${DOMAIN}`)).toMatch(/^550 5\.2\.1 Mailbox is closing/);
    expect(await rcpt(c, `leaving@${DOMAIN}`)).toMatch(/^550 5\.2\.1 /);
    // Other mailboxes are not affected, and the message is accepted for them.
    expect(await rcpt(c, `${staying.publicKey.toBase58()}@${DOMAIN}`)).toMatch(/^250 /);
    expect((await c.cmd('DATA')).code).toBe(354);
    const done = await c.cmd('Subject: hi\r\n\r\nhello\r\n.');
    expect(done.code).toBe(250);

    await chain.send([cancelMailboxCloseInstruction({ programId: p, owner: closing.publicKey })], [closing]);
    const again = await session();
    expect(await rcpt(again, `${wallet}@${DOMAIN}`)).toMatch(/^250 /);

    // Closed for good: a new request, the window, CloseMailbox; then the wallet has no mailbox.
    await chain.send([requestMailboxCloseInstruction({ programId: p, owner: closing.publicKey })], [closing]);
    expect(
      await chain.refusal([closeMailboxInstruction({ programId: p, owner: closing.publicKey })], [closing]),
    ).toBe('TimelockNotElapsed');
    await passTime(MAILBOX_CLOSE_WINDOW_SECS);
    await chain.send([closeMailboxInstruction({ programId: p, owner: closing.publicKey })], [closing]);
    const after = await session();
    expect(await rcpt(after, `${wallet}@${DOMAIN}`)).toMatch(/^550 5\.1\.1 /);
  });

  it('takes mail for a domain during its notice window and refuses it with 550 5.1.2 once deactivated', async () => {
    const { chain, mail, p, passTime, session, rcpt, addresses } = await rig();
    const { inOld, inMain } = await addresses();
    await chain.send(
      [requestDeactivationInstruction({ programId: p, authority: mail.authority.publicKey, domain: OLD })],
      [mail.authority],
    );
    const notice = await session();
    expect(await rcpt(notice, inOld)).toMatch(/^250 /);

    await passTime(DEACTIVATION_WINDOW_SECS);
    // Anyone may settle it: here a wallet that is neither the authority nor an owner.
    const cranker = await chain.funded();
    await chain.send(
      [
        settleDomainTimelockInstruction({
          programId: p,
          domain: OLD,
          record: 'deactivation',
          rentTo: mail.authority.publicKey,
        }),
      ],
      [cranker],
    );
    const c = await session();
    expect(await rcpt(c, inOld)).toMatch(/^550 5\.1\.2 Domain old\.test has been deactivated/);
    expect(await rcpt(c, `postmaster@${OLD}`)).toMatch(/^550 5\.1\.2 /);
    expect(await rcpt(c, `Postmaster`)).toMatch(/^250 /);
    expect(await rcpt(c, inMain)).toMatch(/^250 /);
  });

  it('defers mail for a domain listed for sale with 451 4.2.0, and takes it again once the listing is cancelled', async () => {
    const { chain, mail, p, session, rcpt, addresses } = await rig();
    const { inOld, inMain } = await addresses();
    const holder = mail.authority.publicKey;
    await chain.send(
      [
        listDomainInstruction({
          programId: p,
          domain: OLD,
          holder,
          priceLamports: 1_000_000n,
          expiresAt: BigInt(Math.floor(Date.now() / 1000)) + 3_600n,
        }),
      ],
      [mail.authority],
    );
    const c = await session();
    expect(await rcpt(c, inOld)).toMatch(/^451 4\.2\.0 Domain old\.test is being transferred/);
    expect(await rcpt(c, inMain)).toMatch(/^250 /);

    await chain.send(
      [cancelDomainListingInstruction({ programId: p, domain: OLD, signer: holder, holder })],
      [mail.authority],
    );
    const again = await session();
    expect(await rcpt(again, inOld)).toMatch(/^250 /);
  });
});
