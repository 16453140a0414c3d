// The [spooler] keys the outbound spooler added: defaults, derived values
// and the errors for bad values, through the real config loader.
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../src/config/index.ts';

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
