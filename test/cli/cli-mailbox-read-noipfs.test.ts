// `sealpost mailbox read` of no_ipfs (local-only) mail as a black box: a real
// `serve` on devnet delivers SMTP mail to a wallet whose mailbox has no_ipfs
// (the Email account's cid is the `b3:` marker, the sealed body only in the
// operator's blob store); the real CLI in child processes fetches it through
// the account API with a token (flag, file, environment) or by logging in
// with the wallet key, checks the marker and prints the message. A store
// copy changed on disk, another wallet's token, a stale token and no token
// at all each get one clear line, exit 1 and nothing on stdout.
import { execFile } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Keypair as Web3Keypair } from '@solana/web3.js';
import nodemailer from 'nodemailer';
import { describe, expect, it } from 'vitest';
import { getMailbox, listInbox, setMailboxFlagsInstruction } from '../../chain/client/index.ts';
import { signDetachedBase58 } from '../../src/core/keys/ed25519-sign.ts';
import { keypairFromSeed } from '../../src/core/keys/keypair-file.ts';
import { MessagesRepo } from '../../src/core/store/index.ts';
import { RIG_DOMAIN, type ServeRig, startServeRig } from '../support/serve-rig.ts';
import { tempDir } from '../support/temp-dir.ts';
import { withoutTrace } from '../support/trace.ts';

const BIN = resolve(import.meta.dirname, '..', '..', 'bin', 'sealpost.js');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function sealpost(
  rig: ServeRig,
  cwd: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<Run> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', ...env };
  delete childEnv.SEALPOST_CONFIG;
  if (!('SEALPOST_API_TOKEN' in env)) delete childEnv.SEALPOST_API_TOKEN;
  return new Promise((done) => {
    execFile(
      process.execPath,
      [BIN, 'mailbox', ...args, '--rpc', rig.chain.devnet.rpcUrl, '--program-id', rig.chain.programId],
      { cwd, env: childEnv, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) =>
        done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** Exactly one `error:` line, matching `pattern`; exit 1 and nothing of the body on stdout. */
function expectRefusal(run: Run, pattern: RegExp): void {
  expect(run.code, run.stderr).toBe(1);
  const errors = run.stderr.split('\n').filter((l) => l.startsWith('error:'));
  expect(errors, run.stderr).toHaveLength(1);
  expect(errors[0]).toMatch(pattern);
  expect(run.stdout).toBe('');
}

function walletFile(dir: string, name: string, kp: Web3Keypair): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(Array.from(kp.secretKey)), { mode: 0o600 });
  return path;
}

/** A bearer token for `kp` through the API's own challenge and login. */
async function login(apiUrl: string, kp: Web3Keypair): Promise<string> {
  const key = keypairFromSeed(kp.secretKey.slice(0, 32));
  const post = async (path: string, body: unknown) => {
    const res = await fetch(apiUrl + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status, path).toBe(200);
    return (await res.json()) as Record<string, string>;
  };
  const { nonce } = await post('/v1/auth/challenge', { wallet: key.address });
  const { token } = await post('/v1/auth/login', {
    wallet: key.address,
    signature: signDetachedBase58(key, new TextEncoder().encode(nonce as string)),
  });
  return token as string;
}

async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(100);
  }
}

const RAW =
  'From: Ann <ann@remote.example>\r\nTo: dave\r\nSubject: kept off IPFS\r\n' +
  'Message-ID: <noipfs-1@remote.example>\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n' +
  'Only the operator keeps this — sealed.\r\n';

