// The account API as a wallet holder uses it: login with a signed nonce,
// create the account, and set a pin provider with a step-up proof.
import { ed25519 } from '@noble/curves/ed25519.js';
import bs58 from 'bs58';
import type { Keypair } from '../../src/core/keys/keypair-file.ts';

function sign(wallet: Keypair, text: string): string {
  return bs58.encode(ed25519.sign(new TextEncoder().encode(text), wallet.secretKey.subarray(0, 32)));
}

async function call(
  base: string,
  method: string,
  path: string,
  opts: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<Record<string, unknown> | null> {
  const res = await fetch(base + path, {
    method,
    headers: { ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }), ...opts.headers },
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.status === 204 ? null : ((await res.json()) as Record<string, unknown>);
}

/** Logs in as the wallet, creates its account and sets its pin provider. */
export async function setPinProvider(
  apiUrl: string,
  wallet: Keypair,
  provider: Record<string, unknown>,
): Promise<void> {
  const { nonce } = (await call(apiUrl, 'POST', '/v1/auth/challenge', {
    body: { wallet: wallet.address },
  })) as {
    nonce: string;
  };
  const { token } = (await call(apiUrl, 'POST', '/v1/auth/login', {
    body: { wallet: wallet.address, signature: sign(wallet, nonce) },
  })) as { token: string };
  const auth = { authorization: `Bearer ${token}` };
  await call(apiUrl, 'POST', '/v1/account', { headers: auth });
  const stepUp = (await call(apiUrl, 'POST', '/v1/auth/step-up', { headers: auth })) as { nonce: string };
  await call(apiUrl, 'PUT', '/v1/account/pin-provider', {
    body: provider,
    headers: { ...auth, 'x-sealpost-step-up': sign(wallet, stepUp.nonce) },
  });
}
