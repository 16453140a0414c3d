// The systemd units shipped in contrib/systemd/ for a host without
// containers (docs/operations.md, "Running without containers"). No systemd
// here, so no `systemd-analyze verify`: each unit file is parsed, every
// command it runs is checked against the real CLI (`sealpost <cmd> --help`,
// spawned), the hardening and ordering keys are checked, and the paths the
// units may write are checked against what the documented config writes
// (that config is validated by the real config loader).
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { type Config, parseConfig } from '../../src/core/config/index.ts';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '..', '..');
const UNITS = join(ROOT, 'contrib', 'systemd');
const BIN = join(ROOT, 'bin', 'sealpost.js');
/** Where docs/operations.md installs the checkout, and so what the units run. */
const INSTALL_DIR = '/opt/sealpost';
const CONFIG = '/etc/sealpost/sealpost.toml';
/** A worker@ instance name: the port of its metrics listener. */
const INSTANCE = '9464';

type Section = Map<string, string[]>;
type Unit = Map<string, Section>;

/** systemd's unit file syntax: [Section], Key=Value (repeatable), # and ; comments, \ continuations. */
function parseUnit(text: string): Unit {
  const unit: Unit = new Map();
  let section: Section | undefined;
  for (const raw of text.replace(/\\\n/g, ' ').split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      section = unit.get(header[1] as string) ?? new Map();
      unit.set(header[1] as string, section);
      continue;
    }
    const kv = /^([A-Za-z][A-Za-z0-9]*)=(.*)$/.exec(line);
    if (!kv || !section) throw new Error(`not a unit file line: ${line}`);
    const [, key, value] = kv as unknown as [string, string, string];
    section.set(key, [...(section.get(key) ?? []), value.trim()]);
  }
  return unit;
}

const files = readdirSync(UNITS).sort();
const units = new Map(
  files
    .filter((f) => /\.(service|target)$/.test(f))
    .map((f) => [f, parseUnit(readFileSync(join(UNITS, f), 'utf8'))]),
);
const services = [...units].filter(([f]) => f.endsWith('.service'));

function values(unit: Unit, section: string, key: string): string[] {
  return unit.get(section)?.get(key) ?? [];
}
/** The last value of a key (a later assignment wins), or undefined. */
function value(unit: Unit, section: string, key: string): string | undefined {
  return values(unit, section, key).at(-1);
}
/** Space-separated list keys (After=, Wants=, ReadWritePaths=…), every assignment together. */
function list(unit: Unit, section: string, key: string): string[] {
  return values(unit, section, key).flatMap((v) => v.split(/\s+/).filter(Boolean));
}
function unit(file: string): Unit {
  const u = units.get(file);
  if (!u) throw new Error(`contrib/systemd has no ${file}`);
  return u;
}

/** An Exec line as argv: its prefixes (-, @, :, +, !) dropped, %i filled in. */
function argv(line: string): string[] {
  return line
    .replace(/^[-@:+!]+/, '')
    .replace(/%i/g, INSTANCE)
    .split(/\s+/)
    .filter(Boolean);
}

/** The sealpost subcommand path of an argv (`pind`, `worker`, …) and the rest. */
function sealpostCommand(args: string[]): { command: string[]; rest: string[] } {
  expect(args[0], 'runs the installed bin/sealpost.js').toBe(`${INSTALL_DIR}/bin/sealpost.js`);
  const rest = args.slice(1);
  const first = rest.findIndex((a) => a.startsWith('-'));
  return { command: first === -1 ? rest : rest.slice(0, first), rest: first === -1 ? [] : rest.slice(first) };
}

async function checkAgainstCli(args: string[], what: string): Promise<string[]> {
  const { command, rest } = sealpostCommand(args);
  expect(command.length, `${what}: a sealpost command`).toBeGreaterThan(0);
  const help = await run(process.execPath, [BIN, ...command, '--help'], { cwd: ROOT });
  expect(help.stdout, `${what}: sealpost ${command.join(' ')} --help`).toContain(
    `Usage: sealpost ${command.join(' ')} [options]`,
  );
  for (const option of rest.filter((a) => a.startsWith('--')))
    expect(help.stdout, `${what}: sealpost ${command.join(' ')} ${option}`).toMatch(
      new RegExp(`(^|\\s)${option}(\\s|,|$)`, 'm'),
    );
  expect(rest[rest.indexOf('--config') + 1], `${what}: --config`).toBe(CONFIG);
  return command;
}

