// `[redis] sentinels` and `name` (Redis Sentinel) next to `url`: what the
// config keeps, what `sealpost config check` refuses (naming the keys), the
// connection options every Sealpost client gets from it, and the CLI's one
// line when no sentinel answers.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connectCliRedis } from '../../src/cli/redis-connect.ts';
import { ConfigError, parseConfig, renderConfigToml } from '../../src/core/config/index.ts';
import {
  createRedis,
  describeRedis,
  isFailoverError,
  redisKeys,
  sentinelOptions,
} from '../../src/core/redis/client.ts';
import { tempDir } from '../support/temp-dir.ts';

const BIN = resolve(import.meta.dirname, '..', '..', 'bin', 'sealpost.js');

function parse(toml: string, env: Record<string, string> = {}) {
  const dir = tempDir();
  return parseConfig(toml, { env, source: 'test.toml', configDir: dir, dataDirOverride: dir });
}

function problems(toml: string, configDir?: string): string[] {
  try {
    const dir = configDir ?? tempDir();
    parseConfig(toml, { env: {}, source: 'test.toml', configDir: dir, dataDirOverride: dir });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).lines();
  }
  throw new Error('expected a ConfigError');
}

function configCheck(file: string, cwd: string): Promise<{ code: number; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [BIN, 'config', 'check', '--config', file],
      { cwd, env: { ...process.env, NO_COLOR: '1' } },
      (err, _stdout, stderr) =>
        done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stderr }),
    );
  });
}

