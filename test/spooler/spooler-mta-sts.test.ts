// MTA-STS (RFC 8461) over real HTTPS and real TLS: an HTTPS policy host
// double behind `mta-sts.<domain>`, remote MX hosts with certificates from a
// test CA the spooler trusts, and each case's outcome named — delivered,
// deferred, reported — with the TLS-RPT result type it records. Also the
// durable Redis cache (survives a restart, used when the host is down),
// its refresh before expiry, DANE's precedence and the relay exemption.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SpoolerConfig } from '../../src/core/config/types.ts';
import type { CertificatePair } from '../../src/core/tls/self-signed.ts';
import { renderMtaStsPolicy } from '../../src/edge/domaind/mta-sts.ts';
import type { DnsZone } from '../support/doubles/dns-server.ts';
import { type MtaStsHost, startMtaStsHost } from '../support/doubles/mta-sts-host.ts';
import { type RemoteMx, startRemoteMx } from '../support/doubles/remote-mx.ts';
import { eventually, type SpoolerRig, startSpoolerRig } from '../support/spooler-rig.ts';
import { expiredLeaf, leafFrom, selfSigned, spkiSha256, testCa } from '../support/test-pki.ts';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

let ca: CertificatePair;
beforeAll(async () => {
  ca = await testCa();
});

async function remote(opts: Parameters<typeof startRemoteMx>[0]): Promise<RemoteMx> {
  const mx = await startRemoteMx(opts);
  cleanup.push(() => mx.close());
  return mx;
}

async function policyHost(): Promise<MtaStsHost> {
  const host = await startMtaStsHost(await leafFrom(ca, ['mta-sts.default.test']));
  cleanup.push(() => host.close());
  return host;
}

const TLSRPT = { enabled: true, org_name: 'out.sealpost.test', contact: 'postmaster@sealpost.test' };

async function rig(opts: {
  port: number;
  host: MtaStsHost;
  zone: DnsZone;
  config?: Partial<SpoolerConfig>;
  trustCa?: boolean;
}): Promise<SpoolerRig> {
  const r = await startSpoolerRig({
    config: { smtp_port: opts.port, retry_schedule_secs: [60], tlsrpt: TLSRPT, ...opts.config },
    zone: opts.zone,
    withStore: true,
    extra: {
      extraCa: opts.trustCa === false ? [] : [ca.cert],
      mtaStsPort: opts.host.port,
      mtaStsTimeoutMs: 600,
    },
  });
  cleanup.push(() => r.close());
  return r;
}

/** MX `mx.<domain>` at `ip`, the policy host name, and the discovery record. */
function stsZone(domain: string, ip: string, id = 'v1'): DnsZone {
  return {
    [domain]: { MX: [{ preference: 10, exchange: `mx.${domain}` }] },
    [`mx.${domain}`]: { A: [ip] },
    [`mta-sts.${domain}`]: { A: ['127.0.0.1'] },
    [`_mta-sts.${domain}`]: { TXT: [`v=STSv1; id=${id}`] },
  };
}

function policy(mode: 'enforce' | 'testing', mx: string[], maxAgeSecs = 86_400): string {
  return renderMtaStsPolicy({ mode, mx, maxAgeSecs });
}

async function tlsrptRows(r: SpoolerRig) {
  await r.spooler.settled();
  const rows = await r.store?.db.selectFrom('tlsrpt_pending').selectAll().orderBy('recorded_at').execute();
  return (rows ?? []).map((row) => ({
    domain: row.policy_domain,
    result: row.result_type,
    ...JSON.parse(row.detail ?? '{}'),
  }));
}

async function sendOnce(r: SpoolerRig, domain: string) {
  const msgid = await r.send({ from: 'ann@sealpost.test', to: [`rcpt@${domain}`] });
  const data = await r.jobWhere(msgid, domain, (d) => d.attempts >= 1);
  return data.final[`rcpt@${domain}`]?.state ?? 'deferred';
}

