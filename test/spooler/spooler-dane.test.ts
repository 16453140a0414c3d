// DANE (RFC 7672) over real TLS: remote MX hosts with certificates made
// here, TLSA records at the DNS double with and without the AD bit, and
// each case's outcome named — delivered, deferred (never in clear text) —
// together with the TLS-RPT result it records.
import { afterEach, describe, expect, it } from 'vitest';
import { daneSelfTest } from '../../spooler/dane-selftest.ts';
import { createSecureDns } from '../../spooler/secure-dns.ts';
import type { SpoolerConfig } from '../../src/core/config/types.ts';
import type { DnsZone } from '../support/doubles/dns-server.ts';
import { type RemoteMx, startRemoteMx } from '../support/doubles/remote-mx.ts';
import { type SpoolerRig, startSpoolerRig } from '../support/spooler-rig.ts';
import { certSha256, expiredLeaf, leafFrom, selfSigned, spkiSha256, testCa } from '../support/test-pki.ts';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function remote(opts: Parameters<typeof startRemoteMx>[0]): Promise<RemoteMx> {
  const mx = await startRemoteMx(opts);
  cleanup.push(() => mx.close());
  return mx;
}

const TLSRPT = { enabled: true, org_name: 'out.sealpost.test', contact: 'postmaster@sealpost.test' };

async function rig(opts: {
  port: number;
  zone: DnsZone;
  config?: Partial<SpoolerConfig>;
  validating?: boolean;
}): Promise<SpoolerRig> {
  const r = await startSpoolerRig({
    config: { smtp_port: opts.port, retry_schedule_secs: [60], tlsrpt: TLSRPT, ...opts.config },
    zone: opts.zone,
    withStore: true,
    validatingResolver: opts.validating,
  });
  cleanup.push(() => r.close());
  return r;
}

