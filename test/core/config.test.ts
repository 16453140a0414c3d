import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PROGRAM_ID } from '../../chain/client/program-id.ts';
import {
  ConfigError,
  defaultConfig,
  loadConfig,
  parseConfig,
  renderConfigToml,
} from '../../src/core/config/index.ts';
import { tempDir } from '../support/temp-dir.ts';

const env = {};
const WALLET = '4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T';

function errorsOf(text: string): string[] {
  try {
    parseConfig(text, { env, source: 'test.toml' });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).lines();
  }
  throw new Error('expected a ConfigError');
}

describe('config validation', () => {
  it('checks the [smtp] error limits and points Postfix spellings at ours', () => {
    expect(errorsOf('[smtp]\nsoft_error_limit = 20\nhard_error_limit = 20\nerror_sleep_ms = -1\n')).toEqual([
      'smtp.error_sleep_ms: expected integer >= 0, got -1',
      'smtp.soft_error_limit: must be less than hard_error_limit (20), or hard_error_limit = 0 turns the limit off',
    ]);
    expect(errorsOf('[smtp]\nsoft_error_limit = 20\nhard_error_limit = 20\n')).toEqual([
      'smtp.soft_error_limit: must be less than hard_error_limit (20), or hard_error_limit = 0 turns the limit off',
    ]);
    expect(errorsOf('[smtp]\nsmtpd_hard_error_limit = 5\n')).toEqual([
      'unknown key smtp.smtpd_hard_error_limit (the [smtp] key is hard_error_limit)',
    ]);
    const c = parseConfig('[smtp]\nsoft_error_limit = 0\nhard_error_limit = 0\n', {
      env,
      source: 'test.toml',
    });
    expect(c.smtp).toMatchObject({ soft_error_limit: 0, hard_error_limit: 0, error_sleep_ms: 1000 });
  });

  it('bounds [serve] workers and start_attempts', () => {
    expect(errorsOf('[serve]\nworkers = 1000\nstart_attempts = 0\n')).toEqual([
      'serve.workers: expected at most 256, got 1000',
      'serve.start_attempts: expected integer >= 1, got 0',
    ]);
    expect(errorsOf('[serve]\nstart_attempts = 101\n')).toEqual([
      'serve.start_attempts: expected at most 100, got 101',
    ]);
    expect(parseConfig('', { env }).serve).toEqual({ workers: 0, start_attempts: 5 });
    expect(parseConfig('[serve]\nstart_attempts = 12\n', { env }).serve.start_attempts).toBe(12);
  });

  it('names a typo’d key with its full path and a suggestion', () => {
    expect(errorsOf('[smtp]\nhostnme = "mail.example.org"\n')).toEqual([
      'unknown key smtp.hostnme (did you mean smtp.hostname?)',
    ]);
    expect(errorsOf('[spooler.tlsrpt]\nenabeld = true\n')).toEqual([
      'unknown key spooler.tlsrpt.enabeld (did you mean spooler.tlsrpt.enabled?)',
    ]);
    expect(errorsOf('[nonsense]\n')).toEqual(['unknown key nonsense']);
  });

  it('names a wrong type with what was expected and what was found', () => {
    expect(errorsOf('[[smtp.listeners]]\nmode = "mx"\nport = "25x"\n')).toEqual([
      'smtp.listeners[0].port: expected integer 1-65535, got "25x"',
    ]);
    expect(errorsOf('[api]\nopen_registration = "yes"\n')).toEqual([
      'api.open_registration: expected true or false, got "yes"',
    ]);
    expect(errorsOf('[api]\ntrusted_proxies = ["10.0.0.0/8", "10.0.0.0/33", "proxy.local"]\n')).toEqual([
      'api.trusted_proxies[1]: expected an IP address or CIDR network such as 10.0.0.0/8, got "10.0.0.0/33"',
      'api.trusted_proxies[2]: expected an IP address or CIDR network such as 10.0.0.0/8, got "proxy.local"',
    ]);
    expect(errorsOf('[log]\nformat = "xml"\n')).toEqual([
      'log.format: expected one of "json", "pretty", got "xml"',
    ]);
    expect(errorsOf('smtp = 5\n')).toEqual(['smtp: expected a table, got 5']);
  });

  it('lists several errors at once', () => {
    const lines = errorsOf(`
[smtp]
hostnme = "x"
max_recipients = 0
[[smtp.listeners]]
mode = "submissions"
tls = "starttls"
port = 70000
[chain]
rpc_url = "ftp://example.org"
[[spooler.dkim]]
domain = "example.org"
[store]
url = "mysql://db"
`);
    expect(lines).toEqual(
      expect.arrayContaining([
        'unknown key smtp.hostnme (did you mean smtp.hostname?)',
        'smtp.max_recipients: expected integer >= 1, got 0',
        'smtp.listeners[0].port: expected integer 1-65535, got 70000',
        'smtp.listeners[0].tls: mode "submissions" allows tls "implicit", got "starttls"',
        'chain.rpc_url: expected a http:// or https:// URL, got "ftp://example.org"',
        'spooler.dkim[0].selector: required key is missing (expected a string)',
        'spooler.dkim[0].key_file: required key is missing (expected a string)',
        'store.url: expected "sqlite:PATH" or a "postgres://" URL, got "mysql://db"',
      ]),
    );
    expect(lines).toHaveLength(8);
  });

  it('prefixes the message with the source and indents each issue', () => {
    try {
      parseConfig('[smtp]\nhostnme = 1\n[log]\nlevel = "loud"\n', { source: 'sealpost.toml', env });
      expect.unreachable();
    } catch (err) {
      expect((err as Error).message).toBe(
        'config error in sealpost.toml:\n' +
          '  unknown key smtp.hostnme (did you mean smtp.hostname?)\n' +
          '  log.level: expected one of "trace", "debug", "info", "warn", "error", "fatal", "silent", got "loud"',
      );
    }
  });

  it('validates postmaster_wallet as base58 of 32 bytes', () => {
    expect(errorsOf('[smtp]\npostmaster_wallet = "0OIl"\n')).toEqual([
      'smtp.postmaster_wallet: expected a base58 public key (32 bytes), got "0OIl", which is not base58 (no 0, O, I or l)',
    ]);
    expect(errorsOf('[smtp]\npostmaster_wallet = "11111"\n')).toEqual([
      'smtp.postmaster_wallet: expected a base58 public key (32 bytes), got "11111", which decodes to 5 bytes',
    ]);
    const ok = parseConfig(`[smtp]\npostmaster_wallet = "${WALLET}"\n`, { env });
    expect(ok.smtp.postmaster_wallet).toBe(WALLET);
  });

  it('points a misplaced retention key at its section', () => {
    expect(errorsOf('[spooler.tlsrpt]\nreport_retention_days = 7\n')).toEqual([
      'unknown key spooler.tlsrpt.report_retention_days (report_retention_days lives in [spooler.dmarc_rua_ingest]; it also governs TLS-RPT pending rows)',
    ]);
  });

  it('rejects duplicate listener addresses and names', () => {
    const lines = errorsOf(`
[[smtp.listeners]]
name = "a"
mode = "mx"
port = 2525
[[smtp.listeners]]
name = "a"
mode = "submission"
port = 2587
`);
    expect(lines).toEqual(['smtp.listeners[1].name: duplicate listener name "a"']);
    expect(
      errorsOf('[[smtp.listeners]]\nmode = "mx"\n[[smtp.listeners]]\nmode = "mx"\nport = 2525\n'),
    ).toEqual(['smtp.listeners[1]: 127.0.0.1:2525 is already used by smtp.listeners[0]']);
  });

  it('reports TOML syntax errors with line and column', () => {
    const [line] = errorsOf('[smtp]\nhostname = \n');
    expect(line).toMatch(/^TOML syntax error at line 2, column \d+: /);
  });
});

