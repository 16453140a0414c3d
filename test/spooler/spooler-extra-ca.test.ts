// `[tls] extra_ca_file`: an MTA-STS policy host and SMTP servers (an MX under
// an enforced policy, a relay) whose certificates come from a private test
// CA are trusted when the config names that CA's bundle, and not without it.
// The bundle goes through the real config loader and readExtraCa.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/core/config/index.ts';
import { readExtraCa } from '../../src/core/tls/extra-ca.ts';
import type { CertificatePair } from '../../src/core/tls/self-signed.ts';
import { renderMtaStsPolicy } from '../../src/edge/domaind/mta-sts.ts';
import { startMtaStsHost } from '../support/doubles/mta-sts-host.ts';
import { type RemoteMx, startRemoteMx } from '../support/doubles/remote-mx.ts';
import { type SpoolerRig, startSpoolerRig } from '../support/spooler-rig.ts';
import { tempDir } from '../support/temp-dir.ts';
import { leafFrom, testCa } from '../support/test-pki.ts';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

let ca: CertificatePair;
let extraCa: string[];
beforeAll(async () => {
  ca = await testCa('Private Test CA');
  const dir = tempDir();
  writeFileSync(join(dir, 'private-ca.pem'), ca.cert);
  const config = parseConfig('[tls]\nextra_ca_file = "private-ca.pem"\n', {
    env: {},
    configDir: dir,
    source: 'test.toml',
  });
  extraCa = readExtraCa(config.tls.extra_ca_file as string);
});

async function remote(opts: Parameters<typeof startRemoteMx>[0]): Promise<RemoteMx> {
  const mx = await startRemoteMx(opts);
  cleanup.push(() => mx.close());
  return mx;
}

async function rig(opts: Parameters<typeof startSpoolerRig>[0]): Promise<SpoolerRig> {
  const r = await startSpoolerRig(opts);
  // Closed by the test (to start the next one) or afterwards, once.
  let closed: Promise<void> | undefined;
  const close = r.close.bind(r);
  r.close = () => {
    closed ??= close();
    return closed;
  };
  cleanup.push(() => r.close());
  return r;
}

