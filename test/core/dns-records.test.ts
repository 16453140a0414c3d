// `sealpost dns-records`: every record of the reference's table for a two-
// domain config, checked field by field against values computed here with
// openssl; then the CLI as a subprocess (zone text, --json, --check against
// the DNS double with everything published, then with records missing or
// different).
import { execFile, execFileSync } from 'node:child_process';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { type Config, parseConfig } from '../../src/core/config/index.ts';
import { generateKeypair, writeKeypairFile } from '../../src/core/keys/keypair-file.ts';
import { buildDnsRecords, type DnsRecordSpec } from '../../src/edge/domaind/dns-records.ts';
import { type DnsDouble, type DnsRecordData, startDnsDouble } from '../support/doubles/dns-server.ts';
import { tempDir } from '../support/temp-dir.ts';

const run = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

function openssl(args: string[], input?: Buffer): Buffer {
  return execFileSync('openssl', args, { input, stdio: ['pipe', 'pipe', 'ignore'] });
}

interface Setup {
  dir: string;
  configFile: string;
  config: Config;
  authority: string;
  dkimOrg: string;
  dkimNet: string;
  leafSpki: string;
  caSpki: string;
}

/** Keys and certificates made here; expected values computed with openssl, not with our code. */
function setup(): Setup {
  const dir = tempDir();
  const pkcs1 = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
    type: 'pkcs1',
    format: 'pem',
  });
  const pkcs8 = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
    type: 'pkcs8',
    format: 'pem',
  });
  writeFileSync(join(dir, 'dkim-org.pem'), pkcs1);
  writeFileSync(join(dir, 'dkim-net.pem'), pkcs8);
  const pubDer = (file: string) =>
    openssl(['pkey', '-in', join(dir, file), '-pubout', '-outform', 'DER']).toString('base64');

  const ca = ['-keyout', join(dir, 'ca.key'), '-out', join(dir, 'ca.pem')];
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', ...ca, '-days', '2', '-subj', '/CN=Test CA']);
  openssl([
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    join(dir, 'leaf.key'),
    '-out',
    join(dir, 'leaf.csr'),
    '-subj',
    '/CN=mail.example.org',
  ]);
  openssl([
    'x509',
    '-req',
    '-in',
    join(dir, 'leaf.csr'),
    '-CA',
    join(dir, 'ca.pem'),
    '-CAkey',
    join(dir, 'ca.key'),
    '-CAcreateserial',
    '-days',
    '2',
    '-out',
    join(dir, 'leaf.pem'),
  ]);
  execFileSync('sh', ['-c', `cat leaf.pem ca.pem > fullchain.pem`], { cwd: dir });
  const spki = (file: string) => {
    const pub = openssl(['x509', '-in', join(dir, file), '-noout', '-pubkey']);
    return createHash('sha256')
      .update(openssl(['pkey', '-pubin', '-outform', 'DER'], pub))
      .digest('hex');
  };

  const authority = generateKeypair();
  writeKeypairFile(join(dir, 'authority.json'), authority);
  const toml = `
[smtp]
hostname = "mail.example.org"
local_domains = ["example.org", "example.net"]
tls_cert_file = "fullchain.pem"
tls_key_file = "leaf.key"

[[spooler.dkim]]
domain = "example.org"
selector = "s2025"
key_file = "dkim-org.pem"

[[spooler.dkim]]
domain = "example.net"
selector = "net1"
key_file = "dkim-net.pem"

[spooler.tlsrpt]
contact = "tls-reports@example.org"

[spooler.dmarc_rua_ingest]
enabled = true
address = "dmarc@example.org"

[mail_hosts]
pop3_enabled = false
submission_tls = "starttls"
imap_host = "imap.example.org"

[chain]
authority_key_file = "authority.json"

[domaind]
public_host = "web.example.org"
dmarc_policy = "quarantine"
`;
  const configFile = join(dir, 'sealpost.toml');
  writeFileSync(configFile, toml);
  return {
    dir,
    configFile,
    config: parseConfig(toml, { configDir: dir }),
    authority: authority.address,
    dkimOrg: pubDer('dkim-org.pem'),
    dkimNet: pubDer('dkim-net.pem'),
    leafSpki: spki('leaf.pem'),
    caSpki: spki('ca.pem'),
  };
}

const POLICY_ID = createHash('sha256')
  .update('version: STSv1\r\nmode: testing\r\nmx: mail.example.org\r\nmax_age: 604800\r\n')
  .digest('hex')
  .slice(0, 16);

