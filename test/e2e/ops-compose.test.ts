// What can be checked of the operator's stack without a Docker engine:
// docker-compose.yml parses (through `docker compose config` (Compose v2) and
// `docker-compose config` (v1) where those clients are installed, and always
// as YAML against the subset of the compose file's shape both accept), every
// sealpost service runs a real CLI command with options that command has,
// the config the stack is documented with (docs/operations.md) validates and
// agrees with the compose file's ports, hosts, mounts and service names, and
// the Dockerfile's runtime stage is non-root, without dev dependencies, with
// every source the CLI imports (dist/ from a stage that builds it), every
// directory a volume is mounted at owned by the runtime user, no VOLUME, a
// toolchain in each stage that runs `npm ci`, and an entry point whose
// default command is `sealpost --help`. The README's delivery check greps
// for the line a delivered message really logs.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { type Config, parseConfig } from '../../src/core/config/index.ts';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'sealpost.js');
const CONFIG_MOUNT = '/etc/sealpost/sealpost.toml';

interface Service {
  image?: string;
  build?: string;
  command?: string[];
  ports?: string[];
  volumes?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  profiles?: string[];
}
interface Compose {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
}

// The part of the compose file format that docker-compose 1.28+ (Compose v1,
// Debian's 1.29) and Compose v2 both accept. v2-only: top-level `name` and
// `include`, services' `develop`, health checks' `start_interval`, the
// `!reset`/`!override` tags; `profiles` needs 1.28.
const TOP_LEVEL = new Set(['services', 'volumes', 'networks', 'secrets', 'configs']);
const SERVICE_KEYS = new Set([
  'build',
  'image',
  'command',
  'entrypoint',
  'environment',
  'env_file',
  'ports',
  'expose',
  'volumes',
  'depends_on',
  'healthcheck',
  'restart',
  'stop_grace_period',
  'stop_signal',
  'profiles',
  'network_mode',
  'networks',
  'extra_hosts',
  'user',
  'cap_add',
  'cap_drop',
  'ulimits',
  'logging',
  'labels',
  'tmpfs',
  'read_only',
  'init',
  'sysctls',
]);
const HEALTHCHECK_KEYS = new Set(['test', 'interval', 'timeout', 'retries', 'start_period', 'disable']);
const DEPENDS_CONDITIONS = new Set(['service_started', 'service_healthy', 'service_completed_successfully']);

const composeText = readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8');
const compose = parseYaml(composeText, { merge: true }) as Compose;
const sealpostServices = Object.entries(compose.services).filter(([, s]) => s.build === '.');

/** The stack's config: the first ```toml block of docs/operations.md. */
function documentedConfig(): { text: string; config: Config } {
  const doc = readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8');
  const text = /```toml\n([\s\S]*?)```/.exec(doc)?.[1];
  if (!text) throw new Error('docs/operations.md has no ```toml block');
  return { text, config: parseConfig(text, { source: 'docs/operations.md' }) };
}

/** `[host:]hostPort:containerPort[/proto]` → both ports. */
function portPair(spec: string): { host: number; container: number } {
  const parts = spec.replace(/\/(tcp|udp)$/, '').split(':');
  return { host: Number(parts.at(-2)), container: Number(parts.at(-1)) };
}

function mounts(service: Service): { source: string; target: string }[] {
  return (service.volumes ?? []).map((v) => {
    const [source = '', target = ''] = v.split(':');
    return { source, target };
  });
}

function isUnder(path: string, dir: string): boolean {
  return path === dir || path.startsWith(`${dir}/`);
}

function service(name: string): Service {
  const s = compose.services[name];
  if (!s) throw new Error(`docker-compose.yml has no service ${name}`);
  return s;
}

/** Whether `cmd args… version` runs: the client is installed. */
const installed = (cmd: string, args: string[]) =>
  run(cmd, [...args, 'version']).then(
    () => true,
    () => false,
  );

