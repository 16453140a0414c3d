// `sealpost config check|show`: validate a config file the way every server
// command does at start, or print it with all defaults filled in.
import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import { renderConfigToml } from '../../../core/config/index.ts';
import { nonDefaultConfig, renderNonDefault } from '../../../core/config/non-default.ts';
import { addServerOptions, EXIT_FAILURE, loadCliConfig } from '../../common.ts';
import { checkConfigFiles, findingLine } from './config-files.ts';

const CHECK_HELP = `
Besides the schema (unknown keys, bad values: exit 2), every file the config
names is opened as the servers open it: keypair files ([chain]
authority_key_file, delegate_key_file), the credential key (32 raw bytes),
the admin token, DKIM keys (RSA private keys, 2048 bits or more), the TLS
certificate and key (they load and match; [smtp] and [domaind]),
peer_ca_file, the relay password file, and the data directories (they exist
or can be created, and are writable). Every problem is listed, one line
each: "  KEY (FILE): PROBLEM", and the exit code is 1. A file left at its
default path that does not exist yet is a note on stderr, not a problem.
`;

interface Opts {
  config?: string;
  dataDir?: string;
}

export function register(program: Command): void {
  const config = program.command('config').description('inspect the configuration');

  addServerOptions(
    config
      .command('check')
      .description(
        'validate the config file (exit 2 listing every problem), then open every file it names (exit 1 naming each key, file and problem)',
      ),
    { listen: false },
  )
    .addHelpText('after', CHECK_HELP)
    .action(async (opts: Opts) => {
      const { config: loaded, configFile } = loadCliConfig(opts);
      const { problems, notes } = await checkConfigFiles(loaded);
      const source = configFile ?? 'built-in defaults';
      if (notes.length > 0)
        process.stderr.write(`notes on ${source}:\n${notes.map((n) => `${findingLine(n)}\n`).join('')}`);
      if (problems.length > 0) {
        process.stderr.write(
          `file problems in ${source}:\n${problems.map((p) => `${findingLine(p)}\n`).join('')}`,
        );
        process.exitCode = EXIT_FAILURE;
        return;
      }
      process.stdout.write(`config ok: ${configFile ?? 'built-in defaults (no config file)'}\n`);
    });

  addServerOptions(
    config.command('show').description('print the effective configuration as TOML, every default filled in'),
    { listen: false },
  )
    .option('--non-default', "only the keys that differ from their defaults (Postfix's postconf -n)")
    .action((opts: Opts & { nonDefault?: boolean }) => {
      const { config: effective, configFile } = loadCliConfig(opts);
      if (opts.nonDefault) {
        const sections = nonDefaultConfig(effective, {
          configDir: configFile ? dirname(resolve(configFile)) : process.cwd(),
        });
        process.stdout.write(
          renderNonDefault(sections, [
            `Keys that differ from their defaults in ${configFile ?? 'built-in defaults'}; keys: docs/config.md`,
          ]),
        );
        return;
      }
      process.stdout.write(
        renderConfigToml(effective, {
          header: [`Effective configuration from ${configFile ?? 'built-in defaults'}; keys: docs/config.md`],
        }),
      );
    });
}
