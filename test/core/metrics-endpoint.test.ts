// GET /metrics over real HTTP: the account API's route (admin token) and a
// worker's own metrics listener, after real mail went through the MX and the
// pipeline on devnet. The figures must match what happened: replies by
// code, stage latencies, SendMail submit latency, deliveries, queue depths,
// pin failures of the operator pin and of a recipient's provider.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Keypair } from '@solana/web3.js';
import nodemailer from 'nodemailer';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { AccountsRepo } from '../../src/core/store/index.ts';
import { sealPinProvider } from '../../src/mail/provider-credentials.ts';
import { startServe } from '../../src/run/serve/serve.ts';
import { RIG_DOMAIN, type ServeRig, startServeRig } from '../support/serve-rig.ts';

const TOKEN = randomBytes(24).toString('hex');

/** Parses the text exposition into `name{labels}` → value (labels as written, sorted by prom-client). */
function parseExposition(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

async function scrape(url: string, token = TOKEN): Promise<Map<string, number>> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  return parseExposition(await res.text());
}

async function send(rig: ServeRig, to: string, subject: string): Promise<void> {
  await nodemailer
    .createTransport({ host: '127.0.0.1', port: rig.mxPort, secure: false, ignoreTLS: true })
    .sendMail({
      envelope: { from: 'metrics@remote.example', to: [to] },
      raw: `From: metrics@remote.example\r\nSubject: ${subject}\r\n\r\nbody of ${subject}\r\n`,
    });
}

async function until<T>(probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(200);
  }
}

const address = (k: Keypair) => `${k.publicKey.toBase58()}@${RIG_DOMAIN}`;