/** The bare-metal config: the ```toml block of docs/operations.md's "Running without containers". */
function documentedConfig(): Config {
  const doc = readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8');
  const start = doc.indexOf('\n## Running without containers');
  expect(start, 'docs/operations.md has "Running without containers"').toBeGreaterThan(-1);
  const next = doc.indexOf('\n## ', start + 1);
  const part = doc.slice(start, next === -1 ? undefined : next);
  const text = /```toml\n([\s\S]*?)```/.exec(part)?.[1];
  if (!text) throw new Error('"Running without containers" has no ```toml block');
  // It is the file the units name.
  expect(part).toContain(CONFIG);
  expect(part).toContain(INSTALL_DIR);
  return parseConfig(text, { source: 'docs/operations.md' });
}

function isUnder(path: string, dir: string): boolean {
  return path === dir || path.startsWith(`${dir.replace(/\/$/, '')}/`);
}

const HARDENING: Record<string, string> = {
  NoNewPrivileges: 'yes',
  ProtectSystem: 'strict',
  ProtectHome: 'yes',
  PrivateTmp: 'yes',
  PrivateDevices: 'yes',
  ProtectKernelTunables: 'yes',
  ProtectKernelModules: 'yes',
  ProtectControlGroups: 'yes',
  RestrictSUIDSGID: 'yes',
  LockPersonality: 'yes',
};

