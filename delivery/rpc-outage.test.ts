// A retryable endpoint error is found however it is wrapped, and an outage
// delays jobs by the endpoint's own time or a growing backoff, logged once a minute.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { RpcUnavailableError, rpcUnavailableIn } from '../src/core/net/rpc-discipline.ts';
import { LogLines } from '../test/support/mx-rig.ts';
import { RPC_BACKOFF_MAX_MS, RPC_BACKOFF_MS, RpcOutage } from './rpc-outage.ts';

const unavailable = (retryAt?: number) =>
  new RpcUnavailableError(
    'http://rpc.test/key',
    'rate-limited',
    'the chain RPC at http://rpc.test is rate limiting us (HTTP 429); gave up after 30 s (retryable)',
    retryAt,
  );

describe('rpcUnavailableIn', () => {
  it('finds the error itself, a cause of a cause, and its text quoted by web3.js', () => {
    expect(rpcUnavailableIn(unavailable(1234))).toEqual({ retryAt: 1234 });
    const wrapped = new Error('send failed', { cause: new Error('inner', { cause: unavailable(99) }) });
    expect(rpcUnavailableIn(wrapped)).toEqual({ retryAt: 99 });
    const quoted = new Error(`failed to get info about account X: ${String(unavailable(5))}`);
    expect(rpcUnavailableIn(quoted)).toEqual({});
  });
  it('is null for anything else', () => {
    expect(rpcUnavailableIn(new Error('Transaction simulation failed'))).toBeNull();
    expect(rpcUnavailableIn('RpcUnavailableError')).toBeNull();
    expect(rpcUnavailableIn(undefined)).toBeNull();
  });
});

describe('RpcOutage', () => {
  it("waits until the endpoint's time, else backs off as long as the outage lasted, logging once a minute", () => {
    let now = 1_000_000;
    const outage = new RpcOutage(
      () => now,
      () => 0.5,
    );
    const logs = new LogLines();
    const log = pino({ level: 'info' }, logs.stream);
    expect(outage.defer(now + 3000, log)).toBe(3125);
    expect(outage.defer(undefined, log)).toBe(RPC_BACKOFF_MS);
    now += 10_000;
    expect(outage.defer(undefined, log)).toBe(10_000);
    now += 10 * 60_000;
    expect(outage.defer(undefined, log)).toBe(RPC_BACKOFF_MAX_MS);
    // Lines at the first deferral and a minute on, not one per job.
    expect(logs.lines).toHaveLength(2);
    expect(logs.lines[1]).toMatchObject({ deferred: 3 });
    outage.clear();
    expect(outage.defer(undefined, log)).toBe(RPC_BACKOFF_MS);
  });
});
