// `sealpost config check|show`: validate a config file the way every server
// command does at start, or print it with all defaults filled in.
import type { Command } from 'commander';
import { renderConfigToml } from '../../config/index.ts';
import { addServerOptions, loadCliConfig } from '../common.ts';

interface Opts {
  config?: string;
  dataDir?: string;
}

export function register(program: Command): void {
  const config = program.command('config').description('inspect the configuration');

  addServerOptions(
    config.command('check').description('validate the config file; lists every problem and exits 2 if any'),
    { listen: false },
  ).action((opts: Opts) => {
    const { configFile } = loadCliConfig(opts);
    process.stdout.write(`config ok: ${configFile ?? 'built-in defaults (no config file)'}\n`);
  });

  addServerOptions(
    config.command('show').description('print the effective configuration as TOML, every default filled in'),
    { listen: false },
  ).action((opts: Opts) => {
    const { config: effective, configFile } = loadCliConfig(opts);
    process.stdout.write(
      renderConfigToml(effective, {
        header: [`Effective configuration from ${configFile ?? 'built-in defaults'}; keys: docs/config.md`],
      }),
    );
  });
}