describe('[redis] sentinels', () => {
  it('keeps the sentinels (default port 26379) and name, has no url, and wins over REDIS_URL', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'redis.pass'), 's3cret\n');
    writeFileSync(join(dir, 'sentinel.pass'), 'watch\n');
    const toml = [
      '[redis]',
      'sentinels = ["10.0.0.1", "10.0.0.2:26380", "[::1]:26381"]',
      'name = "mail"',
      'username = "sealpost"',
      'password_file = "redis.pass"',
      'db = 2',
      'sentinel_password_file = "sentinel.pass"',
      '',
    ].join('\n');
    const c = parseConfig(toml, {
      env: { REDIS_URL: 'redis://10.9.9.9:6379' },
      source: 'test.toml',
      configDir: dir,
      dataDirOverride: dir,
    });
    expect(c.redis).toEqual({
      sentinels: ['10.0.0.1:26379', '10.0.0.2:26380', '[::1]:26381'],
      name: 'mail',
      username: 'sealpost',
      password_file: join(dir, 'redis.pass'),
      db: 2,
      sentinel_password_file: join(dir, 'sentinel.pass'),
      prefix: 'sealpost',
      wait_timeout_ms: 1000,
    });
    expect(c.redis.url).toBeUndefined();
    // `config show` writes it back in a form that parses to the same config.
    const again = parseConfig(renderConfigToml(c), {
      env: {},
      source: 'shown.toml',
      configDir: dir,
      dataDirOverride: dir,
    });
    expect(again.redis).toEqual(c.redis);
    // What every client gets: the sentinels, the group, the passwords read from their files,
    // the +switch-master listener and the master role check.
    expect(sentinelOptions({ ...c.redis, sentinels: c.redis.sentinels ?? [], name: 'mail' })).toMatchObject({
      sentinels: [
        { host: '10.0.0.1', port: 26379 },
        { host: '10.0.0.2', port: 26380 },
        { host: '::1', port: 26381 },
      ],
      name: 'mail',
      role: 'master',
      username: 'sealpost',
      password: 's3cret',
      db: 2,
      sentinelPassword: 'watch',
      failoverDetector: true,
    });
    expect(describeRedis(c.redis)).toBe(
      'Sentinel master "mail" via 10.0.0.1:26379, 10.0.0.2:26380, [::1]:26381',
    );
    expect(redisKeys(c.redis)).toBe('[redis] sentinels, name');
  });

  it('leaves the URL form as it was', () => {
    const c = parse('[redis]\nurl = "rediss://u:p@cache:6380/3"\n');
    expect(c.redis.url).toBe('rediss://u:p@cache:6380/3');
    expect(describeRedis(c.redis)).toBe('cache:6380');
    expect(redisKeys(c.redis)).toBe('[redis] url');
    expect(parse('', { REDIS_URL: 'redis://10.0.0.5:7000' }).redis.url).toBe('redis://10.0.0.5:7000');
  });

  it('refuses url with sentinels, sentinels without name, and bad entries, naming each key', () => {
    expect(problems('[redis]\nurl = "redis://a:6379"\nsentinels = ["b:26379"]\nname = "m"\n')).toEqual([
      'redis.sentinels: redis.url and redis.sentinels are alternatives: set one of them, not both',
    ]);
    expect(problems('[redis]\nsentinels = ["b:26379"]\n')).toEqual([
      'redis.name: redis.sentinels needs redis.name, the master group name the sentinels monitor',
    ]);
    expect(problems('[redis]\nsentinels = []\nname = "m"\n')).toEqual([
      'redis.sentinels: expected at least one "HOST[:PORT]" sentinel, got an array',
    ]);
    expect(problems('[redis]\nsentinels = ["ok:26379", "b:0", "-x-"]\nname = "m"\n')).toEqual([
      'redis.sentinels[1]: expected HOST[:PORT] with a port 1-65535, got "b:0"',
      'redis.sentinels[2]: expected HOST[:PORT], got "-x-"',
    ]);
    expect(problems('[redis]\nsentinels = ["b"]\nname = "has space"\ndb = -1\ntls = "yes"\n')).toEqual([
      'redis.name: expected letters, digits, "_", "." or "-", got "has space"',
      'redis.db: expected integer >= 0, got -1',
      'redis.tls: expected true or false, got "yes"',
    ]);
  });

  it('refuses the Sentinel-only keys without sentinels, and a username without a password', () => {
    expect(problems('[redis]\nurl = "redis://a:6379"\nname = "m"\npassword_file = "p"\n')).toEqual([
      'redis.name: redis.name applies only with redis.sentinels; with redis.url, put it in the URL (rediss://USER:PASSWORD@HOST:PORT/DB)',
      'redis.password_file: redis.password_file applies only with redis.sentinels; with redis.url, put it in the URL (rediss://USER:PASSWORD@HOST:PORT/DB)',
    ]);
    expect(problems('[redis]\nsentinel_tls = true\n')).toEqual([
      'redis.sentinel_tls: redis.sentinel_tls applies only with redis.sentinels (set redis.sentinels and redis.name, or leave it out)',
    ]);
    expect(
      problems('[redis]\nsentinels = ["b"]\nname = "m"\nusername = "u"\nsentinel_username = "s"\n'),
    ).toEqual([
      'redis.password_file: redis.username needs redis.password_file (an ACL user logs in with a password)',
      'redis.sentinel_password_file: redis.sentinel_username needs redis.sentinel_password_file',
    ]);
  });

  it('refuses a password file that cannot be read or is empty', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'empty.pass'), '\n');
    expect(
      problems(
        '[redis]\nsentinels = ["b"]\nname = "m"\npassword_file = "missing.pass"\nsentinel_password_file = "empty.pass"\n',
        dir,
      ),
    ).toEqual([
      `redis.password_file: cannot read ${join(dir, 'missing.pass')} (ENOENT)`,
      `redis.sentinel_password_file: ${join(dir, 'empty.pass')} is empty (expected the password on its first line)`,
    ]);
  });

  it('sealpost config check exits 2 naming the keys', async () => {
    const cwd = tempDir();
    writeFileSync(
      join(cwd, 'bad.toml'),
      '[redis]\nurl = "redis://a:6379"\nsentinels = ["b:99999"]\nname = "m"\n',
    );
    const run = await configCheck('bad.toml', cwd);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('redis.sentinels[0]: expected HOST[:PORT] with a port 1-65535');
    expect(run.stderr).toContain(
      'redis.sentinels: redis.url and redis.sentinels are alternatives: set one of them, not both',
    );
  });

  it('a CLI command ends with one line naming the sentinels when none answers', async () => {
    // A port nothing listens on.
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    await new Promise((r) => server.close(r));
    const target = { sentinels: [`127.0.0.1:${port}`], name: 'mail' };
    const t0 = Date.now();
    await expect(connectCliRedis(target)).rejects.toThrow(
      `cannot reach Redis at Sentinel master "mail" via 127.0.0.1:${port} ([redis] sentinels, name)`,
    );
    expect(Date.now() - t0).toBeLessThan(5000);
    // A client made for the same target does not throw until it is used.
    const lazy = createRedis(target, { lazyConnect: true });
    lazy.disconnect();
  });

  it('READONLY and NOREPLICAS are the errors that send a client back to Sentinel', () => {
    expect(isFailoverError(new Error("READONLY You can't write against a read only replica."))).toBe(true);
    expect(isFailoverError(new Error('NOREPLICAS Not enough good replicas to write.'))).toBe(true);
    expect(isFailoverError(new Error('ERR unknown command'))).toBe(false);
  });
});