describe('MTA-STS enforce', () => {
  it('delivered: the MX matches the policy and presents a WebPKI-valid certificate for its name', async () => {
    const leaf = await leafFrom(ca, ['mx.sts.test']);
    const mx = await remote({ host: '127.0.0.60', tls: { key: leaf.key, cert: leaf.chain } });
    const host = await policyHost();
    host.serve(
      'sts.test',
      { kind: 'policy', text: policy('enforce', ['mx.sts.test']) },
      await leafFrom(ca, ['mta-sts.sts.test']),
    );
    const r = await rig({ port: mx.port, host, zone: stsZone('sts.test', '127.0.0.60') });
    expect(await sendOnce(r, 'sts.test')).toBe('delivered');
    expect(mx.accepted[0]?.secure).toBe(true);
    expect(host.requests).toEqual(['sts.test /.well-known/mta-sts.txt']);
    const [row] = await tlsrptRows(r);
    expect(row).toMatchObject({
      result: 'success',
      policyType: 'sts',
      policyString: ['version: STSv1', 'mode: enforce', 'mx: mx.sts.test', 'max_age: 86400'],
      mxHost: ['mx.sts.test'],
    });
  });

  it('wildcard patterns match exactly one label', async () => {
    const leaf = await leafFrom(ca, ['a.mail.wild.test']);
    const mx = await remote({ host: '127.0.0.61', tls: { key: leaf.key, cert: leaf.chain } });
    const host = await policyHost();
    host.serve(
      'wild.test',
      { kind: 'policy', text: policy('enforce', ['*.mail.wild.test']) },
      await leafFrom(ca, ['mta-sts.wild.test']),
    );
    const zone: DnsZone = {
      ...stsZone('wild.test', '127.0.0.61'),
      'wild.test': {
        MX: [
          { preference: 5, exchange: 'x.a.mail.wild.test' },
          { preference: 10, exchange: 'a.mail.wild.test' },
        ],
      },
      'x.a.mail.wild.test': { A: ['127.0.0.61'] },
      'a.mail.wild.test': { A: ['127.0.0.61'] },
    };
    const r = await rig({ port: mx.port, host, zone });
    expect(await sendOnce(r, 'wild.test')).toBe('delivered');
    // The two-label host was skipped for not matching, the one-label host used.
    const rows = await tlsrptRows(r);
    expect(rows.map((x) => [x.result, x.receivingMxHostname])).toEqual([
      ['validation-failure', 'x.a.mail.wild.test'],
      ['success', 'a.mail.wild.test'],
    ]);
  });

  const failing: [string, () => Promise<{ key: string; chain: string }>, string][] = [
    ['certificate for another name', () => leafFrom(ca, ['other.example']), 'certificate-host-mismatch'],
    ['expired certificate', () => expiredLeaf(['mx.bad.test'], ca), 'certificate-expired'],
    ['self-signed certificate', () => selfSigned(['mx.bad.test']), 'certificate-not-trusted'],
  ];
  for (const [what, make, resultType] of failing) {
    it(`deferred, reported ${resultType}: ${what}`, async () => {
      const leaf = await make();
      const mx = await remote({ host: '127.0.0.62', tls: { key: leaf.key, cert: leaf.chain } });
      const host = await policyHost();
      host.serve(
        'bad.test',
        { kind: 'policy', text: policy('enforce', ['mx.bad.test']) },
        await leafFrom(ca, ['mta-sts.bad.test']),
      );
      const r = await rig({ port: mx.port, host, zone: stsZone('bad.test', '127.0.0.62') });
      expect(await sendOnce(r, 'bad.test')).toBe('deferred');
      expect(mx.stats.mailFrom).toBe(0);
      expect((await tlsrptRows(r))[0]).toMatchObject({
        result: resultType,
        policyType: 'sts',
        receivingMxHostname: 'mx.bad.test',
      });
    });
  }

  it('deferred: the only MX is not in the policy (no connection is made), or offers no STARTTLS', async () => {
    const plain = await remote({ host: '127.0.0.63' });
    const host = await policyHost();
    host.serve(
      'nomatch.test',
      { kind: 'policy', text: policy('enforce', ['mx.elsewhere.test']) },
      await leafFrom(ca, ['mta-sts.nomatch.test']),
    );
    host.serve(
      'notls.test',
      { kind: 'policy', text: policy('enforce', ['mx.notls.test']) },
      await leafFrom(ca, ['mta-sts.notls.test']),
    );
    const r = await rig({
      port: plain.port,
      host,
      zone: { ...stsZone('nomatch.test', '127.0.0.63'), ...stsZone('notls.test', '127.0.0.63') },
    });
    expect(await sendOnce(r, 'nomatch.test')).toBe('deferred');
    expect(plain.stats.connections).toBe(0);
    expect(await sendOnce(r, 'notls.test')).toBe('deferred');
    expect(plain.stats.mailFrom).toBe(0);
    const rows = await tlsrptRows(r);
    expect(rows.find((x) => x.domain === 'nomatch.test')).toMatchObject({ result: 'validation-failure' });
    expect(rows.find((x) => x.domain === 'notls.test')).toMatchObject({ result: 'starttls-not-supported' });
  });
});

