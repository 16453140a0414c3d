// [chain]: the Solana cluster (devnet by default) and the server's keys.
import * as z from 'zod';
import { DEFAULT_PROGRAM_ID } from '../../../chain/program-id.ts';
import { bool, filePath, httpUrl, intBetween, nonNegativeInt, oneOf, pubkey, wsUrl } from '../fields.ts';

export const DEFAULT_RPC_URL = 'http://127.0.0.1:8899';

export const chainSchema = z.strictObject({
  rpc_url: httpUrl().default(DEFAULT_RPC_URL),
  ws_url: wsUrl().optional(),
  program_id: pubkey().default(DEFAULT_PROGRAM_ID),
  authority_key_file: filePath().optional(),
  delegate_key_file: filePath().optional(),
  commitment: oneOf(['processed', 'confirmed', 'finalized']).default('confirmed'),
  min_authority_lamports: nonNegativeInt().default(10_000_000),
  pipeline_sendmail: bool().default(true),
  sendmail_batch_max: intBetween(1, 16).default(8),
  sendmail_batch_wait_ms: nonNegativeInt().default(5),
});

export type ChainInput = z.output<typeof chainSchema>;

/** Solana's convention: the PubSub websocket listens on the RPC port + 1. */
export function deriveWsUrl(rpcUrl: string): string {
  const url = new URL(rpcUrl);
  const rpcPort = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.port = String(rpcPort + 1);
  return url.toString().replace(/\/$/, '');
}
