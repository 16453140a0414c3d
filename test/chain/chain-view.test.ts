// The MX's chain view (src/mail/chain-view.ts, docs/inbound.md "Chain
// lookups") against a devnet running the real program, reached through a
// small HTTP relay that records every JSON-RPC request and can fail the next
// ones: concurrent RCPT lookups share one getMultipleAccounts, an absent
// account in it answers "no mailbox" while the others resolve, a failed read
// fails only its own round (451 at RCPT) and is not kept, answers expire
// after their lifetime (a long one for answers that let mail through, a short
// one for the rest) and the cache stays within its bound.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Connection, Keypair } from '@solana/web3.js';
import { FlowProducer } from 'bullmq';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createFromboxInstruction,
  createMailboxInstruction,
  fromHash,
  mailboxAddress,
  updateFromboxInstruction,
} from '../../chain/client/index.ts';
import { BlobStore } from '../../src/core/blobs/blob-store.ts';
import { startMx } from '../../src/edge/mx/mx-server.ts';
import { ChainView } from '../../src/mail/chain-view.ts';
import { postageGate, type ResolvedRecipient, resolveRecipient } from '../../src/mail/recipients.ts';
import { startTestChain, type TestChain } from '../support/devnet.ts';
import { type MailChain, prepareMailChain } from '../support/mail-chain.ts';
import { LineClient } from '../support/mx-rig.ts';
import { tempDir } from '../support/temp-dir.ts';

const DOMAIN = 'mail.test';
const SENDER = 'someone@remote.example';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => {});
});

interface RpcCall {
  method: string;
  /** getMultipleAccounts: how many addresses it asked for. */
  addresses?: number;
}

/** Relays JSON-RPC to the devnet, recording each request's calls; `failNext` answers that many with 503. */
async function rpcRelay(target: string) {
  const requests: RpcCall[][] = [];
  let failNext = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const parsed = JSON.parse(body) as
        | { method: string; params?: unknown[] }
        | { method: string; params?: unknown[] }[];
      requests.push(
        (Array.isArray(parsed) ? parsed : [parsed]).map((c) => ({
          method: c.method,
          ...(c.method === 'getMultipleAccounts'
            ? { addresses: (c.params?.[0] as string[] | undefined)?.length }
            : {}),
        })),
      );
      if (failNext > 0) {
        failNext--;
        res.writeHead(503, { 'content-type': 'text/plain' });
        res.end('unavailable');
        return;
      }
      const answer = await fetch(target, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(await answer.text());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    connection: new Connection(url, 'confirmed'),
    requests,
    /** Every call since the last `take`, flattened. */
    take(): RpcCall[] {
      return requests.splice(0).flat();
    },
    fail(n: number) {
      failNext = n;
    },
  };
}

async function rig(): Promise<{
  chain: TestChain;
  mail: MailChain;
  relay: Awaited<ReturnType<typeof rpcRelay>>;
  open: Keypair;
  other: Keypair;
  gated: Keypair;
}> {
  const chain = await startTestChain();
  const mail = await prepareMailChain(chain, DOMAIN);
  const relay = await rpcRelay(chain.devnet.rpcUrl);
  const open = await mail.mailbox();
  const other = await mail.mailbox();
  const gated = await mail.mailbox({ postage: 1000n });
  return { chain, mail, relay, open, other, gated };
}

const at = (k: Keypair | string) => `${typeof k === 'string' ? k : k.publicKey.toBase58()}@${DOMAIN}`;