describe('config defaults', () => {
  it('fills every section', () => {
    const dir = tempDir();
    const c = defaultConfig(join(dir, 'data'), { env });
    const data = join(dir, 'data');
    expect(c.smtp.hostname).toBe('localhost');
    expect(c.smtp.local_domains).toEqual(['localhost']);
    expect(c.smtp.listeners).toEqual([
      { name: 'mx', mode: 'mx', host: '127.0.0.1', port: 2525, tls: 'starttls' },
      { name: 'submissions', mode: 'submissions', host: '127.0.0.1', port: 2465, tls: 'implicit' },
    ]);
    expect(c.smtp.max_message_bytes).toBe(25 * 1024 * 1024);
    expect(c.smtp.max_recipients).toBe(100);
    expect(c.smtp.sender_auth).toBe('spf');
    expect(c.smtp.max_connections_per_ip).toBe(20);
    expect(c.smtp.timeouts.socket_timeout_secs).toBe(300);
    expect(c.smtp).toMatchObject({ soft_error_limit: 10, hard_error_limit: 20, error_sleep_ms: 1000 });
    expect(c.smtp).toMatchObject({
      chain_cache_secs: 30,
      chain_refusal_cache_secs: 5,
      chain_cache_entries: 20_000,
    });
    expect(c.smtp.postmaster_wallet).toBeUndefined();
    expect(c.smtp.tls_cert_file).toBe(join(data, 'tls', 'cert.pem'));
    expect(c.spooler).toMatchObject({ hostname: 'localhost', mta_sts: true, dane: true, dkim: [] });
    expect(c.spooler.tlsrpt).toEqual({
      enabled: false,
      org_name: 'localhost',
      contact: 'postmaster@localhost',
    });
    expect(c.spooler.dmarc_rua_ingest).toEqual({
      enabled: false,
      dmarc_retention_days: 90,
      report_retention_days: 90,
      address: 'postmaster@localhost',
      max_report_bytes: 20 * 1024 * 1024,
    });
    expect(c.mail_hosts).toMatchObject({
      imap_host: 'localhost',
      imap_port: 993,
      pop3_port: 995,
      smtp_host: 'localhost',
      submission_port: 465,
      submission_tls: 'implicit',
    });
    expect(c.chain).toEqual({
      rpc_url: 'http://127.0.0.1:8899',
      ws_url: 'ws://127.0.0.1:8900',
      program_id: DEFAULT_PROGRAM_ID,
      commitment: 'confirmed',
      authority_key_file: undefined,
      delegate_key_file: undefined,
      min_authority_lamports: 'auto',
      pipeline_sendmail: true,
      sendmail_batch_max: 8,
      sendmail_batch_wait_ms: 5,
      priority_fee: 'auto',
      priority_fee_percentile: 75,
      max_priority_fee_lamports: 100_000,
      max_rps: 0,
      rpc_max_wait_secs: 30,
      status_poll_ms: 10,
      rent_recovery_days: 0,
      rent_recovery_batch: 500,
      rent_recovery_interval_secs: 3600,
    });
    expect(c.limits).toMatchObject({
      sender_messages: 1000,
      null_sender_messages: 200,
      balance_check_secs: 5,
    });
    expect(c.ipfs).toMatchObject({
      operator: 'pind',
      pind_url: 'http://127.0.0.1:8182',
      max_pin_bytes: 32 * 1024 * 1024,
    });
    expect(c.api).toMatchObject({
      host: '127.0.0.1',
      port: 8080,
      public_url: 'http://127.0.0.1:8080',
      open_registration: true,
      credential_key_file: join(data, 'credential.key'),
      admin_token_file: join(data, 'admin.token'),
    });
    expect(c.domaind).toMatchObject({
      port: 8081,
      resolver: '1.1.1.1:53',
      mta_sts_mode: 'testing',
      mta_sts_mx: ['localhost'],
      public_host: 'localhost',
      dmarc_policy: 'none',
    });
    expect(c.pind).toMatchObject({ port: 8182, gateway_port: 8183, data_dir: join(data, 'pind') });
    expect(c.store).toEqual({ url: `sqlite:${join(data, 'sealpost.sqlite')}`, data_dir: data });
    expect(c.redis).toEqual({ url: 'redis://127.0.0.1:6379', prefix: 'sealpost', wait_timeout_ms: 1000 });
    expect(c.log).toEqual({ level: 'info', format: 'json' });
  });

  it('derives host names, ports and URLs from other keys', () => {
    const c = parseConfig(
      `
[smtp]
hostname = "Mail.Example.ORG"
local_domains = ["example.org", "example.net"]
[mail_hosts]
submission_tls = "starttls"
imap_tls = "starttls"
pop3_port = 1995
[chain]
rpc_url = "https://rpc.example.org:8443/x"
[pind]
auth_token = "pin-secret"
`,
      { env },
    );
    expect(c.smtp.hostname).toBe('mail.example.org');
    expect(c.spooler.hostname).toBe('mail.example.org');
    expect(c.spooler.tlsrpt.contact).toBe('postmaster@example.org');
    expect(c.mail_hosts).toMatchObject({
      submission_port: 587,
      imap_port: 143,
      pop3_port: 1995,
      imap_host: 'mail.example.org',
    });
    expect(c.chain.ws_url).toBe('wss://rpc.example.org:8444/x');
    expect(c.ipfs.pind_auth_token).toBe('pin-secret');
  });

  it('normalizes resolver addresses to HOST:PORT', () => {
    const c = parseConfig(
      '[domaind]\nresolver = "9.9.9.9"\n[dns]\nresolvers = ["::1", "[::1]:5353", "ns.example:54"]\n',
      {
        env,
      },
    );
    expect(c.domaind.resolver).toBe('9.9.9.9:53');
    expect(c.dns.resolvers).toEqual(['[::1]:53', '[::1]:5353', 'ns.example:54']);
    expect(errorsOf('[dns]\nresolvers = ["a b"]\n')).toEqual([
      'dns.resolvers[0]: expected HOST[:PORT], got "a b"',
    ]);
  });

  it('takes the Redis URL from REDIS_URL unless the file sets one', () => {
    expect(parseConfig('', { env: { REDIS_URL: 'redis://10.0.0.5:7000' } }).redis.url).toBe(
      'redis://10.0.0.5:7000',
    );
    const c = parseConfig('[redis]\nurl = "redis://file:1"\n', { env: { REDIS_URL: 'redis://env:2' } });
    expect(c.redis.url).toBe('redis://file:1');
  });
});

