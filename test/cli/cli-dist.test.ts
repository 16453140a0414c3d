// The CLI runs the JavaScript build (dist/), not the TypeScript sources
// through tsx, and never a stale build. Works on a copy of the package in a
// temporary directory (sources, bin/, package files; node_modules as one
// link per package, tsx left out unless a case needs it) so the checkout's
// own dist/ and sources are not touched.
import { execFile } from 'node:child_process';
import {
  appendFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '..', '..');
const STALE_NOTE = /dist\/ is older than the sources; running the TypeScript sources/;

let pkg: string;

async function sealpost(args: string[], env: NodeJS.ProcessEnv = {}) {
  const { SEALPOST_FROM_SOURCE: _, ...base } = process.env;
  return run(process.execPath, [join(pkg, 'bin', 'sealpost.js'), ...args], {
    cwd: pkg,
    env: { ...base, NO_COLOR: '1', ...env },
  });
}

function withTsx(present: boolean): void {
  const link = join(pkg, 'node_modules', 'tsx');
  rmSync(link, { force: true });
  if (present) symlinkSync(join(ROOT, 'node_modules', 'tsx'), link);
}

beforeAll(async () => {
  pkg = mkdtempSync(join(tmpdir(), 'sealpost-dist-'));
  for (const dir of ['bin', 'src', 'chain', 'delivery', 'spooler', 'pinning'])
    cpSync(join(ROOT, dir), join(pkg, dir), { recursive: true, filter: (f) => !f.endsWith('.test.ts') });
  for (const file of ['package.json', 'package-lock.json']) cpSync(join(ROOT, file), join(pkg, file));
  mkdirSync(join(pkg, 'node_modules'));
  for (const name of readdirSync(join(ROOT, 'node_modules')))
    if (name !== 'tsx') symlinkSync(join(ROOT, 'node_modules', name), join(pkg, 'node_modules', name));
  await run(process.execPath, [join(pkg, 'bin', 'build-dist.js')], { cwd: pkg });
}, 180_000);

afterAll(() => {
  if (pkg) rmSync(pkg, { recursive: true, force: true });
});

describe('bin/sealpost.js from dist/', () => {
  it('runs help, version and subcommand help without tsx installed, as the sources print them', async () => {
    withTsx(false);
    const help = await sealpost(['--help']);
    expect(help.stderr).toBe('');
    // The top-level help comes from the build's help lines; the same as the
    // sources print with every command module loaded.
    const fromSource = await run(process.execPath, [join(ROOT, 'bin', 'sealpost.js'), '--help'], {
      cwd: ROOT,
      env: { ...process.env, SEALPOST_FROM_SOURCE: '1', NO_COLOR: '1' },
    });
    expect(help.stdout).toBe(fromSource.stdout);
    expect(help.stdout).toContain('config');
    // package.json is found from dist/ through the source-relative URL.
    const version = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')).version as string;
    expect((await sealpost(['--version'])).stdout).toBe(`${version}\n`);
    // A module loaded for its command; import.meta.dirname names the source
    // directory, so the default program binary is the package's.
    const deploy = await sealpost(['program', 'deploy', '--help']);
    expect(deploy.stdout.replace(/\s+/g, ' ')).toContain(
      join(pkg, 'chain', 'program', 'mail_program.so').replace(/\s+/g, ' '),
    );
    // A typo still gets commander's suggestion from the stand-ins.
    const typo = await sealpost(['confg']).catch((e: { code: number; stderr: string }) => e);
    expect(typo).toMatchObject({ code: 2 });
    expect((typo as { stderr: string }).stderr).toContain('(Did you mean config?)');
  }, 60_000);

  it('checks a config file from dist/', async () => {
    withTsx(false);
    const file = join(pkg, 'sealpost.toml');
    writeFileSync(file, '[smtp]\nhostname = "mx.example.test"\nlocal_domains = ["example.test"]\n');
    const check = await sealpost(['config', 'check', '--config', file]);
    expect(check.stdout).toBe(`config ok: ${file}\n`);
    writeFileSync(file, '[smtp]\nhostnme = "x"\n');
    const bad = await sealpost(['config', 'check', '--config', file]).catch((e) => e);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(`config error in ${file}`);
  }, 60_000);

  it('keeps using dist/ when a source is only touched (same content)', async () => {
    withTsx(false);
    const later = new Date(Date.now() + 5_000);
    utimesSync(join(pkg, 'src', 'cli', 'main.ts'), later, later);
    const help = await sealpost(['--help']);
    expect(help.stderr).toBe('');
    expect(help.stdout).toContain('Usage: sealpost');
  }, 60_000);

  it('runs the edited sources through tsx when dist/ is stale, and dist/ again once rebuilt', async () => {
    const source = join(pkg, 'src', 'cli', 'commands', 'operate', 'config.ts');
    writeFileSync(
      source,
      readFileSync(source, 'utf8').replace(
        "'inspect the configuration'",
        "'inspect the configuration (edited)'",
      ),
    );
    withTsx(false);
    // Stale and no tsx: it fails rather than run the old build.
    const noTsx = await sealpost(['--help']).catch((e) => e);
    expect(noTsx.code).not.toBe(0);
    expect(noTsx.stderr).toMatch(STALE_NOTE);
    withTsx(true);
    const stale = await sealpost(['--help']);
    expect(stale.stderr).toMatch(STALE_NOTE);
    expect(stale.stdout).toContain('inspect the configuration (edited)');
    await run(process.execPath, [join(pkg, 'bin', 'build-dist.js'), '--if-stale'], { cwd: pkg });
    withTsx(false);
    const rebuilt = await sealpost(['--help']);
    expect(rebuilt.stderr).toBe('');
    expect(rebuilt.stdout).toContain('inspect the configuration (edited)');
    // A new source file makes it stale too, even with an old mtime; so does
    // a changed lock file.
    const extra = join(pkg, 'src', 'cli', 'extra.ts');
    writeFileSync(extra, 'export const extra = 1;\n');
    utimesSync(extra, new Date(0), new Date(0));
    withTsx(true);
    expect((await sealpost(['--version'])).stderr).toMatch(STALE_NOTE);
    unlinkSync(extra);
    expect((await sealpost(['--version'])).stderr).toBe('');
    appendFileSync(join(pkg, 'package-lock.json'), '\n');
    expect((await sealpost(['--version'])).stderr).toMatch(STALE_NOTE);
  }, 180_000);
});