/** [type, name, value] of every record expected for one domain. */
function expectedFor(domain: string, s: Setup): [string, string, string][] {
  const dkim = domain === 'example.org' ? ['s2025', s.dkimOrg] : ['net1', s.dkimNet];
  return [
    ['MX', domain, '10 mail.example.org.'],
    ['TXT', domain, 'v=spf1 mx -all'],
    ['TXT', `${dkim[0]}._domainkey.${domain}`, `v=DKIM1; k=rsa; p=${dkim[1]}`],
    ['TXT', `_dmarc.${domain}`, 'v=DMARC1; p=quarantine; rua=mailto:dmarc@example.org'],
    ...(domain === 'example.org'
      ? []
      : ([['TXT', `${domain}._report._dmarc.example.org`, 'v=DMARC1']] as [string, string, string][])),
    ['TXT', `_mta-sts.${domain}`, `v=STSv1; id=${POLICY_ID}`],
    ['CNAME', `mta-sts.${domain}`, 'web.example.org.'],
    ['TXT', `_smtp._tls.${domain}`, 'v=TLSRPTv1; rua=mailto:tls-reports@example.org'],
    ['SRV', `_imaps._tcp.${domain}`, '0 1 993 imap.example.org.'],
    ['SRV', `_imap._tcp.${domain}`, '0 0 0 .'],
    ['SRV', `_pop3s._tcp.${domain}`, '0 0 0 .'],
    ['SRV', `_pop3._tcp.${domain}`, '0 0 0 .'],
    ['SRV', `_submissions._tcp.${domain}`, '0 0 0 .'],
    ['SRV', `_submission._tcp.${domain}`, '10 1 587 mail.example.org.'],
    ['CNAME', `autoconfig.${domain}`, 'web.example.org.'],
    ['CNAME', `autodiscover.${domain}`, 'web.example.org.'],
    ['TXT', `_solana.authority.${domain}`, s.authority],
  ];
}

/** Publishes every record in the DNS double the way an operator would. */
function publishAll(dns: DnsDouble, records: DnsRecordSpec[]): void {
  const byName = new Map<string, { type: string; data: DnsRecordData }[]>();
  const add = (name: string, type: string, data: DnsRecordData) =>
    byName.set(name, [...(byName.get(name) ?? []), { type, data }]);
  for (const r of records) {
    const d = r.data as Record<string, unknown>;
    if (r.type === 'MX') add(r.name, 'MX', { preference: Number(d.priority), exchange: String(d.exchange) });
    if (r.type === 'TXT') add(r.name, 'TXT', String(d.text));
    if (r.type === 'CNAME') add(r.name, 'CNAME', String(d.target));
    if (r.type === 'SRV') add(r.name, 'SRV', d as never);
    if (r.type === 'TLSA')
      add(r.name, 'TLSA', { usage: 3, selector: 1, matchingType: 1, certificate: String(d.data) });
  }
  for (const [name, entries] of byName) {
    for (const type of new Set(entries.map((e) => e.type))) {
      dns.set(
        name,
        type as never,
        entries.filter((e) => e.type === type).map((e) => e.data),
      );
    }
  }
  dns.set('mail.example.org', 'A', ['192.0.2.25']);
  dns.set('web.example.org', 'A', ['192.0.2.80']);
  dns.set('25.2.0.192.in-addr.arpa', 'PTR', ['mail.example.org']);
}

