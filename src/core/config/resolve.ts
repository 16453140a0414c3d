// Second phase after schema validation: fills the defaults that depend on
// other keys (host names from smtp.hostname, paths under data_dir), makes
// every path absolute, and runs the checks that span several tables.
import { isAbsolute, join, resolve } from 'node:path';
import { defaultMaxRps, defaultStatusPollMs } from '../net/rpc-discipline.ts';
import { readSecretFile } from '../redis/secret-file.ts';
import { ExtraCaError, readExtraCa } from '../tls/extra-ca.ts';
import type { ConfigIssue } from './issues.ts';
import type { ConfigInput } from './schema.ts';
import { deriveWsUrl } from './sections/chain.ts';
import { CLIENT_PORTS } from './sections/mail-hosts.ts';
import { DEFAULT_LISTENER_PORTS } from './sections/smtp.ts';
import type { Config, SmtpListener } from './types.ts';

export interface ResolveContext {
  /** Directory relative paths in the file are resolved against. */
  configDir: string;
  /** `--data-dir`: wins over `[store] data_dir`; relative to the working directory. */
  dataDirOverride?: string;
  env: Record<string, string | undefined>;
}

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

export function resolveConfig(
  raw: ConfigInput,
  ctx: ResolveContext,
): { config: Config; issues: ConfigIssue[] } {
  const issues: ConfigIssue[] = [];
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(ctx.configDir, p));
  const opt = (p: string | undefined) => (p === undefined ? undefined : abs(p));

  const dataDir = ctx.dataDirOverride ? resolve(ctx.dataDirOverride) : abs(raw.store.data_dir ?? '.data');
  const hostname = raw.smtp.hostname;

  if (raw.blobs.backend === 'postgres' && !/^postgres(ql)?:\/\//.test(raw.store.url ?? '')) {
    issues.push({
      kind: 'invalid',
      path: 'blobs.backend',
      message: '"postgres" keeps the blobs in the store\'s database: store.url must be a "postgres://" URL',
    });
  }

  const listeners = resolveListeners(raw.smtp.listeners);
  const seen = new Map<string, number>();
  listeners.forEach((l, i) => {
    const key = `${l.host}:${l.port}`;
    const first = seen.get(key);
    if (first !== undefined) {
      issues.push({
        kind: 'invalid',
        path: `smtp.listeners[${i}]`,
        message: `${key} is already used by smtp.listeners[${first}]`,
      });
    } else seen.set(key, i);
  });

  // `sentinels` in the file wins over REDIS_URL, as `url` does.
  const viaSentinel = raw.redis.sentinels !== undefined;
  const redisUrl = viaSentinel ? undefined : (raw.redis.url ?? ctx.env.REDIS_URL ?? DEFAULT_REDIS_URL);
  if (
    redisUrl !== undefined &&
    raw.redis.url === undefined &&
    ctx.env.REDIS_URL !== undefined &&
    !/^rediss?:\/\/./.test(redisUrl)
  ) {
    issues.push({
      kind: 'invalid',
      path: 'redis.url',
      message: `expected a redis:// or rediss:// URL from the REDIS_URL environment variable, got ${JSON.stringify(redisUrl)}`,
    });
  }

  // Read now, so an unreadable or empty password file stops start-up (and `config check`) with its key.
  const redisPasswordFile = opt(raw.redis.password_file);
  const sentinelPasswordFile = opt(raw.redis.sentinel_password_file);
  for (const [key, file] of [
    ['redis.password_file', redisPasswordFile],
    ['redis.sentinel_password_file', sentinelPasswordFile],
  ] as const) {
    if (file === undefined) continue;
    try {
      readSecretFile(file);
    } catch (err) {
      issues.push({ kind: 'invalid', path: key, message: (err as Error).message });
    }
  }

  if ((raw.domaind.tls_cert_file === undefined) !== (raw.domaind.tls_key_file === undefined)) {
    issues.push({
      kind: 'invalid',
      path: raw.domaind.tls_cert_file === undefined ? 'domaind.tls_cert_file' : 'domaind.tls_key_file',
      message: 'domaind.tls_cert_file and domaind.tls_key_file must be set together (HTTPS needs both)',
    });
  }

  for (const proto of ['imap', 'pop3'] as const) {
    const listener = raw[proto];
    if (listener.starttls_port !== undefined && listener.starttls_port === listener.port) {
      issues.push({
        kind: 'invalid',
        path: `${proto}.starttls_port`,
        message: `must differ from ${proto}.port`,
      });
    }
  }

  // Read now, so a bad bundle stops start-up (and `config check`) with its name.
  const extraCaFile = opt(raw.tls.extra_ca_file);
  if (extraCaFile !== undefined) {
    try {
      readExtraCa(extraCaFile);
    } catch (err) {
      if (!(err instanceof ExtraCaError)) throw err;
      issues.push({ kind: 'invalid', path: 'tls.extra_ca_file', message: err.message });
    }
  }

  const mh = raw.mail_hosts;
  const config: Config = {
    smtp: {
      ...raw.smtp,
      listeners,
      tls_cert_file: abs(raw.smtp.tls_cert_file ?? join(dataDir, 'tls', 'cert.pem')),
      tls_key_file: abs(raw.smtp.tls_key_file ?? join(dataDir, 'tls', 'key.pem')),
      peer_ca_file: opt(raw.smtp.peer_ca_file),
      local_domains: [...new Set(raw.smtp.local_domains)],
    },
    spooler: {
      ...raw.spooler,
      hostname: raw.spooler.hostname ?? hostname,
      dkim: raw.spooler.dkim.map((d) => ({ ...d, key_file: abs(d.key_file) })),
      relay: raw.spooler.relay && {
        ...raw.spooler.relay,
        port: raw.spooler.relay.port ?? (raw.spooler.relay.tls === 'implicit' ? 465 : 25),
        password_file: opt(raw.spooler.relay.password_file),
      },
      tlsrpt: {
        enabled: raw.spooler.tlsrpt.enabled,
        org_name: raw.spooler.tlsrpt.org_name ?? raw.spooler.hostname ?? hostname,
        contact: raw.spooler.tlsrpt.contact ?? `postmaster@${raw.smtp.local_domains[0] ?? hostname}`,
      },
      dmarc_rua_ingest: {
        ...raw.spooler.dmarc_rua_ingest,
        address: (
          raw.spooler.dmarc_rua_ingest.address ?? `postmaster@${raw.smtp.local_domains[0] ?? hostname}`
        ).toLowerCase(),
      },
    },
    mail_hosts: {
      ...mh,
      imap_host: mh.imap_host ?? hostname,
      imap_port: mh.imap_port ?? CLIENT_PORTS.imap[mh.imap_tls],
      pop3_host: mh.pop3_host ?? hostname,
      pop3_port: mh.pop3_port ?? CLIENT_PORTS.pop3[mh.pop3_tls],
      smtp_host: mh.smtp_host ?? hostname,
      submission_port: mh.submission_port ?? CLIENT_PORTS.submission[mh.submission_tls],
    },
    imap: raw.imap,
    pop3: raw.pop3,
    chain: {
      ...raw.chain,
      ws_url: raw.chain.ws_url ?? deriveWsUrl(raw.chain.rpc_url),
      max_rps: raw.chain.max_rps ?? defaultMaxRps(raw.chain.rpc_url),
      status_poll_ms: raw.chain.status_poll_ms ?? defaultStatusPollMs(raw.chain.rpc_url),
      authority_key_file: opt(raw.chain.authority_key_file),
      delegate_key_file: opt(raw.chain.delegate_key_file),
    },
    ipfs: { ...raw.ipfs, pind_auth_token: raw.ipfs.pind_auth_token ?? raw.pind.auth_token },
    api: {
      ...raw.api,
      public_url: raw.api.public_url ?? `http://${urlHost(raw.api.host, hostname)}:${raw.api.port}`,
      admin_token_file: abs(raw.api.admin_token_file ?? join(dataDir, 'admin.token')),
      credential_key_file: abs(raw.api.credential_key_file ?? join(dataDir, 'credential.key')),
      jwt_secret_file: opt(raw.api.jwt_secret_file),
      webmail_dir: opt(raw.api.webmail_dir),
    },
    domaind: {
      ...raw.domaind,
      mta_sts_mx: raw.domaind.mta_sts_mx ?? [hostname],
      public_host: raw.domaind.public_host ?? hostname,
      tls_cert_file: opt(raw.domaind.tls_cert_file),
      tls_key_file: opt(raw.domaind.tls_key_file),
    },
    pind: { ...raw.pind, data_dir: abs(raw.pind.data_dir ?? join(dataDir, 'pind')) },
    serve: raw.serve,
    store: { url: resolveStoreUrl(raw.store.url, dataDir, abs), data_dir: dataDir },
    blobs: raw.blobs,
    redis: {
      ...raw.redis,
      url: redisUrl,
      password_file: redisPasswordFile,
      sentinel_password_file: sentinelPasswordFile,
    },
    log: raw.log,
    dns: raw.dns,
    tls: { extra_ca_file: extraCaFile },
    limits: raw.limits,
    spam: { ...raw.spam, password_file: opt(raw.spam.password_file) },
  };
  return { config, issues };
}

