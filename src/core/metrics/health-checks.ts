// The dependency checks behind GET /ready (./health.ts). Each is cheap and
// read-only: PING, `select 1`, the chain node's getHealth, the operator
// pin's liveness route, a directory's access bits. Answers never carry a
// dependency's URL (RPC URLs often hold an API key); errors are the
// transport's or the dependency's own short reason.
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import type { Redis } from 'ioredis';
import { type Kysely, sql } from 'kysely';
import type { Config } from '../config/types.ts';
import { defaultMaxRps, gateFor, parseRetryAfter } from '../net/rpc-discipline.ts';
import { readReconcileStatus } from '../queue/reconcile-status.ts';
import type { Database } from '../store/types.ts';
import type { DependencyCheck } from './health.ts';

/**
 * Redis through an existing connection. A connection still being made is
 * waited for (within the check's timeout); one that has failed since it was
 * last ready is down at once, with the connection error.
 */
export function redisCheck(redis: Redis, name = 'redis'): DependencyCheck {
  let lastError = '';
  redis.on('error', (err: Error) => {
    lastError = err.message;
  });
  redis.on('ready', () => {
    lastError = '';
  });
  return {
    name,
    async run(signal) {
      if (redis.status !== 'ready') {
        if (lastError !== '' || redis.status === 'end') {
          throw new Error(`not connected (${redis.status})${lastError ? `: ${lastError}` : ''}`);
        }
        await untilReady(redis, signal);
      }
      const answer = await redis.ping();
      if (answer !== 'PONG') throw new Error(`PING answered ${JSON.stringify(answer)}`);
    },
  };
}

function untilReady(redis: Redis, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (err?: Error) => {
      redis.off('ready', onReady);
      redis.off('error', onError);
      signal.removeEventListener('abort', onAbort);
      if (err) reject(err);
      else resolve();
    };
    const onReady = () => done();
    const onError = (err: Error) => done(new Error(`not connected: ${err.message}`));
    const onAbort = () => done(new Error(`not connected (${redis.status})`));
    redis.on('ready', onReady);
    redis.on('error', onError);
    signal.addEventListener('abort', onAbort);
  });
}

/** The accounts store (SQLite or PostgreSQL). */
export function storeCheck(db: Kysely<Database>): DependencyCheck {
  return {
    name: 'store',
    async run() {
      await sql`select 1`.execute(db);
    },
  };
}

async function httpCheck(url: string, init: RequestInit, signal: AbortSignal): Promise<Response> {
  const res = await fetch(url, { ...init, signal });
  if (!res.ok) {
    await res.body?.cancel();
    throw new Error(`HTTP ${res.status}`);
  }
  return res;
}

/**
 * The chain's JSON-RPC node: `getHealth` must answer "ok" (a node that is
 * behind answers an error). The call counts against the process's
 * `[chain] max_rps` like every other (src/core/net/rpc-discipline.ts); while a
 * 429's Retry-After holds, the node answered moments ago and is not asked
 * again (a rate-limited provider is reachable: the pipeline waits it out).
 */
export function chainRpcCheck(rpcUrl: string, maxRps?: number): DependencyCheck {
  return {
    name: 'chain_rpc',
    async run(signal) {
      const gate = gateFor(rpcUrl.split('#')[0] as string, maxRps ?? defaultMaxRps(rpcUrl));
      if (gate.closedUntil > Date.now()) return;
      const aborted = new Promise<never>((_, reject) => {
        signal.addEventListener('abort', () => reject(new Error('waiting for the RPC rate limit')), {
          once: true,
        });
      });
      aborted.catch(() => undefined);
      const acquiring = gate.acquire(1);
      const release = await Promise.race([acquiring, aborted]).catch((err: unknown) => {
        // The slot, once granted, is handed straight back.
        void acquiring.then((r) => r());
        throw err;
      });
      let res: Response;
      try {
        res = await fetch(rpcUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getHealth' }),
          signal,
        });
      } finally {
        release();
      }
      if (res.status === 429) {
        // Reachable, and asking us to slow down: every caller in this process waits it out.
        const retryAt = parseRetryAfter(res.headers.get('retry-after'), Date.now());
        gate.close(retryAt ?? Date.now() + 1000);
        await res.body?.cancel();
        return;
      }
      if (!res.ok) {
        await res.body?.cancel();
        throw new Error(`HTTP ${res.status}`);
      }
      const body = (await res.json()) as { result?: unknown; error?: { message?: unknown } };
      if (body.result === 'ok') return;
      throw new Error(
        typeof body.error?.message === 'string' ? body.error.message : 'getHealth did not answer "ok"',
      );
    },
  };
}

/** The operator pin of `[ipfs]`: pind's GET /health, or Kubo's POST /api/v0/version. */
export function operatorPinCheck(ipfs: Config['ipfs']): DependencyCheck {
  return {
    name: 'operator_pin',
    async run(signal) {
      if (ipfs.operator === 'kubo') {
        const res = await httpCheck(
          new URL('api/v0/version', withSlash(ipfs.kubo_rpc_url)).href,
          { method: 'POST' },
          signal,
        );
        await res.body?.cancel();
        return;
      }
      const res = await httpCheck(
        new URL('health', withSlash(ipfs.pind_url)).href,
        { method: 'GET' },
        signal,
      );
      await res.body?.cancel();
    },
  };
}

function withSlash(url: string): string {
  return url.endsWith('/') ? url : `${url}/`;
}

/** A directory the process reads and writes (pind's store, a blob store). */
export function directoryCheck(name: string, dir: string): DependencyCheck {
  return {
    name,
    async run() {
      await access(dir, constants.R_OK | constants.W_OK);
    },
  };
}

/** What a process with Redis, the store, the chain and the operator pin depends on (serve's API, a worker). */
export function pipelineChecks(deps: {
  config: Config;
  redis: Redis;
  db: Kysely<Database>;
}): DependencyCheck[] {
  return [
    redisCheck(deps.redis),
    storeCheck(deps.db),
    chainRpcCheck(deps.config.chain.rpc_url, deps.config.chain.max_rps),
    operatorPinCheck(deps.config.ipfs),
  ];
}

/**
 * What the spool reconcile step (delivery/reconcile.ts) found at its last
 * run, from the summary it leaves in Redis: spool entries recovered (queued
 * again from their manifest), entries without jobs, entries moved to
 * spool-corrupt/. Always up (recovered mail is being delivered); down only
 * when the summary cannot be read.
 */
export function spoolReconcileCheck(redis: Redis, prefix: string, name = 'spool_reconcile'): DependencyCheck {
  return {
    name,
    async run(): Promise<Record<string, number | string>> {
      const status = await readReconcileStatus(redis, prefix);
      if (!status) return { runs: 0 };
      return {
        last_run_at: new Date(status.last_run_at ?? 0).toISOString(),
        recovered_total: status.recovered_total ?? 0,
        recovered_last_run: status.recovered_last_run ?? 0,
        without_jobs: status.without_jobs ?? 0,
        corrupt_total: status.corrupt_total ?? 0,
        outbound_recovered_total: status.outbound_recovered_total ?? 0,
      };
    },
  };
}
