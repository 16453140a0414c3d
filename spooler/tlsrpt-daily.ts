// The daily TLS-RPT run: for every policy domain with results recorded
// before today (UTC), one report per day with traffic, sent to the rua
// targets of `_smtp._tls.<domain>` — mailto targets as DKIM-signed mail
// through the spooler's own queue, https targets by POST. Rows of a day
// are deleted once its report went out to at least one target (or the
// domain asks for none); rows that could not be sent stay for the next run
// and are pruned after report_retention_days. Domains without traffic get
// nothing because they have no rows. Host names of https targets are
// resolved through `[dns] resolvers` (the spooler's DNS view), not the
// system resolver. Each sent report is noted in Redis, so a second run for
// the same day can say "already sent" instead of silently doing nothing.
import type { LookupAddress } from 'node:dns';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { Queue } from 'bullmq';
import type { Kysely } from 'kysely';
import type { OutboundJobData } from '../src/contracts/inbound-jobs.ts';
import type { BlobStore } from '../src/core/blobs/blob-store.ts';
import type { SpoolerConfig } from '../src/core/config/types.ts';
import type { Logger } from '../src/core/log.ts';
import { OutboundLedger } from '../src/core/store/outbound-ledger.ts';
import type { Database } from '../src/core/store/types.ts';
import { trustedCa } from '../src/core/tls/extra-ca.ts';
import type { DkimSigner } from '../src/mail/dkim-sign.ts';
import { resolveAddresses } from './routing.ts';
import type { SecureDns } from './secure-dns.ts';
import { txtStrings } from './secure-dns.ts';
import {
  buildReportEmail,
  buildTlsrptReport,
  DAY_MS,
  gzipReport,
  parseTlsrptRecord,
  type TlsrptReport,
} from './tlsrpt-report.ts';
import { deleteRows, pendingDomains, pendingRows, prunePending } from './tlsrpt-store.ts';

export interface TlsrptRunDeps {
  db: Kysely<Database>;
  dns: SecureDns;
  blobs: BlobStore;
  intake: Queue<OutboundJobData>;
  config: SpoolerConfig;
  dkim: DkimSigner | null;
  extraCa?: readonly string[];
  httpsTimeoutMs?: number;
  logger: Logger;
  /** Where sent reports are noted (absent: not noted). */
  sentLog?: TlsrptSentLog;
}

/** What was sent for a policy domain and UTC day. */
export interface SentNote {
  sentAt: number;
  targets: string[];
}

export interface TlsrptSentLog {
  note(domain: string, day: string, note: SentNote): Promise<void>;
  /** Every domain noted for the day. */
  ofDay(day: string): Promise<Map<string, SentNote>>;
}

/** Sent notes in one Redis hash per day (`<prefix>:spooler:tlsrpt-sent:<day>`), kept 40 days. */
export function redisSentLog(
  redis: {
    hset(key: string, field: string, value: string): Promise<unknown>;
    expire(key: string, secs: number): Promise<unknown>;
    hgetall(key: string): Promise<Record<string, string>>;
  },
  prefix: string,
): TlsrptSentLog {
  const key = (day: string) => `${prefix}:spooler:tlsrpt-sent:${day}`;
  return {
    async note(domain, day, note) {
      await redis.hset(key(day), domain, JSON.stringify(note));
      await redis.expire(key(day), 40 * 86_400);
    },
    async ofDay(day) {
      const all = await redis.hgetall(key(day));
      return new Map(Object.entries(all).map(([d, v]) => [d, JSON.parse(v) as SentNote]));
    },
  };
}

export interface TargetResult {
  /** `mailto:…` or the https URL. */
  target: string;
  /** `sent` (https 2xx), `queued` (mailto, through the spooler), `failed`. */
  result: 'sent' | 'queued' | 'failed';
  reason?: string;
}

export interface TlsrptRunSummary {
  reports: {
    domain: string;
    day: string;
    mailto: string[];
    https: string[];
    failed: string[];
    results: TargetResult[];
  }[];
  /** Reports of the asked day (`only`) that went out in an earlier run. */
  alreadySent: { domain: string; day: string; sentAt: number; targets: string[] }[];
  /** Domains whose rows were dropped because they publish no TLS-RPT record. */
  noRecord: string[];
  pruned: number;
}

/**
 * Reports every complete UTC day with rows, or only the day starting at
 * `opts.day` (a UTC midnight; then nothing is pruned and earlier sends of
 * that day are listed in `alreadySent`).
 */
