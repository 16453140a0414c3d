// The reference's pin-provider and step-up state tables and the errors
// table of PUT/DELETE /v1/account/pin-provider, row by row, over real HTTP
// on SQLite and on PostgreSQL.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { credentialAad, openCredential } from '../../src/core/crypto/credential-seal.ts';
import type { Keypair } from '../../src/core/keys/keypair-file.ts';
import { AccountsRepo } from '../../src/core/store/index.ts';
import { type ApiRig, DIALECTS, newWallet, sign, startRig } from '../support/api-rig.ts';

const STEP_UP = 'x-sealpost-step-up';
const HOSTED = { kind: 'hosted_jwt', jwt: 'eyJhbGciOi.secret.jwt', gateway: 'https://gw.example.org' };
const S3 = { kind: 's3_bucket', access_key: 'AKIA-test', secret_key: 'very-secret-key', bucket: 'mail-pins' };
const REMOTE = { kind: 'remote', endpoint: 'http://127.0.0.1:9999', auth_token: 'daemon-token' };

describe.each(DIALECTS)('pin provider and step-up on %s', (dialect) => {
  let rig: ApiRig;
  let alice: Keypair;
  let token: string;

  beforeEach(async () => {
    rig = await startRig(dialect);
    alice = newWallet();
    token = await rig.login(alice);
    expect((await rig.request('POST', '/v1/account', { token })).status).toBe(201);
  });
  afterEach(async () => {
    await rig.close();
  });

  const status = async () => (await rig.request('GET', '/v1/account/pin-provider', { token })).body;
  const put = (body: unknown, proof?: string, t = token) =>
    rig.request('PUT', '/v1/account/pin-provider', {
      token: t,
      json: body,
      headers: proof === undefined ? {} : { [STEP_UP]: proof },
    });
  const del = (proof?: string, t = token) =>
    rig.request('DELETE', '/v1/account/pin-provider', {
      token: t,
      headers: proof === undefined ? {} : { [STEP_UP]: proof },
    });
  const expect428 = (r: { status: number; text: string }) => {
    expect(r.status).toBe(428);
    expect(r.text).toBe('{"error":"step_up_required"}');
  };

  describe('pin provider states', () => {
    it('unconfigured → PUT → configured; the challenge is spent', async () => {
      expect(await status()).toEqual({ configured: false, kind: null });
      const { proof } = await rig.stepUp(token, alice);
      const r = await put(HOSTED, proof);
      expect(r.status).toBe(204);
      expect(r.text).toBe('');
      expect(await status()).toEqual({ configured: true, kind: 'hosted_jwt' });
      expect428(await put(S3, proof));
      expect(await status()).toEqual({ configured: true, kind: 'hosted_jwt' });
    });

    it('configured → PUT → replaced (rotation); only the kind is stored in the clear', async () => {
      await put(HOSTED, (await rig.stepUp(token, alice)).proof);
      expect((await put(S3, (await rig.stepUp(token, alice)).proof)).status).toBe(204);
      expect(await status()).toEqual({ configured: true, kind: 's3_bucket' });

      const stored = await new AccountsRepo(rig.store.db).getPinProvider(alice.address);
      expect(stored?.kind).toBe('s3_bucket');
      expect(stored?.sealedCredentials).toMatch(/^v1:/);
      expect(stored?.sealedCredentials).not.toContain('very-secret-key');
      const opened = openCredential(
        rig.credentialKey,
        stored?.sealedCredentials ?? '',
        credentialAad('pin-provider', alice.address),
      );
      expect(JSON.parse(opened)).toEqual(S3);
      // Bound to the wallet: the same sealed text does not open for another row.
      expect(() =>
        openCredential(
          rig.credentialKey,
          stored?.sealedCredentials ?? '',
          credentialAad('pin-provider', newWallet().address),
        ),
      ).toThrow(/failed authentication/);
    });

    it('configured → DELETE → unconfigured', async () => {
      await put(REMOTE, (await rig.stepUp(token, alice)).proof);
      expect(await status()).toEqual({ configured: true, kind: 'remote' });
      const r = await del((await rig.stepUp(token, alice)).proof);
      expect(r.status).toBe(204);
      expect(await status()).toEqual({ configured: false, kind: null });
    });

    it('unconfigured → DELETE → 204 (idempotent); the challenge is spent', async () => {
      const { proof } = await rig.stepUp(token, alice);
      expect((await del(proof)).status).toBe(204);
      expect(await status()).toEqual({ configured: false, kind: null });
      expect428(await del(proof));
    });

    it('GET never returns credentials, not even redacted', async () => {
      await put({ kind: 'remote', auth_token: 'tok-123' }, (await rig.stepUp(token, alice)).proof);
      const r = await rig.request('GET', '/v1/account/pin-provider', { token });
      expect(r.status).toBe(200);
      expect(Object.keys(r.body).sort()).toEqual(['configured', 'kind']);
      expect(r.text).not.toContain('tok-123');
      expect(r.text).not.toContain('auth_token');
    });
  });

  describe('step-up challenge states', () => {
    it('none → POST /v1/auth/step-up → issued (prefix, 300 s)', async () => {
      const r = await rig.request('POST', '/v1/auth/step-up', { token });
      expect(r.status).toBe(200);
      expect(Object.keys(r.body).sort()).toEqual(['expires_in', 'nonce']);
      expect(r.body.expires_in).toBe(300);
      expect(r.body.nonce).toMatch(/^Sealpost step-up nonce: [1-9A-HJ-NP-Za-km-z]{20,}$/);
    });

    it('issued → a proof by another key → 403 and spent', async () => {
      const { nonce, proof: wrong } = await rig.stepUp(token, newWallet());
      const r = await put(HOSTED, wrong);
      expect(r.status).toBe(403);
      expect(r.body.error).toBe('step_up_failed');
      // The right signature over the same nonce comes too late.
      expect428(await put(HOSTED, sign(alice, nonce)));
      expect(await status()).toEqual({ configured: false, kind: null });
    });

    it('issued → answered by any outcome after verification (400, 422, 404) → spent', async () => {
      let c = await rig.stepUp(token, alice);
      expect((await put({ kind: 'hosted_jwt', gateway: 'https://g.example' }, c.proof)).status).toBe(400);
      expect428(await put(HOSTED, c.proof));
      c = await rig.stepUp(token, alice);
      expect((await put({ kind: 'ftp' }, c.proof)).status).toBe(422);
      expect428(await put(HOSTED, c.proof));

      const bob = newWallet();
      const bobToken = await rig.login(bob);
      c = await rig.stepUp(bobToken, bob);
      expect((await put(HOSTED, c.proof, bobToken)).status).toBe(404);
      expect428(await put(HOSTED, c.proof, bobToken));
    });

    it('issued → a proof that is not a base58 ed25519 signature → 400 and the challenge stays intact', async () => {
      const { proof } = await rig.stepUp(token, alice);
      for (const bad of ['not base58 0OIl', '3yZe7d', `${proof}1111`, 'x'.repeat(300)]) {
        const r = await put(HOSTED, bad);
        expect(r.status).toBe(400);
        expect(r.body.error).toBe('invalid_step_up_proof');
      }
      expect((await put(HOSTED, proof)).status).toBe(204);
    });

    it('issued → 300 seconds elapse → expired: the proof answers 428', async () => {
      const { proof } = await rig.stepUp(token, alice);
      rig.clock.now += 301_000;
      const relogged = await rig.login(alice); // the first token is still within its hour
      expect428(await put(HOSTED, proof, relogged));
      expect(await status()).toEqual({ configured: false, kind: null });
    });

    it('a proof made just before expiry still works', async () => {
      const { proof } = await rig.stepUp(token, alice);
      rig.clock.now += 299_000;
      expect((await put(HOSTED, proof)).status).toBe(204);
    });

    it('a newer challenge replaces the older one', async () => {
      const first = await rig.stepUp(token, alice);
      const second = await rig.stepUp(token, alice);
      expect(first.nonce).not.toBe(second.nonce);
      const r = await put(HOSTED, first.proof);
      expect(r.status).toBe(403); // verified against the current nonce, which it does not sign
      expect428(await put(HOSTED, second.proof));
    });

    it('a login signature is no step-up proof (prefix check)', async () => {
      const c = await rig.request('POST', '/v1/auth/challenge', { json: { wallet: alice.address } });
      expect(c.body.nonce.startsWith('Sealpost login nonce: ')).toBe(true);
      await rig.stepUp(token, alice);
      const r = await put(HOSTED, sign(alice, c.body.nonce));
      expect(r.status).toBe(403);
      expect(await status()).toEqual({ configured: false, kind: null });
    });

    it('two writes racing on one proof: exactly one is answered by the write', async () => {
      for (let round = 0; round < 5; round++) {
        const { proof } = await rig.stepUp(token, alice);
        const replies = await Promise.all([
          put(HOSTED, proof),
          put(S3, proof),
          del(proof),
          put(REMOTE, proof),
        ]);
        const statuses = replies.map((r) => r.status).sort();
        expect(statuses).toEqual([204, 428, 428, 428]);
        for (const r of replies.filter((x) => x.status === 428)) expect428(r);
      }
    });
  });

  describe('errors table', () => {
    it('428 when the proof is missing; nothing changes and the token stays valid', async () => {
      await rig.stepUp(token, alice);
      expect428(await put(HOSTED));
      expect428(await del());
      expect428(await put(HOSTED, ''));
      expect(await status()).toEqual({ configured: false, kind: null });
      expect((await rig.request('GET', '/v1/account', { token })).status).toBe(200);
    });

    it('428 when no challenge was ever issued', async () => {
      expect428(await put(HOSTED, sign(alice, 'Sealpost step-up nonce: made-up')));
    });

    it('400 names each missing or empty credential field as <kind>.<field> must not be empty', async () => {
      const cases: [Record<string, unknown>, string][] = [];
      for (const [full, fields] of [
        [HOSTED, ['jwt', 'gateway']],
        [S3, ['access_key', 'secret_key', 'bucket']],
      ] as const) {
        for (const field of fields) {
          const missing: Record<string, unknown> = { ...full };
          delete missing[field];
          cases.push([missing, `${full.kind}.${field} must not be empty`]);
          cases.push([{ ...full, [field]: '' }, `${full.kind}.${field} must not be empty`]);
          cases.push([{ ...full, [field]: '   ' }, `${full.kind}.${field} must not be empty`]);
        }
      }
      for (const [body, message] of cases) {
        const r = await put(body, (await rig.stepUp(token, alice)).proof);
        expect(r.status).toBe(400);
        expect(r.body).toEqual({ error: 'invalid_pin_provider', message });
      }
      expect(await status()).toEqual({ configured: false, kind: null });
    });

    it('400 for fields a kind does not have', async () => {
      const r = await put({ ...S3, jwt: 'x' }, (await rig.stepUp(token, alice)).proof);
      expect(r.status).toBe(400);
      expect(r.body.message).toBe('s3_bucket.jwt is not a known field');
    });

    it('422 for an unknown kind', async () => {
      const r = await put({ kind: 'dropbox', token: 'x' }, (await rig.stepUp(token, alice)).proof);
      expect(r.status).toBe(422);
      expect(r.body.error).toBe('unknown_kind');
      expect(r.body.message).toContain('hosted_jwt, s3_bucket, remote');
    });

    it('404 when the wallet has no account (PUT and DELETE)', async () => {
      const carol = newWallet();
      const t = await rig.login(carol);
      let r = await put(HOSTED, (await rig.stepUp(t, carol)).proof, t);
      expect(r.status).toBe(404);
      expect(r.body.error).toBe('account_not_found');
      r = await del((await rig.stepUp(t, carol)).proof, t);
      expect(r.status).toBe(404);
      expect(await new AccountsRepo(rig.store.db).get(carol.address)).toBeUndefined();
    });

    it("another wallet's proof or token never reaches this account", async () => {
      const bob = newWallet();
      const bobToken = await rig.login(bob);
      await rig.request('POST', '/v1/account', { token: bobToken });
      await put(HOSTED, (await rig.stepUp(token, alice)).proof);
      // Bob's own proof with Bob's token changes Bob's account only.
      expect((await put(S3, (await rig.stepUp(bobToken, bob)).proof, bobToken)).status).toBe(204);
      expect(await status()).toEqual({ configured: true, kind: 'hosted_jwt' });
      // Bob signing Alice's challenge does not work with Alice's token.
      const { nonce } = await rig.stepUp(token, alice);
      expect((await put(REMOTE, sign(bob, nonce))).status).toBe(403);
      // Alice's proof with Bob's token: Bob's challenge was not issued → 428.
      const c = await rig.stepUp(token, alice);
      expect428(await put(REMOTE, c.proof, bobToken));
      expect(await status()).toEqual({ configured: true, kind: 'hosted_jwt' });
    });

    it('admin DELETE of a wallet without an account: 404, nothing swept, audit failure', async () => {
      const ghost = newWallet().address;
      const r = await rig.admin('DELETE', `/v1/admin/accounts/${ghost}`);
      expect(r.status).toBe(404);
      expect(r.body.error).toBe('account_not_found');
      const audit = await new AccountsRepo(rig.store.db).listAudit({ target: ghost });
      expect(audit.map((a) => [a.action, a.outcome, a.actor])).toEqual([
        ['account.delete', 'failure', 'admin'],
      ]);
      expect((await rig.request('GET', '/v1/account', { token })).status).toBe(200);
    });
  });
});
