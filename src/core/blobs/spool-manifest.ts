// The spool's own record of what it holds (docs/inbound.md "The spool is the
// durable truth"). Every spool file written since the manifest exists ends
// with an index: for each message in the file its id, the byte range of its
// message and the manifest a delivery job is rebuilt from (envelope sender,
// each recipient with the wallet and form the MX resolved, the MX's trace,
// receivedAt, size, remote IP). The index is written in the same writev and
// fdatasync as the bytes, so a name that is durable has its manifest too.
//
//   [message bytes …][index JSON][u32 BE: index length][8 bytes: SPOOLIX1]
//
// A segment (several small messages, one file linked once per message)
// carries one index for all of them; a large message's own file carries an
// index of one. A reader of `spool/<id>` reads the trailer, then the index,
// and takes the entry whose id is <id>: its key is `spool/<id>@<offset>+<length>`.
// A file without the magic is an entry written before the manifest existed
// (its jobs in Redis still name it by its whole-file key) or a foreign file.
import type { MxTrace } from '../../contracts/inbound-jobs.ts';

export const SPOOL_MAGIC = Buffer.from('SPOOLIX1', 'latin1');
/** The u32 length and the magic. */
export const SPOOL_TRAILER_BYTES = 4 + SPOOL_MAGIC.length;
/** An index larger than this is not ours (a recipient list of 1000 fits many times over). */
const MAX_INDEX_BYTES = 64 * 1024 * 1024;

export interface SpoolRecipient {
  /** RCPT TO as given. */
  address: string;
  wallet: string;
  form: 'wallet' | 'alias' | 'postmaster';
}

/** What the delivery jobs of one message are rebuilt from (delivery/intake/accept.ts deliverFlows). */
export interface SpoolManifest {
  v: 1;
  msgid: string;
  /** MAIL FROM; '' is the null sender. */
  from: string;
  /** In job order: recipient i is job `${msgid}.${i}`. */
  recipients: SpoolRecipient[];
  receivedAt: number;
  size: number;
  remoteIp: string;
  trace?: MxTrace;
}

export interface SpoolIndexEntry {
  id: string;
  offset: number;
  length: number;
  manifest: SpoolManifest;
}

/** The index and trailer for messages laid out from offset 0 in `entries` order. */
export function encodeSpoolIndex(entries: SpoolIndexEntry[]): Buffer {
  const json = Buffer.from(
    JSON.stringify({
      v: 1,
      entries: entries.map((e) => ({ id: e.id, o: e.offset, l: e.length, m: e.manifest })),
    }),
    'utf8',
  );
  const tail = Buffer.allocUnsafe(SPOOL_TRAILER_BYTES);
  tail.writeUInt32BE(json.length, 0);
  SPOOL_MAGIC.copy(tail, 4);
  return Buffer.concat([json, tail]);
}

/** Why a spool file cannot be read as one of ours. */
export class SpoolCorruptError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SpoolCorruptError';
  }
}

/** From the last SPOOL_TRAILER_BYTES of a file: the index length, or null when the magic is absent. */
export function trailerIndexLength(tail: Buffer, fileSize: number): number | null {
  if (tail.length !== SPOOL_TRAILER_BYTES) return null;
  if (!tail.subarray(4).equals(SPOOL_MAGIC)) return null;
  const length = tail.readUInt32BE(0);
  if (length === 0 || length > MAX_INDEX_BYTES || length > fileSize - SPOOL_TRAILER_BYTES)
    throw new SpoolCorruptError(`index length ${length} does not fit a file of ${fileSize} bytes`);
  return length;
}

/** Parses an index read from a file of `fileSize` bytes; throws SpoolCorruptError when it is not sound. */
export function decodeSpoolIndex(json: Buffer, fileSize: number): SpoolIndexEntry[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json.toString('utf8'));
  } catch {
    throw new SpoolCorruptError('the index is not JSON');
  }
  const p = parsed as { v?: unknown; entries?: unknown };
  if (p?.v !== 1 || !Array.isArray(p.entries)) throw new SpoolCorruptError('not a version 1 index');
  const dataEnd = fileSize - SPOOL_TRAILER_BYTES - json.length;
  return p.entries.map((raw) => {
    const e = raw as { id?: unknown; o?: unknown; l?: unknown; m?: unknown };
    if (typeof e.id !== 'string' || !Number.isSafeInteger(e.o) || !Number.isSafeInteger(e.l))
      throw new SpoolCorruptError('an index entry lacks its id or range');
    const offset = e.o as number;
    const length = e.l as number;
    if (offset < 0 || length < 0 || offset + length > dataEnd)
      throw new SpoolCorruptError(`the range of ${e.id} lies outside the file`);
    return { id: e.id, offset, length, manifest: checkManifest(e.m, e.id) };
  });
}

/** A manifest stored on its own (the PostgreSQL spool's JSON column); throws SpoolCorruptError when it is not sound. */
export function parseSpoolManifest(json: string, id: string): SpoolManifest {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw new SpoolCorruptError('the manifest is not JSON');
  }
  const m = checkManifest(parsed, id);
  if (m.msgid !== id) throw new SpoolCorruptError(`the manifest of ${id} names another message`);
  return m;
}

function checkManifest(raw: unknown, id: string): SpoolManifest {
  const m = raw as Partial<SpoolManifest> | undefined;
  const ok =
    m &&
    m.v === 1 &&
    typeof m.msgid === 'string' &&
    typeof m.from === 'string' &&
    Array.isArray(m.recipients) &&
    m.recipients.length > 0 &&
    m.recipients.every(
      (r) =>
        r &&
        typeof r.address === 'string' &&
        typeof r.wallet === 'string' &&
        (r.form === 'wallet' || r.form === 'alias' || r.form === 'postmaster'),
    ) &&
    typeof m.receivedAt === 'number' &&
    typeof m.size === 'number' &&
    typeof m.remoteIp === 'string';
  if (!ok) throw new SpoolCorruptError(`the manifest of ${id} is incomplete`);
  return m as SpoolManifest;
}
