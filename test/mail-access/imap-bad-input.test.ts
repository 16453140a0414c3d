// IMAP abuse over real TLS sockets: malformed commands and literals, huge
// literals, bad tags, commands in the wrong state, SEARCH charset tricks,
// brute-force logins (back-off and lock), and one account never reaching
// another's mail. Every case gets the protocol's answer and the server
// keeps serving.
import { describe, expect, it } from 'vitest';
import {
  deliver,
  LineClient,
  mailUser,
  rawMessage,
  startMailRig,
  waitForCopies,
} from '../support/imap-rig.ts';

const FAST_BACKOFF = { windowMs: 60_000, maxPerIp: 50, maxPerAccount: 4, baseDelayMs: 5, maxDelayMs: 20 };

describe('IMAP bad input', () => {
  it('answers malformed, oversized and out-of-state commands and stays up', async () => {
    const rig = await startMailRig();
    const user = await mailUser(rig);
    const port = rig.imapPort as number;
    const c = await LineClient.open(port);
    expect(await c.until(/^\* OK /)).toMatch(/^\* OK \[CAPABILITY IMAP4rev1 .*AUTH=PLAIN.*\] /);

    expect(await c.command('a1', 'SELECT INBOX')).toMatch(/^a1 BAD SELECT is not valid in this state$/m);
    expect(await c.command('a2', 'UID FETCH 1 FLAGS')).toMatch(/^a2 BAD FETCH is not valid in this state$/m);
    expect(await c.command('a3', 'FROBNICATE now')).toMatch(/^a3 BAD Unknown command FROBNICATE$/m);
    expect(await c.command('a4', 'UID LOGIN x y')).toMatch(/^a4 BAD Unknown command LOGIN$/m);
    expect(await c.command('a5', 'LOGIN "unterminated')).toMatch(/^a5 BAD unterminated quoted string$/m);
    expect(await c.command('a6', 'LOGIN ((a) b')).toMatch(/^a6 BAD unbalanced \($/m);
    c.write('\r\n');
    expect(await c.until(/^\* BAD/)).toMatch(/^\* BAD Missing or invalid tag$/m);
    c.write('+tag NOOP\r\n');
    expect(await c.until(/^\* BAD/)).toMatch(/Missing or invalid tag/);
    expect(await c.command('a7', 'IDLE')).toMatch(/^a7 BAD IDLE is not valid in this state$/m);

    // A synchronizing literal over the limit is refused before any byte is sent.
    expect(await c.command('a8', 'LOGIN {100000}')).toMatch(/^a8 BAD Literal too large$/m);
    // A non-synchronizing one is read and dropped, then refused.
    c.write(`a9 LOGIN {70000+}\r\n${'x'.repeat(70000)} pw\r\n`);
    expect(await c.until(/^a9 /)).toMatch(/^a9 BAD Literal too large$/m);
    // An APPEND bigger than the message limit: NO [TOOBIG] before the bytes.
    expect(await c.command('a10', 'APPEND INBOX {999999999}')).toMatch(/^a10 NO \[TOOBIG\]/m);
    expect(await c.command('a11', 'NOOP')).toMatch(/^a11 OK/m);

    // Log in (literal password), then selected-state abuse.
    c.write(`b1 LOGIN ${user.address} {${Buffer.byteLength(user.password)}}\r\n`);
    expect(await c.until(/^\+ /)).toMatch(/^\+ Ready/);
    c.write(`${user.password}\r\n`);
    expect(await c.until(/^b1 /)).toMatch(/^b1 OK \[CAPABILITY .*\] Logged in$/m);
    expect(await c.command('b2', 'FETCH 1 FLAGS')).toMatch(/^b2 BAD FETCH is not valid in this state$/m);
    expect(await c.command('b3', 'LOGIN a b')).toMatch(/^b3 BAD LOGIN is not valid in this state$/m);
    expect(await c.command('b4', 'SELECT INBOX')).toMatch(/^b4 OK \[READ-WRITE\]/m);
    expect(await c.command('b5', 'FETCH 1:x FLAGS')).toMatch(/^b5 BAD invalid sequence set$/m);
    expect(await c.command('b6', 'FETCH 1 (BODY[1.HEADERX])')).toMatch(/^b6 BAD invalid section/m);
    expect(await c.command('b7', 'FETCH 1 (BINARY[1])')).toMatch(/^b7 BAD unknown FETCH item/m);
    expect(await c.command('b8', 'STORE 1 +FLAGS (\\Recent)')).toMatch(/^b8 BAD \\Recent cannot be set$/m);
    expect(await c.command('b9', 'STORE 1 FROB (\\Seen)')).toMatch(/^b9 BAD expected FLAGS/m);
    expect(await c.command('b10', 'APPEND Nowhere {3+}\r\nabc')).toMatch(/^b10 NO \[TRYCREATE\]/m);
    expect(await c.command('b11', 'CREATE "bad*name"')).toMatch(
      /^b11 NO \[CANNOT\] folder names must not contain \* or %$/m,
    );
    expect(await c.command('b12', 'CREATE INBOX')).toMatch(/^b12 NO \[ALREADYEXISTS\]/m);
    expect(await c.command('b13', 'DELETE INBOX')).toMatch(/^b13 NO \[CANNOT\] INBOX cannot be deleted$/m);
    expect(await c.command('b14', `SEARCH ${'('.repeat(40)}ALL${')'.repeat(40)}`)).toMatch(
      /^b14 BAD lists nested too deeply$/m,
    );
    expect(await c.command('b15', 'SEARCH FROB')).toMatch(/^b15 BAD SEARCH: unknown search key FROB$/m);
    expect(await c.command('b16', 'SEARCH')).toMatch(/^b16 BAD SEARCH needs at least one search key$/m);
    expect(await c.command('b17', 'NOOP')).toMatch(/^b17 OK/m);
    c.write('b18 LOGOUT\r\n');
    expect(await c.until(/^b18 /)).toMatch(/^\* BYE .*\r\nb18 OK LOGOUT completed$/m);
    expect(await c.closedWithin(3000)).toBe(true);

    // A literal size no IMAP message can have, and a line without end: BYE and close.
    const huge = await LineClient.open(port);
    await huge.until(/^\* OK/);
    huge.write('x1 APPEND INBOX {99999999999}\r\n');
    expect(await huge.until(/^\* BYE/)).toMatch(/^\* BYE Literal size out of range$/m);
    expect(await huge.closedWithin(3000)).toBe(true);
    const long = await LineClient.open(port);
    await long.until(/^\* OK/);
    long.write(`x2 NOOP ${'a'.repeat(300_000)}`);
    expect(await long.until(/^\* BYE/)).toMatch(/^\* BYE Line too long$/m);
    expect(await long.closedWithin(3000)).toBe(true);

    // A flood of invalid commands ends the connection.
    const flood = await LineClient.open(port);
    await flood.until(/^\* OK/);
    flood.write(Array.from({ length: 25 }, (_, i) => `f${i} NOPE\r\n`).join(''));
    expect(await flood.until(/^\* BYE/)).toMatch(/^\* BYE Too many invalid commands$/m);
    expect(await flood.closedWithin(3000)).toBe(true);

    // The server still serves a fresh, well-behaved client.
    const fresh = await LineClient.open(port);
    await fresh.until(/^\* OK/);
    expect(await fresh.command('z1', `LOGIN "${user.address}" "${user.password}"`)).toMatch(/^z1 OK/m);
    fresh.close();
  }, 120_000);

  it('refuses SEARCH charset tricks and matches decoded text in UTF-8', async () => {
    const rig = await startMailRig();
    const user = await mailUser(rig);
    const raw =
      'From: =?utf-8?q?J=C3=BCrgen?= <j@remote.example>\r\nSubject: =?utf-8?q?Gr=C3=BC=C3=9Fe_aus_K=C3=B6ln?=\r\n' +
      'MIME-Version: 1.0\r\nContent-Type: text/plain; charset=iso-8859-1\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n' +
      'Sch=F6ne Gr=FC=DFe\r\n';
    await deliver(rig, user.address, raw);
    await waitForCopies(rig, user.wallet, 1);
    const c = await LineClient.open(rig.imapPort as number);
    await c.until(/^\* OK/);
    await c.command('a', `LOGIN "${user.address}" "${user.password}"`);
    await c.command('b', 'SELECT INBOX');
    expect(await c.command('c1', 'SEARCH CHARSET KOI8-R SUBJECT x')).toMatch(
      /^c1 NO \[BADCHARSET \(US-ASCII UTF-8\)\] Unsupported charset KOI8-R$/m,
    );
    expect(await c.command('c2', 'SEARCH CHARSET "UTF-7" SUBJECT x')).toMatch(/^c2 NO \[BADCHARSET/m);
    expect(await c.command('c3', 'SEARCH CHARSET')).toMatch(/^c3 BAD SEARCH: CHARSET needs a name$/m);
    // Invalid UTF-8 in a literal is refused, never matched loosely.
    c.write(
      Buffer.concat([
        Buffer.from('c4 SEARCH CHARSET UTF-8 SUBJECT {2+}\r\n'),
        Buffer.from([0xc3, 0x28]),
        Buffer.from('\r\n'),
      ]),
    );
    expect(await c.until(/^c4 /)).toMatch(/^c4 BAD SEARCH: SUBJECT is not valid UTF-8$/m);
    // 8-bit bytes without a charset are not US-ASCII.
    c.write(
      Buffer.concat([Buffer.from('c5 SEARCH SUBJECT {3+}\r\nGr'), Buffer.from([0xfc]), Buffer.from('\r\n')]),
    );
    expect(await c.until(/^c5 /)).toMatch(/^c5 BAD SEARCH: SUBJECT is not US-ASCII$/m);
    // Encoded words and a Latin-1 quoted-printable body are matched decoded.
    const word = Buffer.from('grüße', 'utf8');
    c.write(
      Buffer.concat([
        Buffer.from(`c6 SEARCH CHARSET UTF-8 SUBJECT {${word.length}+}\r\n`),
        word,
        Buffer.from('\r\n'),
      ]),
    );
    expect(await c.until(/^c6 /)).toMatch(/^\* SEARCH 1\r\nc6 OK/m);
    const body = Buffer.from('SCHÖNE', 'utf8');
    c.write(
      Buffer.concat([
        Buffer.from(`c7 SEARCH CHARSET UTF-8 BODY {${body.length}+}\r\n`),
        body,
        Buffer.from('\r\n'),
      ]),
    );
    expect(await c.until(/^c7 /)).toMatch(/^\* SEARCH 1\r\nc7 OK/m);
    expect(await c.command('c8', 'SEARCH CHARSET UTF-8 FROM jürgen')).toMatch(/^c8 BAD/m);
    expect(await c.command('c9', 'UID SEARCH NOT SUBJECT "Koln" FROM "j@remote"')).toMatch(
      /^\* SEARCH 1\r\nc9 OK/m,
    );
    expect(await c.command('c10', 'SEARCH OR SEEN FLAGGED')).toMatch(/^\* SEARCH\r\nc10 OK/m);
    c.close();
  }, 120_000);

  it('backs off and locks brute-force logins, per account and per connection', async () => {
    const locked = await startMailRig({
      serve: {
        serve: {
          mailAccess: {
            imapListen: { host: '127.0.0.1', port: 0 },
            pop3: false,
            loginBackoff: FAST_BACKOFF,
          },
        },
      },
    });
    const user = await mailUser(locked);
    const port = locked.imapPort as number;
    // Three failures on one connection: NO [AUTHENTICATIONFAILED] each, then BYE.
    const c = await LineClient.open(port);
    await c.until(/^\* OK/);
    expect(await c.command('a1', `LOGIN "${user.address}" "wrong password 1"`)).toMatch(
      /^a1 NO \[AUTHENTICATIONFAILED\] Invalid credentials$/m,
    );
    expect(await c.command('a2', `LOGIN "${user.address}" "wrong password 2"`)).toMatch(
      /^a2 NO \[AUTHENTICATIONFAILED\]/m,
    );
    expect(await c.command('a3', `LOGIN "${user.address}" "wrong password 3"`)).toMatch(
      /^a3 NO \[AUTHENTICATIONFAILED\]/m,
    );
    expect(await c.until(/^\* BYE/)).toMatch(/Too many failed logins/);
    expect(await c.closedWithin(3000)).toBe(true);
    // The fourth failure fills the account's window: now even the right password is refused.
    const d = await LineClient.open(port);
    await d.until(/^\* OK/);
    expect(await d.command('b1', `LOGIN "${user.address}" "wrong password 4"`)).toMatch(/^b1 NO/m);
    expect(await d.command('b2', `LOGIN "${user.address}" "${user.password}"`)).toMatch(
      /^b2 NO \[AUTHENTICATIONFAILED\] too many failed logins; try again in \d+ seconds$/m,
    );
    d.close();
    // Another account from the same address is not locked by it.
    const other = await mailUser(locked);
    const e = await LineClient.open(port);
    await e.until(/^\* OK/);
    expect(await e.command('c1', `LOGIN "${other.address}" "${other.password}"`)).toMatch(/^c1 OK/m);
    e.close();
  }, 120_000);

  it('never shows one account the mail of another', async () => {
    const rig = await startMailRig();
    const alice = await mailUser(rig);
    const mallory = await mailUser(rig);
    await deliver(rig, alice.address, rawMessage('for alice only'));
    await waitForCopies(rig, alice.wallet, 1);
    const m = await LineClient.open(rig.imapPort as number);
    await m.until(/^\* OK/);
    await m.command('a', `LOGIN "${mallory.address}" "${mallory.password}"`);
    expect(await m.command('b', 'SELECT INBOX')).toMatch(/^\* 0 EXISTS$/m);
    expect(await m.command('c', 'UID FETCH 1:* (BODY[])')).toMatch(/^c OK/m);
    expect(await m.command('d', 'UID STORE 1:* +FLAGS (\\Deleted)')).not.toMatch(/FETCH/);
    expect(await m.command('e', 'UID EXPUNGE 1:*')).not.toMatch(/EXPUNGE\r\n/);
    expect(await m.command('f', 'STATUS INBOX (MESSAGES)')).toMatch(/MESSAGES 0/);
    expect(await m.command('g', 'SEARCH TEXT alice')).toMatch(/^\* SEARCH\r\ng OK/m);
    m.close();
    // Alice's message is untouched.
    const a = await LineClient.open(rig.imapPort as number);
    await a.until(/^\* OK/);
    await a.command('a', `LOGIN "${alice.address}" "${alice.password}"`);
    expect(await a.command('b', 'SELECT INBOX')).toMatch(/^\* 1 EXISTS$/m);
    expect(await a.command('c', 'FETCH 1 (FLAGS BODY.PEEK[HEADER.FIELDS (SUBJECT)])')).toMatch(
      /FLAGS \(\) BODY\[HEADER\.FIELDS \(SUBJECT\)\] \{\d+\}\r\nSubject: for alice only\r\n/,
    );
    a.close();
  }, 120_000);
});
