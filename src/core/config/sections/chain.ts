// [chain]: the Solana cluster (devnet by default) and the server's keys.
import * as z from 'zod';
import {
  DEFAULT_MAX_PRIORITY_FEE_LAMPORTS,
  DEFAULT_PRIORITY_FEE_PERCENTILE,
  MAX_FIXED_PRIORITY_FEE,
} from '../../../../chain/client/compute-budget.ts';
import { DEFAULT_PROGRAM_ID } from '../../../../chain/client/program-id.ts';
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
  rpc_url: httpUrl()
    .default(DEFAULT_RPC_URL)
    .meta({ description: 'JSON-RPC endpoint (`sealpost devnet` by default).' }),
  ws_url: wsUrl().optional().meta({
    description:
      'PubSub websocket. Nothing waits on it alone: confirmations poll getSignatureStatuses at slot cadence.',
    default:
      'derived like @solana/web3.js: `http:`→`ws:`, `https:`→`wss:`; an explicit port p → p + 1, no port → none (`https://host` → `wss://host`)',
  }),
  program_id: pubkey().default(DEFAULT_PROGRAM_ID).meta({
    description: "The mail program's address; base58 of 32 bytes.",
    default: '`DEFAULT_PROGRAM_ID` from `chain/client/program-id.ts`',
  }),
  authority_key_file: filePath().optional().meta({
    description:
      'Domain authority keypair (Solana CLI JSON); signs SendMail for relayed mail. Needed by `serve`/`worker` to publish on chain. `sealpost keygen authority FILE` makes one.',
    default: 'none',
  }),
  delegate_key_file: filePath().optional().meta({
    description:
      'Delegate keypair of the domain service; signs CreateDomain and RequestReclaim. Without it `POST /domain` and `POST /domain/reclaim` answer 503 (lookups and proof checks still run).',
    default: 'none',
  }),
  commitment: oneOf(['processed', 'confirmed', 'finalized'])
    .default('confirmed')
    .meta({ description: '`"processed"`, `"confirmed"` or `"finalized"`.' }),
  // "auto": an hour of peak spend (at least 0.05 SOL); a number: that floor; 0: no deferral.
  min_authority_lamports: authorityFloor().default('auto').meta({
    description:
      "Below this authority balance (plus one message's cost) the MX answers new mail `451 4.3.2` (try later) instead of spending. `\"auto\"`: an hour of the deployment's peak spend (the busiest clock hour of the last week × one message's cost, at least 0.05 SOL); a number: that many lamports; `0` turns it off. Read every `[limits] balance_check_secs`. See `docs/cost-guard.md`.",
  }),
  pipeline_sendmail: bool().default(true).meta({
    description:
      'Send the next SendMail to a recipient as soon as the previous one is processed (mail_count read at `processed`) instead of after it is confirmed; each delivery still waits for its own confirmation. Lifts the per-recipient bound of one confirmation at a time; the price is a failed transaction\'s fee whenever a processed send is dropped with a skipped block (the retries rebuild the sends built on it; no mail is lost or doubled). `false`: read mail_count at `confirmed` and hold the recipient until each send is confirmed (docs/inbound.md "Batched SendMail").',
  }),
  sendmail_batch_max: intBetween(1, 16).default(8).meta({
    description:
      'SendMail instructions one transaction may carry, 1–16; `1` sends each message in its own transaction. The 1232-byte packet limit is the tighter bound with the operator pin\'s 59-character CIDs: four to one recipient, three to different recipients. Deliveries of one worker process that reach SendMail together share transactions; a hot recipient\'s take consecutive indices (docs/inbound.md "Batched SendMail").',
  }),
  sendmail_batch_wait_ms: nonNegativeInt().default(5).meta({
    description:
      'How long the first SendMail of a batch waits for others to join it. `0` still batches what arrives in the same tick.',
  }),
  priority_fee: priorityFee().default('auto').meta({
    description:
      'The compute-unit price every transaction Sealpost builds pays (SetComputeUnitPrice): `"auto"` = the `priority_fee_percentile` of `getRecentPrioritizationFees` over the transaction\'s writable accounts (at least 1 µlamport/CU), or an integer 0–10¹² µlamports per CU (`0`: no priority fee). Raised ×1.5 on each re-sign of the same message (a new transaction once the previous one is proven expired, `raiseForRound`); re-sending the same signed bytes keeps their price. Each transaction also carries a SetComputeUnitLimit sized from the program\'s measured use (`chain/client/compute-budget.ts`), so the fee is limit × price.',
  }),
  priority_fee_percentile: intBetween(1, 100)
    .default(DEFAULT_PRIORITY_FEE_PERCENTILE)
    .meta({ description: '`priority_fee = "auto"`: which percentile of the recent fees to pay, 1–100.' }),
  max_priority_fee_lamports: intBetween(0, 1_000_000_000)
    .default(Number(DEFAULT_MAX_PRIORITY_FEE_LAMPORTS))
    .meta({
      description:
        'The most one transaction pays in priority fee, 0–10⁹ lamports; the price is lowered to fit. A transaction of one relayed SendMail (limit 12,226 CU: 7,855 measured × 1.2 + 2,500 = 11,926 for the SendMail, plus 150 for each of the two budget instructions) reaches it at 8,179,290 µlamports/CU; a batch of four (48,004 CU) at 2,083,159.',
      default: '`100000` (0.0001 SOL)',
    }),
  // JSON-RPC calls per second to rpc_url from each process (0 = no limit); unset: none for a node on this host, else 10.
  max_rps: intBetween(0, MAX_RPS).optional().meta({
    description:
      'JSON-RPC calls per second each process sends to `rpc_url`, 0–100000 (`0`: no limit); a batch counts as its number of calls. Calls beyond it wait their turn. Set it to your provider\'s limit divided by the number of Sealpost processes (`sealpost serve` workers, `domaind`) sharing its key. See docs/operations.md, "RPC provider".',
    default: 'unset: no limit for an `rpc_url` on this host (`localhost`, `127.0.0.0/8`, `::1`), else `10`',
  }),
  // How long one RPC call waits out HTTP 429s and provider errors before failing as retryable.
  rpc_max_wait_secs: intBetween(1, 600).default(30).meta({
    description:
      "How long one RPC call waits out HTTP 429s (by their `Retry-After`) and provider errors (5xx, HTML pages, bodies that are not JSON: backoff with jitter, at most 6 tries) before it fails as a retryable error, 1–600. A delivery whose call fails so is delayed until the endpoint's `Retry-After` (else a backoff growing with the outage, up to 60 s) and spends no delivery attempt: a 429 storm never bounces mail. Logged once a minute per process (`deliveries wait for the chain RPC`), never per job.",
  }),
  // Shortest time between two signature-status polls of a worker process; unset: 10 on this host, else 400 (a slot).
  status_poll_ms: intBetween(MIN_STATUS_POLL_MS, MAX_STATUS_POLL_MS).optional().meta({
    description:
      'The shortest time between two signature-status polls of a worker process, 10–5000 ms. One poll asks about every signature the process waits for (256 per call), so its rate stays one per interval however many deliveries wait; a new waiter joins the next poll. At `10` (a devnet) the poller keeps its fast cadence (10 ms while a send waits for `processed`, 50 ms otherwise, doubling up to 400 ms while nothing lands). Against a real cluster a slot (400 ms) is as fast as anything changes.',
    default: 'unset: `10` for an `rpc_url` on this host, else `400`',
  }),
  // Rent recovery (delivery/rent-recovery.ts): close our Email accounts of mail older than this many days; 0 = off.
  rent_recovery_days: intBetween(0, 36_500).default(0).meta({
    description:
      'Rent recovery, opt-in: close the Email accounts this deployment published (DeleteMail by the authority, rent back to it) of mail its store has held for more than this many days, 0–36500; `0` is off. The copy stays in the store (IMAP, POP3, webmail in server mode); trustless readers no longer see the message on chain. See docs/operations.md "Rent recovery".',
    default: '`0` (off)',
  }),
  // Email accounts one sweep queues DeleteMail for at most.
  rent_recovery_batch: intBetween(1, 10_000).default(500).meta({
    description:
      'DeleteMail jobs one sweep queues at most, 1–10000 (a sweep looks at no more than 4 × this many candidates).',
  }),
  // Seconds between two sweeps.
  rent_recovery_interval_secs: intBetween(10, 604_800).default(3600).meta({
    description:
      'Seconds between two sweeps, 10–604800. One schedule in Redis for the whole deployment, run by the worker processes, one sweep at a time.',
  }),
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
