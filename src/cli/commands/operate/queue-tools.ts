// The Postfix operator's queue tools over the queues `sealpost queue list`
// shows (./queue.ts): hold and release (postsuper -h/-H), delete by id,
// selector or whole message (postsuper -d), the queued message itself
// (postcat -q) and a summary by recipient domain and age (qshape).
//
// Selectors: one job id, or --all, --domain D (a pending recipient at D),
// --rcpt R (that pending recipient), --msgid M (every job of the message),
// each narrowed by --state S. A selection that matches nothing exits 1 with
// "nothing matched". Holds are markers in Redis the workers honour
// (src/core/queue/hold.ts). A deleted inbound copy is marked finished
// ('deleted') in the store's SendMail intents, so `queue reconcile` never
// queues it again from the spool; once every copy of a message is finished
// its spool entry (and its spool-cleanup parent job) goes too.
import { join } from 'node:path';
import { type Job, Queue } from 'bullmq';
import { type Command, InvalidArgumentError } from 'commander';
import {
  type DeliverJobData,
  type OutboundJobData,
  QUEUE_DELIVER,
  QUEUE_OUTBOUND,
  QUEUE_SPOOL,
} from '../../../contracts/inbound-jobs.ts';
import type { DomainJobData } from '../../../contracts/outbound-jobs.ts';
import { type BlobStore, FsBlobStore } from '../../../core/blobs/blob-store.ts';
import { openBlobStore } from '../../../core/blobs/open-blob-store.ts';
import { clearHold, HELD_DELAY_MS, readHolds, setHold } from '../../../core/queue/hold.ts';
import { IntentsRepo, openStore, type Store } from '../../../core/store/index.ts';
import { OutboundLedger } from '../../../core/store/outbound-ledger.ts';
import { CliError } from '../../common.ts';
import {
  bounceDropped,
  findJob,
  formatAge,
  isDomainJob,
  listRows,
  type QueueRef,
  type QueueRow,
  type Session,
  type Which,
  withSession,
} from './queue-session.ts';

export interface SelectorOptions {
  config?: string;
  queue: Which;
  json?: boolean;
  all?: boolean;
  domain?: string;
  rcpt?: string;
  msgid?: string;
  state?: string;
}

const STATES = ['active', 'wait', 'prioritized', 'delayed', 'failed', 'held'] as const;

function parseState(value: string): string {
  const v = value === 'waiting' ? 'wait' : value === 'deferred' ? 'delayed' : value;
  if (!(STATES as readonly string[]).includes(v))
    throw new InvalidArgumentError(`expected one of ${STATES.join(', ')}, got "${value}"`);
  return v;
}

const domainOf = (addr: string) => addr.slice(addr.lastIndexOf('@') + 1).toLowerCase();

/** The rows the selector names; exit 2 for no or conflicting selectors, exit 1 when nothing matches. */
async function select(s: Session, id: string | undefined, o: SelectorOptions): Promise<QueueRow[]> {
  const given = [o.all, o.domain !== undefined, o.rcpt !== undefined, o.msgid !== undefined].filter(
    Boolean,
  ).length;
  if (id !== undefined ? given > 0 : given !== 1)
    throw new CliError('give one job id, --all, --domain D, --rcpt R or --msgid M', 2);
  const rows = await listRows(s);
  let picked: QueueRow[];
  if (id !== undefined) {
    const row = rows.find((r) => r.id === id);
    if (!row) await findJob(s, id); // the usual one-line "no queued message with id …"
    picked = row ? [row] : [];
  } else if (o.domain !== undefined) {
    const d = o.domain.toLowerCase().replace(/^@/, '');
    picked = rows.filter((r) => r.recipients.some((x) => domainOf(x) === d));
  } else if (o.rcpt !== undefined) {
    const want = o.rcpt.toLowerCase().replace(/^<|>$/g, '');
    picked = rows.filter((r) => r.recipients.some((x) => x.toLowerCase() === want));
  } else if (o.msgid !== undefined) {
    picked = rows.filter((r) => r.msgid === o.msgid);
  } else picked = rows;
  if (o.state !== undefined) picked = picked.filter((r) => r.state === o.state);
  if (picked.length === 0) throw new CliError('nothing matched');
  return picked;
}

interface Outcome {
  id: string;
  msgid: string;
  action: string;
  note?: string;
}

