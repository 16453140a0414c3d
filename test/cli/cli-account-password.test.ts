// Black-box: `sealpost account password` (and `account create`) run as a
// child process against a real account API. The password reaches IMAP: a
// real IMAPS login with imapflow after the command, through a real serve
// process on devnet; mail delivered before the password appears there after
// `sealpost account rewrap` (with a new UID). Bad input (key files, missing
// account, refused password, unreachable API) answers one line, a non-zero
// exit and no change.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import type { ImapFlow } from 'imapflow';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AccountsRepo } from '../../src/core/store/index.ts';
import { type ApiRig, newWallet, startRig } from '../support/api-rig.ts';
import {
  deliver,
  imapFlow,
  mailUser,
  rawMessage,
  runPython,
  startMailRig,
  waitForCopies,
} from '../support/imap-rig.ts';
import { tempDir } from '../support/temp-dir.ts';

const BIN = resolve(import.meta.dirname, '..', '..', 'bin', 'sealpost.js');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function sealpost(args: string[], stdin: string, cwd: string): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', fail);
    child.on('close', (code) =>
      done({ code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() }),
    );
    child.stdin.on('error', () => {});
    child.stdin.end(stdin);
  });
}

function keyFile(dir: string, key: { secretKey: Uint8Array }, name = 'wallet.json'): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(Array.from(key.secretKey)), { mode: 0o600 });
  return path;
}

/** Exactly one `error:` line, matching `pattern`. */
function expectOneError(run: Run, pattern: RegExp): void {
  expect(run.code, run.stderr).not.toBe(0);
  const errors = run.stderr.split('\n').filter((l) => l.startsWith('error:'));
  expect(errors, run.stderr).toHaveLength(1);
  expect(errors[0]).toMatch(pattern);
  expect(run.stdout).toBe('');
}

