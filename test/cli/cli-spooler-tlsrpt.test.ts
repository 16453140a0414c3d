// Black-box: `sealpost spooler tlsrpt --send` as a child process. Results
// recorded yesterday for two policy domains; their https rua endpoints are
// real HTTPS servers (test/support/doubles/tlsrpt-receiver.ts) behind host names only
// the DNS double knows, with certificates from a private CA named in
// `[tls] extra_ca_file`. The report that reaches its endpoint is printed as
// sent, the one whose endpoint answers 500 as failed (exit 1); run again,
// the first is "already sent" and only the second goes out. Bad --day
// values and a missing --send are refused with one line.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createTlsrptRecorder } from '../../spooler/tlsrpt-store.ts';
import { loadConfig } from '../../src/core/config/index.ts';
import { openStore } from '../../src/core/store/index.ts';
import { type DnsDouble, startDnsDouble } from '../support/doubles/dns-server.ts';
import { startTlsrptReceiver, type TlsrptReceiver } from '../support/doubles/tlsrpt-receiver.ts';
import { REDIS_URL } from '../support/spooler-rig.ts';
import { tempDir } from '../support/temp-dir.ts';
import { leafFrom, testCa } from '../support/test-pki.ts';

const BIN = resolve(import.meta.dirname, '..', '..', 'bin', 'sealpost.js');
const DAY = 86_400_000;

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f().catch(() => {});
});

function sealpost(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd, env: { ...process.env, NO_COLOR: '1' }, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        done({ code, stdout, stderr });
      },
    );
  });
}

async function setup() {
  const dir = tempDir();
  const ca = await testCa('TLS-RPT Test CA');
  writeFileSync(join(dir, 'ca.pem'), ca.cert);
  const ok: TlsrptReceiver = await startTlsrptReceiver(await leafFrom(ca, ['rua.reports.test']));
  const down: TlsrptReceiver = await startTlsrptReceiver(await leafFrom(ca, ['rua-down.reports.test']));
  down.status = 500;
  cleanup.push(
    () => ok.close(),
    () => down.close(),
  );
  const dns: DnsDouble = await startDnsDouble({
    '_smtp._tls.rpt.test': { TXT: [`v=TLSRPTv1; rua=https://rua.reports.test:${ok.port}/v1/tlsrpt`] },
    '_smtp._tls.flaky.test': { TXT: [`v=TLSRPTv1; rua=https://rua-down.reports.test:${down.port}/r`] },
    'rua.reports.test': { A: ['127.0.0.1'] },
    'rua-down.reports.test': { A: ['127.0.0.1'] },
  });
  cleanup.push(() => dns.close());
  const prefix = `sptest-tlsrpt-cli-${randomBytes(5).toString('hex')}`;
  const redis = new Redis(REDIS_URL);
  cleanup.push(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });
  const configFile = join(dir, 'sealpost.toml');
  writeFileSync(
    configFile,
    `[smtp]
hostname = "mx.sealpost.test"
local_domains = ["sealpost.test"]

[spooler.tlsrpt]
enabled = true

[store]
data_dir = "${dir}"

[redis]
url = "${REDIS_URL}"
prefix = "${prefix}"

[dns]
resolvers = ["${dns.address}"]

[tls]
extra_ca_file = "ca.pem"
`,
  );
  // Results recorded yesterday (UTC), as the spooler records them.
  const config = loadConfig(configFile);
  const store = await openStore({ url: config.store.url, dataDir: config.store.data_dir });
  const yesterday = Math.floor(Date.now() / DAY) * DAY - DAY;
  const recorder = createTlsrptRecorder(store.db, () => yesterday + 3_600_000);
  for (const domain of ['rpt.test', 'flaky.test']) {
    recorder.record({
      policyDomain: domain,
      policyType: 'no-policy-found',
      policyString: [],
      mxHost: [],
      result: 'success',
      receivingMxHostname: `mx.${domain}`,
    });
  }
  await recorder.flush();
  await store.close();
  return { dir, ok, down, dns, configFile, day: new Date(yesterday).toISOString().slice(0, 10) };
}

describe('sealpost spooler tlsrpt --send', () => {
  it('sends yesterday’s reports over real HTTPS, host names through [dns] resolvers; never the same report twice', async () => {
    const s = await setup();
    const first = await sealpost(['spooler', 'tlsrpt', '--send', '--config', s.configFile], s.dir);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(1);
    expect(first.stdout.trim().split('\n').sort()).toEqual([
      `flaky.test https://rua-down.reports.test:${s.down.port}/r failed (HTTP 500)`,
      `rpt.test https://rua.reports.test:${s.ok.port}/v1/tlsrpt sent`,
    ]);
    expect(s.ok.received).toHaveLength(1);
    const got = s.ok.received[0];
    expect(got?.path).toBe('/v1/tlsrpt');
    expect(got?.contentType).toBe('application/tlsrpt+gzip');
    const report = JSON.parse(gunzipSync(got?.body ?? Buffer.alloc(0)).toString('utf8'));
    expect(report.policies[0].policy['policy-domain']).toBe('rpt.test');
    expect(report['date-range']['start-datetime']).toBe(`${s.day}T00:00:00Z`);
    // The receivers' names are known only to the DNS double: it was asked.
    expect(s.dns.queries.some((q) => q.name === 'rua.reports.test' && q.type === 'A')).toBe(true);
    expect(s.dns.queries.some((q) => q.name === 'rua-down.reports.test' && q.type === 'A')).toBe(true);

    s.down.status = 200;
    const again = await sealpost(
      ['spooler', 'tlsrpt', '--send', '--day', s.day, '--config', s.configFile],
      s.dir,
    );
    expect(again.code).toBe(0);
    const lines = again.stdout.trim().split('\n').sort();
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe(`flaky.test https://rua-down.reports.test:${s.down.port}/r sent`);
    expect(lines[1]).toMatch(
      new RegExp(
        `^rpt\\.test https://rua\\.reports\\.test:${s.ok.port}/v1/tlsrpt already sent at \\S+, not sent again$`,
      ),
    );
    expect(s.ok.received).toHaveLength(1);
    expect(s.down.received).toHaveLength(2);
  }, 120_000);

  it('refuses a bad --day, a day not over yet and a missing --send with one line', async () => {
    const s = await setup();
    const bad = await sealpost(
      ['spooler', 'tlsrpt', '--send', '--day', '2025-02-30', '--config', s.configFile],
      s.dir,
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/expected a UTC day as YYYY-MM-DD, got "2025-02-30"/);
    const today = new Date().toISOString().slice(0, 10);
    const early = await sealpost(
      ['spooler', 'tlsrpt', '--send', '--day', today, '--config', s.configFile],
      s.dir,
    );
    expect(early.code).toBe(1);
    expect(early.stderr.trim()).toBe(`error: ${today} (UTC) is not over yet; its report is not due`);
    const none = await sealpost(['spooler', 'tlsrpt', '--config', s.configFile], s.dir);
    expect(none.code).toBe(2);
    expect(none.stderr.trim().split('\n')).toHaveLength(1);
    expect(s.ok.received).toHaveLength(0);
  }, 120_000);
});
