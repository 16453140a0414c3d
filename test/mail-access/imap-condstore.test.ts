// CONDSTORE (RFC 7162) and ENABLE (RFC 5161) over real TLS sockets against
// `sealpost serve`: mod-sequences that persist in the store, HIGHESTMODSEQ
// on SELECT and STATUS, FETCH MODSEQ and (CHANGEDSINCE), conditional STORE
// with [MODIFIED], SEARCH MODSEQ, MODSEQ in IDLE updates, and bad modifiers.
import { describe, expect, it } from 'vitest';
import {
  deliver,
  LineClient,
  mailUser,
  rawMessage,
  startMailRig,
  waitForCopies,
} from '../support/imap-rig.ts';

function num(text: string, re: RegExp): number {
  const m = re.exec(text);
  if (!m) throw new Error(`no match for ${re} in ${JSON.stringify(text)}`);
  return Number(m[1]);
}

describe('IMAP CONDSTORE', () => {
  it('tracks mod-sequences through FETCH, STORE, SEARCH, STATUS and IDLE', async () => {
    const rig = await startMailRig();
    const user = await mailUser(rig);
    await deliver(rig, user.address, rawMessage('first'));
    await deliver(rig, user.address, rawMessage('second'));
    await waitForCopies(rig, user.wallet, 2);
    const port = rig.imapPort as number;

    // A client that never enables CONDSTORE sees no MODSEQ in STORE answers.
    const plain = await LineClient.open(port);
    expect(await plain.until(/^\* OK/)).toMatch(/ CONDSTORE /);
    await plain.command('p1', `LOGIN "${user.address}" "${user.password}"`);
    expect(await plain.command('p2', 'SELECT INBOX')).toMatch(/^\* OK \[HIGHESTMODSEQ \d+\] Highest$/m);
    expect(await plain.command('p3', 'STORE 1 +FLAGS (\\Answered)')).toMatch(
      /^\* 1 FETCH \(FLAGS \(\\Answered\)\)\r\np3 OK/m,
    );

    const c = await LineClient.open(port);
    await c.until(/^\* OK/);
    await c.command('a', `LOGIN "${user.address}" "${user.password}"`);
    expect(await c.command('b', 'ENABLE CONDSTORE X-UNKNOWN')).toMatch(/^\* ENABLED CONDSTORE\r\nb OK/m);
    const selected = await c.command('c', 'SELECT INBOX (CONDSTORE)');
    const h0 = num(selected, /^\* OK \[HIGHESTMODSEQ (\d+)\]/m);
    const fetched = await c.command('d', 'FETCH 1:* (UID FLAGS MODSEQ)');
    const m1 = num(fetched, /^\* 1 FETCH \(UID \d+ FLAGS \(\\Answered\) MODSEQ \((\d+)\)\)$/m);
    const m2 = num(fetched, /^\* 2 FETCH \(UID \d+ FLAGS \(\) MODSEQ \((\d+)\)\)$/m);
    expect(m1).toBe(h0);
    expect(m2).toBeLessThan(h0);
    const uid2 = num(fetched, /^\* 2 FETCH \(UID (\d+)/m);

    // A flag change takes the next mod-sequence.
    const stored = await c.command('e', 'STORE 1 +FLAGS (\\Flagged)');
    const h1 = num(stored, /^\* 1 FETCH \(FLAGS \(\\Answered \\Flagged\) MODSEQ \((\d+)\)\)$/m);
    expect(h1).toBeGreaterThan(h0);
    // CHANGEDSINCE keeps only what changed after the value, and adds MODSEQ.
    const changed = await c.command('f', `FETCH 1:* (FLAGS) (CHANGEDSINCE ${h0})`);
    expect(changed).toMatch(
      new RegExp(`^\\* 1 FETCH \\(FLAGS \\(\\\\Answered \\\\Flagged\\) MODSEQ \\(${h1}\\)\\)\\r\\nf OK`, 'm'),
    );
    // Conditional STORE: message 1 changed after h0, so it is left alone and named.
    const cond = await c.command('g', `STORE 1:2 (UNCHANGEDSINCE ${h0}) +FLAGS (\\Seen)`);
    expect(cond).not.toMatch(/^\* 1 FETCH/m);
    const h2 = num(cond, /^\* 2 FETCH \(FLAGS \(\\Seen\) MODSEQ \((\d+)\)\)$/m);
    expect(h2).toBeGreaterThan(h1);
    expect(cond).toMatch(/^g OK \[MODIFIED 1\] Conditional STORE failed$/m);
    // .SILENT under CONDSTORE still reports the new MODSEQ, without FLAGS.
    const silent = await c.command('h', `UID STORE ${uid2} (UNCHANGEDSINCE ${h2}) -FLAGS.SILENT (\\Seen)`);
    const h3 = num(silent, new RegExp(`^\\* 2 FETCH \\(UID ${uid2} MODSEQ \\((\\d+)\\)\\)$`, 'm'));
    expect(h3).toBeGreaterThan(h2);
    expect(silent).toMatch(/^h OK/m);
    // UID STORE names UIDs in [MODIFIED].
    expect(await c.command('i', `UID STORE ${uid2} (UNCHANGEDSINCE ${h0}) +FLAGS (\\Draft)`)).toMatch(
      new RegExp(`^i OK \\[MODIFIED ${uid2}\\]`, 'm'),
    );
    // SEARCH MODSEQ, with and without an entry name.
    expect(await c.command('j', `SEARCH MODSEQ ${h1}`)).toMatch(
      new RegExp(`^\\* SEARCH 1 2 \\(MODSEQ ${h3}\\)$`, 'm'),
    );
    expect(await c.command('k', `SEARCH MODSEQ "/flags/\\\\seen" all ${h3}`)).toMatch(
      new RegExp(`^\\* SEARCH 2 \\(MODSEQ ${h3}\\)$`, 'm'),
    );
    expect(await c.command('l', `SEARCH MODSEQ ${h3 + 1}`)).toMatch(/^\* SEARCH\r\nl OK/m);
    expect(await c.command('m', 'STATUS INBOX (HIGHESTMODSEQ MESSAGES)')).toMatch(
      new RegExp(`^\\* STATUS "INBOX" \\(HIGHESTMODSEQ ${h3} MESSAGES 2\\)$`, 'm'),
    );

    // Another session's change arrives in IDLE with its MODSEQ.
    c.write('n IDLE\r\n');
    await c.until(/^\+ /);
    expect(await plain.command('p4', 'STORE 2 +FLAGS (\\Flagged)')).toMatch(/^p4 OK/m);
    const pushed = await c.until(/^\* 2 FETCH/, 10_000);
    const h4 = num(pushed, /^\* 2 FETCH \(UID \d+ FLAGS \(\\Flagged\) MODSEQ \((\d+)\)\)$/m);
    expect(h4).toBeGreaterThan(h3);
    c.write('DONE\r\n');
    expect(await c.until(/^n /)).toBe('n OK IDLE terminated');

    // Bad modifiers answer BAD and change nothing.
    expect(await c.command('o', 'FETCH 1 (FLAGS) (CHANGEDSINCE abc)')).toMatch(/^o BAD .*mod-sequence/m);
    expect(await c.command('q', 'FETCH 1 (FLAGS) (VANISHED)')).toMatch(/^q BAD /m);
    expect(await c.command('r', 'STORE 1 (UNCHANGEDSINCE) +FLAGS (\\Seen)')).toMatch(/^r BAD /m);
    expect(await c.command('s', 'SELECT INBOX (QRESYNC)')).toMatch(/^s BAD /m);
    expect(await c.command('t', 'SEARCH MODSEQ "/flags/\\\\seen" nobody 5')).toMatch(/^t BAD /m);
    c.close();

    // Mod-sequences live in the store: a new session sees the same values.
    const again = await LineClient.open(port);
    await again.until(/^\* OK/);
    await again.command('a', `LOGIN "${user.address}" "${user.password}"`);
    expect(await again.command('b', 'EXAMINE INBOX')).toMatch(
      new RegExp(`^\\* OK \\[HIGHESTMODSEQ ${h4}\\]`, 'm'),
    );
    expect(await again.command('c', 'FETCH 2 (MODSEQ)')).toMatch(
      new RegExp(`^\\* 2 FETCH \\(MODSEQ \\(${h4}\\)\\)$`, 'm'),
    );
    again.close();
    plain.close();
  }, 120_000);
});
