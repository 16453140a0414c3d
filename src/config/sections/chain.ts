// [chain]: the Solana cluster (devnet by default) and the server's keys.
import * as z from 'zod';
import {
  DEFAULT_MAX_PRIORITY_FEE_LAMPORTS,
  DEFAULT_PRIORITY_FEE_PERCENTILE,
  MAX_FIXED_PRIORITY_FEE,
} from '../../../chain/compute-budget.ts';
import { DEFAULT_PROGRAM_ID } from '../../../chain/program-id.ts';
import { bool, filePath, httpUrl, intBetween, nonNegativeInt, oneOf, pubkey, wsUrl } from '../fields.ts';

export const DEFAULT_RPC_URL = 'http://127.0.0.1:8899';

/** `"auto"` or a whole number of µlamports per compute unit (0 = no priority fee). */
const priorityFee = () => {
  const error = `expected "auto" or an integer 0-${MAX_FIXED_PRIORITY_FEE} (µlamports per compute unit)`;
  const price = z
    .number({ error })
    .int({ error })
    .min(0, { error })
    .max(Number(MAX_FIXED_PRIORITY_FEE), { error });
  return z.union([z.literal('auto', { error }), price], { error });
};

/** `"auto"` or a whole number of lamports (0 = never defer). */
const authorityFloor = () => {
  const error = 'expected "auto" or an integer >= 0 (lamports)';
  return z.union([z.literal('auto', { error }), z.number({ error }).int({ error }).min(0, { error })], {
    error,
  });
};

/** The largest `max_rps` accepted. */
export const MAX_RPS = 100_000;
/** The bounds of `status_poll_ms`. */
export const MIN_STATUS_POLL_MS = 10;
export const MAX_STATUS_POLL_MS = 5_000;

export const chainSchema = z.strictObject({
  rpc_url: httpUrl().default(DEFAULT_RPC_URL),
  ws_url: wsUrl().optional(),
  program_id: pubkey().default(DEFAULT_PROGRAM_ID),
  authority_key_file: filePath().optional(),
  delegate_key_file: filePath().optional(),
  commitment: oneOf(['processed', 'confirmed', 'finalized']).default('confirmed'),
  // "auto": an hour of peak spend (at least 0.05 SOL); a number: that floor; 0: no deferral.
  min_authority_lamports: authorityFloor().default('auto'),
  pipeline_sendmail: bool().default(true),
  sendmail_batch_max: intBetween(1, 16).default(8),
  sendmail_batch_wait_ms: nonNegativeInt().default(5),
  priority_fee: priorityFee().default('auto'),
  priority_fee_percentile: intBetween(1, 100).default(DEFAULT_PRIORITY_FEE_PERCENTILE),
  max_priority_fee_lamports: intBetween(0, 1_000_000_000).default(Number(DEFAULT_MAX_PRIORITY_FEE_LAMPORTS)),
  // JSON-RPC calls per second to rpc_url from each process (0 = no limit); unset: none for a node on this host, else 10.
  max_rps: intBetween(0, MAX_RPS).optional(),
  // How long one RPC call waits out HTTP 429s and provider errors before failing as retryable.
  rpc_max_wait_secs: intBetween(1, 600).default(30),
  // Shortest time between two signature-status polls of a worker process; unset: 10 on this host, else 400 (a slot).
  status_poll_ms: intBetween(MIN_STATUS_POLL_MS, MAX_STATUS_POLL_MS).optional(),
  // Rent recovery (delivery/rent-recovery.ts): close our Email accounts of mail older than this many days; 0 = off.
  rent_recovery_days: intBetween(0, 36_500).default(0),
  // Email accounts one sweep queues DeleteMail for at most.
  rent_recovery_batch: intBetween(1, 10_000).default(500),
  // Seconds between two sweeps.
  rent_recovery_interval_secs: intBetween(10, 604_800).default(3600),
});

export type ChainInput = z.output<typeof chainSchema>;

/**
 * The PubSub URL for an RPC URL, as @solana/web3.js derives it: http → ws,
 * https → wss; an explicit port p → p + 1 (a validator's own listeners); no
 * port → none either (the scheme's default port, where a provider's proxy
 * serves both). The path and query (a provider's API key) are kept.
 */
export function deriveWsUrl(rpcUrl: string): string {
  // web3.js's makeWebsocketUrl, on the text (so an explicit :80 or :443 counts as explicit too).
  const m = /^[^:]+:\/\/([^:[/]+|\[[^\]]+\])(:\d+)?(.*)$/i.exec(rpcUrl);
  if (!m) throw new TypeError(`not an http(s) URL: ${rpcUrl}`);
  const [, host, port, rest] = m;
  const protocol = /^https:/i.test(rpcUrl) ? 'wss:' : 'ws:';
  const wsPort = port ? `:${Number(port.slice(1)) + 1}` : '';
  return `${protocol}//${host}${wsPort}${(rest ?? '').replace(/^\/$/, '')}`;
}
