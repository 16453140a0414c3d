// The `sealpost` CLI. Each subcommand lives in ./commands/ and registers
// itself; this file only builds the program (./program.ts) and maps errors
// to exit codes.
import { loadCommandModules } from './commands/index.ts';
import { reportError } from './errors.ts';
import { buildProgram } from './program.ts';

export async function main(argv: string[] = process.argv): Promise<void> {
  try {
    await buildProgram(await loadCommandModules(argv)).parseAsync(argv);
  } catch (err) {
    process.exitCode = reportError(err);
  }
}

await main();