describe('docker-compose.yml', () => {
  it('is valid for the Compose clients installed here, v2 and v1 alike', async () => {
    const clients: [string, string[]][] = [
      ['docker', ['compose']],
      ['docker-compose', []],
    ];
    for (const [cmd, args] of clients) {
      if (!(await installed(cmd, args))) continue;
      // The client validates the file itself (it needs the .env variable the file requires),
      // with the devnet profile's service too.
      await run(cmd, [...args, '-f', 'docker-compose.yml', '--profile', 'devnet', 'config', '--quiet'], {
        cwd: ROOT,
        env: { ...process.env, POSTGRES_PASSWORD: 'check' },
      });
    }
    // Always: only what both Compose v1 (1.28+) and v2 accept.
    for (const key of Object.keys(compose))
      expect(TOP_LEVEL.has(key) || key.startsWith('x-'), `top-level key ${key}`).toBe(true);
    expect(composeText, 'v2-only YAML tags').not.toMatch(/!(reset|override)\b/);
    for (const [name, s] of Object.entries(compose.services)) {
      for (const key of Object.keys(s)) expect(SERVICE_KEYS.has(key), `${name}: key ${key}`).toBe(true);
      for (const key of Object.keys(s.healthcheck ?? {}))
        expect(HEALTHCHECK_KEYS.has(key), `${name}: healthcheck ${key}`).toBe(true);
      for (const [dep, d] of Object.entries(s.depends_on ?? {}))
        expect(DEPENDS_CONDITIONS.has(d.condition), `${name}: depends_on ${dep}`).toBe(true);
    }
  }, 60_000);

  it('has the shape of the production stack', () => {
    for (const [name, s] of Object.entries(compose.services)) {
      expect(s.image ?? s.build, `${name}: image or build`).toBeTruthy();
      if (s.command) expect(s.command.every((c) => typeof c === 'string')).toBe(true);
      for (const p of s.ports ?? [])
        expect(p, `${name} port`).toMatch(/^(\d+\.\d+\.\d+\.\d+:)?\d+:\d+(\/(tcp|udp))?$/);
      for (const { source, target } of mounts(s)) {
        expect(target.startsWith('/'), `${name}: mount target ${target}`).toBe(true);
        // A named volume must be declared; a bind mount is relative to the compose file.
        if (!source.startsWith('.'))
          expect(Object.keys(compose.volumes), `${name}: volume ${source}`).toContain(source);
      }
      for (const dep of Object.keys(s.depends_on ?? {})) expect(Object.keys(compose.services)).toContain(dep);
      if (!s.profiles) expect(s.healthcheck?.test.length, `${name}: health check`).toBeGreaterThan(1);
    }
    // The production shape: the mail server, its workers, the pin daemon, the domain
    // service, a real Kubo node, Redis with appendonly, PostgreSQL.
    for (const name of ['serve', 'worker', 'pind', 'domaind', 'kubo', 'redis', 'postgres'])
      expect(Object.keys(compose.services)).toContain(name);
    expect(service('kubo').image).toMatch(/^ipfs\/kubo:/);
    const redis = service('redis').command ?? [];
    expect(redis.slice(redis.indexOf('--appendonly'), redis.indexOf('--appendonly') + 2)).toEqual([
      '--appendonly',
      'yes',
    ]);
    expect(service('postgres').image).toMatch(/^postgres:/);
    // Every piece of state is on a volume.
    const stateDirs: [string, string][] = [
      ['redis', '/data'],
      ['postgres', '/var/lib/postgresql/data'],
      ['kubo', '/data/ipfs'],
      ['serve', '/var/lib/sealpost'],
      ['worker', '/var/lib/sealpost'],
      ['pind', '/var/lib/sealpost/pind'],
      ['serve', '/etc/sealpost/keys'],
    ];
    for (const [name, dir] of stateDirs) {
      const m = mounts(service(name)).find((x) => x.target === dir);
      expect(m && !m.source.startsWith('.'), `${name}: named volume at ${dir}`).toBe(true);
    }
    // MX and workers share the spool (the blob store).
    const data = (n: string) => mounts(service(n)).find((m) => m.target === '/var/lib/sealpost')?.source;
    expect(data('serve')).toBe(data('worker'));
  });

  it('runs CLI commands that exist, with options they take', async () => {
    const checks = sealpostServices.map(async ([name, s]) => {
      const [cmd, ...args] = s.command ?? [];
      expect(cmd, `${name} command`).toBeTruthy();
      const help = await run(process.execPath, [BIN, cmd as string, '--help'], { cwd: ROOT });
      expect(help.stdout, `${name}: sealpost ${cmd} --help`).toContain(`Usage: sealpost ${cmd}`);
      for (const option of args.filter((a) => a.startsWith('--'))) {
        expect(help.stdout, `${name}: sealpost ${cmd} ${option}`).toContain(option);
      }
      const config = args[args.indexOf('--config') + 1];
      expect(config, `${name} --config`).toBe(CONFIG_MOUNT);
      expect(mounts(s)).toContainEqual({ source: './sealpost.toml', target: CONFIG_MOUNT });
    });
    await Promise.all(checks);
  }, 120_000);

  it('agrees with the documented config: ports, bind hosts, mounts, service names', () => {
    const { text, config } = documentedConfig();
    // Every key of the example is in the config reference, in its section.
    const reference = readFileSync(join(ROOT, 'docs', 'config.md'), 'utf8');
    let section = '';
    let part = '';
    for (const line of text.split('\n')) {
      const header = /^\[\[?([a-z_.]+)\]\]?/.exec(line);
      if (header) {
        section = header[1] as string;
        // The reference has one `## [top]` part per top-level table; sub-tables are described in it.
        const heading = reference.indexOf(`\n## \`[${section.split('.')[0]}]\``);
        expect(heading, `docs/config.md has a part for [${section}]`).toBeGreaterThan(-1);
        const next = reference.indexOf('\n## ', heading + 1);
        part = reference.slice(heading, next === -1 ? undefined : next);
        expect(part, `docs/config.md documents [${section}]`).toContain(`[${section}]`);
        continue;
      }
      const key = /^([a-z_]+)\s*=/.exec(line)?.[1];
      if (key) expect(part, `docs/config.md documents ${section}.${key}`).toContain(`\`${key}\``);
    }

    const containerPorts = (n: string) => new Set((service(n).ports ?? []).map((p) => portPair(p).container));
    const hostPort = (n: string, container: number) =>
      (service(n).ports ?? []).map(portPair).find((p) => p.container === container)?.host;
    // serve publishes exactly its listeners, IMAP, POP3 and the API, all bound to every interface.
    const serveListen = [
      ...config.smtp.listeners.map((l) => ({ host: l.host, port: l.port })),
      config.imap,
      config.pop3,
      config.api,
    ];
    expect(containerPorts('serve')).toEqual(new Set(serveListen.map((l) => l.port)));
    for (const l of serveListen) expect(l.host, `bind host of port ${l.port}`).toBe('0.0.0.0');
    // The public ports clients are told ([mail_hosts]) are the ones published on the host.
    const mx = config.smtp.listeners.find((l) => l.mode === 'mx');
    const submissions = config.smtp.listeners.find((l) => l.mode === 'submissions');
    expect(mx && hostPort('serve', mx.port)).toBe(25);
    expect(submissions && hostPort('serve', submissions.port)).toBe(config.mail_hosts.submission_port);
    expect(hostPort('serve', config.imap.port)).toBe(config.mail_hosts.imap_port);
    expect(hostPort('serve', config.pop3.port)).toBe(config.mail_hosts.pop3_port);
    expect(containerPorts('domaind')).toEqual(new Set([config.domaind.port]));
    expect(config.domaind.host).toBe('0.0.0.0');
    expect(containerPorts('pind')).toEqual(new Set([config.pind.port, config.pind.gateway_port]));
    expect([config.pind.host, config.pind.gateway_host]).toEqual(['0.0.0.0', '0.0.0.0']);
    expect(config.pind.auth_token, 'pind on a non-loopback bind needs auth_token').toBeTruthy();
    // Health checks probe the ports the processes listen on.
    const probe = (n: string) => service(n).healthcheck?.test.join(' ') ?? '';
    expect(probe('serve')).toContain(`${mx?.port}`);
    expect(probe('serve')).toContain(`127.0.0.1:${config.api.port}/ready`);
    expect(probe('domaind')).toContain(`127.0.0.1:${config.domaind.port}/ready`);
    expect(probe('pind')).toContain(`127.0.0.1:${config.pind.gateway_port}/ready`);
    const workerCmd = service('worker').command ?? [];
    const metricsPort = Number(workerCmd[workerCmd.indexOf('--metrics-listen') + 1]?.split(':')[1]);
    expect(probe('worker')).toContain(`127.0.0.1:${metricsPort}/ready`);
    // URLs of the backing services name compose services at their ports.
    const at = (url: string) => new URL(url);
    expect(at(config.redis.url ?? '').hostname).toBe('redis');
    expect(at(config.store.url).hostname).toBe('postgres');
    expect(at(config.store.url).password, 'the store password comes from PGPASSWORD').toBe('');
    expect(service('serve').environment?.PGPASSWORD).toBeTruthy();
    expect(config.ipfs.operator).toBe('kubo');
    expect([at(config.ipfs.kubo_rpc_url).hostname, at(config.ipfs.kubo_rpc_url).port]).toEqual([
      'kubo',
      '5001',
    ]);
    expect(at(config.ipfs.gateway_url).hostname).toBe('kubo');
    // Files the config names are inside the mounts of the services that read them.
    const keyFiles = [
      config.chain.authority_key_file,
      config.api.credential_key_file,
      config.api.admin_token_file,
      ...config.spooler.dkim.map((d) => d.key_file),
    ].filter((f): f is string => typeof f === 'string');
    const covered = (n: string, file: string) => mounts(service(n)).some((m) => isUnder(file, m.target));
    for (const file of [
      ...keyFiles,
      config.smtp.tls_cert_file,
      config.smtp.tls_key_file,
      config.store.data_dir,
    ])
      expect(covered('serve', file), `serve mounts ${file}`).toBe(true);
    for (const file of [...keyFiles, config.store.data_dir])
      expect(covered('worker', file), `worker mounts ${file}`).toBe(true);
    expect(config.chain.delegate_key_file).toBeTruthy();
    expect(covered('domaind', config.chain.delegate_key_file as string)).toBe(true);
    expect(covered('pind', config.pind.data_dir)).toBe(true);
  });
});

