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
    .default(0),
  // Starts in a row that die before the process is ready, per serving
  // process, before the supervisor gives up and exits 1.
  start_attempts: positiveInt()
    .refine((n) => n <= MAX_START_ATTEMPTS, { error: `expected at most ${MAX_START_ATTEMPTS}` })
    .default(5),
});

export const storeSchema = z.strictObject({
  url: text()
    .refine((v) => /^sqlite:./.test(v) || /^postgres(ql)?:\/\/./.test(v), {
      error: 'expected "sqlite:PATH" or a "postgres://" URL',
    })
    .optional(),
  data_dir: filePath().optional(),
});

// Where the spool and the content blobs live: the filesystem under data_dir
// (the embedded default) or the store's PostgreSQL database (hosts without a
// shared filesystem; needs [store] url to be PostgreSQL).
export const blobsSchema = z.strictObject({
  backend: oneOf(['fs', 'postgres'] as const).default('fs'),
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
    url: redisUrl().optional(),
    sentinels: z
      .array(hostPort(26379), { error: 'expected an array of "HOST[:PORT]" strings' })
      .min(1, { error: 'expected at least one "HOST[:PORT]" sentinel' })
      .optional(),
    // The master group name the sentinels monitor (`sentinel monitor <name> …`).
    name: text()
      .regex(/^[A-Za-z0-9_.-]+$/, { error: 'expected letters, digits, "_", "." or "-"' })
      .optional(),
    // ACL user and password of the Redis nodes (master and replicas).
    username: text().optional(),
    password_file: filePath().optional(),
    db: nonNegativeInt().optional(),
    // TLS to the Redis nodes (the URL form says it with rediss://).
    tls: bool().optional(),
    // Credentials and TLS of the sentinels themselves (`requirepass` in sentinel.conf).
    sentinel_username: text().optional(),
    sentinel_password_file: filePath().optional(),
    sentinel_tls: bool().optional(),
    prefix: text()
      .regex(/^[A-Za-z0-9_.-]+$/, { error: 'expected letters, digits, "_", "." or "-"' })
      .default('sealpost'),
    // Replicas the MX waits for (WAIT) before a 250; unset: 1 with sentinels, else 0.
    wait_replicas: intBetween(0, 16).optional(),
    wait_timeout_ms: intBetween(1, 60_000).default(1000),
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
  level: oneOf(LOG_LEVELS).default('info'),
  format: oneOf(['json', 'pretty']).default('json'),
});

export const dnsSchema = z.strictObject({
  resolvers: z.array(hostPort(53), { error: 'expected an array of "HOST[:PORT]" strings' }).default([]),
  reverse_cache_secs: nonNegativeInt().default(60),
});

export const tlsSchema = z.strictObject({
  extra_ca_file: filePath().optional(),
});

export type ServeInput = z.output<typeof serveSchema>;
export type StoreInput = z.output<typeof storeSchema>;
export type BlobsInput = z.output<typeof blobsSchema>;
export type RedisInput = z.output<typeof redisSchema>;
export type LogInput = z.output<typeof logSchema>;
export type DnsInput = z.output<typeof dnsSchema>;
export type TlsInput = z.output<typeof tlsSchema>;
