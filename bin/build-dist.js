#!/usr/bin/env node
// Builds dist/: the CLI and servers as JavaScript, so `sealpost` starts
// without compiling TypeScript. `npm ci` runs it (the `prepare` script);
// `npm run build:cli` runs it by hand. About half a second for the
// transpile, plus two for the help lines below.
//
//   node bin/build-dist.js [--if-stale]
//
// Each source file becomes one file under dist/ at the same relative path
// (src/cli/main.ts → dist/src/cli/main.js), relative imports rewritten from
// .ts to .js, packages left to node_modules. `import.meta.url` (and
// .dirname, .filename) are rewritten to the source file's location, so code
// that finds files next to its sources (package.json, webmail/dist,
// chain/program/mail_program.so) finds the same files from dist/.
//
// Then the build loads every command module once, records each top-level
// command's help line and compiles them into src/cli/commands/index.js, so
// `sealpost --help` needs none of the modules (src/cli/help-table.ts).
//
// The result is written to a fresh directory and moved into place at the
// end, with dist/build.json (bin/dist-state.js) last: an interrupted build
// leaves no dist that passes for current.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  BUILD_INFO,
  contentFingerprint,
  DIST_DIR,
  distState,
  sourceFiles,
  statFingerprint,
} from './dist-state.js';

const ROOT = resolve(import.meta.dirname, '..');
const META = /\bimport\.meta\.(url|dirname|filename)\b/g;

/** esbuild plugin: every file its own output; imports stay imports. */
function keepImports() {
  return {
    name: 'keep-imports',
    setup(build) {
      build.onResolve({ filter: /.*/ }, (args) => {
        if (args.kind === 'entry-point') return undefined;
        if (args.path.startsWith('.')) return { path: args.path.replace(/\.ts$/, '.js'), external: true };
        return { path: args.path, external: true };
      });
    },
  };
}

/** esbuild plugin: `import.meta.url` and friends name the source file, not the built one. */
function sourceLocations(outdir) {
  return {
    name: 'source-locations',
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, (args) => {
        const text = readFileSync(args.path, 'utf8');
        if (!text.includes('import.meta.')) return { contents: text, loader: 'ts' };
        const rel = relative(ROOT, args.path);
        const built = join(outdir, rel.replace(/\.ts$/, '.js'));
        const back = relative(dirname(built), args.path).split('\\').join('/');
        const header = [
          "import { dirname as __sealpostDirname } from 'node:path';",
          "import { fileURLToPath as __sealpostPath } from 'node:url';",
          `const __sealpostUrl = new URL(${JSON.stringify(back)}, import.meta.url).href;`,
        ].join(' ');
        const body = text.replace(META, (_, what) => {
          if (what === 'url') return '__sealpostUrl';
          if (what === 'filename') return '__sealpostPath(__sealpostUrl)';
          return '__sealpostDirname(__sealpostPath(__sealpostUrl))';
        });
        // One line, so esbuild's line numbers in errors still match the source.
        return { contents: `${header} ${body}`, loader: 'ts' };
      });
    },
  };
}

/** The help line of every top-level command, from the freshly built modules. */
function captureHelp(outdir) {
  const url = (rel) => pathToFileURL(join(outdir, rel)).href;
  const script = [
    `const { commandEntries } = await import(${JSON.stringify(url('src/cli/commands/index.js'))});`,
    `const { describeCommands } = await import(${JSON.stringify(url('src/cli/help-table.js'))});`,
    'const modules = await Promise.all(commandEntries.map((e) => e.load()));',
    'process.stdout.write(JSON.stringify(describeCommands(modules)));',
    'process.exit(0);',
  ].join('\n');
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return JSON.parse(out);
}

export async function buildDist() {
  const { build } = await import('esbuild');
  const files = sourceFiles(ROOT);
  // Fingerprints first: a source edited during the build leaves it stale.
  const info = { stat: statFingerprint(ROOT, files), content: contentFingerprint(ROOT, files) };
  const entryPoints = files.filter((f) => f.endsWith('.ts')).map((f) => join(ROOT, f));
  const tmp = join(ROOT, `${DIST_DIR}.tmp-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  const common = {
    outbase: ROOT,
    outdir: tmp,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
    plugins: [keepImports(), sourceLocations(tmp)],
  };
  try {
    await build({ ...common, entryPoints });
    const help = captureHelp(tmp);
    await build({
      ...common,
      entryPoints: [join(ROOT, 'src', 'cli', 'commands', 'index.ts')],
      define: { __SEALPOST_HELP__: JSON.stringify(help) },
    });
    writeFileSync(join(tmp, BUILD_INFO), `${JSON.stringify(info, null, 2)}\n`);
    const dist = join(ROOT, DIST_DIR);
    const old = join(ROOT, `${DIST_DIR}.old-${process.pid}`);
    if (existsSync(dist)) renameSync(dist, old);
    renameSync(tmp, dist);
    rmSync(old, { recursive: true, force: true });
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return entryPoints.length;
}

if (process.argv[1] && resolve(process.argv[1]) === import.meta.filename) {
  const ifStale = process.argv.includes('--if-stale');
  if (!existsSync(join(ROOT, 'src', 'cli', 'main.ts'))) {
    // An install without the sources (a container stage that copied only
    // package.json to install dependencies first): nothing to build yet.
    process.stderr.write('no sources here (src/cli/main.ts): dist/ not built\n');
  } else if (ifStale && distState(ROOT) === 'current') {
    process.stderr.write('dist/ is current\n');
  } else {
    const started = performance.now();
    const count = await buildDist();
    process.stderr.write(
      `built dist/ from ${count} sources in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
    );
  }
}