interface Stage {
  name: string;
  lines: string[];
}

function dockerStages(): Stage[] {
  const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  const stages: Stage[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const from = /^FROM\s+\S+(?:\s+AS\s+(\S+))?/i.exec(line);
    if (from) stages.push({ name: from[1] ?? `stage${stages.length}`, lines: [] });
    stages.at(-1)?.lines.push(line);
  }
  return stages;
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+'([^']+)'|import\('([^']+)'\)/g;

/** Every file the CLI can load: the import graph from bin/sealpost.js, dynamic imports included. */
function reachableSources(): { files: string[]; packages: Map<string, string> } {
  const seen = new Set<string>();
  const packages = new Map<string, string>();
  const queue = [BIN];
  while (queue.length > 0) {
    const file = queue.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const spec = (m[1] ?? m[2]) as string;
      if (spec.startsWith('.')) {
        const target = resolve(dirname(file), spec);
        if (/\.(ts|js)$/.test(target) && existsSync(target)) queue.push(target);
        else seen.add(target);
      } else if (!spec.startsWith('node:') && !builtinModules.includes(spec)) {
        const name = spec.startsWith('@')
          ? spec.split('/').slice(0, 2).join('/')
          : (spec.split('/')[0] as string);
        packages.set(name, relative(ROOT, file));
      }
    }
  }
  return { files: [...seen], packages };
}

