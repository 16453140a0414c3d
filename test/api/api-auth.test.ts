// Login, session tokens and every kind of bad input the account API must
// refuse with a JSON error and no change: bad JSON, wrong content types,
// oversized bodies, unknown fields, forged/expired/alg-swapped JWTs,
// revoked sessions, admin routes without or with a wrong token, rate limits.
import bs58 from 'bs58';
import type { FastifyPluginAsync } from 'fastify';
import { SignJWT, UnsecuredJWT } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deriveSubkey } from '../../src/core/crypto/credential-seal.ts';
import type { Keypair } from '../../src/core/keys/keypair-file.ts';
import { createLogger } from '../../src/core/log.ts';
import { AccountsRepo } from '../../src/core/store/index.ts';
import { startApiServer } from '../../src/edge/api/server.ts';
import { type ApiRig, DIALECTS, newWallet, type Reply, sign, startRig } from '../support/api-rig.ts';

function expectError(r: Reply, status: number, code: string): void {
  expect(r.status).toBe(status);
  expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  expect(r.body.error).toBe(code);
  expect(typeof r.body.message).toBe('string');
  expect(r.body.message.length).toBeGreaterThan(5);
}

describe.each(DIALECTS)('login and sessions on %s', (dialect) => {
  let rig: ApiRig;
  let alice: Keypair;
  beforeEach(async () => {
    rig = await startRig(dialect, { api: { max_body_bytes: 2048 } });
    alice = newWallet();
  });
  afterEach(async () => {
    await rig.close();
  });

  const challenge = async (wallet = alice) =>
    (await rig.request('POST', '/v1/auth/challenge', { json: { wallet: wallet.address } })).body;
  const login = (wallet: string, signature: string) =>
    rig.request('POST', '/v1/auth/login', { json: { wallet, signature } });

  it('challenge → signature → JWT bound to the wallet; login creates nothing', async () => {
    const c = await challenge();
    expect(c.expires_in).toBeGreaterThan(150); // shared within a 150 s window (docs/api.md)
    expect(c.expires_in).toBeLessThanOrEqual(300);
    expect(c.nonce).toMatch(/^Sealpost login nonce: /);
    const r = await login(alice.address, sign(alice, c.nonce));
    expect(r.status).toBe(200);
    expect(r.body.expires_in).toBe(3600);
    const [header, payload] = (r.body.token as string)
      .split('.')
      .slice(0, 2)
      .map((p) => JSON.parse(Buffer.from(p, 'base64url').toString()));
    expect(header.alg).toBe('HS256');
    expect(payload.sub).toBe(alice.address);
    expect(payload.exp - payload.iat).toBe(3600);
    expect(await new AccountsRepo(rig.store.db).get(alice.address)).toBeUndefined();
    const me = await rig.request('GET', '/v1/account', { token: r.body.token });
    expectError(me, 404, 'account_not_found');
  });

  it('refuses replayed, expired, foreign and malformed login signatures', async () => {
    const c = await challenge();
    const good = sign(alice, c.nonce);
    expectError(await login(alice.address, sign(newWallet(), c.nonce)), 401, 'login_failed');
    expectError(await login(alice.address, 'not-base58-0OIl'), 400, 'invalid_signature');
    expectError(await login(alice.address, bs58.encode(new Uint8Array(32))), 400, 'invalid_signature');
    expectError(await login('abc', good), 400, 'invalid_request');
    expect((await login(alice.address, good)).status).toBe(200);
    expectError(await login(alice.address, good), 401, 'login_failed'); // each nonce logs in once
    const late = await challenge();
    rig.clock.now += 301_000;
    expectError(await login(alice.address, sign(alice, late.nonce)), 401, 'login_failed');
  });

  it("someone asking for challenges for another wallet does not cancel the owner's", async () => {
    const mine = await challenge();
    for (let i = 0; i < 3; i++) await challenge();
    expect((await login(alice.address, sign(alice, mine.nonce))).status).toBe(200);
  });

  it('a step-up signature does not log in', async () => {
    const token = await rig.login(alice);
    const { proof } = await rig.stepUp(token, alice);
    await challenge();
    expectError(await login(alice.address, proof), 401, 'login_failed');
  });

  it('refuses forged, tampered, expired, alg-swapped and unsigned tokens', async () => {
    const token = await rig.login(alice);
    expect((await rig.request('GET', '/v1/account/pin-provider', { token })).status).toBe(200);
    const key = deriveSubkey(rig.credentialKey, 'jwt');
    const claims = { sep: 0 };
    const base = (alg: string, k: Uint8Array) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg })
        .setSubject(alice.address)
        .setIssuer('sealpost')
        .setAudience('sealpost-api')
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(k);
    const forged = await base('HS256', new Uint8Array(32).fill(7));
    const hs512 = await base('HS512', new Uint8Array([...key, ...key]));
    const hs384 = await base('HS384', key);
    const none = new UnsecuredJWT(claims)
      .setSubject(alice.address)
      .setIssuer('sealpost')
      .setAudience('sealpost-api')
      .setIssuedAt()
      .setExpirationTime('1h')
      .encode();
    const [h, p, s] = token.split('.') as [string, string, string];
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
    const tampered = `${h}.${Buffer.from(JSON.stringify({ ...payload, sub: newWallet().address })).toString('base64url')}.${s}`;
    const noneHeader = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${p}.`;
    for (const bad of [forged, hs512, hs384, none, tampered, noneHeader, 'garbage', `${token}x`]) {
      expectError(await rig.request('GET', '/v1/account/pin-provider', { token: bad }), 401, 'invalid_token');
    }
    rig.clock.now += 3601_000;
    expectError(await rig.request('GET', '/v1/account/pin-provider', { token }), 401, 'token_expired');
  });

  it('refuses missing and non-bearer authorization', async () => {
    expectError(await rig.request('GET', '/v1/account'), 401, 'auth_required');
    const r = await rig.request('GET', '/v1/account', { headers: { authorization: 'Basic YWxpY2U6cHc=' } });
    expectError(r, 401, 'auth_required');
    expectError(await rig.request('POST', '/v1/auth/step-up'), 401, 'auth_required');
  });

  it('revoking all sessions (step-up) invalidates every earlier token', async () => {
    const t1 = await rig.login(alice);
    const t2 = await rig.login(alice);
    const missing = await rig.request('POST', '/v1/auth/revoke-sessions', { token: t1 });
    expect([missing.status, missing.text]).toEqual([428, '{"error":"step_up_required"}']);
    await rig.request('POST', '/v1/account', { token: t1 });
    const { proof } = await rig.stepUp(t1, alice);
    const r = await rig.request('POST', '/v1/auth/revoke-sessions', {
      token: t1,
      headers: { 'x-sealpost-step-up': proof },
    });
    expect(r.status).toBe(204);
    for (const t of [t1, t2])
      expectError(await rig.request('GET', '/v1/account', { token: t }), 401, 'session_revoked');
    const t3 = await rig.login(alice);
    expect((await rig.request('GET', '/v1/account', { token: t3 })).status).toBe(200);
    const audit = await new AccountsRepo(rig.store.db).listAudit({ target: alice.address });
    expect(audit.map((a) => a.action)).toContain('sessions.revoke');
  });

  it('revoking sessions without an account answers 404', async () => {
    const t = await rig.login(alice);
    const { proof } = await rig.stepUp(t, alice);
    const r = await rig.request('POST', '/v1/auth/revoke-sessions', {
      token: t,
      headers: { 'x-sealpost-step-up': proof },
    });
    expectError(r, 404, 'account_not_found');
  });

  it('bad JSON, wrong content type, oversized bodies and unknown fields change nothing', async () => {
    const token = await rig.login(alice);
    await rig.request('POST', '/v1/account', { token });
    const json = { 'content-type': 'application/json' };
    expectError(
      await rig.request('POST', '/v1/auth/challenge', { raw: '{"wallet": ', headers: json }),
      400,
      'bad_json',
    );
    expectError(
      await rig.request('POST', '/v1/auth/challenge', {
        raw: JSON.stringify({ wallet: alice.address }),
        headers: { 'content-type': 'text/plain' },
      }),
      415,
      'unsupported_media_type',
    );
    expectError(
      await rig.request('POST', '/v1/auth/challenge', {
        raw: `wallet=${alice.address}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      415,
      'unsupported_media_type',
    );
    expectError(
      await rig.request('POST', '/v1/auth/challenge', {
        json: { wallet: alice.address, pad: 'x'.repeat(4096) },
      }),
      413,
      'payload_too_large',
    );
    const unknown = await rig.request('POST', '/v1/auth/challenge', {
      json: { wallet: alice.address, admin: true },
    });
    expectError(unknown, 400, 'unknown_field');
    expect(unknown.body.message).toBe('body.admin is not a known field');
    expectError(
      await rig.request('POST', '/v1/auth/challenge', {
        raw: `{"wallet":"${alice.address}","__proto__":{"x":1}}`,
        headers: json,
      }),
      400,
      'bad_json',
    );
    expectError(
      await rig.request('POST', '/v1/auth/challenge', { json: [alice.address] }),
      400,
      'invalid_request',
    );
    expectError(
      await rig.request('POST', '/v1/auth/challenge', { json: { wallet: 42 } }),
      400,
      'invalid_request',
    );
    const patched = await rig.request('PATCH', '/v1/account/settings', {
      token,
      json: { timezone: 'Europe/Berlin', is_admin: true },
    });
    expectError(patched, 400, 'unknown_field');
    expectError(
      await rig.request('PATCH', '/v1/account/settings', { token, raw: '{"timezone":', headers: json }),
      400,
      'bad_json',
    );
    expect((await rig.request('GET', '/v1/account', { token })).body.account.timezone).toBeNull();

    // The same refusals on a step-up route come after the proof, which they spend.
    const { proof } = await rig.stepUp(token, alice);
    const r = await rig.request('PUT', '/v1/account/pin-provider', {
      token,
      raw: '{"kind":"remote"',
      headers: { ...json, 'x-sealpost-step-up': proof },
    });
    expectError(r, 400, 'bad_json');
    const again = await rig.request('PUT', '/v1/account/pin-provider', {
      token,
      json: { kind: 'remote' },
      headers: { 'x-sealpost-step-up': proof },
    });
    expect(again.text).toBe('{"error":"step_up_required"}');
    expect((await rig.request('GET', '/v1/account/pin-provider', { token })).body.configured).toBe(false);
  });

  it('unknown routes answer a JSON 404', async () => {
    expectError(await rig.request('GET', '/v1/nothing-here'), 404, 'not_found');
    expectError(await rig.request('POST', '/v1/account/pin-provider'), 404, 'not_found');
  });
});

