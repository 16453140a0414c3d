// How the CLI reports errors, with stable exit codes (2: usage or config
// error, 1: anything else). Apart from common.ts so that the entry point
// (main.ts) needs neither the config schema nor zod to print help.
import { CommanderError } from 'commander';
import { ConfigError } from '../core/config/issues.ts';

export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** An error whose message is meant for the operator as is. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT_FAILURE,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** Prints an error the way the CLI reports it and returns the exit code. */
export function reportError(err: unknown, stderr: { write(s: string): unknown } = process.stderr): number {
  if (err instanceof CommanderError) {
    // Commander has already printed its message (or the help text).
    return err.exitCode === 0 ? 0 : EXIT_USAGE;
  }
  if (err instanceof ConfigError) {
    stderr.write(`${err.message}\n`);
    return EXIT_USAGE;
  }
  if (err instanceof CliError) {
    stderr.write(`error: ${err.message}\n`);
    return err.exitCode;
  }
  const message = err instanceof Error ? err.message : String(err);
  stderr.write(`error: ${message}\n`);
  if (process.env.SEALPOST_DEBUG && err instanceof Error && err.stack) stderr.write(`${err.stack}\n`);
  return EXIT_FAILURE;
}
