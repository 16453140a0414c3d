// A reload of a running serve (SIGHUP, `sealpost reload`): the mail host's
// certificate and key, the peer CA, the admin token and the config keys the
// running code picks up without a restart (RELOADABLE_KEYS), from a config
// that was read again. Everything is read and checked before anything is
// swapped; one problem anywhere (a config that no longer loads, a broken
// certificate, a key that does not match, an unreadable token file) leaves
// every part as it was and the reload is reported as failed. Open sessions
// keep their TLS state; new handshakes use the new pair. Keys that changed
// but need a restart are named in the report and logged as a warning until
// serve restarts. docs/config.md "Reload" lists both sets.

import type { Config } from '../../core/config/index.ts';
import { readAdminTokenFile } from '../../core/keys/admin-token.ts';
import type { MetricsRegistry } from '../../core/limits/metrics.ts';
import type { Logger } from '../../core/log.ts';
import {
  loadCaBundle,
  loadServerCertificate,
  type ServerCertificate,
  type TlsPem,
} from '../../core/tls/server-certificate.ts';
import type { AdminAuth } from '../../edge/api/auth/admin-auth.ts';

/** Config keys a reload applies (docs/config.md "Reload"); every other key needs a restart. */
export const RELOADABLE_KEYS: readonly string[] = [
  'log.level',
  'smtp.tls_cert_file',
  'smtp.tls_key_file',
  'smtp.peer_ca_file',
  'smtp.max_connections_per_ip',
  'smtp.connections_per_ip_per_minute',
  'imap.max_connections_per_ip',
  'pop3.max_connections_per_ip',
  'api.admin_token_file',
  'api.rate_limit_ip_per_min',
  'api.rate_limit_wallet_per_min',
  'limits.sender_messages',
  'limits.sender_window_secs',
  'limits.recipient_messages',
  'limits.recipient_window_secs',
  'limits.overall_messages',
  'limits.overall_window_secs',
  'limits.null_sender_messages',
  'limits.null_sender_window_secs',
];

/** What one reload did; also what serve writes to its status file for `sealpost reload`. */
export interface ReloadReport {
  ok: boolean;
  /** When the reload finished (ISO 8601). */
  at: string;
  /** The mail host's certificate now in use, when this process serves TLS. */
  certificate?: {
    changed: boolean;
    subject: string;
    fingerprint256: string;
    valid_to: string;
    cert_file: string;
  };
  /** Whether the admin token differs from the one before; absent where no API runs. */
  admin_token?: 'changed' | 'unchanged';
  /** Reloadable keys whose value changed and now apply. */
  applied: string[];
  /** Keys that differ from the running config but take a restart. */
  restart_needed: string[];
  warnings: string[];
  /** Why the reload failed (nothing was changed). */
  errors: string[];
}

/** A listener serving the mail host's certificate. */
export interface CertificateTarget {
  name: string;
  /** Asks for client certificates: gets `[smtp] peer_ca_file` as `ca`. */
  peers?: boolean;
  setCertificate(pem: TlsPem): void;
}

export interface ServeReloaderOptions {
  config: Config;
  logger: Logger;
  metrics: MetricsRegistry;
  now?: () => number;
}

type Flat = Map<string, string>;

function flatten(value: unknown, path: string, out: Flat): Flat {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) flatten(v, path ? `${path}.${k}` : k, out);
  } else if (value !== undefined) {
    out.set(path, JSON.stringify(value));
  }
  return out;
}

/** Dotted keys whose values differ between two configs. */
function changedKeys(a: Config, b: Config): string[] {
  const fa = flatten(a, '', new Map());
  const fb = flatten(b, '', new Map());
  const keys = new Set([...fa.keys(), ...fb.keys()]);
  return [...keys].filter((k) => fa.get(k) !== fb.get(k)).sort();
}

function certificateSummary(
  c: ServerCertificate,
  changed: boolean,
): NonNullable<ReloadReport['certificate']> {
  return {
    changed,
    subject: c.subject,
    fingerprint256: c.fingerprint256,
    valid_to: c.validTo,
    cert_file: c.files.certFile,
  };
}

/** One line saying what a successful reload did, for the log and `sealpost reload`. */
export function describeReload(r: ReloadReport): string {
  const parts: string[] = [];
  if (r.certificate) {
    const c = r.certificate;
    parts.push(
      `certificate ${c.changed ? 'changed' : 'unchanged'} (${c.subject}, sha256 ${c.fingerprint256}, valid until ${c.valid_to})`,
    );
  }
  if (r.admin_token) parts.push(`admin token ${r.admin_token}`);
  parts.push(r.applied.length ? `keys changed: ${r.applied.join(', ')}` : 'no config key changed');
  return parts.join('; ');
}