describe('metrics endpoint', () => {
  it('counts replies, stages, SendMail latency and deliveries; admin token required', async () => {
    const rig = await startServeRig({ adminToken: TOKEN });
    const url = `${rig.serving.apiUrl}/metrics`;
    const wallet = await rig.mail.mailbox();
    for (let i = 0; i < 3; i++) await send(rig, address(wallet), `m-${i}`);
    // An unknown wallet is refused at RCPT with 550.
    const stranger = `${randomBytes(32).toString('hex').slice(0, 44)}@${RIG_DOMAIN}`;
    await expect(send(rig, stranger, 'nobody')).rejects.toThrow(/550|553/);

    const missing = await fetch(url);
    expect(missing.status).toBe(401);
    expect(((await missing.json()) as { error: string }).error).toBe('admin_auth_required');
    const wrong = await fetch(url, { headers: { authorization: 'Bearer not-the-admin-token' } });
    expect(wrong.status).toBe(401);

    const m = await until(async () => {
      const s = await scrape(url);
      return s.get('sealpost_deliveries_total{outcome="delivered"}') === 3 ? s : undefined;
    });
    expect(m.get('sealpost_smtp_replies_total{phase="data",code="250"}')).toBe(3);
    expect(m.get('sealpost_smtp_replies_total{phase="rcpt",code="250"}')).toBe(3);
    const refusedRcpt = [...m.entries()].filter(([k]) => /phase="rcpt",code="55\d"/.test(k));
    expect(refusedRcpt.reduce((n, [, v]) => n + v, 0)).toBe(1);
    expect(m.get('sealpost_smtp_replies_total{phase="connect",code="220"}')).toBe(4);
    expect(m.get('sealpost_mx_accept_seconds_count')).toBe(3);
    for (const stage of ['resolve', 'seal', 'pin', 'submit', 'store'])
      expect(m.get(`sealpost_pipeline_stage_seconds_count{stage="${stage}"}`)).toBe(3);
    expect(m.get('sealpost_chain_submit_seconds_count')).toBe(3);
    expect(m.get('sealpost_chain_submit_seconds_sum')).toBeGreaterThan(0);
    // Queue depths read from Redis: all delivered, nothing waiting.
    expect(m.get('sealpost_queue_jobs{queue="deliver",state="wait"}')).toBe(0);
    expect(m.get('sealpost_queue_jobs{queue="deliver",state="active"}')).toBe(0);
    expect(m.has('sealpost_queue_jobs{queue="spooler-deliver",state="failed"}')).toBe(true);
    // The cost guard's registry and the process figures ride along.
    expect(m.get('sealpost_authority_balance_lamports')).toBeGreaterThan(0);
    expect(m.get('sealpost_process_resident_memory_bytes')).toBeGreaterThan(0);
  }, 120_000);

  it('counts operator and recipient pin failures and shows the retries as queue depth', async () => {
    // The operator pin points at a port nothing listens on: every pin stage fails and is retried.
    const rig = await startServeRig({ adminToken: TOKEN, kuboUrl: 'http://127.0.0.1:9' });
    const wallet = await rig.mail.mailbox();
    await send(rig, address(wallet), 'stuck-1');
    await send(rig, address(wallet), 'stuck-2');
    const url = `${rig.serving.apiUrl}/metrics`;
    const m = await until(async () => {
      const s = await scrape(url);
      return (s.get('sealpost_pin_failures_total{pin="operator"}') ?? 0) >= 2 &&
        (s.get('sealpost_queue_jobs{queue="deliver",state="delayed"}') ?? 0) +
          (s.get('sealpost_queue_jobs{queue="deliver",state="wait"}') ?? 0) >=
          1
        ? s
        : undefined;
    });
    expect(m.get('sealpost_pipeline_stage_failures_total{stage="pin"}')).toBeGreaterThanOrEqual(2);
    expect(m.get('sealpost_deliveries_total{outcome="delivered"}') ?? 0).toBe(0);
    expect(m.get('sealpost_pipeline_stage_seconds_count{stage="seal"}')).toBe(2);
    expect(m.has('sealpost_chain_submit_seconds_count')).toBe(true);
    expect(m.get('sealpost_chain_submit_seconds_count')).toBe(0);
  }, 120_000);

  it('counts a failing recipient provider; a worker serves /metrics and /health on its own listener', async () => {
    const rig = await startServeRig({ adminToken: TOKEN });
    const wallet = await rig.mail.mailbox();
    const accounts = new AccountsRepo(rig.serving.store.db);
    const w = wallet.publicKey.toBase58();
    await accounts.create(w, { source: 'self' });
    // The recipient's own pin daemon is down (nothing listens on port 9): best effort, dropped.
    await accounts.setPinProvider(w, {
      kind: 'remote',
      sealedCredentials: sealPinProvider(rig.credentialKey, w, {
        kind: 'remote',
        endpoint: 'http://127.0.0.1:9',
      }),
    });
    // A second, workers-only process shape next to the rig's serve: its own metrics listener.
    const worker = await startServe({
      config: rig.config,
      logger: pino({ level: 'silent' }),
      components: { smtp: false, workers: true, api: false },
      metricsListen: { host: '127.0.0.1', port: 0 },
    });
    try {
      await send(rig, address(wallet), 'provider-down');
      const total = async () => {
        const a = await scrape(`${rig.serving.apiUrl}/metrics`);
        const b = await scrape(`${worker.metricsUrl}/metrics`);
        const sum = (key: string) => (a.get(key) ?? 0) + (b.get(key) ?? 0);
        return { a, b, sum };
      };
      const { b, sum } = await until(async () => {
        const t = await total();
        return t.sum('sealpost_pin_failures_total{pin="recipient"}') >= 1 ? t : undefined;
      });
      expect(sum('sealpost_deliveries_total{outcome="delivered"}')).toBe(1);
      expect(sum('sealpost_pin_failures_total{pin="operator"}')).toBe(0);
      expect(b.has('sealpost_queue_jobs{queue="deliver",state="wait"}')).toBe(true);

      const health = await fetch(`${worker.metricsUrl}/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'ok' });
      const refused = await fetch(`${worker.metricsUrl}/metrics`);
      expect(refused.status).toBe(401);
      expect(((await refused.json()) as { error: string }).error).toBe('admin_auth_required');
      const nowhere = await fetch(`${worker.metricsUrl}/other`);
      expect(nowhere.status).toBe(404);
    } finally {
      await worker.close();
    }
  }, 120_000);
});
