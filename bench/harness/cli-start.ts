// How long `sealpost` takes from spawn to exit for commands that do little:
// `--help`, `--version` and `config check` of a generated config file. Each
// is timed over repeated runs with hyperfine when it is installed (`-N`, no
// shell), else by spawning it here; "after" runs bin/sealpost.js as
// installed (the JavaScript in dist/), "before" forces the TypeScript
// sources through tsx (SEALPOST_FROM_SOURCE=1), the way every start went
// before dist/.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'sealpost.js');

export interface StartTimes {
  command: string;
  mode: 'dist' | 'tsx';
  runs: number;
  medianMs: number;
  p90Ms: number;
  minMs: number;
}

export interface CliStartResult {
  tool: 'hyperfine' | 'spawn loop';
  rows: StartTimes[];
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number;
}

function hasHyperfine(): boolean {
  return spawnSync('hyperfine', ['--version'], { stdio: 'ignore' }).status === 0;
}

/** Wall-clock milliseconds of each run (after `warmup` untimed ones). */
function time(args: string[], env: NodeJS.ProcessEnv, runs: number, warmup: number, dir: string): number[] {
  if (hasHyperfine()) {
    const out = join(dir, 'hyperfine.json');
    const envArgs = Object.entries(env).map(([k, v]) => `${k}=${v}`);
    execFileSync(
      'hyperfine',
      [
        '-N',
        '--style',
        'none',
        '--warmup',
        String(warmup),
        '--runs',
        String(runs),
        '--export-json',
        out,
        [...(envArgs.length ? ['env', ...envArgs] : []), process.execPath, BIN, ...args].join(' '),
      ],
      { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] },
    );
    const json = JSON.parse(readFileSync(out, 'utf8')) as { results: { times: number[] }[] };
    return (json.results[0]?.times ?? []).map((s) => s * 1000);
  }
  const times: number[] = [];
  for (let i = 0; i < warmup + runs; i++) {
    const started = performance.now();
    const r = spawnSync(process.execPath, [BIN, ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: 'ignore',
    });
    if (r.status !== 0) throw new Error(`sealpost ${args.join(' ')} exited with ${r.status}`);
    if (i >= warmup) times.push(performance.now() - started);
  }
  return times;
}

export function measureCliStart(opts: { runs: number; before: boolean }): CliStartResult {
  const dir = mkdtempSync(join(tmpdir(), 'sealpost-cli-start-'));
  try {
    // A full config file: every key with its default, as `config show` prints it.
    const config = join(dir, 'sealpost.toml');
    writeFileSync(config, execFileSync(process.execPath, [BIN, 'config', 'show'], { cwd: dir }));
    const commands = [['--help'], ['--version'], ['config', 'check', '--config', config]];
    const modes: ('dist' | 'tsx')[] = opts.before ? ['dist', 'tsx'] : ['dist'];
    const rows: StartTimes[] = [];
    for (const mode of modes) {
      const env: NodeJS.ProcessEnv = mode === 'tsx' ? { SEALPOST_FROM_SOURCE: '1' } : {};
      // The tsx path takes seconds per run: fewer runs there.
      const runs = mode === 'tsx' ? Math.max(3, Math.ceil(opts.runs / 4)) : opts.runs;
      for (const args of commands) {
        const sorted = time(args, env, runs, 2, dir).sort((a, b) => a - b);
        rows.push({
          command: `sealpost ${args.join(' ').replace(config, '<file>')}`,
          mode,
          runs: sorted.length,
          medianMs: quantile(sorted, 0.5),
          p90Ms: quantile(sorted, 0.9),
          minMs: sorted[0] as number,
        });
      }
    }
    return { tool: hasHyperfine() ? 'hyperfine' : 'spawn loop', rows };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