function reloadMetrics(registry: MetricsRegistry) {
  return {
    total: registry.counter(
      'sealpost_reload_total',
      'Reloads (SIGHUP, `sealpost reload`) by outcome (success, failure), per serving process.',
    ),
    lastSuccess: registry.gauge(
      'sealpost_config_last_reload_success_timestamp_seconds',
      'When the certificates, admin token and config were last loaded successfully (start or reload), Unix seconds.',
    ),
    certificateExpiry: registry.gauge(
      'sealpost_tls_certificate_expiry_timestamp_seconds',
      'notAfter of the mail host certificate ([smtp] tls_cert_file) the TLS listeners serve, Unix seconds.',
    ),
  };
}

export class ServeReloader {
  private readonly log: Logger;
  private readonly started: Config;
  private current: Config;
  private certificate: ServerCertificate | undefined;
  private peerCa: Buffer | undefined;
  private readonly certificateTargets: CertificateTarget[] = [];
  private readonly settingsTargets: ((config: Config) => void)[] = [];
  private adminAuth: AdminAuth | undefined;
  private readonly now: () => number;
  private readonly metrics: ReturnType<typeof reloadMetrics>;

  constructor(opts: ServeReloaderOptions) {
    this.started = opts.config;
    this.current = opts.config;
    this.log = opts.logger.child({ component: 'reload' });
    this.now = opts.now ?? Date.now;
    this.metrics = reloadMetrics(opts.metrics);
  }

  addCertificateTarget(target: CertificateTarget): void {
    this.certificateTargets.push(target);
  }

  /** `apply` receives each config a reload accepted and applies its reloadable keys. */
  onSettings(apply: (config: Config) => void): void {
    this.settingsTargets.push(apply);
  }

  setAdminAuth(auth: AdminAuth): void {
    this.adminAuth = auth;
  }

  /** Once every part runs: notes the certificate in use (the listeners loaded it themselves). */
  noteStarted(): void {
    this.metrics.lastSuccess.set(Math.floor(this.now() / 1000));
    if (this.certificateTargets.length === 0) return;
    try {
      this.certificate = loadServerCertificate(this.certificateFiles(this.started));
      this.metrics.certificateExpiry.set(Math.floor(Date.parse(this.certificate.validTo) / 1000));
      const peerCaFile = this.started.smtp.peer_ca_file;
      if (peerCaFile !== undefined && this.certificateTargets.some((t) => t.peers))
        this.peerCa = loadCaBundle('smtp.peer_ca_file', peerCaFile);
    } catch {
      // The listeners started with these files, so only a change since then gets here; the next reload says.
    }
  }

  /** Whether the listeners already serve exactly these bytes (then their contexts, and TLS session tickets, stay). */
  private serving(certificate: ServerCertificate, peerCa: Buffer | undefined): boolean {
    const c = this.certificate;
    const sameCa = peerCa === undefined ? this.peerCa === undefined : this.peerCa?.equals(peerCa) === true;
    return c?.cert.equals(certificate.cert) === true && c.key.equals(certificate.key) && sameCa;
  }

  /** A reload whose config could not be read: nothing changes. */
  failed(errors: string[]): ReloadReport {
    return this.finish(this.report(false, { errors }), true);
  }

  /** Applies `next` (a config read again) or, on any problem, nothing. */
  reload(next: Config): ReloadReport {
    const errors: string[] = [];
    const warnings: string[] = [];
    let certificate: ServerCertificate | undefined;
    let peerCa: Buffer | undefined;
    let token: string | null | undefined;
    if (this.certificateTargets.length > 0) {
      try {
        certificate = loadServerCertificate(this.certificateFiles(next));
      } catch (err) {
        errors.push((err as Error).message);
      }
    }
    // Client certificates were asked for at start or not; the bundle itself reloads.
    if (this.certificateTargets.some((t) => t.peers) && next.smtp.peer_ca_file !== undefined) {
      try {
        peerCa = loadCaBundle('smtp.peer_ca_file', next.smtp.peer_ca_file);
      } catch (err) {
        errors.push((err as Error).message);
      }
    }
    if (this.adminAuth) {
      try {
        token = readAdminTokenFile(next.api.admin_token_file);
      } catch (err) {
        errors.push(`[api] admin_token_file: ${(err as Error).message}`);
      }
    }
    if (errors.length > 0) return this.finish(this.report(false, { errors }), true);

    let swapFailed = false;
    if (certificate && !this.serving(certificate, peerCa)) {
      for (const target of this.certificateTargets) {
        const pem: TlsPem = { cert: certificate.cert, key: certificate.key };
        if (target.peers && peerCa) pem.ca = peerCa;
        try {
          target.setCertificate(pem);
        } catch (err) {
          swapFailed = true;
          errors.push(
            `${target.name}: the new certificate did not load, the listener keeps its previous one (${(err as Error).message})`,
          );
        }
      }
    }
    let adminToken: ReloadReport['admin_token'];
    if (this.adminAuth && token !== undefined) {
      adminToken = this.adminAuth.replace(token) ? 'changed' : 'unchanged';
      if (token === null)
        warnings.push(
          `[api] admin_token_file ${next.api.admin_token_file} does not exist: admin routes and /metrics refuse everyone`,
        );
    }
    for (const apply of this.settingsTargets) {
      try {
        apply(next);
      } catch (err) {
        errors.push(`applying the config: ${(err as Error).message}`);
      }
    }
    const previous = this.certificate;
    // After a listener refused the pair, the next reload offers it to every listener again.
    if (certificate && !swapFailed) {
      this.certificate = certificate;
      this.peerCa = peerCa;
      this.metrics.certificateExpiry.set(Math.floor(Date.parse(certificate.validTo) / 1000));
    }
    const applied = changedKeys(this.current, next).filter((k) => this.reloadable(k, next));
    this.current = next;
    const restart = changedKeys(this.started, next).filter((k) => !this.reloadable(k, next));
    const report = this.report(errors.length === 0, {
      errors,
      warnings,
      applied,
      restart_needed: restart,
      admin_token: adminToken,
      certificate: certificate
        ? certificateSummary(certificate, previous?.fingerprint256 !== certificate.fingerprint256)
        : undefined,
    });
    return this.finish(report, false);
  }