function report(outcomes: Outcome[], opts: { json?: boolean }, extra: string[] = []): void {
  if (opts.json) {
    process.stdout.write(`${JSON.stringify(outcomes, null, 2)}\n`);
    return;
  }
  const lines = outcomes.map((o) => `${o.id}: ${o.action}${o.note ? `; ${o.note}` : ''}`);
  process.stdout.write(`${[...lines, ...extra].join('\n')}\n`);
}

function refOf(s: Session, stage: string): { ref: QueueRef; queue: Queue } {
  const found = s.queues.find((q) => q.ref.name === stage);
  if (!found) throw new Error(`queue ${stage} is not open`);
  return found;
}

/**
 * The deployment's blob store ([blobs] backend) and, when asked for or the
 * blobs live in it, its store; `close` closes what was opened.
 */
async function backends(
  s: Session,
  needStore: boolean,
): Promise<{ blobs: BlobStore; store: Store | null; close(): Promise<void> }> {
  const pg = s.config.blobs?.backend === 'postgres';
  const store =
    needStore || pg ? await openStore({ url: s.config.store.url, dataDir: s.config.store.data_dir }) : null;
  const blobs = store
    ? openBlobStore(s.config, store)
    : new FsBlobStore(join(s.config.store.data_dir, 'blobs'));
  return { blobs, store, close: async () => void (await store?.close()) };
}

async function holdRows(s: Session, rows: QueueRow[]): Promise<Outcome[]> {
  const prefix = s.config.redis.prefix;
  const out: Outcome[] = [];
  for (const row of rows) {
    const base = { id: row.id, msgid: row.msgid };
    if (row.state === 'held') {
      out.push({ ...base, action: 'already held' });
      continue;
    }
    const { queue } = refOf(s, row.stage);
    const job = await queue.getJob(row.id);
    if (!job) {
      out.push({ ...base, action: 'gone', note: 'it left the queue meanwhile' });
      continue;
    }
    const state = await job.getState();
    const due = state === 'delayed' ? (row.nextAttemptAt ?? Date.now()) : null;
    // The marker first: from here on no worker runs it (src/core/queue/hold.ts).
    await setHold(s.redis, prefix, row.stage, row.id, { at: Date.now(), due, state });
    let note: string | undefined;
    if (state === 'delayed') {
      await job.changeDelay(HELD_DELAY_MS).catch(() => undefined);
    } else if (state === 'active') {
      note = 'being tried right now: that attempt finishes, the next one waits for release';
    }
    out.push({ ...base, action: 'held', ...(note ? { note } : {}) });
  }
  return out;
}

async function releaseRows(s: Session, rows: QueueRow[]): Promise<Outcome[]> {
  const prefix = s.config.redis.prefix;
  const holds = await readHolds(s.redis, prefix);
  const out: Outcome[] = [];
  for (const row of rows) {
    const base = { id: row.id, msgid: row.msgid };
    const marker = holds.get(`${row.stage}:${row.id}`);
    if (!marker) {
      out.push({ ...base, action: 'not held' });
      continue;
    }
    await clearHold(s.redis, prefix, row.stage, row.id);
    const job = await refOf(s, row.stage).queue.getJob(row.id);
    const state = job ? await job.getState() : 'unknown';
    let note: string;
    if (job && state === 'delayed') {
      const now = Date.now();
      if (marker.due === null || marker.due <= now) {
        await job.promote();
        note = 'runs now';
      } else {
        await job.changeDelay(marker.due - now);
        note = `next attempt in ${formatAge(Math.round((marker.due - now) / 1000))}`;
      }
    } else if (state === 'failed') note = 'still failed (sealpost queue retry requeues it)';
    else note = 'runs now';
    out.push({ ...base, action: 'released', note });
  }
  return out;
}

/**
 * Once nothing of an inbound message is left (every copy stored, bounced or
 * deleted), its spool entry and spool-cleanup parent go: what reconcile
 * would do, so a deleted message never comes back from the spool.
 */