describe('MTA-STS testing and policy faults', () => {
  it('testing mode: delivered despite a certificate for another name, and reported', async () => {
    const leaf = await leafFrom(ca, ['other.example']);
    const mx = await remote({ host: '127.0.0.64', tls: { key: leaf.key, cert: leaf.chain } });
    const host = await policyHost();
    host.serve(
      'try.test',
      { kind: 'policy', text: policy('testing', ['mx.try.test']) },
      await leafFrom(ca, ['mta-sts.try.test']),
    );
    const r = await rig({ port: mx.port, host, zone: stsZone('try.test', '127.0.0.64') });
    expect(await sendOnce(r, 'try.test')).toBe('delivered');
    expect((await tlsrptRows(r))[0]).toMatchObject({
      result: 'certificate-host-mismatch',
      policyType: 'sts',
    });
  });

  const faults: [string, Parameters<MtaStsHost['serve']>[1], string, boolean][] = [
    ['the policy host times out', { kind: 'hang' }, 'sts-policy-fetch-error', true],
    ['the policy host answers 404', { kind: 'status', status: 404 }, 'sts-policy-fetch-error', true],
    [
      'a redirect is not followed',
      { kind: 'status', status: 302, location: 'https://example.org/' },
      'sts-policy-fetch-error',
      true,
    ],
    ['the policy is garbage', { kind: 'policy', text: '<html>hello</html>\n' }, 'sts-policy-invalid', true],
    [
      'the policy is larger than 64 KiB',
      {
        kind: 'policy',
        text: `version: STSv1\nmode: enforce\nmax_age: 86400\n${'mx: mx.fault.test\n'.repeat(4000)}`,
      },
      'sts-policy-invalid',
      true,
    ],
    [
      'the policy is served as text/html',
      { kind: 'policy', text: policy('enforce', ['x']), contentType: 'text/html' },
      'sts-policy-invalid',
      true,
    ],
    [
      'the policy host certificate is not trusted',
      { kind: 'policy', text: policy('enforce', ['x']) },
      'sts-webpki-invalid',
      false,
    ],
  ];
  for (const [what, behaviour, resultType, trustedHostCert] of faults) {
    it(`delivered opportunistically, reported ${resultType}: ${what}`, async () => {
      const leaf = await selfSigned(['mx.fault.test']);
      const mx = await remote({ host: '127.0.0.65', tls: { key: leaf.key, cert: leaf.chain } });
      const host = await policyHost();
      host.serve(
        'fault.test',
        behaviour,
        trustedHostCert
          ? await leafFrom(ca, ['mta-sts.fault.test'])
          : await selfSigned(['mta-sts.fault.test']),
      );
      const r = await rig({ port: mx.port, host, zone: stsZone('fault.test', '127.0.0.65') });
      expect(await sendOnce(r, 'fault.test')).toBe('delivered');
      const rows = await tlsrptRows(r);
      expect(rows[0]).toMatchObject({ result: resultType, policyType: 'sts' });
      expect(rows[1]).toMatchObject({ result: 'success', policyType: 'no-policy-found' });
    });
  }
});

describe('MTA-STS cache', () => {
  it('survives a restart and applies while the policy host is down; a new id is fetched again', async () => {
    const wrongName = await leafFrom(ca, ['other.example']);
    const mx = await remote({ host: '127.0.0.66', tls: { key: wrongName.key, cert: wrongName.chain } });
    const host = await policyHost();
    const hostCert = await leafFrom(ca, ['mta-sts.cache.test']);
    host.serve('cache.test', { kind: 'policy', text: policy('enforce', ['mx.cache.test']) }, hostCert);
    const r = await rig({ port: mx.port, host, zone: stsZone('cache.test', '127.0.0.66') });
    expect(await sendOnce(r, 'cache.test')).toBe('deferred');
    const cached = JSON.parse((await r.redis.get(`${r.prefix}:spooler:mta-sts:cache.test`)) ?? 'null');
    expect(cached).toMatchObject({
      id: 'v1',
      policy: { mode: 'enforce', mx: ['mx.cache.test'], maxAgeSecs: 86400 },
    });

    // The policy host goes dark and the TXT record disappears; after a restart the cache still enforces.
    host.serve('cache.test', { kind: 'hang' }, hostCert);
    r.dns.remove('_mta-sts.cache.test');
    await r.restart();
    expect(await sendOnce(r, 'cache.test')).toBe('deferred');
    expect(host.requests).toHaveLength(1);

    // A new id: the new (testing) policy is fetched and delivery goes through.
    host.serve('cache.test', { kind: 'policy', text: policy('testing', ['mx.cache.test']) }, hostCert);
    r.dns.set('_mta-sts.cache.test', 'TXT', ['v=STSv1; id=v2']);
    r.spooler.dns.clearCache();
    expect(await sendOnce(r, 'cache.test')).toBe('delivered');
    expect(host.requests).toHaveLength(2);
  });

  it('is refreshed before expiry: past half of max_age a use re-fetches and extends it', async () => {
    const leaf = await leafFrom(ca, ['mx.fresh.test']);
    const mx = await remote({ host: '127.0.0.67', tls: { key: leaf.key, cert: leaf.chain } });
    const host = await policyHost();
    host.serve(
      'fresh.test',
      { kind: 'policy', text: policy('enforce', ['mx.fresh.test'], 1000) },
      await leafFrom(ca, ['mta-sts.fresh.test']),
    );
    const r = await rig({ port: mx.port, host, zone: stsZone('fresh.test', '127.0.0.67') });
    const key = `${r.prefix}:spooler:mta-sts:fresh.test`;
    const client = r.redis;
    expect(await sendOnce(r, 'fresh.test')).toBe('delivered');
    const first = JSON.parse((await client.get(key)) ?? '{}');
    r.clock.advance(400_000);
    expect(await sendOnce(r, 'fresh.test')).toBe('delivered');
    expect(host.requests).toHaveLength(1);
    r.clock.advance(200_000);
    expect(await sendOnce(r, 'fresh.test')).toBe('delivered');
    await r.spooler.settled();
    expect(host.requests).toHaveLength(2);
    const second = JSON.parse((await client.get(key)) ?? '{}');
    expect(second.expiresAt).toBeGreaterThan(first.expiresAt + 500_000);
  });
});

