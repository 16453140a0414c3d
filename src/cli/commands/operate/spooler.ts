// `sealpost spooler tlsrpt --send [--day YYYY-MM-DD]`: sends the TLS-RPT
// reports of one UTC day now (default yesterday), what the daily job at
// 00:23 UTC would send — https targets posted from this process (host names
// through `[dns] resolvers`, certificates against the default roots plus
// `[tls] extra_ca_file`), mailto targets queued for the running spooler.
// One line per report and target; exit 1 when any target failed. A report
// sent before (by the daily job or an earlier run) is not sent again.
import { Queue } from 'bullmq';
import { type Command, InvalidArgumentError } from 'commander';
import { createSecureDns } from '../../../../spooler/secure-dns.ts';
import { redisSentLog, runTlsrptReports, type TlsrptRunSummary } from '../../../../spooler/tlsrpt-daily.ts';
import { DAY_MS } from '../../../../spooler/tlsrpt-report.ts';
import { type OutboundJobData, QUEUE_OUTBOUND } from '../../../contracts/inbound-jobs.ts';
import { openBlobStore } from '../../../core/blobs/open-blob-store.ts';
import { createLogger } from '../../../core/log.ts';
import { openStore } from '../../../core/store/index.ts';
import { readExtraCa } from '../../../core/tls/extra-ca.ts';
import { createDkimSigner } from '../../../mail/dkim-sign.ts';
import { CliError, CONFIG_OPTION_HELP, EXIT_FAILURE, loadCliConfig } from '../../common.ts';
import { connectCliRedis } from '../../redis-connect.ts';

interface TlsrptOptions {
  send?: boolean;
  day?: number;
  config?: string;
}

function parseDay(value: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  const at = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : Number.NaN;
  if (!m || new Date(at).toISOString().slice(0, 10) !== value) {
    throw new InvalidArgumentError(`expected a UTC day as YYYY-MM-DD, got "${value}"`);
  }
  return at;
}

export function summaryLines(summary: TlsrptRunSummary): string[] {
  const lines: string[] = [];
  for (const r of summary.reports) {
    for (const t of r.results) {
      const result = t.result === 'failed' ? `failed (${t.reason ?? 'unknown error'})` : t.result;
      lines.push(`${r.domain} ${t.target} ${result}`);
    }
  }
  for (const a of summary.alreadySent) {
    const when = new Date(a.sentAt).toISOString();
    for (const target of a.targets)
      lines.push(`${a.domain} ${target} already sent at ${when}, not sent again`);
  }
  for (const domain of summary.noRecord) lines.push(`${domain} - no TLS-RPT record; results dropped`);
  return lines;
}

async function sendReports(opts: TlsrptOptions): Promise<void> {
  const { config } = loadCliConfig(opts);
  if (!config.spooler.tlsrpt.enabled) {
    throw new CliError('TLS-RPT is off ([spooler.tlsrpt] enabled = false): there is nothing to send');
  }
  const now = Date.now();
  const day = opts.day ?? Math.floor(now / DAY_MS) * DAY_MS - DAY_MS;
  if (day + DAY_MS > now) {
    throw new CliError(
      `${new Date(day).toISOString().slice(0, 10)} (UTC) is not over yet; its report is not due`,
    );
  }
  const redis = await connectCliRedis(config.redis);
  const store = await openStore({ url: config.store.url, dataDir: config.store.data_dir });
  const intake = new Queue<OutboundJobData>(QUEUE_OUTBOUND, {
    connection: redis,
    prefix: config.redis.prefix,
  });
  try {
    const summary = await runTlsrptReports(
      {
        db: store.db,
        dns: createSecureDns({ servers: config.dns.resolvers, trusted: config.spooler.trusted_resolvers }),
        blobs: openBlobStore(config, store),
        intake,
        config: config.spooler,
        dkim: createDkimSigner(config.spooler.dkim),
        extraCa: config.tls.extra_ca_file ? readExtraCa(config.tls.extra_ca_file) : undefined,
        logger: createLogger({ level: 'silent' }),
        sentLog: redisSentLog(redis, config.redis.prefix),
      },
      now,
      { day },
    );
    const lines = summaryLines(summary);
    const dayText = new Date(day).toISOString().slice(0, 10);
    if (lines.length === 0) lines.push(`no TLS-RPT results recorded for ${dayText} (UTC); nothing to send`);
    process.stdout.write(`${lines.join('\n')}\n`);
    if (summary.reports.some((r) => r.results.some((t) => t.result === 'failed'))) {
      process.exitCode = EXIT_FAILURE;
    }
  } finally {
    await intake.close().catch(() => {});
    await store.close().catch(() => {});
    await redis.quit().catch(() => redis.disconnect());
  }
}

export function register(program: Command): void {
  const spooler = program.command('spooler').description('the outbound spooler');
  spooler
    .command('tlsrpt')
    .description('TLS-RPT (RFC 8460) reports to other domains')
    .option('--send', 'send the due reports of one UTC day now')
    .option('--day <YYYY-MM-DD>', 'the UTC day to report (default: yesterday)', parseDay)
    .option('--config <file>', CONFIG_OPTION_HELP)
    .action(async (opts: TlsrptOptions) => {
      if (!opts.send) {
        throw new CliError('say what to do: `sealpost spooler tlsrpt --send [--day YYYY-MM-DD]`', 2);
      }
      await sendReports(opts);
    });
}