describe('the chain view', () => {
  it('resolves concurrent RCPTs through one getMultipleAccounts; an absent mailbox is unknown while the others resolve', async () => {
    const { chain, relay, open, other, gated } = await rig();
    const p = chain.programId;
    // No mailbox, but lamports at its Mailbox address (owned by the system program): still no mailbox.
    const missing = Keypair.generate().publicKey.toBase58();
    await chain.airdrop(mailboxAddress(p, missing)[0], 1_000_000);
    const view = new ChainView({ connection: relay.connection, programId: p });
    const policy = { localDomains: [DOMAIN] };
    expect(await view.domain(DOMAIN)).toMatchObject({ isActive: true });
    expect(relay.take()).toEqual([{ method: 'getMultipleAccounts', addresses: 1 }]);

    const addresses = [at(open), at(missing), at(other), at(gated)];
    const resolved = await Promise.all(addresses.map((a) => resolveRecipient(a, policy, view, SENDER)));
    expect(resolved.map((r) => (r.ok ? r.recipient.wallet : r.reason))).toEqual([
      open.publicKey.toBase58(),
      'unknown',
      other.publicKey.toBase58(),
      gated.publicKey.toBase58(),
    ]);
    // Mailbox, PendingMailboxClose and Frombox for each of the four, in one request.
    expect(relay.take()).toEqual([{ method: 'getMultipleAccounts', addresses: 12 }]);

    // The postage gate reads what that request brought: nothing more goes out.
    const recipients = resolved.flatMap((r) => (r.ok ? [r.recipient] : [])) as ResolvedRecipient[];
    const gates = await Promise.all(recipients.map((r) => postageGate(SENDER, r, view)));
    expect(gates).toEqual([
      { ok: true, postage: 0n },
      { ok: true, postage: 0n },
      { ok: false, requiredPostage: 1000n },
    ]);
    expect(relay.take()).toEqual([]);
  });

  it('fails every lookup of a failed read with it, keeps nothing of it, and answers RCPT 451 then 250', async () => {
    const { chain, relay, open, other } = await rig();
    const p = chain.programId;
    const view = new ChainView({ connection: relay.connection, programId: p });
    relay.fail(1);
    const round = await Promise.allSettled([
      view.mailbox(open.publicKey.toBase58()),
      view.mailbox(other.publicKey.toBase58()),
    ]);
    expect(round.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(relay.take()).toEqual([{ method: 'getMultipleAccounts', addresses: 2 }]);
    // The next round asks again and gets the answers.
    expect((await view.mailbox(open.publicKey.toBase58()))?.owner.toBase58()).toBe(open.publicKey.toBase58());
    expect(relay.take()).toEqual([{ method: 'getMultipleAccounts', addresses: 1 }]);

    // Through the MX: the RCPT whose lookup fails is deferred, the same RCPT again is taken.
    const prefix = `sptest-cview-${randomBytes(6).toString('hex')}`;
    const redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
    const flow = new FlowProducer({ connection: redis, prefix });
    const mx = await startMx({
      host: '127.0.0.1',
      port: 0,
      hostname: 'mx.mail.test',
      policy: { localDomains: [DOMAIN] },
      maxMessageBytes: 1024 * 1024,
      maxRecipients: 10,
      maxConnectionsPerIp: 10,
      socketTimeoutMs: 10_000,
      chain: new ChainView({ connection: relay.connection, programId: p }),
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
    const c = await LineClient.open(mx.port);
    cleanups.push(async () => c.end());
    expect((await c.cmd('EHLO client.example')).code).toBe(250);
    expect((await c.cmd(`MAIL FROM:<${SENDER}>`)).code).toBe(250);
    relay.fail(1);
    expect(await c.cmd(`RCPT TO:<${at(other)}>`)).toMatchObject({
      code: 451,
      text: expect.stringMatching(/^4\.4\.3 /),
    });
    expect(await c.cmd(`RCPT TO:<${at(other)}>`)).toMatchObject({ code: 250 });
    expect(await c.cmd(`RCPT TO:<${at(Keypair.generate().publicKey.toBase58())}>`)).toMatchObject({
      code: 550,
      text: expect.stringMatching(/^5\.1\.1 /),
    });
  });

  it('reuses an answer that lets mail through for ttlMs and any other for refusalTtlMs, then reads again', async () => {
    const { chain, mail, relay, open } = await rig();
    const p = chain.programId;
    let clock = 1_000_000;
    const view = new ChainView({
      connection: relay.connection,
      programId: p,
      ttlMs: 30_000,
      refusalTtlMs: 5_000,
      now: () => clock,
    });
    const wallet = open.publicKey.toBase58();
    const hash = fromHash(SENDER);
    // Allowlisted (required postage 0): an answer that lets mail through.
    await chain.send(
      [
        createFromboxInstruction({
          programId: p,
          owner: open.publicKey,
          fromHash: hash,
          requiredPostage: 0n,
        }),
      ],
      [open],
    );
    const late = await chain.funded();
    const lateWallet = late.publicKey.toBase58();
    const ask = async () => {
      const [box, mailbox] = await Promise.all([view.frombox(hash, wallet), view.mailbox(lateWallet)]);
      return { box: box?.requiredPostage, late: mailbox !== null };
    };
    expect(await ask()).toEqual({ box: 0n, late: false });
    expect(relay.take()).toEqual([{ method: 'getMultipleAccounts', addresses: 2 }]);

    // The chain changes: the frombox now asks postage, the late wallet opens a mailbox.
    await chain.send(
      [
        updateFromboxInstruction({
          programId: p,
          owner: open.publicKey,
          fromHash: hash,
          requiredPostage: 7n,
        }),
      ],
      [open],
    );
    await chain.send(
      [createMailboxInstruction({ programId: p, owner: late.publicKey, domain: mail.domain })],
      [late],
    );
    clock += 4_999;
    expect(await ask()).toEqual({ box: 0n, late: false });
    expect(relay.take()).toEqual([]);
    // Past the short lifetime: the absent mailbox is read again; the allowlisting frombox is still reused.
    clock += 2;
    expect(await ask()).toEqual({ box: 0n, late: true });
    expect(relay.take()).toEqual([{ method: 'getMultipleAccounts', addresses: 1 }]);
    // Past the long one: the frombox is read again and shows its postage.
    clock += 25_000;
    expect(await ask()).toEqual({ box: 7n, late: true });
    expect(relay.take()).toEqual([{ method: 'getMultipleAccounts', addresses: 1 }]);
    // A frombox asking postage is kept the short time only.
    clock += 4_999;
    expect((await view.frombox(hash, wallet))?.requiredPostage).toBe(7n);
    expect(relay.take()).toEqual([]);
    clock += 2;
    expect((await view.frombox(hash, wallet))?.requiredPostage).toBe(7n);
    expect(relay.take()).toEqual([{ method: 'getMultipleAccounts', addresses: 1 }]);
  });

  it('keeps at most maxEntries answers, the oldest dropped first', async () => {
    const { chain, relay, open } = await rig();
    const view = new ChainView({ connection: relay.connection, programId: chain.programId, maxEntries: 10 });
    const wallets = Array.from({ length: 25 }, () => Keypair.generate().publicKey.toBase58());
    expect(await Promise.all(wallets.map((w) => view.mailbox(w)))).toEqual(wallets.map(() => null));
    expect(view.size).toBeLessThanOrEqual(10);
    expect(relay.take()).toEqual([{ method: 'getMultipleAccounts', addresses: 25 }]);
    // The newest answers are still there; the first ones are read again.
    await view.mailbox(wallets[24] as string);
    expect(relay.take()).toEqual([]);
    await view.mailbox(wallets[0] as string);
    expect(relay.take()).toEqual([{ method: 'getMultipleAccounts', addresses: 1 }]);
    expect((await view.mailbox(open.publicKey.toBase58()))?.defaultPostage).toBe(0n);
  });
});
