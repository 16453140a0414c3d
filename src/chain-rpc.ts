// A web3.js Connection for server processes: every RPC call has a timeout,
// so a hung node turns into a retryable error instead of a stuck job.
import { type Commitment, Connection } from '@solana/web3.js';

export function createConnection(
  rpcUrl: string,
  opts: { commitment?: Commitment; wsUrl?: string; timeoutMs?: number } = {},
): Connection {
  const timeoutMs = opts.timeoutMs ?? 15_000;
  return new Connection(rpcUrl, {
    commitment: opts.commitment ?? 'confirmed',
    wsEndpoint: opts.wsUrl,
    disableRetryOnRateLimit: true,
    fetch: (input, init) => {
      const signal = AbortSignal.timeout(timeoutMs);
      return fetch(input, {
        ...init,
        signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal,
      });
    },
  });
}
