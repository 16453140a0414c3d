// Every subcommand module, in the order `sealpost --help` lists them.
// To add a command: create ./<name>.ts exporting register(program) and add it here.
import type { Command } from 'commander';
import * as config from './config.ts';
import * as dev from './dev.ts';
import * as devnet from './devnet.ts';
import * as keygen from './keygen.ts';

export interface CommandModule {
  register(program: Command): void;
}

export const commandModules: CommandModule[] = [dev, devnet, keygen, config];
