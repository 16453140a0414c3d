// Recipient pin providers over real sockets: hosted_jwt against the
// Pinata-style double, s3_bucket against the SigV4-checking S3 double,
// remote against a real pin daemon; plus every fault the issue lists.
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type Pind, startPind } from '../../pinning/pind/server.ts';
import { createRecipientPinner } from '../../pinning/recipient.ts';
import type { PinProviderConfig } from '../../src/contracts/pin-provider.ts';
import { PinProviderError } from '../../src/contracts/pinner.ts';
import { computeCid } from '../../src/mail/cid.ts';
import { type HostedPinDouble, startHostedPinDouble } from '../support/doubles/hosted-pin-double.ts';
import { type S3Double, startS3Double } from '../support/doubles/s3-double.ts';
import { tempDir } from '../support/temp-dir.ts';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

function pattern(length: number, seed = 0): Uint8Array {
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++) out[i] = (i * 13 + seed) % 256;
  return out;
}

/** A logger whose lines the test can read. */
function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}

const silent = pino({ level: 'silent' });

async function failure(p: Promise<unknown>): Promise<PinProviderError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PinProviderError);
  return err as PinProviderError;
}

const BODIES = [pattern(1234, 1), pattern(300_000, 2), pattern(1_100_000, 3)];

describe('recipient provider: hosted_jwt', () => {
  async function hosted(): Promise<HostedPinDouble> {
    const d = await startHostedPinDouble({ jwt: 'eyJ.recipient.jwt' });
    closers.push(() => d.close());
    return d;
  }
  const cfg = (d: HostedPinDouble, jwt = 'eyJ.recipient.jwt'): PinProviderConfig => ({
    kind: 'hosted_jwt',
    jwt,
    gateway: 'https://recipient.gateway.example',
    api_url: d.url,
  });

  it('uploads with the JWT, asking for CIDv1 on the public network', async () => {
    const d = await hosted();
    const pinner = createRecipientPinner(cfg(d), { logger: silent });
    expect(pinner.kind).toBe('hosted_jwt');
    for (const bytes of BODIES) {
      const expectedCid = await computeCid(bytes);
      await expect(pinner.pin(bytes, { expectedCid, name: 'msg-1' })).resolves.toEqual({
        cid: expectedCid,
        size: bytes.byteLength,
      });
    }
    expect(d.uploads).toHaveLength(3);
    for (const u of d.uploads) expect(u).toMatchObject({ name: 'msg-1', network: 'public', cidVersion: 1 });
    expect(Buffer.from(d.uploads[2]?.bytes ?? []).equals(Buffer.from(BODIES[2] as Uint8Array))).toBe(true);
  });

  it('bad or revoked JWT: 401, permanent, and the JWT is not in the error', async () => {
    const d = await hosted();
    const bytes = pattern(100);
    const expectedCid = await computeCid(bytes);
    const bad = await failure(
      createRecipientPinner(cfg(d, 'eyJ.wrong'), { logger: silent }).pin(bytes, { expectedCid }),
    );
    expect(bad.status).toBe(401);
    expect(bad.permanent).toBe(true);
    expect(bad.message).toContain('INVALID_CREDENTIALS');
    expect(bad.message).not.toContain('eyJ');

    const pinner = createRecipientPinner(cfg(d), { logger: silent });
    await pinner.pin(bytes, { expectedCid });
    d.jwt = 'eyJ.rotated'; // the recipient revoked the key at the service
    const revoked = await failure(pinner.pin(bytes, { expectedCid }));
    expect(revoked.status).toBe(401);
    expect(d.uploads).toHaveLength(1);
  });

  it('service errors, quota full and a hanging service each give a clear error', async () => {
    const d = await hosted();
    const bytes = pattern(100);
    const expectedCid = await computeCid(bytes);
    const pinner = createRecipientPinner(cfg(d), { logger: silent, timeoutMs: 400 });

    d.mode = 'error';
    const broken = await failure(pinner.pin(bytes, { expectedCid }));
    expect(broken.status).toBe(500);
    expect(broken.permanent).toBe(false);

    d.mode = 'quota';
    const full = await failure(pinner.pin(bytes, { expectedCid }));
    expect(full.status).toBe(403);
    expect(full.message).toContain('PAYMENT_REQUIRED');
    expect(full.message).toContain('storage quota reached');

    d.mode = 'hang';
    const started = Date.now();
    const hung = await failure(pinner.pin(bytes, { expectedCid }));
    expect(hung.message).toBe('hosted_jwt: no answer within 400 ms');
    expect(hung.status).toBeNull();
    expect(Date.now() - started).toBeLessThan(5000);
    expect(d.uploads).toHaveLength(0);
  });

  it("honours the caller's signal: its deadline is a PinProviderError, a plain abort passes through", async () => {
    const d = await hosted();
    d.mode = 'hang';
    const bytes = pattern(100);
    const expectedCid = await computeCid(bytes);
    const pinner = createRecipientPinner(cfg(d), { logger: silent, timeoutMs: 30_000 });
    const late = await failure(pinner.pin(bytes, { expectedCid, signal: AbortSignal.timeout(200) }));
    expect(late.message).toBe("hosted_jwt: no answer within the caller's deadline");
    const controller = new AbortController();
    const cancelled = pinner.pin(bytes, { expectedCid, signal: controller.signal }).catch((e: unknown) => e);
    setTimeout(() => controller.abort(), 100);
    const err = await cancelled;
    expect(err).not.toBeInstanceOf(PinProviderError);
    expect((err as Error).name).toBe('AbortError');
  });

  it('logs and returns an error when the service reports a different CID', async () => {
    const d = await hosted();
    d.mode = 'wrong-cid';
    const { logger, lines } = capturingLogger();
    const bytes = pattern(100);
    const expectedCid = await computeCid(bytes);
    const err = await failure(createRecipientPinner(cfg(d), { logger }).pin(bytes, { expectedCid }));
    expect(err.message).toContain(`expected ${expectedCid}`);
    const line = lines.find((l) => l.level === 50);
    expect(line).toMatchObject({
      provider: 'hosted_jwt',
      expected_cid: expectedCid,
      msg: 'pin provider reported a CID different from the locally computed one',
    });
    expect(line?.provider_cid).not.toBe(expectedCid);
  });
});

