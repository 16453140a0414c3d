// pind's chain-backed retention (`sealpost pind gc --chain`): a pin is kept
// while the chain still needs it — an Email account's `cid` names it, or a
// live PinLease paid to this operator carries blake3 of its CID text — or
// while it is younger than the grace period; every other pin is released,
// then the block sweep deletes what no remaining pin references.
// docs/pinning.md "Retention"; the lease rules are docs/protocol.md's.
import type { Connection } from '@solana/web3.js';
import bs58 from 'bs58';
import { decodeEmail } from '../../chain/accounts/index.ts';
import { type Key, toPublicKey } from '../../chain/bytes.ts';
import { listPinLeases } from '../../chain/client.ts';
import { pinLeaseCidHash } from '../../chain/instructions.ts';
import type { PindStore } from './store.ts';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

export interface ChainRetention {
  /** CIDs named by Email accounts. */
  referenced: Set<string>;
  /** hex(cid_hash) of the live leases paid to the operator. */
  leased: Set<string>;
}

/** Reads what the chain holds for this operator: Email CIDs and live PinLeases at `now` (Unix seconds). */
export async function readChainRetention(
  conn: Connection,
  programId: Key,
  operator: Key,
  now: bigint,
): Promise<ChainRetention> {
  const emails = await conn.getProgramAccounts(toPublicKey(programId), {
    filters: [{ memcmp: { offset: 0, bytes: bs58.encode(Uint8Array.of(3)) } }],
  });
  const referenced = new Set<string>();
  for (const { account } of emails) {
    try {
      referenced.add(decodeEmail(new Uint8Array(account.data)).cid);
    } catch {
      // Not an Email record after all (cannot happen for accounts the program wrote).
    }
  }
  const leases = await listPinLeases(conn, programId, { operator, now });
  return { referenced, leased: new Set(leases.map((l) => hex(l.account.cidHash))) };
}

export type RetentionReason = 'referenced' | 'leased' | 'grace';

export interface RetentionOutcome {
  kept: { cid: string; reason: RetentionReason }[];
  released: string[];
}

/**
 * Releases every pin the chain does not retain and that was pinned more than
 * `graceSecs` before `nowMs`. The caller holds the data directory's lock.
 */
export async function releaseUnretained(
  store: PindStore,
  chain: ChainRetention,
  opts: { nowMs: number; graceSecs: number },
): Promise<RetentionOutcome> {
  const out: RetentionOutcome = { kept: [], released: [] };
  const records = [];
  for await (const record of store.listPins()) records.push(record);
  for (const record of records) {
    let reason: RetentionReason | null = null;
    if (chain.referenced.has(record.cid)) reason = 'referenced';
    else if (chain.leased.has(hex(pinLeaseCidHash(record.cid)))) reason = 'leased';
    else if (opts.nowMs - Date.parse(record.pinned_at) < opts.graceSecs * 1000) reason = 'grace';
    if (reason) out.kept.push({ cid: record.cid, reason });
    else if (await store.removePin(record.cid)) out.released.push(record.cid);
  }
  return out;
}
