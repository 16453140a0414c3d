// The top-level help without the command modules. `sealpost --help`,
// `--version` and a mistyped command need only each command's name, aliases,
// usage term and one-line description, yet loading the modules that
// register them costs seconds (each pulls in its whole stack). The build
// (bin/build-dist.js) loads every module once, captures those lines with
// describeCommands, and compiles them into the CLI; helpStubModule then
// registers stand-ins that print the same help and suggest the same names.
import { Command, Help } from 'commander';
import type { CommandModule } from './commands/index.ts';

export interface HelpLine {
  name: string;
  aliases: string[];
  /** What commander prints in the command column, e.g. `serve [options]`. */
  term: string;
  description: string;
  hidden: boolean;
  group: string;
}

/** The help line of every top-level command the modules register, in order. */
export function describeCommands(modules: CommandModule[]): HelpLine[] {
  const program = new Command('sealpost');
  for (const module of modules) module.register(program);
  const help = new Help();
  const visible = new Set(help.visibleCommands(program));
  return program.commands.map((cmd) => ({
    name: cmd.name(),
    aliases: cmd.aliases(),
    term: help.subcommandTerm(cmd),
    description: help.subcommandDescription(cmd),
    hidden: !visible.has(cmd),
    group: cmd.helpGroup(),
  }));
}

/** Registers stand-ins for the commands in `lines`: enough for help, version and suggestions. */
export function helpStubModule(lines: readonly HelpLine[]): CommandModule {
  return {
    register(program: Command) {
      const terms = new Map<Command, string>();
      for (const line of lines) {
        const cmd = program
          .command(line.name, { hidden: line.hidden })
          .aliases(line.aliases)
          .description(line.description);
        if (line.group) cmd.helpGroup(line.group);
        terms.set(cmd, line.term);
      }
      program.configureHelp({
        subcommandTerm(this: Help, cmd: Command): string {
          return terms.get(cmd) ?? Help.prototype.subcommandTerm.call(this, cmd);
        },
      });
    },
  };
}
