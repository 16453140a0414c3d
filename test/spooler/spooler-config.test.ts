// The [spooler] keys the outbound spooler added: defaults, derived values
// and the errors for bad values, through the real config loader.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/core/config/index.ts';
import { tempDir } from '../support/temp-dir.ts';
import { testCa } from '../support/test-pki.ts';

const parse = (text: string) =>
  parseConfig(text, { env: {}, source: 'test.toml', configDir: '/etc/sealpost' });

function errorsOf(text: string): string[] {
  try {
    parse(text);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).lines();
  }
  throw new Error('expected a ConfigError');
}

describe('[spooler] delivery keys', () => {
  it('has the documented defaults and no relay', () => {
    const c = parse('');
    expect(c.spooler).toMatchObject({
      lifetime_secs: 432_000,
      delay_dsn_after_secs: 14_400,
      concurrency: 32,
      per_domain_concurrency: 8,
      connect_timeout_secs: 60,
      command_timeout_secs: 300,
      smtp_port: 25,
      trusted_resolvers: [],
    });
    expect(c.spooler.relay).toBeUndefined();
  });

  it('resolves a relay: port from the TLS mode, password file made absolute', () => {
    const c = parse(
      '[spooler.relay]\nhost = "smtp.example.net"\ntls = "implicit"\nusername = "u"\npassword_file = "relay.pass"\n',
    );
    expect(c.spooler.relay).toMatchObject({
      host: 'smtp.example.net',
      port: 465,
      tls: 'implicit',
      username: 'u',
    });
    expect(c.spooler.relay?.password_file).toBe('/etc/sealpost/relay.pass');
    expect(parse('[spooler.relay]\nhost = "10.0.0.5"\n').spooler.relay).toMatchObject({
      port: 25,
      tls: 'starttls',
    });
    expect(
      parse('[spooler]\ntrusted_resolvers = ["192.0.2.53", "[2001:db8::53]:5353"]\n').spooler
        .trusted_resolvers,
    ).toEqual(['192.0.2.53:53', '[2001:db8::53]:5353']);
  });

  it('names bad values', () => {
    expect(errorsOf('[spooler]\nper_domain_concurrency = 0\n')).toEqual([
      'spooler.per_domain_concurrency: expected integer >= 1, got 0',
    ]);
    expect(errorsOf('[spooler]\nsmtp_port = 70000\n')).toEqual([
      'spooler.smtp_port: expected integer 1-65535, got 70000',
    ]);
    expect(errorsOf('[spooler.relay]\nhost = "smtp.example.net"\ntls = "maybe"\n')[0]).toMatch(
      /^spooler\.relay\.tls: expected one of "starttls", "implicit", "opportunistic"/,
    );
    expect(errorsOf('[spooler.relay]\nhost = "smtp.example.net"\nusername = "u"\n')).toEqual([
      'spooler.relay.password_file: spooler.relay.username and spooler.relay.password_file must be set together',
    ]);
    expect(errorsOf('[spooler.relay]\nport = 25\n')[0]).toMatch(
      /^spooler\.relay\.host: required key is missing/,
    );
  });
});

describe('[spooler] probe and timeout keys, [tls] extra_ca_file', () => {
  it('defaults to the root DNSKEY probe and a 20 s MTA-STS deadline; takes other values', () => {
    expect(parse('').spooler).toMatchObject({
      dane_probe_name: '.',
      dane_probe_type: 'DNSKEY',
      mta_sts_timeout_secs: 20,
    });
    expect(parse('').tls.extra_ca_file).toBeUndefined();
    const c = parse(
      '[spooler]\ndane_probe_name = "example.net"\ndane_probe_type = "A"\nmta_sts_timeout_secs = 5\n',
    );
    expect(c.spooler).toMatchObject({
      dane_probe_name: 'example.net',
      dane_probe_type: 'A',
      mta_sts_timeout_secs: 5,
    });
  });

  it('names bad probe and timeout values', () => {
    expect(errorsOf('[spooler]\ndane_probe_name = "not a name"\n')).toEqual([
      'spooler.dane_probe_name: expected a DNS name or "." (the root), got "not a name"',
    ]);
    expect(errorsOf('[spooler]\ndane_probe_type = "TLSA"\n')[0]).toMatch(
      /^spooler\.dane_probe_type: expected one of "DNSKEY", "NS", "A", "AAAA", "MX", "TXT"/,
    );
    expect(errorsOf('[spooler]\nmta_sts_timeout_secs = 0\n')).toEqual([
      'spooler.mta_sts_timeout_secs: expected integer >= 1, got 0',
    ]);
  });

  it('reads extra_ca_file at load: a PEM bundle passes; missing, a directory or not PEM is named', async () => {
    const dir = tempDir();
    const ca = await testCa();
    const other = await testCa('Second Test CA');
    writeFileSync(join(dir, 'bundle.pem'), `${ca.cert}\n${other.cert}`);
    writeFileSync(join(dir, 'junk.pem'), 'not a certificate\n');
    writeFileSync(join(dir, 'broken.pem'), '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
    mkdirSync(join(dir, 'adir'));
    const at = (file: string) =>
      parseConfig(`[tls]\nextra_ca_file = "${file}"\n`, { env: {}, source: 'test.toml', configDir: dir });
    expect(at('bundle.pem').tls.extra_ca_file).toBe(join(dir, 'bundle.pem'));
    const lines = (file: string) => {
      try {
        at(file);
      } catch (err) {
        return (err as ConfigError).lines();
      }
      throw new Error('expected a ConfigError');
    };
    expect(lines('missing.pem')).toEqual([`tls.extra_ca_file: file not found: ${join(dir, 'missing.pem')}`]);
    expect(lines('adir')).toEqual([
      `tls.extra_ca_file: ${join(dir, 'adir')} is a directory, expected a PEM file`,
    ]);
    expect(lines('junk.pem')[0]).toMatch(/^tls\.extra_ca_file: .*junk\.pem holds no PEM certificate/);
    expect(lines('broken.pem')[0]).toMatch(
      /^tls\.extra_ca_file: .*broken\.pem: certificate 1 is not a valid X\.509 certificate$/,
    );
  });
});