describe('admin authentication', () => {
  let rig: ApiRig;
  beforeEach(async () => {
    rig = await startRig('sqlite');
  });
  afterEach(async () => {
    await rig.close();
  });

  it('admin routes refuse a missing, wrong or wallet token and change nothing', async () => {
    const alice = newWallet();
    const token = await rig.login(alice);
    await rig.request('POST', '/v1/account', { token });
    const routes: [string, string][] = [
      ['GET', `/v1/admin/accounts/${alice.address}/export`],
      ['DELETE', `/v1/admin/accounts/${alice.address}`],
    ];
    for (const [method, path] of routes) {
      expectError(await rig.request(method, path), 401, 'admin_auth_required');
      expectError(
        await rig.request(method, path, { headers: { authorization: 'Bearer wrong-token-0123456789' } }),
        401,
        'admin_auth_failed',
      );
      expectError(
        await rig.request(method, path, { headers: { authorization: `Bearer ${rig.adminToken}x` } }),
        401,
        'admin_auth_failed',
      );
      expectError(await rig.request(method, path, { token }), 401, 'admin_auth_failed');
    }
    expect((await rig.request('GET', '/v1/account', { token })).status).toBe(200);
    expect(await new AccountsRepo(rig.store.db).listAudit({ target: alice.address })).toHaveLength(1);
    expect((await rig.admin('GET', `/v1/admin/accounts/${alice.address}/export`)).status).toBe(200);
  });

  it('without an admin token file every admin request is refused', async () => {
    const other = await startRig('sqlite', { api: { admin_token_file: 'absent.token' } });
    try {
      const r = await other.admin('DELETE', `/v1/admin/accounts/${newWallet().address}`);
      expectError(r, 401, 'admin_auth_unavailable');
    } finally {
      await other.close();
    }
  });
});

