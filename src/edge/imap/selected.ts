// The selected mailbox of a session: a snapshot of its readable messages
// (sequence number = position + 1), refreshed from the store on NOOP, IDLE
// polls and the session's own changes, with the untagged EXPUNGE / EXISTS /
// FETCH FLAGS responses that tell the client what changed.
import type { Mailbox, ReadableMessage } from '../../core/store/index.ts';
import type { MailAccess } from './mail/mail-access.ts';
import { list, type Piece } from './protocol/format.ts';
import { parseSequenceSet } from './protocol/sequence-set.ts';
import type { SharedRead } from './push.ts';

export interface Targeted {
  seq: number;
  msg: ReadableMessage;
}

export function flagList(flags: string[]): Piece[] {
  return list(flags.map((f) => [f]));
}

export class SelectedMailbox {
  messages: ReadableMessage[] = [];
  private stamp = '';

  constructor(
    private readonly mail: MailAccess,
    public mailbox: Mailbox,
    readonly readOnly: boolean,
    /** Whether the session has CONDSTORE on: flag updates then carry MODSEQ. */
    private readonly condstore: () => boolean = () => false,
  ) {}

  get withModseq(): boolean {
    return this.condstore();
  }

  async load(): Promise<void> {
    this.messages = await this.mail.folders.listReadable(
      this.mail.wallet,
      this.mailbox.id,
      this.mail.readerId,
    );
    this.stamp = await this.currentStamp();
  }

  private currentStamp(): Promise<string> {
    return this.mail.folders.readableStamp(this.mail.wallet, this.mailbox.id, this.mail.readerId);
  }

  get exists(): number {
    return this.messages.length;
  }

  get maxUid(): number {
    return this.messages.length ? (this.messages[this.messages.length - 1] as ReadableMessage).uid : 0;
  }

  /** Messages a sequence set (or UID set) names, in sequence order. */
  resolve(setText: string, byUid: boolean): Targeted[] {
    if (byUid) {
      const ranges = parseSequenceSet(setText, Math.max(this.maxUid, 0));
      const out: Targeted[] = [];
      this.messages.forEach((msg, i) => {
        for (const [a, b] of ranges) {
          if (msg.uid >= a && msg.uid <= b) {
            out.push({ seq: i + 1, msg });
            break;
          }
        }
      });
      return out;
    }
    const ranges = parseSequenceSet(setText, this.exists);
    const seen = new Set<number>();
    for (const [a, b] of ranges) {
      for (let s = Math.max(a, 1); s <= Math.min(b, this.exists); s++) seen.add(s);
    }
    return [...seen]
      .sort((x, y) => x - y)
      .map((seq) => ({ seq, msg: this.messages[seq - 1] as ReadableMessage }));
  }

  /** Whether every number of a (non-UID) sequence set is a message here. */
  seqSetInRange(setText: string): boolean {
    const ranges = parseSequenceSet(setText, this.exists);
    return ranges.every(([, b]) => b <= this.exists && b >= 1);
  }

  /** An untagged FETCH about one message's flags (with MODSEQ under CONDSTORE). */
  flagUpdate(seq: number, m: ReadableMessage, withUid: boolean, withFlags = true): Piece[] {
    const parts: Piece[] = [`* ${seq} FETCH (`];
    const add = (pieces: Piece[]) => {
      if (parts.length > 1) parts.push(' ');
      parts.push(...pieces);
    };
    if (withUid) add([`UID ${m.uid}`]);
    if (withFlags) add(['FLAGS ', ...flagList(m.flags)]);
    if (this.withModseq) add([`MODSEQ (${m.modseq})`]);
    parts.push(')');
    return parts;
  }

  /** Drops messages by UID; returns the EXPUNGE responses (descending, so numbers stay valid). */
  drop(uids: Set<number>): Piece[][] {
    const out: Piece[][] = [];
    for (let i = this.messages.length - 1; i >= 0; i--) {
      if (uids.has((this.messages[i] as ReadableMessage).uid)) {
        out.push([`* ${i + 1} EXPUNGE`]);
        this.messages.splice(i, 1);
      }
    }
    return out;
  }

  /**
   * Reloads from the store and returns the untagged updates. Without
   * `force`, a cheap fingerprint is checked first (new, removed or
   * re-flagged mail, see FoldersRepo.readableStamp) and nothing is reloaded
   * while it is unchanged. With `shared` (IDLE sessions woken by one push),
   * the sessions of this mailbox and reader read the stamp and the rows
   * once between them.
   */
  async sync(force: boolean, shared?: SharedRead): Promise<Piece[][]> {
    const key = `${this.mail.wallet}\u0000${this.mailbox.id}\u0000${this.mail.readerId}`;
    const stamp = shared
      ? await shared.once(`${key}\u0000stamp`, () => this.currentStamp())
      : await this.currentStamp();
    if (!force && stamp === this.stamp) return [];
    const listed = () =>
      this.mail.folders.listReadable(this.mail.wallet, this.mailbox.id, this.mail.readerId);
    // Each session keeps (and changes) its own message objects.
    const fresh = shared
      ? (await shared.once(`${key}\u0000rows`, listed)).map((m) => ({ ...m, flags: [...m.flags] }))
      : await listed();
    this.stamp = stamp;
    const freshByUid = new Map(fresh.map((m) => [m.uid, m]));
    const gone = new Set(this.messages.filter((m) => !freshByUid.has(m.uid)).map((m) => m.uid));
    const out = this.drop(gone);
    const known = new Set(this.messages.map((m) => m.uid));
    this.messages.forEach((m, i) => {
      const f = freshByUid.get(m.uid);
      if (f && (f.flags.join(' ') !== m.flags.join(' ') || f.modseq !== m.modseq)) {
        m.flags = f.flags;
        m.modseq = f.modseq;
        out.push(this.flagUpdate(i + 1, m, true));
      }
    });
    const added = fresh.filter((m) => !known.has(m.uid) && m.uid > this.maxUid);
    if (added.length > 0) {
      this.messages.push(...added);
      out.push([`* ${this.exists} EXISTS`], ['* 0 RECENT']);
    }
    return out;
  }
}
