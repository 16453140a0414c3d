// The terminal step-up flow end to end: the API's challenge, signed by
// `sealpost mailbox sign-text` as a real subprocess, sent in
// x-sealpost-step-up. One extra trailing space (or an unstripped newline
// from stdin) is a different message and the proof fails.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { writeKeypairFile } from '../../src/core/keys/keypair-file.ts';
import { type ApiRig, newWallet, startRig } from '../support/api-rig.ts';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'sealpost.js');

function signText(args: string[], stdin?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'mailbox', 'sign-text', ...args], { stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    child.stdin.end(stdin ?? '');
  });
}

let rig: ApiRig | null = null;
afterEach(async () => {
  await rig?.close();
  rig = null;
});

it('sign-text proofs pass the API step-up; a trailing space or newline fails it', async () => {
  rig = await startRig('sqlite');
  const wallet = newWallet();
  const keyFile = join(rig.dir, 'wallet.json');
  writeKeypairFile(keyFile, wallet);
  const token = await rig.login(wallet);
  await rig.request('POST', '/v1/account', { token });
  const put = (proof: string) =>
    (rig as ApiRig).request('PUT', '/v1/account/pin-provider', {
      token,
      json: { kind: 'remote' },
      headers: { 'x-sealpost-step-up': proof },
    });
  const challenge = async () =>
    (await (rig as ApiRig).request('POST', '/v1/auth/step-up', { token })).body.nonce as string;

  // The nonce as an argument, verbatim.
  let nonce = await challenge();
  let signed = await signText(['--key', keyFile, nonce]);
  expect(signed.code).toBe(0);
  expect(signed.stderr).toContain(`signer: ${wallet.address}`);
  expect((await put(signed.stdout.trim())).status).toBe(204);

  // One extra trailing space: a different message, 403, and the challenge is spent.
  nonce = await challenge();
  signed = await signText(['--key', keyFile, `${nonce} `]);
  expect(signed.code).toBe(0);
  const spaced = await put(signed.stdout.trim());
  expect(spaced.status).toBe(403);
  expect(spaced.body.error).toBe('step_up_failed');
  const retry = await signText(['--key', keyFile, nonce]);
  expect((await put(retry.stdout.trim())).text).toBe('{"error":"step_up_required"}');

  // From stdin the bytes are taken as they come: a newline is signed unless stripped.
  nonce = await challenge();
  signed = await signText(['--key', keyFile], `${nonce}\n`);
  expect((await put(signed.stdout.trim())).status).toBe(403);
  nonce = await challenge();
  signed = await signText(['--key', keyFile, '--strip-newline'], `${nonce}\n`);
  expect((await put(signed.stdout.trim())).status).toBe(204);
  expect((await rig.request('GET', '/v1/account/pin-provider', { token })).body).toEqual({
    configured: true,
    kind: 'remote',
  });
}, 300_000);