describe('rate limits', () => {
  it('per IP: 429 with retry-after once the window is full', async () => {
    const rig = await startRig('sqlite', { api: { rate_limit_ip_per_min: 5 } });
    try {
      const replies = [];
      for (let i = 0; i < 7; i++) replies.push(await rig.request('GET', `/v1/away/${newWallet().address}`));
      expect(replies.slice(0, 5).every((r) => r.status === 200)).toBe(true);
      expectError(replies[5] as Reply, 429, 'rate_limited');
      expect(Number((replies[5] as Reply).headers.get('retry-after'))).toBeGreaterThan(0);
      rig.clock.now += 60_000;
      expect((await rig.request('GET', `/v1/away/${newWallet().address}`)).status).toBe(200);
    } finally {
      await rig.close();
    }
  });

  it('behind a trusted proxy: counts the X-Forwarded-For client; from anyone else the header is ignored', async () => {
    const proxied = await startRig('sqlite', {
      api: { rate_limit_ip_per_min: 2, trusted_proxies: ['127.0.0.0/8'] },
    });
    try {
      const from = (ip: string) => ({ headers: { 'x-forwarded-for': ip } });
      for (let i = 0; i < 2; i++) {
        expect(
          (await proxied.request('GET', `/v1/away/${newWallet().address}`, from('198.51.100.1'))).status,
        ).toBe(200);
      }
      expectError(
        await proxied.request('GET', `/v1/away/${newWallet().address}`, from('198.51.100.1')),
        429,
        'rate_limited',
      );
      // Another client behind the same proxy has its own window.
      expect(
        (await proxied.request('GET', `/v1/away/${newWallet().address}`, from('198.51.100.2'))).status,
      ).toBe(200);
      // A client cannot hide behind a forged hop: the nearest untrusted address counts.
      expectError(
        await proxied.request('GET', `/v1/away/${newWallet().address}`, from('203.0.113.9, 198.51.100.1')),
        429,
        'rate_limited',
      );
      const keys = await proxied.redisKeys();
      expect(keys.some((k) => k.startsWith(`${proxied.prefix}:rl:ip:198.51.100.1:api:`))).toBe(true);
      expect(keys.some((k) => k.startsWith(`${proxied.prefix}:rl:ip:127.0.0.1:api:`))).toBe(false);
    } finally {
      await proxied.close();
    }
    const direct = await startRig('sqlite', { api: { rate_limit_ip_per_min: 2 } });
    try {
      for (const ip of ['198.51.100.1', '198.51.100.2']) {
        const r = await direct.request('GET', `/v1/away/${newWallet().address}`, {
          headers: { 'x-forwarded-for': ip },
        });
        expect(r.status).toBe(200);
      }
      const third = await direct.request('GET', `/v1/away/${newWallet().address}`, {
        headers: { 'x-forwarded-for': '198.51.100.3' },
      });
      expectError(third, 429, 'rate_limited');
      const keys = await direct.redisKeys();
      expect(keys.some((k) => k.startsWith(`${direct.prefix}:rl:ip:127.0.0.1:api:`))).toBe(true);
      expect(keys.some((k) => k.includes('198.51.100'))).toBe(false);
    } finally {
      await direct.close();
    }
  });

  it('per wallet: counted in Redis under the wallet, separately from other wallets', async () => {
    const rig = await startRig('sqlite', { api: { rate_limit_wallet_per_min: 3 } });
    try {
      const alice = newWallet();
      const bob = newWallet();
      const ta = await rig.login(alice);
      const tb = await rig.login(bob);
      for (let i = 0; i < 3; i++) {
        expect((await rig.request('GET', '/v1/account/pin-provider', { token: ta })).status).toBe(200);
      }
      expectError(await rig.request('GET', '/v1/account/pin-provider', { token: ta }), 429, 'rate_limited');
      expect((await rig.request('GET', '/v1/account/pin-provider', { token: tb })).status).toBe(200);
      const keys = await rig.redisKeys();
      expect(keys.some((k) => k.startsWith(`${rig.prefix}:rl:wallet:${alice.address}:api:`))).toBe(true);
      expect(keys.some((k) => k.startsWith(`${rig.prefix}:rl:ip:127.0.0.1:api:`))).toBe(true);
    } finally {
      await rig.close();
    }
  });
});

