// [serve], [store], [redis], [log], [dns], [tls]: process-wide infrastructure.
import * as z from 'zod';
import {
  bool,
  filePath,
  hostPort,
  intBetween,
  nonNegativeInt,
  oneOf,
  positiveInt,
  redisUrl,
  text,
} from '../fields.ts';

/** The most serving processes `sealpost serve` forks (a typo like 1000 fails the config check). */
export const MAX_SERVE_WORKERS = 256;
export const MAX_START_ATTEMPTS = 100;

export const serveSchema = z.strictObject({
  // 0: one serving process per core (os.availableParallelism()).
  workers: nonNegativeInt()
    .refine((n) => n <= MAX_SERVE_WORKERS, { error: `expected at most ${MAX_SERVE_WORKERS}` })
    .default(0)
    .meta({
      description:
        'Serving processes `sealpost serve` runs (`--workers N` overrides). `1`: one process, no cluster. `0`: `os.availableParallelism()`. At most 256.',
      default: '`0` (one per core)',
    }),
  // Starts in a row that die before the process is ready, per serving
  // process, before the supervisor gives up and exits 1.
  start_attempts: positiveInt()
    .refine((n) => n <= MAX_START_ATTEMPTS, { error: `expected at most ${MAX_START_ATTEMPTS}` })
    .default(5)
    .meta({
      description:
        'Starts in a row that may die before a serving process is ready; the supervisor exits 1 at this count. 1 to 100. With more than one serving process only.',
    }),
});

export const storeSchema = z.strictObject({
  url: text()
    .refine((v) => /^sqlite:./.test(v) || /^postgres(ql)?:\/\/./.test(v), {
      error: 'expected "sqlite:PATH" or a "postgres://" URL',
    })
    .optional()
    .meta({
      description:
        '`sqlite:PATH` (relative paths against the config directory) or `postgres://user@host:port/db`. `?schema=NAME` on a PostgreSQL URL works in that schema (created if missing).',
      default: '`sqlite:<data_dir>/sealpost.sqlite`',
    }),
  data_dir: filePath()
    .optional()
    .meta({ description: 'The data directory (see General rules).', default: '`.data`' }),
});

// Where the spool and the content blobs live: the filesystem under data_dir
// (the embedded default) or the store's PostgreSQL database (hosts without a
// shared filesystem; needs [store] url to be PostgreSQL).
export const blobsSchema = z.strictObject({
  backend: oneOf(['fs', 'postgres'] as const)
    .default('fs')
    .meta({
      description:
        '`"fs"`: the spool, sealed bodies and DMARC reports are files under `<data_dir>/blobs` (the embedded default). `"postgres"`: they are rows of the store\'s database (tables `blob_spool`, `blob_spool_chunks`, `blob_content`, `blob_content_chunks`, bytes in 256 KiB chunks), so MX front ends and workers on hosts without a shared filesystem share them and PostgreSQL\'s replication protects them. Needs `[store] url` to be a `postgres://` URL (`config check` names `blobs.backend` and `store.url` otherwise).',
    }),
});

/** The keys that only mean something with `sentinels` (the URL form carries its own). */
export const SENTINEL_ONLY_KEYS = [
  'name',
  'username',
  'password_file',
  'db',
  'tls',
  'sentinel_username',
  'sentinel_password_file',
  'sentinel_tls',
] as const;

