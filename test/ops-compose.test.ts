// What can be checked of the operator's stack without a Docker engine:
// docker-compose.yml parses (through `docker compose config` when the client
// has compose, else as YAML against the compose file's shape), every
// sealpost service runs a real CLI command with options that command has,
// the config the stack is documented with (docs/operations.md) validates and
// agrees with the compose file's ports, hosts, mounts and service names, and
// the Dockerfile's runtime stage is non-root, without dev dependencies, with
// every source the CLI imports (dist/ from a stage that builds it), and an
// entry point whose default command is `sealpost --help`.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { type Config, parseConfig } from '../src/config/index.ts';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '..');
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
  name: string;
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
}

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

describe('docker-compose.yml', () => {
  it('parses and has the shape of a compose file', async () => {
    const hasCompose = await run('docker', ['compose', 'version']).then(
      () => true,
      () => false,
    );
    if (hasCompose) {
      // The client validates the file itself (it needs the .env variable the file requires).
      await run('docker', ['compose', '-f', 'docker-compose.yml', 'config', '--quiet'], {
        cwd: ROOT,
        env: { ...process.env, POSTGRES_PASSWORD: 'check' },
      });
    }
    const allowedTop = new Set(['name', 'services', 'volumes', 'networks', 'secrets', 'configs']);
    for (const key of Object.keys(compose))
      expect(allowedTop.has(key) || key.startsWith('x-'), key).toBe(true);
    expect(compose.name).toBe('sealpost');
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
