// The `sealpost` CLI. Each subcommand lives in ./commands/ and registers
// itself; this file only builds the program and maps errors to exit codes.
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { type CommandModule, loadCommandModules } from './commands/index.ts';
import { reportError } from './errors.ts';

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version?: string;
  };
  return pkg.version ?? '0.0.0';
}

export function buildProgram(modules: CommandModule[]): Command {
  const program = new Command('sealpost')
    .description('Sealpost mail server: sealed bodies on IPFS, message records on Solana')
    .version(packageVersion())
    // Throw instead of exiting so every error leaves through reportError;
    // subcommands inherit this because it is set before they are added.
    .exitOverride()
    .showHelpAfterError('(run with --help for usage)');
  for (const module of modules) module.register(program);
  return program;
}

export async function main(argv: string[] = process.argv): Promise<void> {
  try {
    await buildProgram(await loadCommandModules(argv)).parseAsync(argv);
  } catch (err) {
    process.exitCode = reportError(err);
  }
}

await main();
