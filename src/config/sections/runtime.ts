// [serve], [store], [redis], [log], [dns], [tls]: process-wide infrastructure.
import * as z from 'zod';
import { filePath, hostPort, nonNegativeInt, oneOf, positiveInt, redisUrl, text } from '../fields.ts';

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

export const redisSchema = z.strictObject({
  url: redisUrl().optional(),
  prefix: text()
    .regex(/^[A-Za-z0-9_.-]+$/, { error: 'expected letters, digits, "_", "." or "-"' })
    .default('sealpost'),
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
export type RedisInput = z.output<typeof redisSchema>;
export type LogInput = z.output<typeof logSchema>;
export type DnsInput = z.output<typeof dnsSchema>;
export type TlsInput = z.output<typeof tlsSchema>;