export async function runTlsrptReports(
  deps: TlsrptRunDeps,
  now: number,
  opts: { day?: number } = {},
): Promise<TlsrptRunSummary> {
  const summary: TlsrptRunSummary = { reports: [], alreadySent: [], noRecord: [], pruned: 0 };
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  const only = opts.day;
  const { org_name: orgName, contact } = deps.config.tlsrpt;
  const contactDomain = contact.slice(contact.lastIndexOf('@') + 1);
  const canMail = deps.dkim?.signingDomain(contactDomain) != null;

  const end = only === undefined ? today : Math.min(today, only + DAY_MS);
  for (const { domain, first } of await pendingDomains(deps.db, end)) {
    let targets: ReturnType<typeof parseTlsrptRecord>;
    try {
      targets = parseTlsrptRecord(txtStrings((await deps.dns.query(`_smtp._tls.${domain}`, 'TXT')).records));
    } catch (err) {
      deps.logger.warn(
        { domain, err: (err as Error).message },
        'TLS-RPT record lookup failed; keeping results',
      );
      continue;
    }
    if (!targets) {
      await deleteRows(deps.db, domain, 0, today);
      summary.noRecord.push(domain);
      continue;
    }
    const from = only ?? Math.floor(first / DAY_MS) * DAY_MS;
    for (let day = from; day < end; day += DAY_MS) {
      const rows = await pendingRows(deps.db, domain, day, day + DAY_MS);
      if (rows.length === 0) continue;
      const report = buildTlsrptReport({ orgName, contact, domain, dayStart: day, rows });
      const gz = gzipReport(report);
      const sent = {
        domain,
        day: new Date(day).toISOString().slice(0, 10),
        mailto: [] as string[],
        https: [] as string[],
        failed: [] as string[],
        results: [] as TargetResult[],
      };
      for (const to of targets.mailto) {
        if (!canMail) {
          // RFC 8460 §5.3: a mailed report without a valid DKIM signature must be ignored.
          deps.logger.warn(
            { domain, to },
            `TLS-RPT mail not sent: no [[spooler.dkim]] key for ${contactDomain}`,
          );
          sent.failed.push(`mailto:${to}`);
          sent.results.push({
            target: `mailto:${to}`,
            result: 'failed',
            reason: `no [[spooler.dkim]] key for ${contactDomain}`,
          });
          continue;
        }
        await queueReportMail(deps, { to, domain, report, gz, now });
        sent.mailto.push(to);
        sent.results.push({ target: `mailto:${to}`, result: 'queued' });
      }
      for (const url of targets.https) {
        try {
          await postReport(deps, url, gz);
          sent.https.push(url);
          sent.results.push({ target: url, result: 'sent' });
        } catch (err) {
          deps.logger.warn({ domain, url, err: (err as Error).message }, 'TLS-RPT https delivery failed');
          sent.failed.push(url);
          sent.results.push({ target: url, result: 'failed', reason: (err as Error).message });
        }
      }
      if (sent.mailto.length + sent.https.length > 0) {
        // Noted first: a crash between the two sends the day again rather than never.
        await deps.sentLog?.note(domain, sent.day, {
          sentAt: now,
          targets: sent.results.filter((r) => r.result !== 'failed').map((r) => r.target),
        });
        await deleteRows(deps.db, domain, day, day + DAY_MS);
      }
      summary.reports.push(sent);
    }
  }
  if (only !== undefined && deps.sentLog) {
    const day = new Date(only).toISOString().slice(0, 10);
    const fresh = new Set(summary.reports.map((r) => r.domain));
    for (const [domain, note] of await deps.sentLog.ofDay(day)) {
      if (!fresh.has(domain)) summary.alreadySent.push({ domain, day, ...note });
    }
  }
  if (only === undefined) {
    summary.pruned = await prunePending(deps.db, now, deps.config.dmarc_rua_ingest.report_retention_days);
  }
  deps.logger.info(
    { reports: summary.reports.length, noRecord: summary.noRecord.length, pruned: summary.pruned },
    'TLS-RPT daily run done',
  );
  return summary;
}

async function queueReportMail(
  deps: TlsrptRunDeps,
  r: { to: string; domain: string; report: TlsrptReport; gz: Buffer; now: number },
): Promise<void> {
  const raw = await buildReportEmail({
    from: deps.config.tlsrpt.contact,
    to: r.to,
    orgName: deps.config.tlsrpt.org_name,
    hostname: deps.config.hostname,
    domain: r.domain,
    report: r.report,
    gz: r.gz,
    date: new Date(r.now),
  });
  const stored = await deps.blobs.putContent(raw);
  const id = `tlsrpt-${r.report['report-id'].replace(/[^A-Za-z0-9._-]/g, '_')}-${Buffer.from(r.to).toString('hex').slice(0, 32)}`;
  const data: OutboundJobData = {
    msgid: id,
    from: deps.config.tlsrpt.contact,
    to: [r.to],
    blobKey: stored.key,
    kind: 'report',
    createdAt: r.now,
    // A report that cannot be delivered is not worth a bounce to ourselves.
    dsn: { notify: 'NEVER' },
  };
  // Recorded outside Redis first (src/core/store/outbound-ledger.ts): a Redis that loses it loses no report.
  await new OutboundLedger(deps.db).record([data]);
  await deps.intake.add('report', data, { jobId: id, removeOnComplete: { age: 86_400 }, removeOnFail: 5000 });
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for node:https that asks the spooler's resolvers
 * (`[dns] resolvers`) instead of the system's; IPv4 first, as for MX hosts.
 */
export function spoolerLookup(dns: SecureDns) {
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    const family = isIP(hostname);
    if (family !== 0) {
      if (options.all) callback(null, [{ address: hostname, family }]);
      else callback(null, hostname, family);
      return;
    }
    resolveAddresses(dns, hostname).then(
      ({ addresses }) => {
        if (addresses.length === 0) {
          const err: NodeJS.ErrnoException = new Error(`${hostname} has no address`);
          err.code = 'ENOTFOUND';
          callback(err, []);
          return;
        }
        const list = addresses.map((address) => ({ address, family: isIP(address) }));
        const [first] = list;
        if (options.all) callback(null, list);
        else callback(null, first?.address ?? '', first?.family);
      },
      (err: Error) => {
        const e: NodeJS.ErrnoException = new Error(`${hostname}: ${err.message}`);
        e.code = 'ENOTFOUND';
        callback(e, []);
      },
    );
  };
}

function postReport(deps: TlsrptRunDeps, url: string, gz: Buffer): Promise<void> {
  const timeoutMs = deps.httpsTimeoutMs ?? 30_000;
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/tlsrpt+gzip', 'content-length': gz.length },
        lookup: spoolerLookup(deps.dns),
        ca: trustedCa(deps.extraCa),
        rejectUnauthorized: true,
        agent: false,
        timeout: timeoutMs,
      },
      (res) => {
        res.resume();
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) resolve();
        else reject(new Error(`HTTP ${status}`));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(gz);
  });
}
