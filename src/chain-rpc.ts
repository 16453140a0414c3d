// A web3.js Connection for server processes: every RPC call has a timeout,
// so a hung node turns into a retryable error instead of a stuck job. Its
// RPC client only POSTs a JSON text and reads the answer's status and text,
// so it is given src/net/http-fetch.ts instead of the platform fetch.
import { type Commitment, Connection } from '@solana/web3.js';
import { httpFetch } from './net/http-fetch.ts';

export function createConnection(
  rpcUrl: string,
  opts: { commitment?: Commitment; wsUrl?: string; timeoutMs?: number } = {},
): Connection {
  return new Connection(rpcUrl, {
    commitment: opts.commitment ?? 'confirmed',
    wsEndpoint: opts.wsUrl,
    disableRetryOnRateLimit: true,
    fetch: httpFetch({ timeoutMs: opts.timeoutMs ?? 15_000 }),
  });
}