describe('startApiServer', () => {
  it('reads the key files named by the config, listens, and closes', async () => {
    const rig = await startRig('sqlite');
    try {
      const logger = createLogger({ level: 'silent' });
      const server = await startApiServer({
        config: rig.config,
        store: rig.store,
        redis: rig.redis,
        logger,
        host: '127.0.0.1',
        port: 0,
      });
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      // Same credential key file, so a token from the rig's API is valid here too.
      const alice = newWallet();
      const token = await rig.login(alice);
      const r = await fetch(`${server.url}/v1/account/pin-provider`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(r.status).toBe(200);
      const admin = await fetch(`${server.url}/v1/admin/accounts/${alice.address}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${rig.adminToken}` },
      });
      expect(admin.status).toBe(404); // admin token read from [api] admin_token_file
      await server.close();
      await expect(fetch(`${server.url}/v1/openapi.json`)).rejects.toThrow();
    } finally {
      await rig.close();
    }
  });
});

describe('OpenAPI document', () => {
  it('documents exactly the registered routes, plugins included, and each documented route exists', async () => {
    const dmarc: FastifyPluginAsync = async (app) => {
      app.get(
        '/v1/admin/dmarc-reports',
        { config: { auth: 'admin', doc: { summary: 'DMARC reports', tags: ['admin'], errors: [401] } } },
        async () => ({ reports: [] }),
      );
    };
    const rig = await startRig('sqlite', { plugins: [dmarc] });
    try {
      const r = await rig.request('GET', '/v1/openapi.json');
      expect(r.status).toBe(200);
      const doc = r.body;
      expect(doc.openapi).toBe('3.1.0');
      const documented: string[] = [];
      // biome-ignore lint/suspicious/noExplicitAny: walking an untyped JSON document.
      for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
        for (const [method, op] of Object.entries(ops)) {
          documented.push(`${method.toUpperCase()} ${path}`);
          expect(op.summary.length).toBeGreaterThan(3);
          expect(Object.keys(op.responses).length).toBeGreaterThan(0);
          for (const status of Object.keys(op.responses)) expect(Number(status)).toBeGreaterThanOrEqual(200);
        }
      }
      // Registered routes, as Fastify's router prints them.
      const registered: string[] = [];
      const tree = rig.app.printRoutes({ commonPrefix: false });
      const stack: string[] = [];
      for (const line of tree.split('\n')) {
        const m = /^([│ ]*)[├└]── (\S+)(?: \(([A-Z, ]+)\))?/.exec(line);
        if (!m) continue;
        stack.length = (m[1] as string).length / 4;
        stack.push(m[2] as string);
        for (const method of m[3]?.split(', ') ?? []) {
          registered.push(`${method} ${stack.join('').replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`);
        }
      }
      expect(documented.sort()).toEqual(registered.sort());
      expect(documented).toContain('GET /v1/admin/dmarc-reports');
      expect(documented).toContain('PUT /v1/account/pin-provider');
      // Routes documented with a session token refuse an anonymous call (401), admin ones too: they exist.
      for (const entry of documented) {
        const [method, path] = entry.split(' ') as [string, string];
        const op = doc.paths[path][method.toLowerCase()];
        const url = path.replace('{wallet}', newWallet().address);
        const res = await rig.request(method, url);
        expect(res.body?.error).not.toBe('not_found');
        if (op.security.length > 0) expect(res.status).toBe(401);
      }
      const put = doc.paths['/v1/account/pin-provider'].put;
      expect(put.parameters.map((p: { name: string }) => p.name)).toContain('x-sealpost-step-up');
      expect(put.requestBody.content['application/json'].schema.oneOf).toHaveLength(3);
      expect(Object.keys(put.responses).sort()).toEqual(
        ['204', '400', '401', '403', '404', '413', '415', '422', '428', '429'].sort(),
      );
      expect(doc.paths['/v1/admin/dmarc-reports'].get.security).toEqual([{ adminToken: [] }]);
    } finally {
      await rig.close();
    }
  });
});