async function finishMessage(s: Session, blobs: BlobStore, intents: IntentsRepo, msgid: string) {
  let entry: Awaited<ReturnType<BlobStore['readSpoolEntry']>>;
  try {
    entry = await blobs.readSpoolEntry(msgid);
  } catch {
    return false; // gone already, or unreadable (reconcile moves those aside)
  }
  if (entry.kind !== 'indexed') return false;
  const copies = entry.manifest.recipients.map((_, i) => `${msgid}.${i}`);
  const prefix = s.config.redis.prefix;
  const deliver = new Queue<DeliverJobData>(QUEUE_DELIVER, { connection: s.redis, prefix });
  const spool = new Queue(QUEUE_SPOOL, { connection: s.redis, prefix });
  try {
    for (const c of copies) {
      const job = await deliver.getJob(c);
      if (job && (await job.getState()) !== 'completed') return false;
    }
    const finished = await intents.finished(copies);
    if (!copies.every((c) => finished.has(c))) return false;
    const parent = await spool.getJob(msgid);
    if (parent) {
      if ((await parent.getState()) === 'active') return false; // it is removing the entry right now
      await parent.remove();
    }
    await blobs.delete(`spool/${msgid}`);
    return true;
  } finally {
    await deliver.close();
    await spool.close();
  }
}

async function deleteRows(
  s: Session,
  rows: QueueRow[],
  bounce: boolean,
): Promise<{ outcomes: Outcome[]; spoolRemoved: string[] }> {
  const prefix = s.config.redis.prefix;
  const out: Outcome[] = [];
  const inboundMsgids = new Set<string>();
  // The store holds the SendMail intents (inbound) and the outbound ledger (outbound).
  const { blobs, store, close } = await backends(s, rows.length > 0);
  const intents = store ? new IntentsRepo(store.db) : null;
  const ledger = store ? new OutboundLedger(store.db) : null;
  try {
    for (const row of rows) {
      const base = { id: row.id, msgid: row.msgid };
      const { ref, queue } = refOf(s, row.stage);
      const job = (await queue.getJob(row.id)) as Job | undefined;
      if (!job) {
        out.push({ ...base, action: 'gone', note: 'it left the queue meanwhile' });
        continue;
      }
      const state = await job.getState();
      if (state === 'active') {
        if (rows.length === 1)
          throw new CliError(`${row.id} is being tried right now; run the command again in a moment`);
        out.push({ ...base, action: 'skipped', note: 'being tried right now; run the command again' });
        continue;
      }
      const note = bounce ? await bounceDropped(s, ref, job, state) : undefined;
      // Finished before the job goes: should this run stop here, reconcile still never re-queues the copy.
      if (ref.name === QUEUE_DELIVER && intents) await intents.markFinished(row.id, 'deleted');
      // Likewise the outbound ledger: a deleted domain (or a whole message not yet split) is never rebuilt.
      if (ledger && isDomainJob(ref)) {
        const d = job.data as DomainJobData;
        await ledger.domainsDone(d.msgid, [d.domain], 'deleted');
        if (d.removeBlobs) await ledger.finish([d.msgid]);
      } else if (ledger && ref.name === QUEUE_OUTBOUND)
        await ledger.finish([(job.data as OutboundJobData).msgid]);
      await job.remove();
      await clearHold(s.redis, prefix, ref.name, row.id);
      if (isDomainJob(ref)) {
        for (const key of (job.data as DomainJobData).removeBlobs ?? []) await blobs.delete(key);
      } else if (ref.name === QUEUE_DELIVER) {
        const d = job.data as DeliverJobData;
        // A one-recipient message has no spool-cleanup parent: its spool file goes with its only job.
        if (d.removesSpool) await blobs.delete(d.spoolKey);
        inboundMsgids.add(d.msgid);
      }
      out.push({ ...base, action: 'deleted', ...(note ? { note } : {}) });
    }
    const spoolRemoved: string[] = [];
    if (intents)
      for (const msgid of inboundMsgids)
        if (await finishMessage(s, blobs, intents, msgid)) spoolRemoved.push(msgid);
    return { outcomes: out, spoolRemoved };
  } finally {
    await close();
  }
}

// ---- show --message (postcat -q) ----

function splitMessage(raw: Buffer): { headers: string; body: string } {
  const text = raw.toString('utf8');
  const m = /\r?\n\r?\n/.exec(text);
  if (!m) return { headers: text, body: '' };
  return { headers: text.slice(0, m.index), body: text.slice(m.index + m[0].length) };
}

export async function showMessage(s: Session, id: string, opts: { json?: boolean }): Promise<void> {
  const { blobs, close } = await backends(s, false);
  try {
    await printMessage(s, blobs, id, opts);
  } finally {
    await close();
  }
}