describe('config files and paths', () => {
  it('resolves relative paths against the config file directory', () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'etc'));
    const file = join(dir, 'etc', 'sealpost.toml');
    writeFileSync(
      file,
      `
[store]
data_dir = "var"
url = "sqlite:db/accounts.sqlite"
[chain]
authority_key_file = "keys/authority.json"
[[spooler.dkim]]
domain = "example.org"
selector = "s1"
key_file = "/abs/dkim.pem"
[api]
credential_key_file = "../secrets/cred.key"
`,
    );
    const c = loadConfig(file, { env });
    const etc = join(dir, 'etc');
    expect(c.store.data_dir).toBe(join(etc, 'var'));
    expect(c.store.url).toBe(`sqlite:${join(etc, 'db', 'accounts.sqlite')}`);
    expect(c.chain.authority_key_file).toBe(join(etc, 'keys', 'authority.json'));
    expect(c.spooler.dkim[0]?.key_file).toBe('/abs/dkim.pem');
    expect(c.api.credential_key_file).toBe(join(dir, 'secrets', 'cred.key'));
    expect(c.api.admin_token_file).toBe(join(etc, 'var', 'admin.token'));
    expect(c.pind.data_dir).toBe(join(etc, 'var', 'pind'));
  });

  it('lets --data-dir override [store] data_dir (relative to the working directory)', () => {
    const dir = tempDir();
    const file = join(dir, 'sealpost.toml');
    writeFileSync(file, '[store]\ndata_dir = "ignored"\n');
    const c = loadConfig(file, { env, dataDirOverride: 'override-dir' });
    expect(c.store.data_dir).toBe(resolve('override-dir'));
    expect(c.store.url).toBe(`sqlite:${join(resolve('override-dir'), 'sealpost.sqlite')}`);
  });

  it('reports a missing file', () => {
    const dir = tempDir();
    const file = join(dir, 'nope.toml');
    try {
      loadConfig(file, { env });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).issues).toEqual([
        { kind: 'file', path: '', message: `file not found: ${file}` },
      ]);
      expect((err as Error).message).toBe(`config error in ${file}:\n  file not found: ${file}`);
    }
  });

  it('renders TOML that parses back to the same config', () => {
    const dir = tempDir();
    const c = parseConfig(
      `
[smtp]
hostname = "mail.example.org"
postmaster_wallet = "${WALLET}"
[[smtp.listeners]]
mode = "mx"
host = "::1"
port = 25
[[spooler.dkim]]
domain = "example.org"
selector = "s1"
key_file = "dkim.pem"
[ipfs]
pind_auth_token = "tok"
`,
      { env, configDir: dir },
    );
    const text = renderConfigToml(c, { header: ['generated by a test'] });
    expect(text.startsWith('# generated by a test\n')).toBe(true);
    expect(text).toContain('[[spooler.dkim]]');
    expect(parseConfig(text, { env, configDir: '/elsewhere' })).toEqual(c);
  });
});

describe('docs/config.md', () => {
  it('has an example that validates', () => {
    const doc = readFileSync(resolve(import.meta.dirname, '..', '..', 'docs', 'config.md'), 'utf8');
    const example = /## Example[\s\S]*?```toml\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(example).toBeDefined();
    const c = parseConfig(example ?? '', { env, configDir: '/etc/sealpost' });
    expect(c.smtp.listeners.map((l) => `${l.mode}:${l.port}:${l.tls}`)).toEqual([
      'mx:25:starttls',
      'submissions:465:implicit',
      'submission:587:starttls',
    ]);
    expect(c.spooler.dkim[0]?.key_file).toBe('/etc/sealpost/keys/dkim-example.org.pem');
    expect(c.api.public_url).toBe('https://mail.example.org');
  });
});