describe('policy precedence', () => {
  it('DANE wins over MTA-STS: a DANE-authenticated MX is used although its certificate would fail WebPKI', async () => {
    const leaf = await selfSigned(['mx.both.test']);
    const mx = await remote({ host: '127.0.0.68', tls: { key: leaf.key, cert: leaf.chain } });
    const host = await policyHost();
    host.serve(
      'both.test',
      { kind: 'policy', text: policy('enforce', ['mx.both.test']) },
      await leafFrom(ca, ['mta-sts.both.test']),
    );
    const r = await rig({ port: mx.port, host, zone: stsZone('both.test', '127.0.0.68') });
    r.dns.set(`_${mx.port}._tcp.mx.both.test`, 'TLSA', [
      { usage: 3, selector: 1, matchingType: 1, certificate: spkiSha256(leaf.cert) },
    ]);
    r.dns.setAd('both.test', true);
    expect(await sendOnce(r, 'both.test')).toBe('delivered');
    expect((await tlsrptRows(r))[0]).toMatchObject({ result: 'success', policyType: 'tlsa' });
  });

  it('a configured relay gets the mail; MTA-STS never applies to it (the policy is not even fetched)', async () => {
    const relayCert = await leafFrom(ca, ['relay.sealpost.test']);
    const relay = await remote({ host: '127.0.0.69', tls: { key: relayCert.key, cert: relayCert.chain } });
    const host = await policyHost();
    host.serve(
      'strict.test',
      { kind: 'policy', text: policy('enforce', ['mx.strict.test']) },
      await leafFrom(ca, ['mta-sts.strict.test']),
    );
    const r = await rig({
      port: 25,
      host,
      zone: { ...stsZone('strict.test', '127.0.0.70'), 'relay.sealpost.test': { A: ['127.0.0.69'] } },
      config: { relay: { host: 'relay.sealpost.test', port: relay.port, tls: 'starttls' } },
    });
    expect(await sendOnce(r, 'strict.test')).toBe('delivered');
    expect(relay.accepted[0]?.secure).toBe(true);
    expect(relay.accepted[0]?.to).toEqual(['rcpt@strict.test']);
    expect(host.requests).toHaveLength(0);
    expect(await tlsrptRows(r)).toEqual([]);
  });

  it('deferred: a relay whose certificate does not match its name', async () => {
    const relayCert = await leafFrom(ca, ['someone-else.example']);
    const relay = await remote({ host: '127.0.0.71', tls: { key: relayCert.key, cert: relayCert.chain } });
    const host = await policyHost();
    const r = await rig({
      port: 25,
      host,
      zone: {
        'any.test': { MX: [{ preference: 1, exchange: 'mx.any.test' }] },
        'relay.sealpost.test': { A: ['127.0.0.71'] },
      },
      config: { relay: { host: 'relay.sealpost.test', port: relay.port, tls: 'starttls' } },
    });
    expect(await sendOnce(r, 'any.test')).toBe('deferred');
    expect(relay.stats.mailFrom).toBe(0);
    await eventually(() => (relay.stats.secure === 1 ? true : undefined));
  });
});
