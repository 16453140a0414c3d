// The `sealpost` command tree: the program with its version and error
// behaviour, and each loaded module's commands registered on it. Apart from
// main.ts (which runs the CLI when imported) so a test can build the same tree.
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import type { CommandModule } from './commands/index.ts';

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version?: string;
  };
  return pkg.version ?? '0.0.0';
}

/** `configure` runs before any command is added, so its settings (output, say) are inherited. */
export function buildProgram(modules: CommandModule[], configure?: (program: Command) => void): Command {
  const program = new Command('sealpost')
    .description('Sealpost mail server: sealed bodies on IPFS, message records on Solana')
    .version(packageVersion())
    // Throw instead of exiting so every error leaves through reportError;
    // subcommands inherit this because it is set before they are added.
    .exitOverride()
    .showHelpAfterError('(run with --help for usage)');
  configure?.(program);
  for (const module of modules) module.register(program);
  return program;
}