describe('recipient provider: s3_bucket', () => {
  async function s3(): Promise<S3Double> {
    const d = await startS3Double({
      accessKey: 'AKIDRECIPIENT',
      secretKey: 'recipient-secret',
      buckets: ['mailpins'],
    });
    closers.push(() => d.close());
    return d;
  }
  const cfg = (d: S3Double, over: Partial<Record<string, string>> = {}): PinProviderConfig =>
    ({
      kind: 's3_bucket',
      access_key: 'AKIDRECIPIENT',
      secret_key: 'recipient-secret',
      bucket: 'mailpins',
      endpoint: d.url,
      ...over,
    }) as PinProviderConfig;

  it('puts the object under its CID and reads the CID from x-amz-meta-cid', async () => {
    const d = await s3();
    const pinner = createRecipientPinner(cfg(d), { logger: silent });
    expect(pinner.kind).toBe('s3_bucket');
    for (const bytes of BODIES) {
      const expectedCid = await computeCid(bytes);
      await expect(pinner.pin(bytes, { expectedCid })).resolves.toEqual({
        cid: expectedCid,
        size: bytes.byteLength,
      });
      const stored = d.buckets.get('mailpins')?.get(expectedCid);
      expect(stored?.cid).toBe(expectedCid);
      expect(Buffer.from(stored?.bytes ?? []).equals(Buffer.from(bytes))).toBe(true);
    }
    expect(d.log.every((l) => l.startsWith('PUT '))).toBe(true);
  });

  it('falls back to HeadObject and normalizes a CIDv0 answer', async () => {
    const d = await s3();
    d.cidOnPut = false;
    d.cidForm = 'v0-when-possible';
    const bytes = BODIES[2] as Uint8Array;
    const expectedCid = await computeCid(bytes);
    const result = await createRecipientPinner(cfg(d), { logger: silent }).pin(bytes, { expectedCid });
    expect(result.cid).toBe(expectedCid);
    expect(d.buckets.get('mailpins')?.get(expectedCid)?.cid).toMatch(/^Qm/);
    expect(d.log).toEqual([`PUT /mailpins/${expectedCid}`, `HEAD /mailpins/${expectedCid}`]);
  });

  it('revoked secret, unknown key, unknown bucket and a full bucket are refused and store nothing', async () => {
    const d = await s3();
    const bytes = pattern(5000);
    const expectedCid = await computeCid(bytes);
    const pin = (over: Partial<Record<string, string>> = {}) =>
      failure(createRecipientPinner(cfg(d, over), { logger: silent }).pin(bytes, { expectedCid }));

    const badSecret = await pin({ secret_key: 'not-the-secret' });
    expect(badSecret.status).toBe(403);
    expect(badSecret.message).toContain('SignatureDoesNotMatch');
    expect(badSecret.message).not.toContain('not-the-secret');

    const badKey = await pin({ access_key: 'AKIDUNKNOWN' });
    expect(badKey.status).toBe(403);
    expect(badKey.message).toContain('InvalidAccessKeyId');

    const noBucket = await pin({ bucket: 'someone-elses' });
    expect(noBucket.status).toBe(404);
    expect(noBucket.message).toContain('NoSuchBucket');

    d.secretKey = 'rotated-secret'; // the recipient revoked the old key pair
    const revoked = await pin();
    expect(revoked.message).toContain('SignatureDoesNotMatch');

    d.secretKey = 'recipient-secret';
    d.mode = 'full';
    const full = await pin();
    expect(full.status).toBe(403);
    expect(full.message).toContain('QuotaExceeded');
    expect(d.buckets.get('mailpins')?.size).toBe(0);
  });

  it('times out on a bucket that never answers', async () => {
    const d = await s3();
    d.mode = 'hang';
    const bytes = pattern(100);
    const started = Date.now();
    const err = await failure(
      createRecipientPinner(cfg(d), { logger: silent, timeoutMs: 400 }).pin(bytes, {
        expectedCid: await computeCid(bytes),
      }),
    );
    expect(err.message).toBe('s3_bucket: no answer within 400 ms');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('the double rejects unsigned requests like S3', async () => {
    const d = await s3();
    const res = await fetch(`${d.url}/mailpins/x`, { method: 'PUT', body: 'x' });
    expect(res.status).toBe(403);
    expect(await res.text()).toContain('<Code>AccessDenied</Code>');
  });
});

describe('recipient provider: remote (a real pind)', () => {
  async function remote(authToken?: string): Promise<Pind> {
    const p = await startPind({
      dataDir: tempDir('sealpost-pind-'),
      pin: { host: '127.0.0.1', port: 0 },
      authToken,
      maxPinBytes: 2 * 1024 * 1024,
      logger: silent,
    });
    closers.push(() => p.close());
    return p;
  }

  it('pins to the recipient daemon with its bearer token', async () => {
    const p = await remote('recipient-token');
    const pinner = createRecipientPinner(
      { kind: 'remote', endpoint: p.pinUrl, auth_token: 'recipient-token' },
      { logger: silent },
    );
    expect(pinner.kind).toBe('remote');
    for (const bytes of BODIES) {
      const expectedCid = await computeCid(bytes);
      await expect(pinner.pin(bytes, { expectedCid })).resolves.toEqual({
        cid: expectedCid,
        size: bytes.byteLength,
      });
      const back = await fetch(`${p.gatewayUrl}/ipfs/${expectedCid}`);
      expect(Buffer.from(await back.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true);
    }
  });

  it('missing or wrong token, over-cap bodies and a dead endpoint fail clearly', async () => {
    const p = await remote('recipient-token');
    const bytes = pattern(100);
    const expectedCid = await computeCid(bytes);
    const none = await failure(
      createRecipientPinner({ kind: 'remote', endpoint: p.pinUrl }, { logger: silent }).pin(bytes, {
        expectedCid,
      }),
    );
    expect(none.status).toBe(401);
    const wrong = await failure(
      createRecipientPinner(
        { kind: 'remote', endpoint: p.pinUrl, auth_token: 'old' },
        { logger: silent },
      ).pin(bytes, {
        expectedCid,
      }),
    );
    expect(wrong.status).toBe(401);

    const big = pattern(2 * 1024 * 1024 + 1);
    const ok = createRecipientPinner(
      { kind: 'remote', endpoint: p.pinUrl, auth_token: 'recipient-token' },
      { logger: silent },
    );
    const over = await failure(ok.pin(big, { expectedCid: await computeCid(big) }));
    expect(over.status).toBe(413);

    const url = p.pinUrl;
    await p.close();
    const dead = await failure(
      createRecipientPinner(
        { kind: 'remote', endpoint: url, auth_token: 'recipient-token' },
        { logger: silent },
      ).pin(bytes, {
        expectedCid,
      }),
    );
    expect(dead.status).toBeNull();
    expect(dead.message).toContain('request failed');
  });

  it('rejects an expectedCid that is not a CID before any request', async () => {
    const p = await remote();
    const pinner = createRecipientPinner({ kind: 'remote', endpoint: p.pinUrl }, { logger: silent });
    await expect(pinner.pin(pattern(10), { expectedCid: 'b3:abc' })).rejects.toThrow(/not a valid CID/);
  });
});
