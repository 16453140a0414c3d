// Opened messages, cached for the page's lifetime (the inbox opens each
// listed message in the background to show its From and Subject; the reader
// reuses the result). Keys: `chain:<email address>` or `server:<id>`.
import type { PublicKey } from '@solana/web3.js';
import type { InboxEntry } from '../../chain/client/client.ts';
import { fetchFromGateway, type OpenedMessage, openWithKeys } from './chain/read.ts';
import { forgetInboxSnapshot } from './inbox-state.ts';
import { type ParsedMail, parseMail } from './mail/parse.ts';
import { readers, type Session } from './session.ts';

export interface LoadedMessage {
  opened: OpenedMessage;
  parsed: ParsedMail;
}

const cache = new Map<string, Promise<LoadedMessage>>();
/** The same messages once opened, readable synchronously (rows render at once; search reads them). */
const settled = new Map<string, LoadedMessage>();

function remember(key: string, load: () => Promise<LoadedMessage>): Promise<LoadedMessage> {
  const hit = cache.get(key);
  if (hit) return hit;
  const p = load();
  cache.set(key, p);
  p.then(
    (m) => {
      if (cache.get(key) === p) settled.set(key, m);
    },
    () => {},
  );
  // A failure is not cached: the next look may succeed (gateway back, key added).
  p.catch(() => cache.delete(key));
  return p;
}

const HINT = 'It may be sealed to a mailbox key this browser does not hold.';

export function loadChainMessage(
  s: Session,
  entry: { address: PublicKey | string; email: { cid: string } },
): Promise<LoadedMessage> {
  const address = typeof entry.address === 'string' ? entry.address : entry.address.toBase58();
  return remember(`chain:${address}`, async () => {
    const sealed = await fetchFromGateway(s.settings.gatewayUrl, entry.email.cid);
    const opened = await openWithKeys(sealed, readers(s), HINT);
    return { opened, parsed: await parseMail(opened.raw) };
  });
}

export function loadServerMessage(s: Session, id: string): Promise<LoadedMessage> {
  return remember(`server:${id}`, async () => {
    if (!s.api) throw new Error('not in server mode');
    const sealed = await s.api.sealed(id);
    const opened = await openWithKeys(sealed, readers(s), HINT);
    return { opened, parsed: await parseMail(opened.raw) };
  });
}

export function peekLoaded(key: string): Promise<LoadedMessage> | undefined {
  return cache.get(key);
}

/** An opened message, if it has been opened already (`chain:<address>` or `server:<id>`). */
export function loadedNow(key: string): LoadedMessage | undefined {
  return settled.get(key);
}

/** The entries the inbox shows, kept so the reader can show the chain facts of the one opened. */
export const inboxEntries = new Map<string, InboxEntry>();

export function forgetMessages(): void {
  cache.clear();
  settled.clear();
  inboxEntries.clear();
  forgetInboxSnapshot();
}