describe('Dockerfile', () => {
  it('is multi-stage and runs as a non-root user without dev dependencies', () => {
    const stages = dockerStages();
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const final = stages.at(-1) as Stage;
    const user = final.lines.filter((l) => /^USER\s/i.test(l)).at(-1);
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^USER\s+(root|0)(\s|:|$)/i);
    // node_modules of the runtime come from a stage that installed production dependencies only.
    const copy = final.lines.find((l) => /COPY\s+--from=(\S+)\s+\S*node_modules/.test(l));
    const from = copy && /--from=(\S+)/.exec(copy)?.[1];
    const deps = stages.find((s) => s.name === from);
    expect(deps?.lines.some((l) => /npm ci .*--omit=dev/.test(l))).toBe(true);
    expect(final.lines.some((l) => /npm (ci|install)/.test(l) && !/--omit=dev/.test(l))).toBe(false);
    // No toolchain in the runtime stage.
    expect(final.lines.some((l) => /apt-get install/.test(l))).toBe(false);
  });

  it('creates every directory a volume is mounted at, owned by the runtime user; no VOLUME', () => {
    const stages = dockerStages();
    const final = stages.at(-1) as Stage;
    for (const stage of stages)
      expect(
        stage.lines.filter((l) => /^VOLUME\s/i.test(l)),
        `${stage.name}: VOLUME makes anonymous volumes`,
      ).toEqual([]);
    const user = (final.lines.filter((l) => /^USER\s/i.test(l)).at(-1) ?? '').split(/\s+/)[1] as string;
    // Shell words of each command of the runtime stage's RUN lines, split at && and ;.
    const commands = () =>
      final.lines
        .filter((l) => /^RUN\s/i.test(l))
        .flatMap((l) => l.replace(/^RUN\s+/i, '').split(/&&|;/))
        .map((c) => c.trim().split(/\s+/));
    // The user the docs name: uid 10001 (bind mounts are chowned to it).
    const useradd = commands().find((w) => w[0] === 'useradd');
    expect(useradd?.at(-1), 'useradd makes the USER').toBe(user);
    expect(useradd?.[(useradd?.indexOf('--uid') ?? -2) + 1]).toBe('10001');
    const made = commands()
      .filter((w) => w[0] === 'mkdir')
      .flatMap((w) => w.slice(1).filter((a) => !a.startsWith('-')));
    const owned = commands()
      .filter((w) => w[0] === 'chown' && w.includes('-R'))
      .flatMap((w) => {
        const args = w.slice(1).filter((a) => !a.startsWith('-'));
        const owner = (args[0] ?? '').split(':')[0];
        return owner === user || owner === '10001' ? args.slice(1) : [];
      });
    const targets = new Set(
      sealpostServices
        .flatMap(([, s]) => mounts(s).filter((m) => !m.source.startsWith('.')))
        .map((m) => m.target),
    );
    expect(targets.size).toBeGreaterThanOrEqual(3);
    for (const target of targets) {
      expect(made, `the image makes ${target}, where a named volume is mounted`).toContain(target);
      expect(
        owned.some((dir) => isUnder(target, dir)),
        `${target} is chowned to ${user} after it is made`,
      ).toBe(true);
    }
    // The chown comes after the mkdir, and the USER line after both.
    const runIndex = final.lines.findIndex((l) => /^RUN\s.*mkdir.*chown -R/i.test(l));
    expect(runIndex).toBeGreaterThan(-1);
    expect(final.lines.findIndex((l) => /^USER\s/i.test(l))).toBeGreaterThan(runIndex);
  });

  it('installs a C++ toolchain in every stage that runs npm ci', () => {
    // better-sqlite3 compiles from source where its prebuilt binary cannot be downloaded.
    const installers = dockerStages().filter((s) => s.lines.some((l) => /\bnpm ci\b/.test(l)));
    expect(installers.length).toBeGreaterThanOrEqual(2);
    for (const stage of installers) {
      const install = stage.lines.findIndex((l) =>
        /apt-get install .*\bpython3\b.*\bmake\b.*\bg\+\+/.test(l),
      );
      const ci = stage.lines.findIndex((l) => /\bnpm ci\b/.test(l));
      expect(install, `${stage.name}: python3, make, g++`).toBeGreaterThan(-1);
      expect(install, `${stage.name}: the toolchain before npm ci`).toBeLessThan(ci);
    }
  });

  it('copies every source the CLI imports, and those import only production dependencies', () => {
    const final = dockerStages().at(-1) as Stage;
    const copied = final.lines
      .map((l) => /^COPY\s+(?!--)(\S+)\s+\.\/(\S+)$/.exec(l))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => m[1] as string);
    for (const dir of copied) expect(existsSync(join(ROOT, dir)), `COPY ${dir}`).toBe(true);
    const dirs = copied.filter((d) => statSync(join(ROOT, d)).isDirectory());
    // dist/ (the JavaScript the CLI runs) comes from a stage that builds it.
    const distCopy = final.lines
      .map((l) => /^COPY\s+--from=(\S+)\s+\/app\/dist\s+\.\/dist$/.exec(l))
      .find((m) => m !== null);
    const builder = dockerStages().find((s) => s.name === distCopy?.[1]);
    expect(builder?.lines.some((l) => /npm run build:cli/.test(l))).toBe(true);
    dirs.push('dist');
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(Object.keys(pkg.dependencies)).toContain('tsx');
    const { files, packages } = reachableSources();
    expect(files.length).toBeGreaterThan(100);
    for (const file of files.map((f) => relative(ROOT, f))) {
      const inImage = dirs.some((d) => isUnder(file, d)) || copied.includes(file);
      expect(inImage, `the CLI loads ${file}, which the image does not copy`).toBe(true);
    }
    for (const [name, importer] of packages)
      expect(
        pkg.dependencies[name],
        `${importer} imports ${name}: not a production dependency`,
      ).toBeDefined();
  });

  it('has an entry point whose default command is `sealpost --help`', async () => {
    const final = dockerStages().at(-1) as Stage;
    const workdir = final.lines
      .filter((l) => /^WORKDIR\s/i.test(l))
      .at(-1)
      ?.split(/\s+/)[1];
    const entry = final.lines.find((l) => /^ENTRYPOINT\s/i.test(l));
    const cmd = final.lines.find((l) => /^CMD\s/i.test(l));
    const exec = (line: string | undefined) => JSON.parse(line?.replace(/^\S+\s+/, '') ?? 'null') as string[];
    const [node, script] = exec(entry);
    expect(node).toBe('node');
    expect(exec(cmd)).toEqual(['--help']);
    // The script is bin/sealpost.js copied to WORKDIR/bin.
    expect(final.lines).toContain('COPY bin ./bin');
    expect(script).toBe(`${workdir}/bin/sealpost.js`);
    const help = await run(process.execPath, [BIN, ...exec(cmd)], { cwd: ROOT });
    expect(help.stdout).toContain('Usage: sealpost');
    for (const [, s] of sealpostServices) expect(help.stdout).toContain(`${s.command?.[0]} `);
  }, 60_000);
});

