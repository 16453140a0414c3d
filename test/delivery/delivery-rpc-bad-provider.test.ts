// A provider that misbehaves for a long stretch (issue 30, "Bad input"): in
// front of a real devnet, a proxy answers every JSON-RPC request in turn with
// a body that is not JSON, an HTML error page (200 and 502), a 503, then
// 429s, 4 s each, then passes requests through. Deliveries accepted during
// it (one at the start of each stretch) wait: no job spends an attempt or fails,
// nothing is bounced, and once the provider is sound again each message has
// exactly one Email account with its CID. The logs say it once a minute, not
// once per request or job: one "deliveries wait" line, and at most one line
// per cause from the RPC layer. Real devnet, Redis (random prefix), pind.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { listInbox } from '../../chain/client/index.ts';
import { createConnection } from '../../src/core/chain-rpc.ts';
import { startDeliveryRig } from '../support/delivery-rig.ts';
import { startTestChain } from '../support/devnet.ts';
import { prepareMailChain } from '../support/mail-chain.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => {});
});

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

type Mode = 'pass' | 'garbage' | 'html' | 'html-502' | '503' | '429';

/** A proxy to `upstream` that answers as `mode` says; counts the requests it spoiled. */
async function badProvider(upstream: string) {
  const state = { mode: 'pass' as Mode, spoiled: 0, byMode: new Map<Mode, number>() };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const mode = state.mode;
      if (mode !== 'pass') state.spoiled++;
      state.byMode.set(mode, (state.byMode.get(mode) ?? 0) + 1);
      switch (mode) {
        case 'garbage':
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('\u0000\u0001{"jsonrpc": not json');
          return;
        case 'html':
          res.writeHead(200, { 'content-type': 'text/html' });
          res.end('<!doctype html><html><body><h1>Service temporarily unavailable</h1></body></html>');
          return;
        case 'html-502':
          res.writeHead(502, { 'content-type': 'text/html' });
          res.end('<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>');
          return;
        case '503':
          res.writeHead(503, { 'content-type': 'text/plain' });
          res.end('upstream overloaded');
          return;
        case '429':
          res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
          res.end('{"jsonrpc":"2.0","error":{"code":429,"message":"Too many requests"},"id":null}');
          return;
      }
      try {
        const up = await fetch(upstream, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: Buffer.concat(chunks),
        });
        res.writeHead(up.status, { 'content-type': 'application/json' });
        res.end(Buffer.from(await up.arrayBuffer()));
      } catch {
        res.writeHead(502).end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise((r) => server.close(r)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, state };
}

describe('deliveries while the chain provider misbehaves for a long stretch', { timeout: 180_000 }, () => {
  it('garbage, HTML pages, 5xx and 429 in turn: no attempt spent, nothing bounced, each message once, a line per cause', async () => {
    const chain = await startTestChain();
    const mail = await prepareMailChain(chain, 'mail.test');
    const bob = await mail.mailbox();
    const carol = await mail.mailbox();
    const provider = await badProvider(chain.devnet.rpcUrl);
    const { logs, deliver, outbound, startWorkers, accept, completed } = await startDeliveryRig(
      chain,
      mail,
      'badrpc',
      cleanups,
    );
    // As src/run/serve/serve.ts makes it, with `rpc_max_wait_secs = 1`: each call gives up quickly,
    // so the jobs meet the bad answers again and again.
    const connection = createConnection(provider.url, {
      maxRps: 0,
      maxWaitMs: 1000,
      log: pino({ level: 'info' }, logs.stream).child({ component: 'chain-rpc' }),
    });
    await startWorkers({ connection });

    // A new message at the start of each stretch: its job runs at once and meets that answer
    // (the older jobs by then wait out a backoff as long as the outage so far).
    const wallets = [bob, carol].map((k) => k.publicKey.toBase58());
    const ids: string[] = [];
    const modes: Mode[] = ['garbage', 'html', 'html-502', '503', '429'];
    for (const [i, mode] of modes.entries()) {
      provider.state.mode = mode;
      // Two attempts each: one spent on the provider would show, two would bounce the message.
      ids.push(`${await accept([wallets[i % 2] as string], `bad provider ${mode}`, 2)}.0`);
      const until = Date.now() + 4_000;
      while (Date.now() < until) {
        for (const id of ids) {
          const job = await deliver.getJob(id);
          if (!job) continue;
          expect(await job.isCompleted(), `${id} completed while the provider answered ${mode}`).toBe(false);
          expect(await job.isFailed(), job.failedReason).toBe(false);
          expect(job.attemptsMade, job.failedReason).toBe(0);
        }
        await sleep(250);
      }
      expect(provider.state.byMode.get(mode) ?? 0, `requests answered ${mode}`).toBeGreaterThan(0);
    }
    expect(provider.state.spoiled).toBeGreaterThan(20);

    provider.state.mode = 'pass';
    const done = await Promise.all(ids.map((id) => completed(id, 90_000)));
    for (const job of done) expect(job.attemptsMade).toBe(1);
    const cids = done.map((j) => j.data.stages.pin?.cid);
    const inbox = [
      ...(await listInbox(chain.connection, chain.programId, bob.publicKey)),
      ...(await listInbox(chain.connection, chain.programId, carol.publicKey)),
    ];
    expect(inbox).toHaveLength(ids.length);
    for (const cid of cids) expect(inbox.filter((e) => e.email.cid === cid)).toHaveLength(1);
    expect(await outbound.count()).toBe(0);

    // Said once a minute (the stretch was shorter), never per request or per job.
    expect(logs.lines.filter((l) => /status=deferred|status=bounced/.test(String(l.msg)))).toHaveLength(0);
    expect(
      logs.lines.filter((l) => String(l.msg).startsWith('deliveries wait for the chain RPC')),
    ).toHaveLength(1);
    const causes = logs.lines.filter((l) => l.component === 'chain-rpc').map((l) => String(l.cause));
    expect(new Set(causes).size).toBe(causes.length);
    expect(causes).toEqual(expect.arrayContaining(['garbage', 'html', 'server-error', 'rate-limited']));
  });
});
