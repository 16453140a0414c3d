// A wallet holder moving mail into or out of Junk over IMAP trains rspamd:
// a real serve stack (MX scanning with a real rspamd, IMAP over TLS) and the
// real rspamd's controller with Bayes statistics in a private redis-server.
// MOVE INBOX → Junk is learned as spam, Junk → INBOX as ham, INBOX → Trash
// teaches nothing; `sealpost_spam_learned_total` counts each. With rspamd's
// controller gone the move still succeeds (learning never fails a reader).
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { DevRspamd } from '../../src/run/dev/rspamd.ts';
import { deliver, imapFlow, mailUser, rawMessage, startMailRig, waitForCopies } from '../support/imap-rig.ts';
import { rspamdLearned, startTestRspamd } from '../support/rspamd.ts';
import type { ServeRig } from '../support/serve-rig.ts';

/** Long enough for rspamd's classifier (it learns nothing from a handful of words). */
function longBody(seed: string): string {
  const words = Array.from({ length: 90 }, (_, i) => `${seed}${i % 23} weekly newsletter discount offer`);
  // Lines of ten phrases: RFC 5322 keeps lines under 998 octets.
  const lines: string[] = [];
  for (let i = 0; i < words.length; i += 10) lines.push(words.slice(i, i + 10).join(' '));
  return `${lines.join('\r\n')}\r\n`;
}

function spamToml(r: DevRspamd, passwordFile = r.passwordFile): string {
  return `\n[spam]\nenabled = true\nrspamd_url = "${r.url}"\ncontroller_url = "${r.controllerUrl}"\npassword_file = "${passwordFile}"\ntimeout_ms = 3000\n`;
}

async function learnedCount(rig: ServeRig, kind: string, outcome: string): Promise<number> {
  const text = await rig.serving.prometheus.registry.getSingleMetricAsString('sealpost_spam_learned_total');
  const m = new RegExp(`kind="${kind}",outcome="${outcome}"\\} (\\d+)`).exec(text);
  return m ? Number(m[1]) : 0;
}

async function until<T>(probe: () => Promise<T | undefined>, what: string, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

describe('learning from Junk moves', { timeout: 120_000 }, () => {
  it('MOVE into Junk learns spam, out of Junk learns ham, into Trash teaches nothing', async () => {
    const rspamd = await startTestRspamd({ bayes: true });
    const rig = await startMailRig({ extraToml: spamToml(rspamd) });
    const user = await mailUser(rig);
    for (const s of ['first', 'second']) await deliver(rig, user.address, rawMessage(s, longBody(s)));
    await waitForCopies(rig, user.wallet, 2);
    expect(await rspamdLearned(rspamd)).toBe(0);

    const imap = imapFlow(rig, user.address, user.password);
    await imap.connect();
    try {
      const inbox = await imap.mailboxOpen('INBOX');
      expect(inbox.exists).toBe(2);
      await imap.messageMove('1', 'Junk');
      await until(async () => ((await rspamdLearned(rspamd)) === 1 ? true : undefined), 'learnspam');
      expect(await learnedCount(rig, 'spam', 'learned')).toBe(1);

      await imap.mailboxOpen('Junk');
      await imap.messageMove('1', 'INBOX');
      await until(async () => ((await rspamdLearned(rspamd)) === 2 ? true : undefined), 'learnham');
      expect(await learnedCount(rig, 'ham', 'learned')).toBe(1);

      // Trash is not a verdict; neither is a move between ordinary folders.
      await imap.mailboxOpen('INBOX');
      await imap.messageMove('1', 'Trash');
      await sleep(1000);
      expect(await rspamdLearned(rspamd)).toBe(2);
      expect(await learnedCount(rig, 'spam', 'learned')).toBe(1);
      expect(await learnedCount(rig, 'ham', 'learned')).toBe(1);
    } finally {
      await imap.logout().catch(() => imap.close());
    }
  });

  it('with the controller gone the move still succeeds and the failure is counted', async () => {
    const rspamd = await startTestRspamd();
    const rig = await startMailRig({ extraToml: spamToml(rspamd) });
    const user = await mailUser(rig);
    await deliver(rig, user.address, rawMessage('lonely', longBody('lonely')));
    await waitForCopies(rig, user.wallet, 1);
    await rspamd.close();

    const imap = imapFlow(rig, user.address, user.password);
    await imap.connect();
    try {
      await imap.mailboxOpen('INBOX');
      const moved = await imap.messageMove('1', 'Junk');
      expect(moved).toBeTruthy();
      const junk = await imap.status('Junk', { messages: true });
      expect(junk === false ? -1 : junk.messages).toBe(1);
      await until(
        async () => ((await learnedCount(rig, 'spam', 'failed')) === 1 ? true : undefined),
        'the failed learn to be counted',
      );
    } finally {
      await imap.logout().catch(() => imap.close());
    }
  });
});