describe("the README's delivery check", () => {
  /** The log message a source file passes to `log.info(…, \`…status=sent…\`)`, with sample values filled in. */
  function sentMessage(file: string): string {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const template = /`([^`]*status=sent[^`]*)`/.exec(text)?.[1];
    if (!template) throw new Error(`${file} logs no status=sent line`);
    return template.replace(/\$\{[^}]*\}/g, 'WALLET@example.org');
  }

  /** Runs grep with the README's pattern over `lines`; the lines it matched. */
  function grep(pattern: string, lines: string[]): Promise<string[]> {
    return new Promise((done, fail) => {
      const child = execFile('grep', [pattern], (err, stdout) => {
        if (err && err.code !== 1) fail(err);
        else done(stdout.split('\n').filter(Boolean));
      });
      child.stdin?.end(`${lines.join('\n')}\n`);
    });
  }

  it('greps the line the worker logs for a delivered message, as JSON and as text', async () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const check = /docker compose logs worker \| grep '([^']+)'/.exec(readme);
    expect(check, 'README: docker compose logs worker | grep …').not.toBeNull();
    const pattern = check?.[1] as string;
    const inbound = sentMessage('delivery/pipeline.ts');
    const outbound = sentMessage('spooler/deliver-job.ts');
    // The JSON line pino writes (`[log] format = "json"`, the documented config) and a text one.
    const json = (msg: string, status: string) =>
      `worker-1  | ${JSON.stringify({ level: 'info', time: 1, name: 'worker', component: 'pipeline', status, msg })}`;
    const lines = [
      json(inbound, 'sent'),
      `worker-1  | [12:00:00] INFO: ${inbound}`,
      json(outbound, 'sent'),
      json('inbound delivery to=<WALLET@example.org> status=deferred (chain)', 'deferred'),
    ];
    expect(await grep(pattern, lines)).toEqual(lines.slice(0, 2));
  });
});
