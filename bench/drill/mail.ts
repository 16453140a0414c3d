// Load and proof for the drills. The sender behaves like a real MTA: a 4xx
// (or a refused connection) means "try again later", so it retries the same
// message until a deadline; a 250 is an acknowledgement the server must
// honour. The check then reads every recipient's inbox from the chain,
// fetches each body from the gateway and opens it with the wallet key, and
// accounts for every acknowledged message: lost, doubled, unreadable.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Connection } from '@solana/web3.js';
import { PublicKey } from '@solana/web3.js';
import nodemailer from 'nodemailer';
import { listInbox } from '../../chain/client/index.ts';
import type { Keypair } from '../../src/core/keys/keypair-file.ts';
import { openSealed, walletEncryptionKeypair } from '../../src/mail/seal/index.ts';

export interface Sent {
  subject: string;
  wallet: string;
  /** The 250's queue id. */
  msgid: string;
  /** Attempts before the 250 (more than 1: an earlier attempt got a 4xx or lost its connection). */
  attempts: number;
  /** What each earlier attempt got: a reply ('451 4.3.0') or 'conn' for a connection lost without one. */
  earlier: string[];
  ackedAt: number;
}

export interface LoadResult {
  acked: Sent[];
  /** Messages given up at the deadline (never acknowledged, so not owed). */
  unacked: number;
  /** Replies seen by code and enhanced status ('451 4.3.0'; 'conn' for a failed connection). */
  replies: Map<string, number>;
}

export interface LoadOptions {
  mxPort: number;
  /** Recipient addresses, used round-robin. */
  to: string[];
  count: number;
  connections: number;
  /** Give up retrying a message after this many ms from the start. */
  deadlineMs: number;
  /** Pause between messages on one connection (pacing a run over an outage). */
  paceMs?: number;
  /** Subject prefix, unique per drill. */
  tag: string;
  /** Stop retrying on 4xx (the message counts as unacked). */
  noRetry?: boolean;
  /** Called after each 250 with the number acknowledged so far (drills trigger faults on progress). */
  onAck?: (acked: number) => void;
  bodyBytes?: number;
}

function bump(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

export async function sendLoad(opts: LoadOptions): Promise<LoadResult> {
  const acked: Sent[] = [];
  const replies = new Map<string, number>();
  let unacked = 0;
  let next = 0;
  const started = Date.now();
  const filler = `${'drill payload 0123456789 abcdefghijklmnopqrstuvwxyz'.repeat(1)}\r\n`.repeat(
    Math.ceil((opts.bodyBytes ?? 2048) / 52),
  );
  const worker = async (c: number) => {
    let transport = makeTransport(opts.mxPort);
    for (;;) {
      const i = next++;
      if (i >= opts.count) break;
      const to = opts.to[i % opts.to.length] as string;
      const subject = `${opts.tag}-${i}`;
      const raw = `From: drill@remote.example\r\nTo: ${to}\r\nSubject: ${subject}\r\nMessage-ID: <${subject}@remote.example>\r\n\r\n${filler}`;
      const earlier: string[] = [];
      for (let attempt = 1; ; attempt++) {
        try {
          const info = await transport.sendMail({
            envelope: { from: 'drill@remote.example', to: [to] },
            raw,
          });
          bump(replies, '250');
          acked.push({
            subject,
            wallet: to.split('@')[0] as string,
            msgid: info.response.split(' ').pop() ?? '',
            attempts: attempt,
            earlier,
            ackedAt: Date.now(),
          });
          opts.onAck?.(acked.length);
          break;
        } catch (err) {
          const code = (err as { responseCode?: number }).responseCode;
          // Counted with the enhanced status when the reply has one ("451 4.4.3").
          const enhanced = /^\d{3}[ -](\d\.\d{1,3}\.\d{1,3})/.exec(
            (err as { response?: string }).response ?? '',
          )?.[1];
          const seen = code ? `${code}${enhanced ? ` ${enhanced}` : ''}` : 'conn';
          bump(replies, seen);
          earlier.push(seen);
          transport.close();
          transport = makeTransport(opts.mxPort);
          if ((code && code >= 500) || opts.noRetry || Date.now() - started > opts.deadlineMs) {
            unacked++;
            break;
          }
          await sleep(300 + Math.random() * 700);
        }
      }
      if (opts.paceMs) await sleep(opts.paceMs);
    }
    transport.close();
    void c;
  };
  await Promise.all(Array.from({ length: opts.connections }, (_, c) => worker(c)));
  return { acked, unacked, replies };
}

function makeTransport(port: number) {
  return nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    secure: false,
    ignoreTLS: true,
    pool: true,
    maxConnections: 1,
    maxMessages: Number.POSITIVE_INFINITY,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 60_000,
  });
}