export const redisSchema = z
  .strictObject({
    // Either `url` (one Redis) or `sentinels` + `name` (Redis Sentinel), never both.
    url: redisUrl().optional().meta({
      description:
        '`redis://` or `rediss://` (TLS), with user, password and database in the URL (`rediss://USER:PASSWORD@HOST:PORT/DB`). A URL in the file wins over the environment. Unset with `sentinels`.',
      default: '`$REDIS_URL`, else `"redis://127.0.0.1:6379"`',
    }),
    sentinels: z
      .array(hostPort(26379), { error: 'expected an array of "HOST[:PORT]" strings' })
      .min(1, { error: 'expected at least one "HOST[:PORT]" sentinel' })
      .optional()
      .meta({
        description:
          '`["HOST[:PORT]", …]`, port 26379 when omitted: the sentinels to ask for the master. Wins over `$REDIS_URL`. At least one; list all of them (more are learnt from the first that answers).',
        default: 'none',
      }),
    // The master group name the sentinels monitor (`sentinel monitor <name> …`).
    name: text()
      .regex(/^[A-Za-z0-9_.-]+$/, { error: 'expected letters, digits, "_", "." or "-"' })
      .optional()
      .meta({
        description:
          'The master group name the sentinels monitor (`sentinel monitor NAME …`). Letters, digits, `_`, `.`, `-`.',
        default: 'none; required with `sentinels`',
      }),
    // ACL user and password of the Redis nodes (master and replicas).
    username: text().optional().meta({
      description: 'Sentinel only: ACL user on the Redis nodes (needs `password_file`).',
      default: 'none',
    }),
    password_file: filePath().optional().meta({
      description:
        "Sentinel only: file whose first line is the Redis nodes' password (`requirepass`/ACL; the same on master and replicas). Read at start; unreadable or empty is a config error.",
      default: 'none',
    }),
    db: nonNegativeInt().optional().meta({ description: 'Sentinel only: database index.', default: '`0`' }),
    // TLS to the Redis nodes (the URL form says it with rediss://).
    tls: bool()
      .optional()
      .meta({ description: 'Sentinel only: TLS to the Redis nodes (system roots).', default: '`false`' }),
    // Credentials and TLS of the sentinels themselves (`requirepass` in sentinel.conf).
    sentinel_username: text().optional().meta({
      description: 'Sentinel only: ACL user on the sentinels (needs `sentinel_password_file`).',
      default: 'none',
    }),
    sentinel_password_file: filePath().optional().meta({
      description: "Sentinel only: file with the sentinels' own password (`requirepass` in `sentinel.conf`).",
      default: 'none',
    }),
    sentinel_tls: bool()
      .optional()
      .meta({ description: 'Sentinel only: TLS to the sentinels.', default: '`false`' }),
    prefix: text()
      .regex(/^[A-Za-z0-9_.-]+$/, { error: 'expected letters, digits, "_", "." or "-"' })
      .default('sealpost')
      .meta({ description: 'Key prefix for queues, so instances can share one Redis.' }),
    // Replicas the MX waits for (WAIT) before a 250; unset: 1 with sentinels, else 0.
    wait_replicas: intBetween(0, 16).optional().meta({
      description:
        "Replicas that must hold a batch's jobs (Redis `WAIT`) before the MX answers 250; `0` answers as soon as the master has them.",
      default: '`1` with `sentinels`, else `0`',
    }),
    wait_timeout_ms: intBetween(1, 60_000).default(1000).meta({
      description:
        'How long that `WAIT` may hold the 250; past it the 250 goes out anyway (the spool reconcile covers a failover) and `sealpost_mx_replication_short_total` counts it.',
    }),
  })
  .superRefine((r, ctx) => {
    if (r.url !== undefined && r.sentinels !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['sentinels'],
        message: 'redis.url and redis.sentinels are alternatives: set one of them, not both',
      });
    }
    if (r.sentinels !== undefined && r.name === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['name'],
        message: 'redis.sentinels needs redis.name, the master group name the sentinels monitor',
      });
    }
    if (r.sentinels === undefined) {
      for (const key of SENTINEL_ONLY_KEYS) {
        if (r[key] === undefined) continue;
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message:
            r.url === undefined
              ? `redis.${key} applies only with redis.sentinels (set redis.sentinels and redis.name, or leave it out)`
              : `redis.${key} applies only with redis.sentinels; with redis.url, put it in the URL (rediss://USER:PASSWORD@HOST:PORT/DB)`,
        });
      }
    }
    if (r.username !== undefined && r.password_file === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['password_file'],
        message: 'redis.username needs redis.password_file (an ACL user logs in with a password)',
      });
    }
    if (r.sentinel_username !== undefined && r.sentinel_password_file === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['sentinel_password_file'],
        message: 'redis.sentinel_username needs redis.sentinel_password_file',
      });
    }
  });

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

export const logSchema = z.strictObject({
  level: oneOf(LOG_LEVELS)
    .default('info')
    .meta({ description: '`trace`, `debug`, `info`, `warn`, `error`, `fatal`, `silent`.' }),
  format: oneOf(['json', 'pretty'])
    .default('json')
    .meta({ description: '`"json"` (one object per line) or `"pretty"` (one readable line).' }),
});

export const dnsSchema = z.strictObject({
  resolvers: z.array(hostPort(53), { error: 'expected an array of "HOST[:PORT]" strings' }).default([]).meta({
    description:
      '`HOST[:PORT]` list for SPF/DMARC checks and outbound MX, TLSA and MTA-STS lookups. DANE trusts the AD bit, so list only a validating resolver you trust (ideally on loopback). Tests point this at a loopback DNS server.',
    default: "`[]` (the system's `/etc/resolv.conf`)",
  }),
  reverse_cache_secs: nonNegativeInt().default(60).meta({
    description:
      "How long the MX keeps a client IP's forward-confirmed reverse name (the Received field's `from … (name [ip])`); connections from that IP meanwhile, and those arriving while its lookup runs, do not ask again. `0`: a lookup per connection. A failed lookup is never kept.",
  }),
});

export const tlsSchema = z.strictObject({
  extra_ca_file: filePath().optional().meta({
    description:
      "PEM bundle of CA certificates trusted **in addition to** Node's default roots (never instead of them) wherever the server checks a certificate it is shown: remote MX hosts under MTA-STS, the `[spooler.relay]` smarthost, MTA-STS policy hosts and TLS-RPT `https:` endpoints. For a private PKI between your own servers. Read at config load: a missing or unreadable file, or one without a valid `-----BEGIN CERTIFICATE-----` block, is a config error naming the file.",
  }),
});

export type ServeInput = z.output<typeof serveSchema>;
export type StoreInput = z.output<typeof storeSchema>;
export type BlobsInput = z.output<typeof blobsSchema>;
export type RedisInput = z.output<typeof redisSchema>;
export type LogInput = z.output<typeof logSchema>;
export type DnsInput = z.output<typeof dnsSchema>;
export type TlsInput = z.output<typeof tlsSchema>;
