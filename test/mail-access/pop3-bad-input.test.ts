// POP3 abuse over real TLS sockets: commands out of order, malformed
// arguments, SASL PLAIN (good and bad), deleted-message handling, a dropped
// connection deleting nothing, long lines and brute-force logins.
import { describe, expect, it } from 'vitest';
import { MessagesRepo } from '../../src/core/store/index.ts';
import {
  deliver,
  LineClient,
  mailUser,
  rawMessage,
  startMailRig,
  waitForCopies,
} from '../support/imap-rig.ts';

const FAST_BACKOFF = { windowMs: 60_000, maxPerIp: 50, maxPerAccount: 4, baseDelayMs: 5, maxDelayMs: 20 };

/** A serve rig with POP3 only, on a random port, with a fast login back-off. */
function popRig() {
  return startMailRig({
    serve: {
      serve: {
        mailAccess: { pop3Listen: { host: '127.0.0.1', port: 0 }, imap: false, loginBackoff: FAST_BACKOFF },
      },
    },
  });
}

function plain(user: string, password: string, authz = ''): string {
  return Buffer.from(`${authz}\u0000${user}\u0000${password}`).toString('base64');
}

describe('POP3 bad input', () => {
  it('answers commands out of order and malformed arguments, and deletes only on QUIT', async () => {
    const rig = await popRig();
    const user = await mailUser(rig);
    await deliver(rig, user.address, rawMessage('pop bad input'));
    await waitForCopies(rig, user.wallet, 1);
    const port = rig.pop3Port as number;
    const c = await LineClient.open(port);
    const say = async (line: string) => {
      c.write(`${line}\r\n`);
      return c.until(/^[+-]/);
    };
    expect(await c.until(/^\+OK/)).toMatch(/^\+OK Sealpost POP3 ready$/);
    expect(await say('STAT')).toBe('-ERR Command not valid in this state');
    expect(await say('RETR 1')).toBe('-ERR Command not valid in this state');
    expect(await say('PASS secret')).toBe('-ERR USER first');
    expect(await say('FROB')).toBe('-ERR Unknown command');
    expect(await say('STLS')).toBe('-ERR STLS is not available');
    expect(await say('AUTH CRAM-MD5')).toBe('-ERR Unsupported mechanism');
    expect(await say('AUTH PLAIN not*base64')).toBe('-ERR The SASL response is not valid base64');
    expect(await say(`AUTH PLAIN ${Buffer.from('no-nuls').toString('base64')}`)).toBe(
      '-ERR PLAIN needs authzid NUL authcid NUL password',
    );
    expect(await say(`AUTH PLAIN ${plain(user.address, user.password, 'someone-else')}`)).toBe(
      '-ERR [AUTH] Acting as another user is not allowed',
    );
    // SASL PLAIN with the response on its own line.
    c.write('AUTH PLAIN\r\n');
    expect(await c.until(/^\+ /)).toBe('+ ');
    c.write(`${plain(user.address, user.password)}\r\n`);
    expect(await c.until(/^[+-]/)).toBe('+OK Logged in; 1 messages');
    expect(await say('USER again')).toBe('-ERR Command not valid in this state');
    expect(await say('RETR 0')).toBe('-ERR Expected a message number');
    expect(await say('RETR abc')).toBe('-ERR Expected a message number');
    expect(await say('RETR 2')).toBe('-ERR No such message');
    expect(await say('TOP 1')).toBe('-ERR TOP needs a message number and a line count');
    expect(await say('STAT extra')).toBe('-ERR STAT takes no argument');
    expect(await say('DELE 1')).toBe('+OK Message 1 deleted');
    expect(await say('DELE 1')).toBe('-ERR Message 1 is deleted');
    expect(await say('RETR 1')).toBe('-ERR Message 1 is deleted');
    expect(await say('STAT')).toBe('+OK 0 0');
    expect(await say('RSET')).toBe('+OK 1 messages');
    expect(await say('DELE 1')).toBe('+OK Message 1 deleted');
    // The connection drops without QUIT: nothing is removed (RFC 1939 §6).
    c.close();
    await new Promise((r) => setTimeout(r, 300));
    const repo = new MessagesRepo(rig.serving.store.db);
    expect(await repo.listForWallet(user.wallet)).toHaveLength(1);

    // A line longer than the command limit closes the connection.
    const long = await LineClient.open(port);
    await long.until(/^\+OK/);
    long.write(`USER ${'a'.repeat(5000)}`);
    expect(await long.until(/^-ERR/)).toBe('-ERR Line too long');
    expect(await long.closedWithin(3000)).toBe(true);
  }, 120_000);

  it('backs off brute-force logins and locks the account window', async () => {
    const rig = await popRig();
    const user = await mailUser(rig);
    const port = rig.pop3Port as number;
    const c = await LineClient.open(port);
    const say = async (line: string) => {
      c.write(`${line}\r\n`);
      return c.until(/^[+-]/);
    };
    await c.until(/^\+OK/);
    for (const n of [1, 2]) {
      expect(await say(`USER ${user.address}`)).toBe('+OK Send the password');
      expect(await say(`PASS wrong password ${n}`)).toBe('-ERR [AUTH] Invalid credentials');
    }
    expect(await say(`USER ${user.address}`)).toBe('+OK Send the password');
    expect(await say('PASS wrong password 3')).toBe('-ERR [AUTH] Invalid credentials');
    expect(await c.closedWithin(3000)).toBe(true);
    const d = await LineClient.open(port);
    await d.until(/^\+OK/);
    d.write(`AUTH PLAIN ${plain(user.address, 'wrong password 4')}\r\n`);
    expect(await d.until(/^-/)).toBe('-ERR [AUTH] Invalid credentials');
    d.write(`AUTH PLAIN ${plain(user.address, user.password)}\r\n`);
    expect(await d.until(/^-/)).toMatch(/^-ERR \[AUTH\] too many failed logins; try again in \d+ seconds$/);
    d.close();
  }, 120_000);

  it('locks the maildrop from login to close: a second session gets [IN-USE] (RFC 1939 section 8)', async () => {
    const rig = await popRig();
    const user = await mailUser(rig);
    await deliver(rig, user.address, rawMessage('locked maildrop'));
    await waitForCopies(rig, user.wallet, 1);
    const port = rig.pop3Port as number;
    const session = async () => {
      const c = await LineClient.open(port);
      await c.until(/^\+OK/);
      const say = async (line: string) => {
        c.write(`${line}\r\n`);
        return c.until(/^[+-]/);
      };
      return { c, say };
    };
    const a = await session();
    expect(await a.say(`AUTH PLAIN ${plain(user.address, user.password)}`)).toBe('+OK Logged in; 1 messages');
    expect(await a.say('DELE 1')).toBe('+OK Message 1 deleted');
    // The right password, but the maildrop is taken: the session stays in AUTHORIZATION.
    const b = await session();
    expect(await b.say(`USER ${user.address}`)).toBe('+OK Send the password');
    expect(await b.say(`PASS ${user.password}`)).toBe(
      '-ERR [IN-USE] Maildrop already locked by another POP3 session; try again later',
    );
    expect(await b.say('STAT')).toBe('-ERR Command not valid in this state');
    // Not a failed login: the account's failure window did not move.
    expect(await b.say(`USER ${user.address}`)).toBe('+OK Send the password');
    expect(await b.say(`PASS ${user.password}`)).toMatch(/^-ERR \[IN-USE\]/);
    expect(await b.say(`USER ${user.address}`)).toBe('+OK Send the password');
    expect(await b.say(`PASS ${user.password}`)).toMatch(/^-ERR \[IN-USE\]/);
    expect(b.c.closed).toBe(false);
    // A dropped connection frees the lock (and removes nothing).
    a.c.close();
    await a.c.closedWithin(3000);
    let reply = '';
    for (let i = 0; i < 50; i++) {
      reply = await b.say(`AUTH PLAIN ${plain(user.address, user.password)}`);
      if (!reply.includes('[IN-USE]')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(reply).toBe('+OK Logged in; 1 messages');
    expect(await b.say('DELE 1')).toBe('+OK Message 1 deleted');
    expect(await b.say('QUIT')).toBe('+OK Sealpost POP3 signing off (1 messages deleted)');
    // After QUIT the next session logs in at once.
    const c = await session();
    expect(await c.say(`AUTH PLAIN ${plain(user.address, user.password)}`)).toBe('+OK Logged in; 0 messages');
    c.c.close();
  }, 120_000);
});