async function printMessage(s: Session, blobs: BlobStore, id: string, opts: { json?: boolean }) {
  let key: string;
  let envelope: { from: string; to: string[]; arrival: number };
  let msgid: string;
  try {
    const { ref, job } = await findJob(s, id);
    if (ref.name === QUEUE_DELIVER) {
      const d = job.data as DeliverJobData;
      key = d.spoolKey;
      envelope = { from: d.envelope.from, to: [d.envelope.to], arrival: d.receivedAt };
      ({ msgid } = d);
    } else if (isDomainJob(ref)) {
      const d = job.data as DomainJobData;
      key = d.blobKey;
      envelope = { from: d.from, to: d.rcpts, arrival: d.createdAt };
      ({ msgid } = d);
    } else {
      const d = job.data as OutboundJobData;
      key = d.blobKey;
      envelope = { from: d.from, to: d.to, arrival: d.createdAt };
      ({ msgid } = d);
    }
  } catch (err) {
    // A message id whose spool entry is still there (e.g. every job of it gone from Redis).
    let entry: Awaited<ReturnType<BlobStore['readSpoolEntry']>> | undefined;
    if (/^[0-9A-Za-z._-]{1,80}$/.test(id)) entry = await blobs.readSpoolEntry(id).catch(() => undefined);
    if (!entry) throw err;
    key = entry.key;
    msgid = id;
    envelope =
      entry.kind === 'indexed'
        ? {
            from: entry.manifest.from,
            to: entry.manifest.recipients.map((r) => r.address),
            arrival: entry.manifest.receivedAt,
          }
        : { from: '?', to: [], arrival: 0 };
  }
  let raw: Buffer;
  try {
    raw = await blobs.read(key);
  } catch (err) {
    throw new CliError(`the message of ${id} cannot be read from ${key}: ${(err as Error).message}`);
  }
  const { headers, body } = splitMessage(raw);
  if (opts.json) {
    const v = { id, msgid, blobKey: key, size: raw.length, envelope, headers, body };
    process.stdout.write(`${JSON.stringify(v, null, 2)}\n`);
    return;
  }
  const lf = (t: string) => t.replace(/\r\n/g, '\n');
  const out = [
    `*** ENVELOPE RECORDS ${id} ***`,
    `message_size: ${raw.length}`,
    `message_arrival_time: ${envelope.arrival ? new Date(envelope.arrival).toUTCString() : '-'}`,
    `sender: ${envelope.from}`,
    ...envelope.to.map((t) => `recipient: ${t}`),
    `*** MESSAGE CONTENTS ${id} ***`,
    lf(headers),
    '',
    lf(body).replace(/\n$/, ''),
    `*** MESSAGE FILE END ${id} ***`,
  ];
  process.stdout.write(`${out.join('\n')}\n`);
}

// ---- summary (qshape) ----

/** Bucket upper bounds in minutes; the last column is everything older. */
export const AGE_BUCKETS_MIN = [5, 10, 20, 40, 80, 160, 320] as const;
const BUCKET_LABELS = [...AGE_BUCKETS_MIN.map((m) => `${m}m`), `${AGE_BUCKETS_MIN.at(-1)}m+`];

export interface SummaryLine {
  domain: string;
  total: number;
  /** Recipients per age bucket (BUCKET_LABELS). */
  buckets: number[];
}

export function summarize(rows: QueueRow[]): {
  buckets: string[];
  total: SummaryLine;
  domains: SummaryLine[];
  /** Recipients of messages the MX flagged as spam (filed in Junk), by verdict action. */
  spam: Record<string, number>;
} {
  const spam: Record<string, number> = {};
  for (const row of rows)
    if (row.spam) {
      const action = row.spam.replace(/ -?[\d.]+\/.*$/, '');
      spam[action] = (spam[action] ?? 0) + row.recipients.length;
    }
  const byDomain = new Map<string, SummaryLine>();
  const total: SummaryLine = { domain: 'TOTAL', total: 0, buckets: BUCKET_LABELS.map(() => 0) };
  for (const row of rows) {
    const mins = row.ageSecs / 60;
    let b = AGE_BUCKETS_MIN.findIndex((limit) => mins < limit);
    if (b < 0) b = AGE_BUCKETS_MIN.length;
    for (const rcpt of row.recipients) {
      const d = domainOf(rcpt);
      let line = byDomain.get(d);
      if (!line) {
        line = { domain: d, total: 0, buckets: BUCKET_LABELS.map(() => 0) };
        byDomain.set(d, line);
      }
      line.total++;
      line.buckets[b] = (line.buckets[b] ?? 0) + 1;
      total.total++;
      total.buckets[b] = (total.buckets[b] ?? 0) + 1;
    }
  }
  const domains = [...byDomain.values()].sort(
    (a, b) => b.total - a.total || a.domain.localeCompare(b.domain),
  );
  return { buckets: BUCKET_LABELS, total, domains, spam };
}