export interface InboxEntry {
  subject: string;
  wallet: string;
  cid: string;
  /** The Email account's lamports (its rent). */
  lamports: number;
}

/** Every Email account of these wallets, opened: subject per account ('?' when it does not open). */
export async function readInboxes(
  connection: Connection,
  programId: string,
  gatewayUrl: string,
  wallets: Keypair[],
): Promise<InboxEntry[]> {
  const out: InboxEntry[] = [];
  for (const w of wallets) {
    const inbox = await listInbox(connection, programId, new PublicKey(w.publicKey), { limit: 5000 });
    const reader = walletEncryptionKeypair(w.secretKey);
    for (const entry of inbox) {
      let subject = '?';
      try {
        const res = await fetch(`${gatewayUrl}/ipfs/${entry.email.cid}`);
        const opened = await openSealed(new Uint8Array(await res.arrayBuffer()), reader);
        subject = /^Subject: (\S+)/m.exec(Buffer.from(opened.raw).toString('utf8'))?.[1] ?? '?';
      } catch {
        // stays '?': counted as unreadable
      }
      out.push({ subject, wallet: w.address, cid: entry.email.cid, lamports: entry.lamports });
    }
  }
  return out;
}

/** Email accounts on chain for these wallets (cheap count, no fetch). */
export async function countInboxes(
  connection: Connection,
  programId: string,
  wallets: Keypair[],
): Promise<number> {
  let n = 0;
  for (const w of wallets)
    n += (await listInbox(connection, programId, new PublicKey(w.publicKey), { limit: 5000 })).length;
  return n;
}

/** Waits until at least `expected` Email accounts exist (or the timeout); returns the last count. */
export async function waitForInboxes(
  connection: Connection,
  programId: string,
  wallets: Keypair[],
  expected: number,
  timeoutMs: number,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let n = 0;
  for (;;) {
    n = await countInboxes(connection, programId, wallets).catch(() => n);
    if (n >= expected || Date.now() > deadline) return n;
    await sleep(1000);
  }
}

export interface Accounting {
  acked: number;
  delivered: number;
  lost: string[];
  /** Acknowledged once, delivered more than once. */
  duplicates: string[];
  /** More than one Email account for a message the sender had to retry (SMTP's at-least-once after a lost reply). */
  retriedDuplicates: string[];
  unreadable: number;
  /** Delivered messages the sender never saw acknowledged (a 250 lost on the way back). */
  unackedDelivered: number;
  wrongRecipient: number;
}

export function account(acked: Sent[], inbox: InboxEntry[]): Accounting {
  const seen = new Map<string, InboxEntry[]>();
  for (const e of inbox) seen.set(e.subject, [...(seen.get(e.subject) ?? []), e]);
  const ackedBySubject = new Map(acked.map((s) => [s.subject, s]));
  const lost = acked.filter((s) => !seen.has(s.subject)).map((s) => s.subject);
  const duplicates: string[] = [];
  const retriedDuplicates: string[] = [];
  let wrongRecipient = 0;
  for (const s of acked) {
    const entries = seen.get(s.subject) ?? [];
    if (entries.some((e) => e.wallet !== s.wallet)) wrongRecipient++;
    if (entries.length > 1) (s.attempts > 1 ? retriedDuplicates : duplicates).push(s.subject);
  }
  const unackedDelivered = [...seen.keys()].filter((k) => k !== '?' && !ackedBySubject.has(k)).length;
  return {
    acked: acked.length,
    delivered: inbox.length,
    lost,
    duplicates,
    retriedDuplicates,
    unreadable: seen.get('?')?.length ?? 0,
    unackedDelivered,
    wrongRecipient,
  };
}

export function describeAccounting(a: Accounting): string {
  const parts = [
    `${a.acked} acknowledged`,
    `${a.delivered} Email accounts`,
    `${a.lost.length} lost`,
    `${a.duplicates.length} doubled`,
    `${a.unreadable} unreadable`,
  ];
  if (a.retriedDuplicates.length)
    parts.push(
      `${a.retriedDuplicates.length} re-sent (after a 4xx or a lost connection) and delivered twice`,
    );
  if (a.unackedDelivered) parts.push(`${a.unackedDelivered} delivered without the sender seeing the 250`);
  if (a.wrongRecipient) parts.push(`${a.wrongRecipient} at the wrong wallet`);
  return parts.join(', ');
}

export function accountingOk(a: Accounting): boolean {
  return a.lost.length === 0 && a.duplicates.length === 0 && a.unreadable === 0 && a.wrongRecipient === 0;
}

export function formatReplies(replies: Map<string, number>): string {
  return [...replies.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([code, n]) => `${n}× ${code}`)
    .join(' ');
}