describe('[tls] extra_ca_file', () => {
  it('MTA-STS: the policy host and the MX are trusted with the bundle; without it the fetch is sts-webpki-invalid', async () => {
    const leaf = await leafFrom(ca, ['mx.private.test']);
    const mx = await remote({ host: '127.0.0.90', tls: { key: leaf.key, cert: leaf.chain } });
    const host = await startMtaStsHost(await leafFrom(ca, ['mta-sts.default.test']));
    cleanup.push(() => host.close());
    host.serve(
      'private.test',
      {
        kind: 'policy',
        text: renderMtaStsPolicy({ mode: 'enforce', mx: ['mx.private.test'], maxAgeSecs: 86_400 }),
      },
      await leafFrom(ca, ['mta-sts.private.test']),
    );
    const zone = {
      'private.test': { MX: [{ preference: 10, exchange: 'mx.private.test' }] },
      'mx.private.test': { A: ['127.0.0.90'] },
      'mta-sts.private.test': { A: ['127.0.0.1'] },
      '_mta-sts.private.test': { TXT: ['v=STSv1; id=p1'] },
    };
    const tlsrpt = { enabled: true, org_name: 'out.sealpost.test', contact: 'postmaster@sealpost.test' };
    const rows = async (r: SpoolerRig) => {
      await r.spooler.settled();
      const all = await r.store?.db.selectFrom('tlsrpt_pending').selectAll().execute();
      return (all ?? []).map((row) => row.result_type);
    };

    const trusted = await rig({
      config: { smtp_port: mx.port, retry_schedule_secs: [60], tlsrpt },
      zone,
      withStore: true,
      extra: { extraCa, mtaStsPort: host.port },
    });
    const m1 = await trusted.send({ from: 'ann@sealpost.test', to: ['rcpt@private.test'] });
    const d1 = await trusted.jobWhere(m1, 'private.test', (d) => d.attempts >= 1);
    expect(d1.final['rcpt@private.test']?.state).toBe('delivered');
    expect(mx.accepted[0]?.secure).toBe(true);
    // The enforced policy was fetched and applied (a session under it, certificate checked).
    expect(await rows(trusted)).toEqual(['success']);
    await trusted.close();

    const untrusted = await rig({
      config: { smtp_port: mx.port, retry_schedule_secs: [60], tlsrpt },
      zone,
      withStore: true,
      extra: { mtaStsPort: host.port },
    });
    const m2 = await untrusted.send({ from: 'ann@sealpost.test', to: ['rcpt@private.test'] });
    await untrusted.jobWhere(m2, 'private.test', (d) => d.attempts >= 1);
    expect(await rows(untrusted)).toContain('sts-webpki-invalid');
  });

  it('relay: a smarthost with a certificate from the private CA is used only with the bundle', async () => {
    const leaf = await leafFrom(ca, ['relay.private.test']);
    const relay = await remote({ host: '127.0.0.91', tls: { key: leaf.key, cert: leaf.chain } });
    const zone = { 'relay.private.test': { A: ['127.0.0.91'] } };
    const config = {
      retry_schedule_secs: [60],
      relay: { host: 'relay.private.test', port: relay.port, tls: 'starttls' as const },
    };

    const without = await rig({ config, zone });
    const m1 = await without.send({ from: 'ann@sealpost.test', to: ['someone@far.test'] });
    const d1 = await without.jobWhere(m1, 'far.test', (d) => d.attempts >= 1);
    expect(d1.final['someone@far.test']).toBeUndefined();
    expect(d1.lastTemporary['someone@far.test']).toMatchObject({ status: '4.7.5' });
    expect(d1.lastTemporary['someone@far.test']?.diagnostic).toMatch(/relay certificate/);
    expect(relay.stats.mailFrom).toBe(0);
    await without.close();

    const withCa = await rig({ config, zone, extra: { extraCa } });
    const m2 = await withCa.send({ from: 'ann@sealpost.test', to: ['someone@far.test'] });
    const d2 = await withCa.done(m2, 'far.test');
    expect(d2.final['someone@far.test']?.state).toBe('delivered');
    expect(relay.accepted).toHaveLength(1);
    expect(relay.accepted[0]?.secure).toBe(true);
  });
});

describe('[spooler] dane_probe_name/type and mta_sts_timeout_secs reach the spooler', () => {
  it('asks the configured probe name and gives the policy fetch the configured deadline', async () => {
    const host = await startMtaStsHost(await leafFrom(ca, ['mta-sts.default.test']));
    cleanup.push(() => host.close());
    host.serve('slow.test', { kind: 'hang' }, await leafFrom(ca, ['mta-sts.slow.test']));
    const r = await rig({
      config: {
        retry_schedule_secs: [60],
        dane_probe_name: 'signed-probe.example',
        dane_probe_type: 'A',
        mta_sts_timeout_secs: 1,
      },
      zone: {
        'signed-probe.example': { A: ['192.0.2.1'] },
        'slow.test': { MX: [{ preference: 10, exchange: 'mx.slow.test' }] },
        'mx.slow.test': { A: ['127.0.0.92'] },
        'mta-sts.slow.test': { A: ['127.0.0.1'] },
        '_mta-sts.slow.test': { TXT: ['v=STSv1; id=s1'] },
      },
      // No probe option: the config's name and type are asked.
      extra: { daneProbe: undefined, extraCa, mtaStsPort: host.port },
    });
    expect(r.dns.queries.some((q) => q.name === 'signed-probe.example' && q.type === 'A')).toBe(true);
    expect(r.dns.queries.some((q) => q.type === 'DNSKEY')).toBe(false);
    const mts = r.spooler.health().mtaSts;
    expect(mts.enabled).toBe(true);
    const t0 = Date.now();
    const lookup = await (async () => {
      const msgid = await r.send({ from: 'ann@sealpost.test', to: ['rcpt@slow.test'] });
      return r.jobWhere(msgid, 'slow.test', (d) => d.attempts >= 1);
    })();
    const took = Date.now() - t0;
    expect(lookup.attempts).toBe(1);
    // One second of deadline, not the default twenty.
    expect(took).toBeGreaterThanOrEqual(1000);
    expect(took).toBeLessThan(8000);
  });
});
