// `sealpost dns-records`: every DNS record of the reference's table for this
// config, as zone-file text (default) or JSON; `--check` resolves them and
// exits 1 unless every one is published as expected.
import type { Command } from 'commander';
import { createDnsResolver, type DnsServer } from '../../../core/dns/resolver.ts';
import { buildDnsRecords } from '../../../edge/domaind/dns-records.ts';
import { checkDnsRecords, renderCheckText } from '../../../edge/domaind/dns-records-check.ts';
import { renderZoneText } from '../../../edge/domaind/zone-text.ts';
import {
  CONFIG_OPTION_HELP,
  EXIT_FAILURE,
  formatListen,
  type Listen,
  loadCliConfig,
  parseListen,
} from '../../common.ts';

interface Options {
  config?: string;
  dataDir?: string;
  json?: boolean;
  check?: boolean;
  tlsaCa?: boolean;
  resolver: Listen[];
}

export function register(program: Command): void {
  program
    .command('dns-records')
    .description('print the DNS records to publish for every local domain (zone-file text, or JSON)')
    .option('--config <file>', CONFIG_OPTION_HELP)
    .option('--data-dir <dir>', 'data directory (overrides [store] data_dir)')
    .option('--json', 'print JSON instead of zone-file text')
    .option('--check', 'resolve each record and report ok / missing / different; exit 1 unless all are ok')
    .option('--tlsa-ca', "also print a TLSA 2 1 1 record for the certificate's issuing CA")
    .option(
      '--resolver <host:port>',
      'resolver for --check (repeatable; default [dns] resolvers, else the system resolvers)',
      (value: string, prev: Listen[]) => [...prev, parseListen(value)],
      [] as Listen[],
    )
    .addHelpText(
      'after',
      '\nExamples:\n  sealpost dns-records --config sealpost.toml > zone.txt\n  sealpost dns-records --check --resolver 1.1.1.1:53\n',
    )
    .action(async (opts: Options) => {
      const { config } = loadCliConfig(opts);
      const result = buildDnsRecords(config, { tlsaCa: opts.tlsaCa });
      for (const w of result.warnings) process.stderr.write(`warning: ${w}\n`);
      if (!opts.check) {
        process.stdout.write(opts.json ? `${JSON.stringify(result, null, 2)}\n` : renderZoneText(result));
        return;
      }
      const servers: (string | DnsServer)[] =
        opts.resolver.length > 0 ? opts.resolver.map((l) => formatListen(l)) : config.dns.resolvers;
      const resolver = createDnsResolver({ servers, timeoutMs: 3000, tries: 2 });
      const checks = await checkDnsRecords(resolver, result.records);
      process.stdout.write(
        opts.json
          ? `${JSON.stringify(
              {
                checks: checks.map((c) => ({
                  ...c.record,
                  status: c.status,
                  found: c.found,
                  ...(c.note ? { check_note: c.note } : {}),
                })),
                warnings: result.warnings,
              },
              null,
              2,
            )}\n`
          : renderCheckText(checks),
      );
      if (checks.some((c) => c.status !== 'ok')) process.exitCode = EXIT_FAILURE;
    });
}
