import { describe, expect, it } from 'vitest';
import {
  apiToken,
  deliver,
  imapFlow,
  LineClient,
  mailUser,
  rawMessage,
  startMailRig,
  waitForCopies,
} from '../support/imap-rig.ts';
import type { ServeRig } from '../support/serve-rig.ts';

async function get(rig: ServeRig, token: string, path: string) {
  const r = await fetch(`${rig.serving.apiUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
  expect(r.status).toBe(200);
  return r.json();
}

describe('folders shared by IMAP, the webmail routes and the export', () => {
  it('shows IMAP folders and moves in the webmail and export; webmail flags show in IMAP', async () => {
    const rig = await startMailRig();
    const user = await mailUser(rig);
    await deliver(rig, user.address, rawMessage('shared folders'));
    await waitForCopies(rig, user.wallet, 1);
    const client = imapFlow(rig, user.address, user.password);
    await client.connect();
    try {
      await client.mailboxCreate('Projects/Alpha');
      await client.mailboxOpen('INBOX');
      await client.messageMove('1', 'Projects/Alpha');
      await client.append('Drafts', rawMessage('a draft'), ['\\Draft']);

      const token = await apiToken(rig, user);
      const view = (await get(rig, token, '/v1/mail/mailboxes')) as {
        mailboxes: { id: string; name: string; messages: number }[];
      };
      const counts = Object.fromEntries(view.mailboxes.map((b) => [b.name, b.messages]));
      expect(counts).toEqual({ Drafts: 1, INBOX: 0, Junk: 0, 'Projects/Alpha': 1, Sent: 0, Trash: 0 });
      const rows = (await get(rig, token, '/v1/mail/messages?mailbox=Projects%2FAlpha')) as {
        messages: { id: string; flags: string[] }[];
      };
      expect(rows.messages).toHaveLength(1);

      const exported = (await get(rig, token, '/v1/account/export')) as {
        mailboxes: { name: string; messages: unknown[] }[];
      };
      expect(Object.fromEntries(exported.mailboxes.map((b) => [b.name, b.messages.length]))).toEqual(counts);

      // The webmail marks it read and flagged; IMAP sees it.
      const id = rows.messages[0]?.id as string;
      const patched = await fetch(`${rig.serving.apiUrl}/v1/mail/messages/${encodeURIComponent(id)}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ flags: ['\\Seen', '\\Flagged'] }),
      });
      expect(patched.status).toBeLessThan(300);
      await client.mailboxOpen('Projects/Alpha');
      const m = await client.fetchOne('1', { flags: true, envelope: true });
      expect(m ? [...(m.flags ?? [])].sort() : []).toEqual(['\\Flagged', '\\Seen']);
      expect(m ? m.envelope?.subject : '').toBe('shared folders');
    } finally {
      await client.logout().catch(() => client.close());
    }
  }, 120_000);

  it('pushes flag changes from another IMAP session and from the webmail to a session in IDLE', async () => {
    const rig = await startMailRig();
    const user = await mailUser(rig);
    await deliver(rig, user.address, rawMessage('watched'));
    await waitForCopies(rig, user.wallet, 1);
    const watcher = await LineClient.open(rig.imapPort as number);
    await watcher.until(/^\* OK/);
    await watcher.command('a', `LOGIN "${user.address}" "${user.password}"`);
    expect(await watcher.command('b', 'SELECT INBOX')).toMatch(/^\* 1 EXISTS$/m);
    watcher.write('c IDLE\r\n');
    await watcher.until(/^\+ /);
    const other = imapFlow(rig, user.address, user.password);
    await other.connect();
    try {
      await other.mailboxOpen('INBOX');
      await other.messageFlagsAdd('1', ['\\Flagged']);
      // No NOOP: the IDLE poll notices the change by itself.
      expect(await watcher.until(/^\* 1 FETCH/, 10_000)).toMatch(
        /^\* 1 FETCH \(UID \d+ FLAGS \(\\Flagged\)\)$/m,
      );
      const token = await apiToken(rig, user);
      const rows = (await get(rig, token, '/v1/mail/messages?mailbox=INBOX')) as {
        messages: { id: string }[];
      };
      const id = rows.messages[0]?.id as string;
      const patched = await fetch(`${rig.serving.apiUrl}/v1/mail/messages/${encodeURIComponent(id)}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ flags: ['\\Seen'] }),
      });
      expect(patched.status).toBeLessThan(300);
      expect(await watcher.until(/^\* 1 FETCH/, 10_000)).toMatch(/FLAGS \(\\Seen\)\)$/m);
      watcher.write('DONE\r\n');
      expect(await watcher.until(/^c /)).toBe('c OK IDLE terminated');
    } finally {
      watcher.close();
      await other.logout().catch(() => other.close());
    }
  }, 120_000);
});