describe('sealpost mailbox read: local-only (no_ipfs) mail from the operator store', () => {
  it('opens it with a token or a wallet login, checks the b3: marker, and refuses everything else', async () => {
    const rig = await startServeRig();
    const apiUrl = rig.serving.apiUrl as string;
    const dir = tempDir();
    const dave = await rig.mail.mailbox();
    const eve = await rig.mail.mailbox();
    await rig.chain.send(
      [setMailboxFlagsInstruction({ programId: rig.chain.programId, owner: dave.publicKey, noIpfs: true })],
      [dave],
    );
    expect((await getMailbox(rig.chain.connection, rig.chain.programId, dave.publicKey))?.noIpfs).toBe(true);
    const daveAddr = dave.publicKey.toBase58();
    const daveKey = walletFile(dir, 'dave.json', dave);
    const eveKey = walletFile(dir, 'eve.json', eve);

    // Real SMTP into the real pipeline.
    await nodemailer
      .createTransport({ host: '127.0.0.1', port: rig.mxPort, secure: false, ignoreTLS: true })
      .sendMail({ envelope: { from: 'ann@remote.example', to: [`${daveAddr}@${RIG_DOMAIN}`] }, raw: RAW });
    const entry = await eventually(async () => {
      const inbox = await listInbox(rig.chain.connection, rig.chain.programId, dave.publicKey);
      return inbox[0];
    });
    const marker = entry.email.cid;
    expect(marker).toMatch(/^b3:[0-9a-f]{64}$/);
    const message = entry.address.toBase58();
    const copy = await eventually(async () => {
      const rows = await new MessagesRepo(rig.serving.store.db).listForWallet(daveAddr);
      return rows.find((r) => r.emailAddress === message);
    });

    // No way to fetch: list and read say which message is local-only and which flags reach it.
    const listed = await sealpost(rig, dir, ['list', '--key', daveKey]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(`${marker} (local-only)`);
    expect(listed.stderr).toMatch(/local-only \(no_ipfs\): message 0: .*--login .*--token-file FILE/);
    const noToken = await sealpost(rig, dir, ['read', message, '--key', daveKey]);
    expectRefusal(
      noToken,
      new RegExp(
        `message ${message} is local-only \\(cid ${marker}\\): the mailbox has no_ipfs.*--login.*--token-file`,
      ),
    );

    // A token as a flag, from a file and from the environment; the body is the message as sent.
    const token = await login(apiUrl, dave);
    const byFlag = await sealpost(rig, dir, [
      'read',
      message,
      '--key',
      daveKey,
      '--api',
      apiUrl,
      '--token',
      token,
    ]);
    expect(byFlag.code, byFlag.stderr).toBe(0);
    expect(withoutTrace(byFlag.stdout)).toBe(RAW);
    expect(byFlag.stderr).toContain(
      `fetching the sealed body from the operator's store at ${apiUrl} (--token)`,
    );
    expect(byFlag.stderr).toContain(`cid ${marker} verified (BLAKE3 of the bytes from the operator's store)`);
    const tokenFile = join(dir, 'api.token');
    writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
    const byFile = await sealpost(rig, dir, [
      'read',
      '--index',
      '0',
      '--key',
      daveKey,
      '--api',
      apiUrl,
      '--token-file',
      tokenFile,
      '--json',
    ]);
    expect(byFile.code, byFile.stderr).toBe(0);
    const json = JSON.parse(byFile.stdout) as Record<string, unknown>;
    expect(json).toMatchObject({
      address: message,
      cid: marker,
      cid_verified: true,
      body_from: 'operator_store',
    });
    expect(withoutTrace(json.raw as string)).toBe(RAW);
    const byEnv = await sealpost(rig, dir, ['read', message, '--key', daveKey, '--api', apiUrl], {
      SEALPOST_API_TOKEN: token,
    });
    expect(byEnv.code, byEnv.stderr).toBe(0);
    expect(byEnv.stderr).toContain('($SEALPOST_API_TOKEN)');
    expect(withoutTrace(byEnv.stdout)).toBe(RAW);

    // No token: the CLI logs in itself with the wallet key (challenge, local signature, login).
    const byLogin = await sealpost(rig, dir, ['read', message, '--key', daveKey, '--api', apiUrl, '--login']);
    expect(byLogin.code, byLogin.stderr).toBe(0);
    expect(byLogin.stderr).toContain(`(login as ${daveAddr})`);
    expect(withoutTrace(byLogin.stdout)).toBe(RAW);

    // Another wallet's token: the CLI refuses it by name, and the route itself answers 404.
    const eveToken = await login(apiUrl, eve);
    const other = await sealpost(rig, dir, [
      'read',
      message,
      '--key',
      daveKey,
      '--api',
      apiUrl,
      '--token',
      eveToken,
    ]);
    expectRefusal(
      other,
      new RegExp(
        `the API token \\(--token\\) is for wallet ${eve.publicKey.toBase58()}, but message ${message} is addressed to ${daveAddr}`,
      ),
    );
    const direct = await fetch(`${apiUrl}/v1/mail/by-email/${message}/sealed`, {
      headers: { authorization: `Bearer ${eveToken}` },
    });
    expect(direct.status).toBe(404);
    expect(await direct.json()).toMatchObject({ error: 'message_not_found' });
    const own = await fetch(`${apiUrl}/v1/mail/by-email/${message}/sealed`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(own.status).toBe(200);
    expect(own.headers.get('content-type')).toBe('application/octet-stream');
    const malformed = await fetch(`${apiUrl}/v1/mail/by-email/not-an-address!/sealed`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ error: 'invalid_request' });
    const openapi = (await (await fetch(`${apiUrl}/v1/openapi.json`)).json()) as {
      paths: Record<string, unknown>;
    };
    expect(Object.keys(openapi.paths)).toContain('/v1/mail/by-email/{address}/sealed');
    // Eve reading Dave's message with her own key and a login is refused before anything is fetched.
    const eveReads = await sealpost(rig, dir, ['read', message, '--key', eveKey, '--api', apiUrl, '--login']);
    expectRefusal(
      eveReads,
      new RegExp(`message ${message} is addressed to ${daveAddr}, not to ${eve.publicKey.toBase58()}`),
    );

    // A token the server does not accept.
    const stale = await sealpost(rig, dir, [
      'read',
      message,
      '--key',
      daveKey,
      '--api',
      apiUrl,
      '--token',
      `${token.slice(0, -4)}AAAA`,
    ]);
    expectRefusal(stale, /the account API at .* refused the token \(--token; 401 .*\): it has expired/);

    // The store copy changed on disk: the marker check refuses it before anything is opened.
    const blobPath = join(rig.dataDir, 'blobs', copy.blobKey);
    const original = readFileSync(blobPath);
    const tampered = Buffer.from(original);
    const last = tampered.length - 1;
    tampered[last] = (tampered[last] as number) ^ 0x01;
    chmodSync(blobPath, 0o600);
    writeFileSync(blobPath, tampered);
    const changed = await sealpost(rig, dir, [
      'read',
      message,
      '--key',
      daveKey,
      '--api',
      apiUrl,
      '--token',
      token,
    ]);
    expectRefusal(
      changed,
      new RegExp(
        `the sealed bytes the operator's store at .* served for message ${message} do not match its marker ${marker} on chain; refusing them, nothing was opened`,
      ),
    );
    expect(changed.stderr).not.toContain('envelope from');
  }, 120_000);
});