async function inboxCount(client: ImapFlow): Promise<number | undefined> {
  const st = await client.status('INBOX', { messages: true });
  if (!st) throw new Error('no STATUS for INBOX');
  return st.messages;
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

describe('sealpost account password → IMAP', () => {
  it('sets the password from stdin through the API named in the config; IMAP logs in with it; changes need the current one', async () => {
    const rig = await startMailRig();
    const user = await mailUser(rig, { password: null });
    const dir = tempDir('sealpost-cli-account-');
    const key = keyFile(dir, user.key);
    // Mail delivered before the password exists has no reader wrap.
    await deliver(rig, user.address, rawMessage('before', 'delivered before the password'));
    await waitForCopies(rig, user.wallet, 1);
    const config = join(dir, 'holder.toml');
    writeFileSync(
      config,
      `[smtp]\nlocal_domains = ["mail.test"]\n[api]\npublic_url = "${rig.serving.apiUrl}/"\n`,
    );

    const set = await sealpost(
      ['account', 'password', '--key', key, '--config', config],
      'first mail password\n',
      dir,
    );
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toBe(`mail password set for ${user.wallet}\n`);
    expect(set.stderr).toContain(`account API ${rig.serving.apiUrl} ([api] public_url)`);
    expect(set.stderr).toContain(`${user.wallet}@mail.test`);
    expect(set.stderr).toMatch(/no reader wrap/);

    const imap = imapFlow(rig, user.address, 'first mail password');
    await imap.connect();
    try {
      expect(await inboxCount(imap)).toBe(0); // the earlier mail
      await deliver(rig, user.address, rawMessage('after', 'delivered after the password'));
      await waitForCopies(rig, user.wallet, 2);
      expect(await inboxCount(imap)).toBe(1);
    } finally {
      await imap.logout();
    }

    // The earlier mail: wrapped for the reader key with the wallet key, where the store is.
    const store = ['--config', rig.configFile, '--data-dir', rig.dataDir];
    const dry = await sealpost(['account', 'rewrap', '--key', key, ...store, '--dry-run'], '', dir);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toBe('would rewrap 1 of 1 message(s) without a reader wrap\n');
    const rewrap = await sealpost(['account', 'rewrap', '--key', key, ...store], '', dir);
    expect(rewrap.code, rewrap.stderr).toBe(0);
    expect(rewrap.stdout).toBe('rewrapped 1 of 1 message(s) without a reader wrap\n');
    const nothing = await sealpost(['account', 'rewrap', '--key', key, ...store], '', dir);
    expect(nothing.stdout).toBe('rewrapped 0 of 0 message(s) without a reader wrap\n');
    const other = keyFile(dir, newWallet(), 'other.json'); // no account, so no reader key
    expectOneError(
      await sealpost(['account', 'rewrap', '--key', other, ...store], '', dir),
      /has no IMAP\/POP3 reader key on this server: set the mail password first/,
    );
    const reader = imapFlow(rig, user.address, 'first mail password');
    await reader.connect();
    try {
      const lock = await reader.getMailboxLock('INBOX');
      try {
        const all = [];
        for await (const m of reader.fetch('1:*', { uid: true, source: true })) all.push(m);
        expect(all).toHaveLength(2);
        // The earlier mail comes last: a new UID above the one the client has seen.
        expect(all[1]?.source?.toString()).toContain('delivered before the password');
        expect(all[0]?.source?.toString()).toContain('delivered after the password');
        expect((all[1]?.uid ?? 0) > (all[0]?.uid ?? 0)).toBe(true);
      } finally {
        lock.release();
      }
    } finally {
      await reader.logout();
    }

    // A password exists: one line (no current password) changes nothing.
    const bare = await sealpost(
      ['account', 'password', '--key', key, '--api', rig.serving.apiUrl as string],
      'second password here\n',
      dir,
    );
    expectOneError(bare, /has a mail password already: give the current one too .* nothing was changed/);
    // Current, then new: changed, and the reader key is kept (the later mail stays readable).
    const change = await sealpost(
      ['account', 'password', '--key', key, '--api', rig.serving.apiUrl as string],
      'first mail password\nsecond password here\n',
      dir,
    );
    expect(change.code, change.stderr).toBe(0);
    expect(change.stdout).toBe(`mail password changed for ${user.wallet}\n`);
    const wrongOld = await sealpost(
      ['account', 'password', '--key', key, '--api', rig.serving.apiUrl as string],
      'not the current one\nthird password here\n',
      dir,
    );
    expectOneError(wrongOld, /refused the new mail password \(403 old_password_mismatch\)/);
    const again = imapFlow(rig, user.address, 'second password here');
    await again.connect();
    try {
      expect(await inboxCount(again)).toBe(2); // the reader key was kept: earlier mail stays
    } finally {
      await again.logout();
    }
  }, 180_000);
});

describe('sealpost account password: bad input changes nothing', () => {
  let rig: ApiRig;
  let dir: string;
  beforeEach(async () => {
    rig = await startRig('sqlite');
    dir = tempDir('sealpost-cli-account-');
  });
  afterEach(async () => {
    await rig.close();
  });

  const password = (key: string, stdin: string, api = rig.url) =>
    sealpost(['account', 'password', '--key', key, '--api', api], stdin, dir);
  const accounts = () => new AccountsRepo(rig.store.db);

  it('refuses missing and malformed key files before reading stdin or calling the API', async () => {
    expectOneError(
      await password(join(dir, 'absent.json'), 'a long password here\n'),
      /absent\.json.*nothing was changed/,
    );
    writeFileSync(join(dir, 'bad.json'), '[1, 2, 3]');
    expectOneError(await password(join(dir, 'bad.json'), 'a long password here\n'), /bad\.json/);
    expect(await rig.redisKeys()).toEqual([]); // not even a login was attempted
    expectOneError(
      await sealpost(
        ['account', 'rewrap', '--key', join(dir, 'bad.json'), '--config', join(dir, 'absent.toml')],
        '',
        dir,
      ),
      /bad\.json.*nothing was changed/,
    );
  });

  it('names the way to create an account for a wallet without one, then works after `account create`', async () => {
    const wallet = newWallet();
    const key = keyFile(dir, wallet);
    const none = await password(key, 'a long password here\n');
    expectOneError(none, /has no account at .*sealpost account create --key .*sealpost admin account create/);
    expect(await accounts().get(wallet.address)).toBeUndefined();

    const create = await sealpost(['account', 'create', '--key', key, '--api', rig.url], '', dir);
    expect(create.code, create.stderr).toBe(0);
    expect(create.stdout).toBe(`account created for ${wallet.address}\n`);

    const refused = await password(key, 'short\n');
    expectOneError(
      refused,
      /refused the new mail password \(400 invalid_password\): password must be at least 10 characters/,
    );
    expect((await accounts().get(wallet.address))?.mailPasswordSealed).toBeFalsy();

    const ok = await password(key, 'a long password here\r\n');
    expect(ok.code, ok.stderr).toBe(0);
    const token = await rig.login(wallet);
    const me = await rig.request('GET', '/v1/account', { token });
    expect(me.body.account.mail_password_set).toBe(true);
  });

  it('on a terminal asks twice without echo, and refuses two different entries', async () => {
    const wallet = newWallet();
    const key = keyFile(dir, wallet);
    const token = await rig.login(wallet);
    expect((await rig.request('POST', '/v1/account', { token })).status).toBe(201);
    // A real pseudo-terminal: the CLI sees a TTY on stdin and must turn echo off itself.
    const script = `
import os, pty, sys, time
argv = sys.argv[1:-2]
first, second = sys.argv[-2], sys.argv[-1]
pid, fd = pty.fork()
if pid == 0:
    os.execv(argv[0], argv)
out = b''
def until(text):
    global out
    deadline = time.time() + 30
    while text not in out:
        if time.time() > deadline: raise SystemExit('timed out waiting for %r in %r' % (text, out))
        out += os.read(fd, 1024)
# A person reads the prompt before typing; a loaded machine may still be
# finishing the terminal mode change the prompt follows.
until(b'new mail password: ')
time.sleep(0.2)
os.write(fd, first.encode() + b'\\r')
until(b'again: ')
time.sleep(0.2)
os.write(fd, second.encode() + b'\\r')
while True:
    try:
        chunk = os.read(fd, 1024)
    except OSError:
        break
    if not chunk: break
    out += chunk
_, status = os.waitpid(pid, 0)
sys.stdout.write('%d\\n' % os.waitstatus_to_exitcode(status))
sys.stdout.write(out.decode('utf-8', 'replace'))
`;
    const cli = [process.execPath, BIN, 'account', 'password', '--key', key, '--api', rig.url];
    const differ = await runPython(script, [...cli, 'one long password', 'another long one']);
    expect(differ.split('\n')[0]).toBe('2');
    expect(differ).toContain('the two entries differ; nothing was changed');
    const same = await runPython(script, [...cli, 'typed on a terminal', 'typed on a terminal']);
    expect(same.split('\n')[0]).toBe('0');
    expect(same).toContain(`mail password set for ${wallet.address}`);
    expect(same).not.toContain('typed on a terminal'); // never echoed
    const me = await rig.request('GET', '/v1/account', { token });
    expect(me.body.account.mail_password_set).toBe(true);
  });

  it('reports an unreachable API and usage errors in one line', async () => {
    const key = keyFile(dir, newWallet());
    expectOneError(
      await password(key, 'a long password here\n', `http://127.0.0.1:${await closedPort()}`),
      /cannot reach the account API at http:\/\/127\.0\.0\.1:\d+ \(from --api\): ECONNREFUSED; nothing was changed/,
    );
    expectOneError(await password(key, ''), /no password on stdin/);
    expectOneError(await password(key, 'a\nb\nc\n'), /3 lines on stdin/);
    const usage = await password(key, 'x\n', 'ftp://example.org');
    expect(usage.code).toBe(2);
  });
});