  private reloadable(key: string, next: Config): boolean {
    // Adding or removing the peer CA changes what the listeners ask for at the handshake: a restart.
    if (key === 'smtp.peer_ca_file')
      return this.started.smtp.peer_ca_file !== undefined && next.smtp.peer_ca_file !== undefined;
    return RELOADABLE_KEYS.includes(key);
  }

  private certificateFiles(config: Config) {
    return { certFile: config.smtp.tls_cert_file, keyFile: config.smtp.tls_key_file };
  }

  private report(ok: boolean, parts: Partial<ReloadReport>): ReloadReport {
    return {
      ok,
      at: new Date(this.now()).toISOString(),
      ...(parts.certificate ? { certificate: parts.certificate } : {}),
      ...(parts.admin_token ? { admin_token: parts.admin_token } : {}),
      applied: parts.applied ?? [],
      restart_needed: parts.restart_needed ?? [],
      warnings: parts.warnings ?? [],
      errors: parts.errors ?? [],
    };
  }

  /** Counts and logs a reload; `untouched`: it failed before anything was swapped. */
  private finish(report: ReloadReport, untouched: boolean): ReloadReport {
    this.metrics.total.inc({ outcome: report.ok ? 'success' : 'failure' });
    if (!report.ok) {
      const kept = untouched
        ? 'nothing was changed: the previous certificates, admin token and config stay in use'
        : `applied except where named: ${describeReload(report)}`;
      this.log.error({ errors: report.errors }, `reload failed (${kept}): ${report.errors.join('; ')}`);
      return report;
    }
    this.metrics.lastSuccess.set(Math.floor(this.now() / 1000));
    this.log.info(
      {
        ...(report.certificate ? { certificate: report.certificate } : {}),
        ...(report.admin_token ? { admin_token: report.admin_token } : {}),
        applied: report.applied,
        restart_needed: report.restart_needed,
      },
      `reloaded: ${describeReload(report)}`,
    );
    for (const w of report.warnings) this.log.warn(w);
    if (report.restart_needed.length > 0)
      this.log.warn(
        { keys: report.restart_needed },
        `changed in the config but only applied at the next start: ${report.restart_needed.join(', ')}`,
      );
    return report;
  }
}

/** One serving process's answer to a reload the supervisor passed on (`serve --workers N`). */
export interface ProcessReload {
  slot: number;
  report?: ReloadReport;
  /** Why there is no report (the process did not answer in time). */
  error?: string;
}

/**
 * The supervisor's one report for all its processes: ok when every one
 * reloaded; each distinct error once, with the slots that had it.
 */
export function mergeReloadReports(parts: ProcessReload[], at: string): ReloadReport {
  const bySlot = (map: Map<string, number[]>, message: string, slot: number) =>
    map.set(message, [...(map.get(message) ?? []), slot]);
  const errors = new Map<string, number[]>();
  const warnings = new Set<string>();
  const applied = new Set<string>();
  const restart = new Set<string>();
  let certificate: ReloadReport['certificate'];
  let adminToken: ReloadReport['admin_token'];
  for (const p of parts) {
    if (!p.report) {
      bySlot(errors, p.error ?? 'no answer', p.slot);
      continue;
    }
    for (const e of p.report.errors) bySlot(errors, e, p.slot);
    for (const w of p.report.warnings) warnings.add(w);
    for (const k of p.report.applied) applied.add(k);
    for (const k of p.report.restart_needed) restart.add(k);
    certificate ??= p.report.certificate;
    if (p.report.admin_token) adminToken = adminToken === 'changed' ? 'changed' : p.report.admin_token;
  }
  if (parts.length === 0) bySlot(errors, 'no serving process is ready to reload', -1);
  const named = [...errors].map(([message, slots]) =>
    slots[0] === -1 ? message : `${slots.length > 1 ? 'slots' : 'slot'} ${slots.join(', ')}: ${message}`,
  );
  return {
    ok: named.length === 0,
    at,
    ...(certificate ? { certificate } : {}),
    ...(adminToken ? { admin_token: adminToken } : {}),
    applied: [...applied].sort(),
    restart_needed: [...restart].sort(),
    warnings: [...warnings],
    errors: named,
  };
}
