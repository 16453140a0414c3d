// domaind's start-up check reads the local domains from the chain. A chain
// node that stops answering, or drops the connection mid-answer, must not
// leave domaind unable to stop: `sealpost dev` killed outright once left a
// domaind waiting forever on a read its node had dropped while shutting down.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Keypair } from '@solana/web3.js';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/core/config/index.ts';
import { startDomaind } from '../../src/edge/domaind/server.ts';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A JSON-RPC endpoint that misbehaves on every request. */
async function badNode(onRequest: (res: import('node:http').ServerResponse) => void): Promise<string> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => onRequest(res));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function start(rpcUrl: string) {
  const config = parseConfig(
    `[smtp]\nhostname = "mail.example.org"\nlocal_domains = ["example.org"]\n` +
      `[chain]\nrpc_url = "${rpcUrl}"\n`,
  );
  return startDomaind({
    config,
    host: '127.0.0.1',
    port: 0,
    delegate: null,
    authority: Keypair.generate().publicKey,
    logger: pino({ level: 'silent' }),
  });
}

describe('domaind with a chain node that goes away', () => {
  it('warns at start-up when the node drops the connection mid-answer', async () => {
    const url = await badNode((res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '200' });
      res.write('{"jsonrpc":"2.0","result":');
      setTimeout(() => res.socket?.destroy(), 10);
    });
    const domaind = await start(url);
    try {
      const health = await domaind.runStartupCheck();
      expect(health.status).toBe('warn');
      expect(health.warnings[0]).toContain('could not read the local domains from the chain');
    } finally {
      await domaind.close();
    }
  });

  it('stops within a few seconds while its start-up read gets no answer', async () => {
    const url = await badNode(() => {
      // Never answers.
    });
    const domaind = await start(url);
    const res = await fetch(`${domaind.url}/health`);
    expect(res.status).toBe(200);
    const t0 = Date.now();
    await domaind.close();
    expect(Date.now() - t0).toBeLessThan(5000);
    // It no longer listens.
    await expect(fetch(`${domaind.url}/health`)).rejects.toThrow();
  });
});
