// A web3.js Connection for server processes and the CLI: every RPC call has
// a timeout, so a hung node turns into a retryable error instead of a stuck
// job, and a node that goes away mid-answer fails the call instead of
// leaving it pending (web3.js's own fetch was seen to never settle then). Its
// RPC client only POSTs a JSON text and reads the answer's status and text,
// so it is given src/net/http-fetch.ts instead of the platform fetch.
import { type Commitment, Connection } from '@solana/web3.js';
import { httpFetch } from './net/http-fetch.ts';

export function createConnection(
  rpcUrl: string,
  opts: {
    commitment?: Commitment;
    wsUrl?: string;
    timeoutMs?: number;
    /** Let web3.js wait and retry on HTTP 429 (for the CLI on a public RPC; servers retry their own way). */
    retryOnRateLimit?: boolean;
  } = {},
): Connection {
  return new Connection(rpcUrl, {
    commitment: opts.commitment ?? 'confirmed',
    wsEndpoint: opts.wsUrl,
    disableRetryOnRateLimit: !opts.retryOnRateLimit,
    fetch: httpFetch({ timeoutMs: opts.timeoutMs ?? 15_000 }),
  });
}
