// Account lifecycle and settings over real HTTP on SQLite and PostgreSQL:
// registration, timezone, do-not-disturb schedule and the anonymous away
// answer, the mail password (step-up), the streamed export (no secrets),
// the audited admin export, and deleting one's own account.
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CredentialSealer, credentialAad } from '../../src/core/crypto/credential-seal.ts';
import type { Keypair } from '../../src/core/keys/keypair-file.ts';
import { AccountsRepo, MessagesRepo } from '../../src/core/store/index.ts';
import { verifyMailPassword } from '../../src/mail/reader-keys/mail-password.ts';
import { type ApiRig, DIALECTS, newWallet, startRig } from '../support/api-rig.ts';

const STEP_UP = 'x-sealpost-step-up';
// Monday 2 March 2026, 23:30 UTC = Tuesday 00:30 in Berlin (CET, UTC+1).
const MONDAY_2330_UTC = Date.UTC(2026, 2, 2, 23, 30);

describe.each(DIALECTS)('account on %s', (dialect) => {
  let rig: ApiRig;
  let alice: Keypair;
  let token: string;

  beforeEach(async () => {
    rig = await startRig(dialect);
    alice = newWallet();
    token = await rig.login(alice);
  });
  afterEach(async () => {
    await rig.close();
  });

  const settings = (body: unknown) => rig.request('PATCH', '/v1/account/settings', { token, json: body });
  const away = async (wallet = alice.address) => (await rig.request('GET', `/v1/away/${wallet}`)).body;

  it('registers once (201, then 200) and shows the account', async () => {
    expect((await rig.request('GET', '/v1/account', { token })).status).toBe(404);
    const first = await rig.request('POST', '/v1/account', { token });
    expect(first.status).toBe(201);
    expect(first.body.account).toMatchObject({
      wallet: alice.address,
      source: 'self',
      timezone: null,
      mail_password_set: false,
      pop3_dele_closes_on_chain: false,
      pin_provider: { configured: false, kind: null },
    });
    expect(first.body.quota).toEqual({ messages: 0, bytes: 0 });
    expect((await rig.request('POST', '/v1/account', { token })).status).toBe(200);
    const audit = await new AccountsRepo(rig.store.db).listAudit({ target: alice.address });
    expect(audit.map((a) => [a.action, a.actor])).toEqual([['account.create', alice.address]]);
  });

  it('with open_registration = false only existing accounts answer', async () => {
    const closed = await startRig(dialect, { api: { open_registration: false } });
    try {
      const t = await closed.login(alice);
      const r = await closed.request('POST', '/v1/account', { token: t });
      expect(r.status).toBe(403);
      expect(r.body.error).toBe('registration_closed');
      await new AccountsRepo(closed.store.db).create(alice.address, { source: 'admin' });
      const ok = await closed.request('POST', '/v1/account', { token: t });
      expect(ok.status).toBe(200);
      expect(ok.body.account.source).toBe('admin');
    } finally {
      await closed.close();
    }
  });

  it('timezone and DND schedule: validated, stored, cleared', async () => {
    expect((await settings({ timezone: 'UTC' })).status).toBe(404);
    await rig.request('POST', '/v1/account', { token });
    const schedule = {
      windows: [{ days: ['mon', 'fri'], start: '22:00', end: '07:00' }],
      exclusions: ['2026-12-24'],
    };
    let r = await settings({ timezone: 'europe/berlin', dnd_schedule: schedule });
    expect(r.status).toBe(200);
    expect(r.body.account.timezone).toBe('Europe/Berlin');
    expect(r.body.away_schedule).toEqual(schedule);

    const bad: [unknown, string][] = [
      [{}, 'invalid_request'],
      [{ timezone: 'Mars/Olympus_Mons' }, 'invalid_timezone'],
      [{ timezone: 5 }, 'invalid_request'],
      [{ dnd_schedule: { windows: [{ days: ['mon'], start: '25:00', end: '07:00' }] } }, 'invalid_request'],
      [
        { dnd_schedule: { windows: [{ days: ['someday'], start: '22:00', end: '07:00' }] } },
        'invalid_request',
      ],
      [
        { dnd_schedule: { windows: [{ days: ['mon'], start: '22:00', end: '07:00', tz: 'x' }] } },
        'unknown_field',
      ],
      [{ dnd_schedule: { windows: [], exclusions: ['2026-02-30'] } }, 'invalid_dnd_schedule'],
      [{ expose_dnd_schedule: 'yes' }, 'invalid_request'],
      [{ pop3_dele_closes_on_chain: 'yes' }, 'invalid_request'],
      [{ pop3_dele_closes_on_chain: null }, 'invalid_request'],
    ];
    for (const [body, code] of bad) {
      r = await settings(body);
      expect([r.status, r.body.error]).toEqual([400, code]);
    }
    r = await rig.request('GET', '/v1/account', { token });
    expect(r.body.account.timezone).toBe('Europe/Berlin');
    expect(r.body.away_schedule).toEqual(schedule);

    r = await settings({ timezone: null, dnd_schedule: null });
    expect(r.body.account.timezone).toBeNull();
    expect(r.body.away_schedule).toBeNull();
  });

  it('pop3_dele_closes_on_chain: off by default, set and cleared, other settings untouched', async () => {
    expect((await settings({ pop3_dele_closes_on_chain: true })).status).toBe(404);
    await rig.request('POST', '/v1/account', { token });
    await settings({ timezone: 'UTC' });
    let r = await settings({ pop3_dele_closes_on_chain: true });
    expect(r.status).toBe(200);
    expect(r.body.account).toMatchObject({ pop3_dele_closes_on_chain: true, timezone: 'UTC' });
    expect((await new AccountsRepo(rig.store.db).get(alice.address))?.pop3DeleClosesOnChain).toBe(true);
    r = await rig.request('GET', '/v1/account', { token });
    expect(r.body.account.pop3_dele_closes_on_chain).toBe(true);
    r = await settings({ timezone: 'Europe/Berlin' });
    expect(r.body.account.pop3_dele_closes_on_chain).toBe(true);
    r = await settings({ pop3_dele_closes_on_chain: false });
    expect(r.body.account).toMatchObject({ pop3_dele_closes_on_chain: false, timezone: 'Europe/Berlin' });
  });

  it('the anonymous away answer: yes/no only, unless the owner opts in', async () => {
    await rig.request('POST', '/v1/account', { token });
    rig.clock.now = MONDAY_2330_UTC;
    expect(await away()).toEqual({ away: false });
    const schedule = { windows: [{ days: ['mon'], start: '22:00', end: '07:00' }] };
    await settings({ timezone: 'Europe/Berlin', dnd_schedule: schedule });
    // Tuesday 00:30 in Berlin lies in Monday's overnight window.
    expect(await away()).toEqual({ away: true });
    rig.clock.now = Date.UTC(2026, 2, 3, 6, 30); // Tuesday 07:30 Berlin: over
    expect(await away()).toEqual({ away: false });
    rig.clock.now = Date.UTC(2026, 2, 2, 20, 59); // Monday 21:59 Berlin: not yet
    expect(await away()).toEqual({ away: false });
    rig.clock.now = MONDAY_2330_UTC;
    await settings({ timezone: 'America/New_York' }); // Monday 18:30 there
    expect(await away()).toEqual({ away: false });
    await settings({ timezone: 'Europe/Berlin', dnd_schedule: { ...schedule, exclusions: ['2026-03-02'] } });
    expect(await away()).toEqual({ away: false });
    await settings({ dnd_schedule: schedule, expose_dnd_schedule: true });
    expect(await away()).toEqual({ away: true, timezone: 'Europe/Berlin', dnd_schedule: schedule });
    expect(await away(newWallet().address)).toEqual({ away: false });
    const r = await rig.request('GET', '/v1/away/not-a-wallet');
    expect(r.status).toBe(400);
  });

  it('mail password: step-up, policy, sealed scrypt hash that verifies', async () => {
    await rig.request('POST', '/v1/account', { token });
    const put = (password: unknown, proof?: string) =>
      rig.request('PUT', '/v1/account/mail-password', {
        token,
        json: { password },
        headers: proof ? { [STEP_UP]: proof } : {},
      });
    expect((await put('correct horse battery')).text).toBe('{"error":"step_up_required"}');
    let r = await put('short', (await rig.stepUp(token, alice)).proof);
    expect([r.status, r.body.error]).toEqual([400, 'invalid_password']);
    r = await put('correct horse battery', (await rig.stepUp(token, alice)).proof);
    expect(r.status).toBe(204);
    const accounts = new AccountsRepo(rig.store.db);
    const row = await accounts.get(alice.address);
    expect(row?.mailPasswordSealed).toMatch(/^v1:/);
    const sealer = new CredentialSealer(rig.credentialKey);
    const phc = sealer.open(row?.mailPasswordSealed ?? '', credentialAad('mail-password', alice.address));
    expect(phc).toMatch(/^\$scrypt\$ln=15,r=8,p=1\$/);
    expect(phc).not.toContain('correct horse');
    expect(await verifyMailPassword({ accounts, sealer }, alice.address, 'correct horse battery')).toBe(true);
    expect(await verifyMailPassword({ accounts, sealer }, alice.address, 'correct horse batter')).toBe(false);
    expect((await rig.request('GET', '/v1/account', { token })).body.account.mail_password_set).toBe(true);
  });

  it('export: streamed JSON with every mailbox and message pointer, and no secrets', async () => {
    await rig.request('POST', '/v1/account', { token });
    await settings({ timezone: 'Europe/Berlin', dnd_schedule: { windows: [], exclusions: ['2026-12-24'] } });
    await rig.request('PUT', '/v1/account/mail-password', {
      token,
      json: { password: 'hunter2-hunter2' },
      headers: { [STEP_UP]: (await rig.stepUp(token, alice)).proof },
    });
    await rig.request('PUT', '/v1/account/pin-provider', {
      token,
      json: { kind: 's3_bucket', access_key: 'AKIA-EXPORT', secret_key: 'SECRET-EXPORT', bucket: 'b' },
      headers: { [STEP_UP]: (await rig.stepUp(token, alice)).proof },
    });
    const messages = new MessagesRepo(rig.store.db);
    const count = 620; // more than one page of the export's keyset paging
    let bytes = 0;
    for (let i = 0; i < count; i++) {
      const size = 1000 + i;
      bytes += size;
      await messages.storeDelivered({
        id: `MSG${String(i).padStart(5, '0')}.1`,
        wallet: alice.address,
        blobKey: `sealed/${i}`,
        size,
        receivedAt: 1_770_000_000_000 + i,
        cid: i % 2 === 0 ? `bafkreitest${i}` : null,
        pinnedByOperator: i % 2 === 0,
        chainIndex: i % 2 === 0 ? String(i) : null,
        emailAddress: i % 2 === 0 ? `Email${i}` : null,
        txSignature: i % 2 === 0 ? `sig${i}` : null,
        publishedByUs: i % 2 === 0,
        wraps: [{ readerId: 'imap', wrap: `WRAP-SECRET-${i}` }],
      });
    }
    await messages.ensureMailbox(alice.address, 'Archive');
    // Someone else's mail never appears.
    await messages.storeDelivered({
      id: 'OTHER.1',
      wallet: newWallet().address,
      blobKey: 'sealed/other',
      size: 5,
      receivedAt: 1,
      cid: null,
      pinnedByOperator: false,
      chainIndex: null,
      emailAddress: null,
      txSignature: null,
      publishedByUs: false,
    });

    const res = await fetch(`${rig.url}/v1/account/export`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    expect(res.headers.get('content-length')).toBeNull();
    const text = await res.text();
    const doc = JSON.parse(text);
    expect(doc.format).toBe('sealpost-account-export');
    expect(doc.version).toBe(1);
    expect(doc.account).toMatchObject({
      wallet: alice.address,
      timezone: 'Europe/Berlin',
      mail_password_set: true,
      pin_provider: { configured: true, kind: 's3_bucket' },
    });
    expect(doc.away_schedule).toEqual({ windows: [], exclusions: ['2026-12-24'] });
    expect(doc.quota).toEqual({ messages: count, bytes });
    expect(doc.mailboxes.map((m: { name: string }) => m.name)).toEqual(['Archive', 'INBOX']);
    const inbox = doc.mailboxes[1];
    expect(inbox.messages).toHaveLength(count);
    expect(inbox.messages.map((m: { uid: number }) => m.uid)).toEqual(
      Array.from({ length: count }, (_, i) => i + 1),
    );
    expect(inbox.messages[0]).toMatchObject({ blob_key: 'sealed/0', cid: 'bafkreitest0', size: 1000 });
    expect(inbox.messages[0].chain).toEqual({ index: '0', email_address: 'Email0', tx_signature: 'sig0' });
    expect(inbox.messages[1]).toMatchObject({ blob_key: 'sealed/1', cid: null, chain: null });
    for (const secret of [
      'SECRET-EXPORT',
      'AKIA-EXPORT',
      'hunter2',
      'scrypt',
      'WRAP-SECRET',
      'v1:',
      'OTHER.1',
      ':rl:',
      ':lease:',
    ]) {
      expect(text).not.toContain(secret);
    }
  });

  it('a store failure in mid-stream never yields a document that parses', async () => {
    await rig.request('POST', '/v1/account', { token });
    await sql`alter table mailboxes rename to mailboxes_away`.execute(rig.store.db);
    try {
      const res = await fetch(`${rig.url}/v1/account/export`, {
        headers: { authorization: `Bearer ${token}` },
      });
      // The head went out with the 200; the failure cuts the chunked body short.
      expect(res.status).toBe(200);
      await expect(res.text()).rejects.toThrow();
    } finally {
      await sql`alter table mailboxes_away rename to mailboxes`.execute(rig.store.db);
    }
  });

  it('admin export: the same document, audited as a read; 404 audited as a failure', async () => {
    await rig.request('POST', '/v1/account', { token });
    const mine = JSON.parse((await rig.request('GET', '/v1/account/export', { token })).text);
    const r = await rig.admin('GET', `/v1/admin/accounts/${alice.address}/export`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-disposition')).toContain(`sealpost-export-${alice.address}.json`);
    const { exported_at: _a, ...adminDoc } = r.body;
    const { exported_at: _b, ...ownDoc } = mine;
    expect(adminDoc).toEqual(ownDoc);
    const ghost = newWallet().address;
    expect((await rig.admin('GET', `/v1/admin/accounts/${ghost}/export`)).status).toBe(404);
    const repo = new AccountsRepo(rig.store.db);
    const reads = (await repo.listAudit({ target: alice.address })).filter(
      (a) => a.action === 'account.export',
    );
    expect(reads.map((a) => [a.actor, a.outcome])).toEqual([['admin', 'success']]);
    const missed = await repo.listAudit({ target: ghost });
    expect(missed.map((a) => [a.action, a.outcome])).toEqual([['account.export', 'failure']]);
    expect((await rig.admin('GET', '/v1/admin/accounts/0OIl/export')).status).toBe(400);
  });

  it('deleting one’s own account needs step-up and sweeps it', async () => {
    await rig.request('POST', '/v1/account', { token });
    await new MessagesRepo(rig.store.db).storeDelivered({
      id: `M${randomBytes(4).toString('hex')}.1`,
      wallet: alice.address,
      blobKey: 'k',
      size: 1,
      receivedAt: 1,
      cid: null,
      pinnedByOperator: false,
      chainIndex: null,
      emailAddress: null,
      txSignature: null,
      publishedByUs: false,
    });
    expect((await rig.request('DELETE', '/v1/account', { token })).text).toBe('{"error":"step_up_required"}');
    const r = await rig.request('DELETE', '/v1/account', {
      token,
      headers: { [STEP_UP]: (await rig.stepUp(token, alice)).proof },
    });
    expect(r.status).toBe(204);
    // Tokens from before the deletion are dead; a fresh login finds no account.
    const stale = await rig.request('GET', '/v1/account', { token });
    expect([stale.status, (stale.body as { error: string }).error]).toEqual([401, 'session_revoked']);
    rig.clock.now += 1;
    const fresh = await rig.login(alice);
    expect((await rig.request('GET', '/v1/account', { token: fresh })).status).toBe(404);
    expect(await new MessagesRepo(rig.store.db).listForWallet(alice.address)).toEqual([]);
    const audit = await new AccountsRepo(rig.store.db).listAudit({ target: alice.address });
    expect(audit[0]).toMatchObject({ action: 'account.delete', actor: alice.address, outcome: 'success' });
    const again = await rig.request('DELETE', '/v1/account', {
      token: fresh,
      headers: { [STEP_UP]: (await rig.stepUp(fresh, alice)).proof },
    });
    expect(again.status).toBe(404);
  });
});
