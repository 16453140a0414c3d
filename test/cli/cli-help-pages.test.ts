// Every help page of the CLI opens: each command and subcommand the modules
// register is asked for `--help` through the same program, parser and exit
// code mapping bin/sealpost.js uses (src/cli/program.ts, src/cli/errors.ts),
// and must exit 0 with a usage line naming it; a few pages also through the
// real bin/sealpost.js as a child process. (A bigint option default once
// crashed two of them with "Do not know how to serialize a BigInt".)
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { type CommandModule, commandEntries } from '../../src/cli/commands/index.ts';
import { reportError } from '../../src/cli/errors.ts';
import { buildProgram } from '../../src/cli/program.ts';

const BIN = resolve(import.meta.dirname, '..', '..', 'bin', 'sealpost.js');

function spawnHelp(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [BIN, ...args, '--help'],
      { env: { ...process.env, NO_COLOR: '1' } },
      (err, stdout, stderr) => {
        done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

/** Every command path under `cmd`, parents first. */
function paths(cmd: Command, prefix: string[] = []): string[][] {
  return cmd.commands.flatMap((c) => {
    const path = [...prefix, c.name()];
    return [path, ...paths(c, path)];
  });
}

/** `sealpost <path> --help` in this process: the exit code main.ts would set, and what was printed. */
async function help(modules: CommandModule[], path: string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const write = (s: string) => {
    out += s;
  };
  const sink = {
    write: (s: string) => {
      write(s);
      return true;
    },
  };
  const program = buildProgram(modules, (p) => p.configureOutput({ writeOut: write, writeErr: write }));
  try {
    await program.parseAsync(['node', 'sealpost', ...path, '--help']);
    return { code: 0, out };
  } catch (err) {
    return { code: reportError(err, sink), out };
  }
}

describe('sealpost help pages', () => {
  it('opens every one with exit 0 and its usage line', async () => {
    const modules = await Promise.all(commandEntries.map((e) => e.load()));
    const all = paths(buildProgram(modules));
    expect(all.length).toBeGreaterThan(100);
    const failures: string[] = [];
    for (const path of all) {
      const r = await help(modules, path);
      const usage = new RegExp(`^Usage: sealpost ${path.join(' ')}\\b`, 'm');
      if (r.code !== 0 || !usage.test(r.out))
        failures.push(`${path.join(' ')}: exit ${r.code}; ${r.out.trim().split('\n')[0] ?? ''}`);
    }
    expect(failures).toEqual([]);
  });

  it('opens through bin/sealpost.js too, for the pages with bigint defaults and each top-level command', async () => {
    const pages = [
      ['mailbox', 'create'],
      ['program', 'init-postoffice'],
      ...commandEntries.map((e) => [e.names[0] as string]),
    ];
    for (const page of pages) {
      const r = await spawnHelp(page);
      expect({ page, code: r.code }).toEqual({ page, code: 0 });
      expect(r.stdout).toMatch(new RegExp(`^Usage: sealpost ${page.join(' ')}\\b`, 'm'));
    }
  }, 120_000);
});