describe('contrib/systemd units', () => {
  it('ships a unit for serve, worker, pind and domaind, and a target that groups them', () => {
    for (const f of [
      'sealpost-serve.service',
      'sealpost-worker@.service',
      'sealpost-pind.service',
      'sealpost-domaind.service',
      'sealpost.target',
    ])
      expect(files).toContain(f);
    const target = unit('sealpost.target');
    const wanted = list(target, 'Unit', 'Wants');
    expect(wanted).toEqual(
      expect.arrayContaining(['sealpost-serve.service', 'sealpost-pind.service', 'sealpost-domaind.service']),
    );
    for (const w of wanted) expect(files, `sealpost.target wants ${w}`).toContain(w);
    expect(list(target, 'Install', 'WantedBy')).toContain('multi-user.target');
    for (const [f, u] of services) {
      expect(list(u, 'Unit', 'PartOf'), `${f}: PartOf`).toContain('sealpost.target');
      expect(list(u, 'Install', 'WantedBy'), `${f}: WantedBy`).toContain('sealpost.target');
      expect(value(u, 'Unit', 'Description'), `${f}: Description`).toBeTruthy();
    }
  });

  it('runs real sealpost commands with options those commands take', async () => {
    const seen = new Map<string, string>();
    await Promise.all(
      services.map(async ([f, u]) => {
        const starts = values(u, 'Service', 'ExecStart');
        expect(starts, `${f}: one ExecStart`).toHaveLength(1);
        const command = await checkAgainstCli(argv(starts[0] as string), `${f} ExecStart`);
        seen.set(command.join(' '), f);
        for (const reload of values(u, 'Service', 'ExecReload'))
          expect(await checkAgainstCli(argv(reload), `${f} ExecReload`)).toEqual(['reload']);
      }),
    );
    expect(new Set(seen.keys())).toEqual(new Set(['serve', 'worker', 'pind', 'domaind']));
    // The worker template's instance is its metrics port, on loopback.
    const worker = argv(value(unit('sealpost-worker@.service'), 'Service', 'ExecStart') as string);
    expect(worker[worker.indexOf('--metrics-listen') + 1]).toBe(`127.0.0.1:${INSTANCE}`);
    // serve is reloaded (certificates, admin token) by `sealpost reload`, not restarted.
    expect(values(unit('sealpost-serve.service'), 'Service', 'ExecReload')).toHaveLength(1);
  }, 120_000);

  it('runs every service unprivileged and hardened, restarted on failure', () => {
    for (const [f, u] of services) {
      expect(value(u, 'Service', 'User'), `${f}: User`).toBe('sealpost');
      expect(value(u, 'Service', 'Group'), `${f}: Group`).toBe('sealpost');
      expect(value(u, 'Service', 'Restart'), `${f}: Restart`).toBe('on-failure');
      for (const [key, want] of Object.entries(HARDENING))
        expect(value(u, 'Service', key), `${f}: ${key}`).toBe(want);
      // V8 compiles to executable memory: MemoryDenyWriteExecute would kill node.
      expect(value(u, 'Service', 'MemoryDenyWriteExecute'), `${f}: MemoryDenyWriteExecute`).toBeUndefined();
      // The image's allocator setting (docs/operations.md, "Scaling out").
      expect(list(u, 'Service', 'Environment'), `${f}: Environment`).toContain('MALLOC_ARENA_MAX=2');
    }
  });

  it('gives serve alone the capability to bind the standard mail ports', () => {
    const config = documentedConfig();
    const ports = [...config.smtp.listeners.map((l) => l.port), config.imap.port, config.pop3.port];
    // The documented config listens on 25, 465, 993 and 995 itself.
    expect(ports.some((p) => p < 1024)).toBe(true);
    const serve = unit('sealpost-serve.service');
    expect(list(serve, 'Service', 'AmbientCapabilities')).toEqual(['CAP_NET_BIND_SERVICE']);
    expect(list(serve, 'Service', 'CapabilityBoundingSet')).toEqual(['CAP_NET_BIND_SERVICE']);
    for (const [f, u] of services.filter(([f]) => f !== 'sealpost-serve.service')) {
      expect(values(u, 'Service', 'AmbientCapabilities'), `${f}: AmbientCapabilities`).toEqual([]);
      // An empty CapabilityBoundingSet= drops every capability.
      expect(values(u, 'Service', 'CapabilityBoundingSet'), `${f}: CapabilityBoundingSet`).toEqual(['']);
    }
    // The other listeners stay on loopback, behind a TLS proxy.
    expect([config.api.host, config.domaind.host, config.pind.host, config.pind.gateway_host]).toEqual([
      '127.0.0.1',
      '127.0.0.1',
      '127.0.0.1',
      '127.0.0.1',
    ]);
  });

  it('starts after the network, Redis, PostgreSQL and the pin daemon they use', () => {
    const config = documentedConfig();
    for (const [f, u] of services) {
      for (const key of ['After', 'Wants'])
        expect(list(u, 'Unit', key), `${f}: ${key}`).toContain('network-online.target');
    }
    // serve and the workers use Redis, the store and the operator pin.
    expect(new URL(config.redis.url ?? '').hostname).toBe('127.0.0.1');
    expect(new URL(config.store.url).hostname).toBe('127.0.0.1');
    expect(config.ipfs.operator).toBe('pind');
    expect(new URL(config.ipfs.pind_url).port).toBe(String(config.pind.port));
    for (const f of ['sealpost-serve.service', 'sealpost-worker@.service']) {
      for (const key of ['After', 'Wants'])
        expect(list(unit(f), 'Unit', key), `${f}: ${key}`).toEqual(
          expect.arrayContaining(['redis-server.service', 'postgresql.service', 'sealpost-pind.service']),
        );
    }
  });

  it('lets each service write exactly where the documented config writes', () => {
    const config = documentedConfig();
    const writable = (f: string) =>
      list(unit(f), 'Service', 'ReadWritePaths').map((p) => p.replace(/^-/, ''));
    const covered = (f: string, dir: string) => writable(f).some((p) => isUnder(dir, p));
    // serve and the workers: the data directory (spool, blobs, serve's pid and reload status files).
    for (const f of ['sealpost-serve.service', 'sealpost-worker@.service'])
      expect(covered(f, config.store.data_dir), `${f} writes ${config.store.data_dir}`).toBe(true);
    // pind: its own store, nothing else.
    expect(covered('sealpost-pind.service', config.pind.data_dir)).toBe(true);
    expect(writable('sealpost-pind.service').every((p) => isUnder(p, config.pind.data_dir))).toBe(true);
    // domaind writes nothing.
    expect(writable('sealpost-domaind.service')).toEqual([]);
    // Keys, certificates and the config stay read-only for every service.
    const readOnly = [
      CONFIG,
      config.smtp.tls_cert_file,
      config.smtp.tls_key_file,
      config.api.credential_key_file,
      config.api.admin_token_file,
      config.chain.authority_key_file as string,
      config.chain.delegate_key_file as string,
      ...config.spooler.dkim.map((d) => d.key_file),
    ];
    for (const [f] of services)
      for (const file of readOnly)
        expect(
          writable(f).some((p) => isUnder(file, p)),
          `${f} can write ${file}`,
        ).toBe(false);
    // The directories exist before the units start (ReadWritePaths= of a missing path fails the
    // unit): systemd-tmpfiles makes them, owned by the sealpost user systemd-sysusers makes.
    const tmpfiles = readFileSync(join(UNITS, 'sealpost.tmpfiles'), 'utf8')
      .split('\n')
      .filter((l) => l.trim() && !l.startsWith('#'))
      .map((l) => l.trim().split(/\s+/));
    const made = (dir: string) => tmpfiles.find((t) => t[0] === 'd' && t[1] === dir);
    for (const [f] of services)
      for (const dir of writable(f)) {
        expect(made(dir), `sealpost.tmpfiles makes ${dir} (${f})`).toBeDefined();
        expect(made(dir)?.slice(3, 5)).toEqual(['sealpost', 'sealpost']);
      }
    const keys = made('/etc/sealpost/keys');
    expect(keys?.slice(2, 5)).toEqual(['0700', 'sealpost', 'sealpost']);
    for (const file of readOnly.filter((p) => p.includes('/keys/')))
      expect(isUnder(file, '/etc/sealpost/keys')).toBe(true);
    const sysusers = readFileSync(join(UNITS, 'sealpost.sysusers'), 'utf8');
    expect(sysusers).toMatch(/^u sealpost /m);
  });
});