function resolveListeners(input: ConfigInput['smtp']['listeners']): SmtpListener[] {
  const given = input ?? [
    { mode: 'mx' as const, host: '127.0.0.1' },
    { mode: 'submissions' as const, host: '127.0.0.1' },
  ];
  const taken = new Set(given.flatMap((l) => (l.name ? [l.name] : [])));
  return given.map((l) => {
    let name = l.name;
    if (name === undefined) {
      name = l.mode;
      for (let n = 2; taken.has(name); n++) name = `${l.mode}-${n}`;
      taken.add(name);
    }
    return {
      name,
      mode: l.mode,
      host: l.host,
      port: l.port ?? DEFAULT_LISTENER_PORTS[l.mode],
      tls: l.tls ?? (l.mode === 'submissions' ? 'implicit' : 'starttls'),
    };
  });
}

function resolveStoreUrl(url: string | undefined, dataDir: string, abs: (p: string) => string): string {
  if (url === undefined) return `sqlite:${join(dataDir, 'sealpost.sqlite')}`;
  if (!url.startsWith('sqlite:')) return url;
  // Accept sqlite:/abs, sqlite:rel and sqlite:///abs alike.
  const path = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
  return path === ':memory:' ? url : `sqlite:${abs(path)}`;
}

/** A host as it appears in a URL; wildcard binds are shown as the mail host name. */
function urlHost(host: string, fallback: string): string {
  if (host === '0.0.0.0' || host === '::') return fallback;
  return host.includes(':') ? `[${host}]` : host;
}