describe('dns-records', () => {
  it('builds every record of the table, field by field', () => {
    const s = setup();
    const result = buildDnsRecords(s.config, { tlsaCa: true });
    expect(result.warnings).toEqual([]);
    const rows = result.records.map((r) => [r.type, r.name, r.value]);
    expect(rows).toEqual([
      ...expectedFor('example.org', s),
      ...expectedFor('example.net', s),
      ['TLSA', '_25._tcp.mail.example.org', `3 1 1 ${s.leafSpki}`],
      ['TLSA', '_25._tcp.mail.example.org', `2 1 1 ${s.caSpki}`],
      ['PTR', 'reverse of the outbound IP', 'mail.example.org.'],
    ]);
    const dkim = result.records.find((r) => r.name === 's2025._domainkey.example.org');
    expect(dkim?.data).toEqual({ text: `v=DKIM1; k=rsa; p=${s.dkimOrg}` });
    expect(result.records.find((r) => r.type === 'MX')?.data).toEqual({
      priority: 10,
      exchange: 'mail.example.org',
    });
    expect(result.records.find((r) => r.name === '_submission._tcp.example.org')?.data).toEqual({
      priority: 10,
      weight: 1,
      port: 587,
      target: 'mail.example.org',
    });
    expect(result.records.find((r) => r.type === 'TLSA')?.data).toEqual({
      usage: 3,
      selector: 1,
      matchingType: 1,
      data: s.leafSpki,
    });
  });

  it('warns about what it cannot fill in instead of printing wrong records', () => {
    const config = parseConfig('[smtp]\nhostname = "mail.example.org"\nlocal_domains = ["example.org"]\n', {
      dataDirOverride: tempDir(),
    });
    const result = buildDnsRecords(config, { tlsaCa: true });
    expect(result.warnings).toEqual([
      'authority TXT not printed: [chain] authority_key_file is not configured',
      'no DKIM record for example.org: add a [[spooler.dkim]] entry for it',
      expect.stringMatching(/^TLSA not printed: /),
    ]);
    expect(result.records.some((r) => r.type === 'TLSA' || r.name.startsWith('_solana'))).toBe(false);
    // The DMARC report address defaults to the first domain's postmaster: no external authorization needed.
    expect(result.records.find((r) => r.name === '_dmarc.example.org')?.value).toBe(
      'v=DMARC1; p=none; rua=mailto:postmaster@example.org',
    );
  });

  it('prints zone-file text and JSON from the CLI', { timeout: 120_000 }, async () => {
    const s = setup();
    const { stdout: zone } = await run(
      process.execPath,
      ['bin/sealpost.js', 'dns-records', '--config', s.configFile],
      { cwd: ROOT },
    );
    expect(zone).toMatch(/^example\.org\. +3600 IN MX +10 mail\.example\.org\.$/m);
    expect(zone).toMatch(
      /^_dmarc\.example\.org\. +3600 IN TXT +"v=DMARC1; p=quarantine; rua=mailto:dmarc@example\.org"$/m,
    );
    expect(zone).toMatch(/^_imaps\._tcp\.example\.net\. +3600 IN SRV +0 1 993 imap\.example\.org\.$/m);
    expect(zone).toMatch(
      new RegExp(`^_25\\._tcp\\.mail\\.example\\.org\\. +3600 IN TLSA +3 1 1 ${s.leafSpki}$`, 'm'),
    );
    expect(zone).toContain(';   PTR <outbound IP> -> mail.example.org.');
    // The DKIM value is longer than 255 bytes: split into character-strings that join back to the key.
    const dkimLine = zone.split('\n').find((l) => l.startsWith('s2025._domainkey.example.org.')) ?? '';
    const pieces = [...dkimLine.matchAll(/"([^"]*)"/g)].map((m) => m[1] ?? '');
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.every((p) => p.length <= 255)).toBe(true);
    expect(pieces.join('')).toBe(`v=DKIM1; k=rsa; p=${s.dkimOrg}`);
    expect(zone).not.toContain('2 1 1');

    const { stdout } = await run(
      process.execPath,
      ['bin/sealpost.js', 'dns-records', '--config', s.configFile, '--json', '--tlsa-ca'],
      { cwd: ROOT },
    );
    expect(JSON.parse(stdout)).toEqual(
      JSON.parse(JSON.stringify(buildDnsRecords(s.config, { tlsaCa: true }))),
    );
  });

  it('--check reports ok for everything published and names what is missing or different', {
    timeout: 180_000,
  }, async () => {
    const s = setup();
    const dns = await startDnsDouble();
    cleanups.push(() => dns.close());
    publishAll(dns, buildDnsRecords(s.config).records);
    const check = (...extra: string[]) =>
      run(
        process.execPath,
        [
          'bin/sealpost.js',
          'dns-records',
          '--config',
          s.configFile,
          '--check',
          '--resolver',
          dns.address,
          ...extra,
        ],
        {
          cwd: ROOT,
        },
      ).then(
        (r) => ({ code: 0, stdout: r.stdout }),
        (err: { code: number; stdout: string }) => ({ code: err.code, stdout: err.stdout }),
      );

    const good = await check();
    expect(good.stdout).toMatch(/all \d+ records ok/);
    expect(good.code).toBe(0);

    dns.remove('s2025._domainkey.example.org');
    dns.set('example.org', 'TXT', ['v=spf1 a -all', 'google-site-verification=abc']);
    dns.set('_mta-sts.example.net', 'TXT', ['v=STSv1; id=0000000000000000']);
    dns.set('_imaps._tcp.example.net', 'SRV', [
      { priority: 0, weight: 1, port: 1993, target: 'imap.example.org' },
    ]);
    dns.set('example.net', 'MX', [{ preference: 10, exchange: 'mail.example.org' }]);
    dns.set('mail.example.org', 'CNAME', ['web.example.org']);
    dns.remove('_25._tcp.mail.example.org');
    const bad = await check('--json');
    expect(bad.code).toBe(1);
    const statuses = new Map(
      (
        JSON.parse(bad.stdout).checks as { type: string; name: string; status: string; found: string[] }[]
      ).map((c) => [`${c.type} ${c.name}`, c]),
    );
    expect(statuses.get('TXT s2025._domainkey.example.org')?.status).toBe('missing');
    expect(statuses.get('TXT example.org')).toMatchObject({ status: 'different', found: ['v=spf1 a -all'] });
    expect(statuses.get('TXT _mta-sts.example.net')?.status).toBe('different');
    expect(statuses.get('SRV _imaps._tcp.example.net')).toMatchObject({
      status: 'different',
      found: ['0 1 1993 imap.example.org.'],
    });
    expect(statuses.get('MX example.net')).toMatchObject({
      status: 'different',
      check_note: expect.stringContaining('CNAME'),
    });
    expect(statuses.get('TLSA _25._tcp.mail.example.org')?.status).toBe('missing');
    expect(statuses.get('TXT _dmarc.example.org')?.status).toBe('ok');
    expect(statuses.get('CNAME autoconfig.example.net')?.status).toBe('ok');
    expect(statuses.get('SRV _pop3s._tcp.example.org')?.status).toBe('ok');

    const text = await check();
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/^missing +TXT +s2025\._domainkey\.example\.org /m);
    expect(text.stdout).toMatch(/^different TXT +example\.org +v=spf1 mx -all\n +found: v=spf1 a -all$/m);
    expect(text.stdout).toMatch(/records not ok/);
  });
});
