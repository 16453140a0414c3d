// pind's chain-backed retention (`sealpost pind gc --chain`): a pin is kept
// while the chain still needs it — an Email account's `cid` names it, or a
// live PinLease paid to this operator carries blake3 of its CID text — or
// while it is younger than the grace period; every other pin is released,
// then the block sweep deletes what no remaining pin references.
// docs/pinning.md "Retention"; the lease rules are docs/protocol.md's.
//
// The chain is read without getProgramAccounts (providers refuse or price it
// for a program whose every message is an account): a ProgramIndex
// (src/core/store/program-index.ts) follows the program's signatures since the last
// gc, decodes each transaction's SendMail and CreatePinLease instructions,
// and keeps only the Emails and PinLeases of CIDs pinned here, read with
// getMultipleAccounts. It lives in a JSON file in the data directory, so a
// gc costs the transactions since the previous one (docs/operations.md
// "Chain reads without getProgramAccounts").
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Connection } from '@solana/web3.js';
import { decodeEmail, decodePinLease } from '../../chain/client/accounts/index.ts';
import { type Key, toPublicKey } from '../../chain/client/bytes.ts';
import { pinLeaseCidHash } from '../../chain/client/instructions.ts';
import {
  type IndexCommit,
  type IndexSnapshot,
  type IndexState,
  ProgramIndex,
  type SyncStats,
} from '../../src/core/store/program-index.ts';
import type { PindStore } from './store.ts';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

const EMAIL_TAG = 3;
const PIN_LEASE_TAG = 15;

export interface ChainRetention {
  /** CIDs named by Email accounts. */
  referenced: Set<string>;
  /** hex(cid_hash) of the live leases paid to the operator. */
  leased: Set<string>;
  /** What bringing the index up to date cost. */
  stats?: SyncStats;
}

/** The index file: `chain-index-<program id>.json` in pind's data directory. */
export function chainIndexPath(dataDir: string, programId: Key): string {
  return join(dataDir, `chain-index-${toPublicKey(programId).toBase58()}.json`);
}

interface IndexFile {
  version: number;
  cursor: { signature: string; slot: number } | null;
  /** address → [tag, base64 data]. */
  accounts: Record<string, [number, string]>;
}

/** A program index in one JSON file, replaced whole (write, then rename) at each commit. */
export class FileIndexState implements IndexState {
  constructor(private readonly path: string) {}

  private read(): IndexFile {
    if (!existsSync(this.path)) return { version: 0, cursor: null, accounts: {} };
    return JSON.parse(readFileSync(this.path, 'utf8')) as IndexFile;
  }

  async version(): Promise<number> {
    return this.read().version;
  }

  async load(): Promise<IndexSnapshot> {
    const f = this.read();
    return {
      version: f.version,
      cursor: f.cursor,
      accounts: new Map(
        Object.entries(f.accounts).map(([a, [tag, data]]) => [
          a,
          { tag, data: new Uint8Array(Buffer.from(data, 'base64')) },
        ]),
      ),
    };
  }

  async commit(base: number, c: IndexCommit): Promise<number | null> {
    const f = this.read();
    if (f.version !== base) return null;
    for (const [a, v] of c.upserts) f.accounts[a] = [v.tag, Buffer.from(v.data).toString('base64')];
    for (const a of c.deletes) delete f.accounts[a];
    const next: IndexFile = { version: base + 1, cursor: c.cursor ?? f.cursor, accounts: f.accounts };
    const tmp = `${this.path}.tmp-${process.pid}`;
    writeFileSync(tmp, JSON.stringify(next));
    renameSync(tmp, this.path);
    return next.version;
  }
}

/**
 * Reads what the chain holds for this operator's pins (`pinned`, normalized
 * CIDs): Email CIDs and live PinLeases at `now` (Unix seconds). `state`
 * keeps the index between runs (pind gc passes a FileIndexState).
 */
export async function readChainRetention(
  conn: Connection,
  programId: Key,
  operator: Key,
  now: bigint,
  opts: { pinned: Iterable<string>; state?: IndexState },
): Promise<ChainRetention> {
  const pinned = new Set(opts.pinned);
  const hashes = new Set([...pinned].map((cid) => hex(pinLeaseCidHash(cid))));
  const index = new ProgramIndex({
    connection: conn,
    programId,
    state: opts.state,
    keep: (_address, data) => {
      try {
        if (data[0] === EMAIL_TAG) return pinned.has(decodeEmail(data).cid);
        if (data[0] === PIN_LEASE_TAG) return hashes.has(hex(decodePinLease(data).cidHash));
      } catch {
        // Not a record this build decodes.
      }
      return false;
    },
    creates: (ix) =>
      ix === null ||
      (ix.kind === 'SendMail' && pinned.has(ix.cid)) ||
      (ix.kind === 'CreatePinLease' && hashes.has(hex(ix.cidHash))),
  });
  const stats = await index.sync();
  const referenced = new Set<string>();
  for (const [, data] of index.ofTag(EMAIL_TAG)) referenced.add(decodeEmail(data).cid);
  const op = toPublicKey(operator);
  const leased = new Set<string>();
  for (const [, data] of index.ofTag(PIN_LEASE_TAG)) {
    const lease = decodePinLease(data);
    if (lease.operator.equals(op) && lease.expiresAt > now) leased.add(hex(lease.cidHash));
  }
  return { referenced, leased, stats };
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
