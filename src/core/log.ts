// Logging: one pino logger per process, child loggers carrying the ids that
// tie a message's log lines together across the SMTP edge, the queue and the
// pipeline stages (`msgid`), an HTTP request (`reqid`) and a BullMQ job (`jobId`).
import { randomBytes } from 'node:crypto';
import { type DestinationStream, type Logger, pino } from 'pino';

export type { Logger };
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';

export interface CreateLoggerOptions {
  level?: LogLevel;
  /** `json` (one object per line) or `pretty` (one readable line per entry). */
  format?: 'json' | 'pretty';
  /** Component name, e.g. `smtp`, `api`, `pind`; written as `name` on every line. */
  name?: string;
  /** Where lines go; default standard error, so command output on stdout stays clean. */
  destination?: DestinationStream;
}

// Secrets that must never reach a log line even when a whole object is logged.
const REDACT_PATHS = [
  'password',
  'mail_password',
  'jwt',
  'auth_token',
  'secret_key',
  'authorization',
  '*.password',
  '*.jwt',
  '*.auth_token',
  '*.secret_key',
  '*.authorization',
  'req.headers.authorization',
];

const LEVEL_NAMES: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};

/** Turns pino's JSON lines into `time LEVEL name: msg key=value …` lines. */
export function prettyStream(out: { write(s: string): unknown }): DestinationStream {
  return {
    write(line: string) {
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        out.write(line);
        return;
      }
      const { time, level, name, msg, pid: _pid, hostname: _host, ...rest } = entry;
      const when =
        typeof time === 'string' ? time.slice(11, 23) : new Date(Number(time)).toISOString().slice(11, 23);
      const lvl =
        typeof level === 'number' ? (LEVEL_NAMES[level] ?? String(level)) : String(level).toUpperCase();
      const fields = Object.entries(rest)
        .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
        .join(' ');
      out.write(
        `${when} ${lvl.padEnd(5)} ${name ? `${String(name)}: ` : ''}${String(msg ?? '')}${fields ? ` ${fields}` : ''}\n`,
      );
    },
  };
}

export function createLogger(opts: CreateLoggerOptions = {}): Logger {
  const format = opts.format ?? 'json';
  const base = opts.destination ?? pino.destination({ dest: 2, sync: true });
  const destination = format === 'pretty' ? prettyStream(base) : base;
  return pino(
    {
      level: opts.level ?? 'info',
      name: opts.name,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    },
    destination,
  );
}

export interface LogContext {
  /** The message id: assigned at the SMTP edge, carried in job data through every stage. */
  msgid?: string;
  /** The request id of an HTTP request. */
  reqid?: string;
  /** The BullMQ job id. */
  jobId?: string;
}

/** A child logger whose every line carries the given ids (unset ones are left out). */
export function withContext(logger: Logger, ids: LogContext): Logger {
  const bindings: Record<string, string> = {};
  for (const [k, v] of Object.entries(ids)) if (v !== undefined && v !== '') bindings[k] = v;
  return logger.child(bindings);
}

// ULID (https://github.com/ulid/spec): 48-bit millisecond time + 80 random
// bits in Crockford base32, 26 characters. Lexical order is time order, and
// within one millisecond the random part is incremented so ids stay ordered.
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const RANDOM_MAX = (1n << 80n) - 1n;
let lastTime = -1;
let lastRandom = 0n;

function encode(value: bigint, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) {
    out = CROCKFORD[Number(value & 31n)] + out;
    value >>= 5n;
  }
  return out;
}

/** A sortable unique id (ULID); `now` is injectable for tests. */
export function newSortableId(now: number = Date.now()): string {
  let time = now;
  if (time <= lastTime) {
    time = lastTime;
    lastRandom = lastRandom === RANDOM_MAX ? 0n : lastRandom + 1n;
    if (lastRandom === 0n) time = ++lastTime;
  } else {
    lastRandom = BigInt(`0x${randomBytes(10).toString('hex')}`);
  }
  lastTime = time;
  return encode(BigInt(time), 10) + encode(lastRandom, 16);
}

/** Id for one inbound or outbound message, used as `msgid` in logs and job data. */
export function newMessageId(): string {
  return newSortableId();
}

/** Id for one HTTP request (`reqid`). */
export function newRequestId(): string {
  return newSortableId();
}
