// Independent clients: Python's imaplib and poplib (stdlib) over TLS against
// the whole stack, for a message delivered over SMTP.
import { describe, expect, it } from 'vitest';
import { MessagesRepo } from '../../src/core/store/index.ts';
import {
  deliver,
  mailUser,
  rawMessage,
  runPython,
  startMailRig,
  waitForCopies,
} from '../support/imap-rig.ts';
import { withoutTrace } from '../support/trace.ts';

const IMAP_SCRIPT = String.raw`
import base64, imaplib, json, ssl, sys
port, user, password = int(sys.argv[1]), sys.argv[2], sys.argv[3]
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
out = {}
m = imaplib.IMAP4_SSL('127.0.0.1', port, ssl_context=ctx)
out['caps'] = sorted(c.decode() if isinstance(c, bytes) else c for c in m.capabilities)
plain = ('\0' + user + '\0' + password).encode()
typ, _ = m.authenticate('PLAIN', lambda _: plain)
out['auth'] = typ
typ, boxes = m.list()
out['list'] = [b.decode() for b in boxes]
typ, data = m.select('INBOX')
out['exists'] = int(data[0])
typ, data = m.search('UTF-8', 'SUBJECT', '"python"'.encode())
out['search'] = data[0].decode()
typ, data = m.uid('FETCH', '1:*', '(UID RFC822.SIZE BODY.PEEK[] BODY.PEEK[HEADER.FIELDS (SUBJECT)])')
parts = [d for d in data if isinstance(d, tuple)]
out['fetch_meta'] = [p[0].decode() for p in parts]
out['body'] = base64.b64encode(parts[0][1]).decode()
out['subject_field'] = parts[1][1].decode()
typ, data = m.store('1', '+FLAGS', '(\\Answered)')
out['store'] = data[0].decode()
typ, data = m.copy('1', 'Trash')
out['copy'] = typ
typ, data = m.store('1', '+FLAGS', '(\\Deleted)')
typ, data = m.expunge()
out['expunge'] = [d.decode() for d in data if d]
typ, data = m.status('Trash', '(MESSAGES UNSEEN UIDNEXT)')
out['trash'] = data[0].decode()
m.logout()
print(json.dumps(out))
`;

const POP_SCRIPT = String.raw`
import base64, json, poplib, ssl, sys
port, user, password = int(sys.argv[1]), sys.argv[2], sys.argv[3]
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
out = {}
p = poplib.POP3_SSL('127.0.0.1', port, context=ctx)
out['welcome'] = p.getwelcome().decode()
out['capa'] = sorted(p.capa().keys())
p.user(user)
p.pass_(password)
out['stat'] = list(p.stat())
out['list'] = [l.decode() for l in p.list()[1]]
out['uidl'] = [l.decode() for l in p.uidl()[1]]
resp, lines, octets = p.retr(1)
out['retr'] = base64.b64encode(b'\r\n'.join(lines) + b'\r\n').decode()
out['octets'] = octets
resp, lines, octets = p.top(2, 0)
out['top'] = [l.decode() for l in lines]
out['dele'] = p.dele(1).decode()
out['quit'] = p.quit().decode()
print(json.dumps(out))
`;

describe('Python clients', () => {
  it('imaplib: AUTHENTICATE PLAIN, LIST, SEARCH, FETCH exact bytes, STORE, COPY, EXPUNGE, STATUS', async () => {
    const rig = await startMailRig();
    const dave = await mailUser(rig);
    const raw = rawMessage('hello python', 'Grüße aus Python\r\n..two dots\r\n');
    await deliver(rig, dave.address, raw);
    await waitForCopies(rig, dave.wallet, 1);
    const out = JSON.parse(await runPython(IMAP_SCRIPT, [String(rig.imapPort), dave.address, dave.password]));
    expect(out.caps).toEqual(expect.arrayContaining(['IMAP4REV1', 'IDLE', 'UIDPLUS', 'MOVE', 'SPECIAL-USE']));
    expect(out.auth).toBe('OK');
    expect(out.list).toEqual(
      expect.arrayContaining(['(\\HasNoChildren) "/" "INBOX"', '(\\HasNoChildren \\Sent) "/" "Sent"']),
    );
    expect(out.exists).toBe(1);
    expect(out.search).toBe('1');
    const body = Buffer.from(out.body, 'base64');
    expect(out.fetch_meta[0]).toMatch(new RegExp(`UID 1 RFC822.SIZE ${body.length} BODY\\[\\] \\{`));
    // The message as sent under its trace fields.
    expect(withoutTrace(body.toString('utf8'))).toBe(raw);
    expect(out.subject_field).toBe('Subject: hello python\r\n\r\n');
    expect(out.store).toMatch(/FLAGS \(\\Answered\)/);
    expect(out.copy).toBe('OK');
    expect(out.expunge).toEqual(['1']);
    expect(out.trash).toBe('"Trash" (MESSAGES 1 UNSEEN 1 UIDNEXT 2)');
  }, 120_000);

  it('poplib: STAT, LIST, UIDL, RETR exact bytes, TOP, DELE, QUIT removes', async () => {
    const rig = await startMailRig();
    const erin = await mailUser(rig);
    const first = rawMessage('pop one', '.starts with a dot\r\nline two\r\n');
    const second = rawMessage('pop two', 'second body\r\n');
    await deliver(rig, erin.address, first);
    await waitForCopies(rig, erin.wallet, 1);
    await deliver(rig, erin.address, second);
    await waitForCopies(rig, erin.wallet, 2);
    const out = JSON.parse(await runPython(POP_SCRIPT, [String(rig.pop3Port), erin.address, erin.password]));
    expect(out.welcome).toMatch(/^\+OK/);
    expect(out.capa).toEqual(expect.arrayContaining(['UIDL', 'TOP', 'USER', 'SASL']));
    const retr = Buffer.from(out.retr, 'base64');
    const [size1, size2] = (out.list as string[]).map((l) => Number(l.split(' ')[1]));
    expect(size1).toBe(retr.length);
    expect(size2).toBeGreaterThan(Buffer.byteLength(second));
    expect(out.stat).toEqual([2, (size1 ?? 0) + (size2 ?? 0)]);
    expect(out.uidl).toHaveLength(2);
    expect(out.uidl[0]).toMatch(/^1 \d+\.1$/);
    expect(withoutTrace(retr.toString('utf8'))).toBe(first);
    expect(out.top).toContain('Subject: pop two');
    expect(out.top).not.toContain('second body');
    expect(out.dele).toMatch(/^\+OK/);
    expect(out.quit).toMatch(/1 messages deleted/);
    const rows = await new MessagesRepo(rig.serving.store.db).listForWallet(erin.wallet);
    expect(rows).toHaveLength(1);
  }, 120_000);
});