function mxZone(domain: string, ip: string): DnsZone {
  return { [domain]: { MX: [{ preference: 10, exchange: `mx.${domain}` }] }, [`mx.${domain}`]: { A: [ip] } };
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

/** Sends one message and waits for its first attempt's outcome. */
async function sendOnce(r: SpoolerRig, domain: string) {
  const msgid = await r.send({ from: 'ann@sealpost.test', to: [`rcpt@${domain}`] });
  const data = await r.jobWhere(msgid, domain, (d) => d.attempts >= 1);
  return data.final[`rcpt@${domain}`]?.state ?? 'deferred';
}

describe('DANE', () => {
  it('delivered: DANE-EE 3 1 1 matches (the certificate is self-signed, for another name, and expired: none of that matters)', async () => {
    const cert = await expiredLeaf(['some-other-name.example']);
    const mx = await remote({ host: '127.0.0.40', tls: { key: cert.key, cert: cert.chain } });
    const r = await rig({ port: mx.port, zone: mxZone('dane.test', '127.0.0.40') });
    r.dns.set(`_${mx.port}._tcp.mx.dane.test`, 'TLSA', [
      { usage: 3, selector: 1, matchingType: 1, certificate: spkiSha256(cert.cert) },
    ]);
    r.dns.setAd('dane.test', true);
    expect(r.spooler.daneStatus()).toMatchObject({ enabled: true, inEffect: true });
    expect(await sendOnce(r, 'dane.test')).toBe('delivered');
    expect(mx.accepted[0]?.secure).toBe(true);
    expect(mx.accepted[0]?.servername).toBe('mx.dane.test');
    expect(await tlsrptRows(r)).toEqual([
      expect.objectContaining({
        domain: 'dane.test',
        result: 'success',
        policyType: 'tlsa',
        policyString: [`3 1 1 ${spkiSha256(cert.cert)}`],
        mxHost: ['mx.dane.test'],
      }),
    ]);
  });

  it('deferred, reported tlsa-invalid: the certificate matches no TLSA record (and no envelope is sent)', async () => {
    const cert = await selfSigned(['mx.dane.test']);
    const other = await selfSigned(['mx.dane.test']);
    const mx = await remote({ host: '127.0.0.41', tls: { key: cert.key, cert: cert.chain } });
    const r = await rig({ port: mx.port, zone: mxZone('dane.test', '127.0.0.41') });
    r.dns.set(`_${mx.port}._tcp.mx.dane.test`, 'TLSA', [
      { usage: 3, selector: 1, matchingType: 1, certificate: spkiSha256(other.cert) },
      { usage: 3, selector: 0, matchingType: 1, certificate: certSha256(other.cert) },
    ]);
    r.dns.setAd('dane.test', true);
    expect(await sendOnce(r, 'dane.test')).toBe('deferred');
    expect(mx.stats.secure).toBe(1);
    expect(mx.stats.mailFrom).toBe(0);
    const [row] = await tlsrptRows(r);
    expect(row).toMatchObject({
      result: 'tlsa-invalid',
      policyType: 'tlsa',
      receivingMxHostname: 'mx.dane.test',
      receivingIp: '127.0.0.41',
    });
  });

  it('delivered: DANE-TA 2 1 1 pins the issuing CA and the certificate names the MX host', async () => {
    const ca = await testCa();
    const leaf = await leafFrom(ca, ['mx.ta.test']);
    const mx = await remote({ host: '127.0.0.42', tls: { key: leaf.key, cert: leaf.chain } });
    const r = await rig({ port: mx.port, zone: mxZone('ta.test', '127.0.0.42') });
    r.dns.set(`_${mx.port}._tcp.mx.ta.test`, 'TLSA', [
      { usage: 2, selector: 1, matchingType: 1, certificate: spkiSha256(ca.cert) },
    ]);
    r.dns.setAd('ta.test', true);
    expect(await sendOnce(r, 'ta.test')).toBe('delivered');
    expect((await tlsrptRows(r))[0]).toMatchObject({ result: 'success', policyType: 'tlsa' });
  });

  it('deferred, reported certificate-host-mismatch: DANE-TA chain is fine but the certificate names another host', async () => {
    const ca = await testCa();
    const leaf = await leafFrom(ca, ['elsewhere.example']);
    const mx = await remote({ host: '127.0.0.43', tls: { key: leaf.key, cert: leaf.chain } });
    const r = await rig({ port: mx.port, zone: mxZone('ta.test', '127.0.0.43') });
    r.dns.set(`_${mx.port}._tcp.mx.ta.test`, 'TLSA', [
      { usage: 2, selector: 1, matchingType: 1, certificate: spkiSha256(ca.cert) },
    ]);
    r.dns.setAd('ta.test', true);
    expect(await sendOnce(r, 'ta.test')).toBe('deferred');
    expect(mx.stats.mailFrom).toBe(0);
    expect((await tlsrptRows(r))[0]).toMatchObject({ result: 'certificate-host-mismatch' });
  });

  it('delivered opportunistically: the same mismatching TLSA records in a zone without the AD bit are ignored', async () => {
    const cert = await selfSigned(['mx.insecure.test']);
    const other = await selfSigned(['x']);
    const mx = await remote({ host: '127.0.0.44', tls: { key: cert.key, cert: cert.chain } });
    const r = await rig({ port: mx.port, zone: mxZone('insecure.test', '127.0.0.44') });
    r.dns.set(`_${mx.port}._tcp.mx.insecure.test`, 'TLSA', [
      { usage: 3, selector: 1, matchingType: 1, certificate: spkiSha256(other.cert) },
    ]);
    expect(await sendOnce(r, 'insecure.test')).toBe('delivered');
    expect(mx.accepted[0]?.secure).toBe(true);
    expect(r.dns.queries.some((q) => q.type === 'TLSA')).toBe(false);
    expect((await tlsrptRows(r))[0]).toMatchObject({ result: 'success', policyType: 'no-policy-found' });
  });

  it('deferred, reported dnssec-invalid: the TLSA lookup fails (SERVFAIL, as for bogus data) — never a downgrade', async () => {
    const cert = await selfSigned(['mx.bogus.test']);
    const mx = await remote({ host: '127.0.0.45', tls: { key: cert.key, cert: cert.chain } });
    const r = await rig({ port: mx.port, zone: mxZone('bogus.test', '127.0.0.45') });
    r.dns.setAd('bogus.test', true);
    r.dns.setFault(`_${mx.port}._tcp.mx.bogus.test`, 'servfail');
    expect(await sendOnce(r, 'bogus.test')).toBe('deferred');
    expect(mx.stats.connections).toBe(0);
    expect((await tlsrptRows(r))[0]).toMatchObject({ result: 'dnssec-invalid', policyType: 'tlsa' });
  });

  it('deferred, reported starttls-not-supported: DANE host without STARTTLS gets nothing in clear text', async () => {
    const cert = await selfSigned(['mx.plain.test']);
    const mx = await remote({ host: '127.0.0.46' });
    const r = await rig({ port: mx.port, zone: mxZone('plain.test', '127.0.0.46') });
    r.dns.set(`_${mx.port}._tcp.mx.plain.test`, 'TLSA', [
      { usage: 3, selector: 1, matchingType: 1, certificate: spkiSha256(cert.cert) },
    ]);
    r.dns.setAd('plain.test', true);
    expect(await sendOnce(r, 'plain.test')).toBe('deferred');
    expect(mx.stats.mailFrom).toBe(0);
    expect((await tlsrptRows(r))[0]).toMatchObject({ result: 'starttls-not-supported', policyType: 'tlsa' });
  });

  it('unusable TLSA set (PKIX usages only): delivered over mandatory TLS, reported tlsa-invalid; deferred without STARTTLS', async () => {
    const cert = await selfSigned(['mx.pkix.test']);
    const tlsMx = await remote({ host: '127.0.0.47', tls: { key: cert.key, cert: cert.chain } });
    const plainMx = await remote({ host: '127.0.0.48', port: tlsMx.port });
    const r = await rig({
      port: tlsMx.port,
      zone: { ...mxZone('pkix.test', '127.0.0.47'), ...mxZone('pkix2.test', '127.0.0.48') },
    });
    for (const d of ['pkix.test', 'pkix2.test']) {
      r.dns.set(`_${tlsMx.port}._tcp.mx.${d}`, 'TLSA', [
        { usage: 1, selector: 1, matchingType: 1, certificate: spkiSha256(cert.cert) },
      ]);
      r.dns.setAd(d, true);
    }
    expect(await sendOnce(r, 'pkix.test')).toBe('delivered');
    expect(tlsMx.accepted[0]?.secure).toBe(true);
    expect(await sendOnce(r, 'pkix2.test')).toBe('deferred');
    expect(plainMx.stats.mailFrom).toBe(0);
    const rows = await tlsrptRows(r);
    expect(rows.find((x) => x.domain === 'pkix.test')).toMatchObject({ result: 'tlsa-invalid' });
    expect(rows.find((x) => x.domain === 'pkix2.test')).toMatchObject({ result: 'starttls-not-supported' });
  });

  it('not in effect when the resolver does not validate: health says so and TLSA records are not consulted', async () => {
    const cert = await selfSigned(['mx.nv.test']);
    const other = await selfSigned(['x']);
    const mx = await remote({ host: '127.0.0.49', tls: { key: cert.key, cert: cert.chain } });
    const r = await rig({ port: mx.port, zone: mxZone('nv.test', '127.0.0.49'), validating: false });
    r.dns.set(`_${mx.port}._tcp.mx.nv.test`, 'TLSA', [
      { usage: 3, selector: 1, matchingType: 1, certificate: spkiSha256(other.cert) },
    ]);
    r.dns.setAd('nv.test', true);
    const health = r.spooler.health();
    expect(health.dane).toMatchObject({ enabled: true, inEffect: false });
    expect(health.dane.reason).toContain('does not validate DNSSEC');
    expect(await sendOnce(r, 'nv.test')).toBe('delivered');
    // The resolver starts validating: the periodic self-test (run now) puts DANE in effect.
    r.dns.setAd('dnssec-probe.test', true);
    expect((await r.spooler.recheckDane()).inEffect).toBe(true);
    expect(await sendOnce(r, 'nv.test')).toBe('deferred');
  });

  it('a resolver off loopback is not trusted for AD unless listed in trusted_resolvers', async () => {
    const untrusted = createSecureDns({ servers: ['192.0.2.53:53'], timeoutMs: 300 });
    const status = await daneSelfTest(untrusted, { enabled: true, timeoutMs: 300 });
    expect(status.inEffect).toBe(false);
    expect(status.reason).toContain('not on loopback nor in [spooler] trusted_resolvers');
    const listed = createSecureDns({ servers: ['192.0.2.53:53'], trusted: ['192.0.2.53'], timeoutMs: 300 });
    expect(await listed.servers()).toEqual([{ server: { host: '192.0.2.53', port: 53 }, trusted: true }]);
    // Trusted, so it is asked (and, unreachable here, DANE stays off for that reason).
    expect((await daneSelfTest(listed, { enabled: true, timeoutMs: 300 })).reason).toContain(
      'did not answer the DNSSEC probe',
    );
  });
});
