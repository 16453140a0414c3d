// The status poller at slot cadence (issue 30): with `[chain] status_poll_ms`
// set, polls start at least that far apart however many waiters come and go
// (a new waiter joins the next poll instead of making the poller fast again),
// and a transaction that lands is still seen within a poll or two. The
// default is one slot (400 ms) for a node elsewhere and today's fast cadence
// on this host; the key is bounded and named when out of range. One-off
// looks (check(), a retrying job's look at its own send) ride in one poll
// round together. Real devnet.
import { randomBytes } from 'node:crypto';
import { Connection } from '@solana/web3.js';
import bs58 from 'bs58';
import { describe, expect, it } from 'vitest';
import { SignatureWatch } from '../../delivery/sendmail/signature-watch.ts';
import { ConfigError, parseConfig } from '../../src/core/config/index.ts';
import { signedTransfer, startTestChain } from '../support/devnet.ts';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A Connection to `url` that notes when each getSignatureStatuses call was sent. */
function countingConnection(url: string): { connection: Connection; calls: number[] } {
  const calls: number[] = [];
  const connection = new Connection(url, {
    commitment: 'confirmed',
    fetch: (async (input: string | URL | Request, init?: RequestInit) => {
      const body = typeof init?.body === 'string' ? init.body : '';
      for (const _ of body.matchAll(/"getSignatureStatuses"/g)) calls.push(Date.now());
      return fetch(input, init);
    }) as typeof fetch,
  });
  return { connection, calls };
}

describe('the status poller with status_poll_ms', { timeout: 60_000 }, () => {
  it('polls at most once per interval under many waiters, and still sees a landing within a poll', async () => {
    const chain = await startTestChain();
    const payer = await chain.funded(1);
    const { connection, calls } = countingConnection(chain.devnet.rpcUrl);
    const pollMs = 400;
    const watch = new SignatureWatch(connection, undefined, { minPollMs: pollMs });
    expect(watch.minPollMs).toBe(pollMs);
    const height = await connection.getBlockHeight('confirmed');
    try {
      // 200 waiters arriving 10 every 50 ms for 1 s (signatures that never land), each waiting 3 s.
      const never: Promise<unknown>[] = [];
      const started = Date.now();
      for (let wave = 0; wave < 20; wave++) {
        for (let i = 0; i < 10; i++) {
          const waited = watch.wait(
            bs58.encode(randomBytes(64)),
            height + 10_000,
            (s) => s.kind === 'landed',
            {
              fast: true,
              timeoutMs: 3000,
              onTimeout: () => new Error('not landed'),
            },
          );
          never.push(waited.catch((e: Error) => e.message));
        }
        await sleep(50);
      }
      // Meanwhile one that lands, asked for while the others wait.
      const { wire, latest } = await signedTransfer(chain.connection, payer);
      const sig = await chain.connection.sendRawTransaction(wire);
      const t0 = Date.now();
      const state = await watch.wait(sig, latest.lastValidBlockHeight, (s) => s.kind === 'landed', {
        fast: true,
        timeoutMs: 10_000,
        onTimeout: () => new Error('not landed'),
      });
      expect(state.kind).toBe('landed');
      // Seen within a couple of polls (plus the devnet's confirmation).
      expect(Date.now() - t0).toBeLessThan(3 * pollMs + 500);
      expect(await Promise.all(never)).toEqual(never.map(() => 'not landed'));
      const elapsed = Date.now() - started;

      // Every poll (one call: fewer than 256 signatures) started at least pollMs after the one before.
      expect(calls.length).toBeGreaterThan(3);
      const gaps = calls.slice(1).map((t, i) => t - (calls[i] as number));
      expect(Math.min(...gaps)).toBeGreaterThanOrEqual(pollMs - 5);
      // So about 2.5 a second at most, not the ~100 of a 10 ms cadence reset by each new waiter.
      expect(calls.length).toBeLessThanOrEqual(Math.ceil(elapsed / pollMs) + 1);
    } finally {
      watch.close();
    }
  });

  it('defaults to one slot for a node elsewhere and to the fast cadence on this host', async () => {
    expect(new SignatureWatch(new Connection('https://rpc.example.org')).minPollMs).toBe(400);
    expect(new SignatureWatch(new Connection('http://127.0.0.1:8899')).minPollMs).toBe(10);
    const parse = (text: string) => parseConfig(text, { env: {}, source: 'test.toml' });
    expect(parse('').chain.status_poll_ms).toBe(10);
    expect(parse('[chain]\nrpc_url = "https://rpc.example.org"\n').chain.status_poll_ms).toBe(400);
    expect(
      parse('[chain]\nrpc_url = "https://rpc.example.org"\nstatus_poll_ms = 800\n').chain.status_poll_ms,
    ).toBe(800);
    expect(parse('[chain]\nstatus_poll_ms = 250\n').chain.status_poll_ms).toBe(250);
  });

  it('names an out-of-range status_poll_ms', () => {
    const errorsOf = (text: string): string[] => {
      try {
        parseConfig(text, { env: {}, source: 'test.toml' });
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as ConfigError).lines();
      }
      throw new Error('expected a ConfigError');
    };
    expect(errorsOf('[chain]\nstatus_poll_ms = 5\n')).toEqual([
      'chain.status_poll_ms: expected integer 10-5000, got 5',
    ]);
    expect(errorsOf('[chain]\nstatus_poll_ms = 60000\n')).toEqual([
      'chain.status_poll_ms: expected integer 10-5000, got 60000',
    ]);
    expect(errorsOf('[chain]\nstatus_poll_ms = "fast"\n')).toEqual([
      'chain.status_poll_ms: expected integer 10-5000, got "fast"',
    ]);
  });
});

describe("the poller's one-off looks (check)", { timeout: 60_000 }, () => {
  it('answers 100 concurrent checks with one status request, states right, and errors reach the callers', async () => {
    const chain = await startTestChain();
    const payer = await chain.funded(1);
    const { connection, calls } = countingConnection(chain.devnet.rpcUrl);
    const watch = new SignatureWatch(connection, undefined, { minPollMs: 400 });
    try {
      // One landed transfer among 99 signatures nobody sent.
      const { wire, latest } = await signedTransfer(connection, payer);
      const landed = await connection.sendRawTransaction(wire);
      await connection.confirmTransaction({ signature: landed, ...latest }, 'confirmed');
      const height = await connection.getBlockHeight('confirmed');
      const unknown = Array.from({ length: 99 }, () => bs58.encode(randomBytes(64)));
      const before = calls.length;
      const states = await Promise.all([
        watch.check(landed, latest.lastValidBlockHeight),
        ...unknown.map((s) => watch.check(s, height + 100)),
      ]);
      // The retries of many jobs cost one request between them (it was one each).
      expect(calls.length - before).toBe(1);
      expect(states[0]?.kind).toBe('landed');
      expect(new Set(states.slice(1).map((st) => st.kind))).toEqual(new Set(['pending']));
    } finally {
      watch.close();
    }
    // A failing read rejects the looks that rode in it, as a direct read would.
    const dead = new SignatureWatch(new Connection('http://127.0.0.1:9', 'confirmed'), undefined, {
      minPollMs: 0,
    });
    try {
      await expect(dead.check(bs58.encode(randomBytes(64)), 1)).rejects.toThrow();
    } finally {
      dead.close();
    }
  });
});