function summaryText(v: ReturnType<typeof summarize>): string {
  const head = ['', 'T', ...v.buckets];
  const lines = [v.total, ...v.domains].map((l) => [l.domain, String(l.total), ...l.buckets.map(String)]);
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  const fmt = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padStart(widths[0] ?? 0) : c.padStart(widths[i] ?? 0))).join(' ');
  const flagged = Object.entries(v.spam).map(([action, n]) => `${n} ${action}`);
  const spam = flagged.length ? `spam-flagged (to Junk): ${flagged.join(', ')}\n` : '';
  return `${[fmt(head), ...lines.map(fmt)].join('\n')}\n${spam}`;
}

const SELECTOR_HELP = `
Selectors (one of): a job id (from queue list), --all, --domain D (jobs with
a pending recipient at D), --rcpt R (jobs with pending recipient R), --msgid
M (every job of message M, inbound copies and outbound per-domain jobs);
--state S narrows any of them (active, wait, prioritized, delayed, failed,
held). A selection that matches nothing: exit 1, "nothing matched".
`;

export function registerQueueTools(queue: Command, withCommon: (cmd: Command) => Command): void {
  const selectors = (cmd: Command) =>
    withCommon(cmd)
      .argument('[id]', 'job id (from queue list)')
      .option('--all', 'every job in the selected queue(s)')
      .option('--domain <domain>', 'jobs with a pending recipient at this domain')
      .option('--rcpt <address>', 'jobs with this pending recipient')
      .option('--msgid <msgid>', 'every job of this message')
      .option('--state <state>', `only jobs in this state: ${STATES.join(', ')}`, parseState)
      .option('--json', 'print what was done as JSON')
      .addHelpText('after', SELECTOR_HELP);

  selectors(
    queue
      .command('hold')
      .description(
        'hold jobs (postsuper -h): a held job is not tried until released, across worker restarts',
      ),
  ).action(async (id: string | undefined, opts: SelectorOptions) => {
    const outcomes = await withSession(opts, async (s) => holdRows(s, await select(s, id, opts)));
    report(outcomes, opts);
  });

  selectors(
    queue
      .command('release')
      .description('release held jobs (postsuper -H): each is due again when it was due before the hold'),
  ).action(async (id: string | undefined, opts: SelectorOptions) => {
    const outcomes = await withSession(opts, async (s) => {
      const rows = await select(s, id, opts);
      const held = rows.filter((r) => r.state === 'held');
      if (held.length === 0) {
        if (id !== undefined) throw new CliError(`${id} is not held`);
        throw new CliError('nothing matched (no held job)');
      }
      return releaseRows(s, held);
    });
    report(outcomes, opts);
  });

  selectors(
    queue
      .command('delete')
      .description(
        'drop jobs (postsuper -d); --msgid drops a whole message, and its spool entry once nothing of it is left',
      ),
  )
    .option('--bounce', 'also send the sender a failure DSN (never to the null sender)')
    .action(async (id: string | undefined, opts: SelectorOptions & { bounce?: boolean }) => {
      const { outcomes, spoolRemoved } = await withSession(opts, async (s) =>
        deleteRows(s, await select(s, id, opts), opts.bounce === true),
      );
      if (opts.json) {
        process.stdout.write(`${JSON.stringify({ jobs: outcomes, spoolRemoved }, null, 2)}\n`);
        return;
      }
      report(
        outcomes,
        opts,
        // With one job id the line stays `ID: deleted[; note]` (scripts read it).
        id === undefined
          ? spoolRemoved.map((m) => `${m}: nothing of it left in the queue; spool entry removed`)
          : [],
      );
    });

  withCommon(
    queue
      .command('summary')
      .description(
        'queued recipients by destination domain and age (qshape): T, then 5m 10m 20m 40m 80m 160m 320m 320m+',
      ),
  )
    .option('--state <state>', `only jobs in this state: ${STATES.join(', ')}`, parseState)
    .option('--json', 'print as JSON')
    .action(async (opts: SelectorOptions) => {
      const rows = await withSession(opts, listRows);
      const v = summarize(opts.state ? rows.filter((r) => r.state === opts.state) : rows);
      process.stdout.write(opts.json ? `${JSON.stringify(v, null, 2)}\n` : summaryText(v));
    });
}
