// Turns zod issues into one line per problem, each naming the full key path
// (`smtp.listeners[0].port: expected integer 1-65535, got "25x"`), and
// carries them all in one ConfigError so an operator fixes everything at once.
import type * as z from 'zod';

export type ConfigIssueKind = 'unknown_key' | 'invalid' | 'syntax' | 'file';

export interface ConfigIssue {
  kind: ConfigIssueKind;
  /** Full key path such as `smtp.listeners[0].port`; empty for file and syntax issues. */
  path: string;
  message: string;
}

export function issueLine(issue: ConfigIssue): string {
  return issue.kind === 'invalid' && issue.path !== '' ? `${issue.path}: ${issue.message}` : issue.message;
}

export class ConfigError extends Error {
  readonly issues: ConfigIssue[];
  /** The config file (or another label when parsing text). */
  readonly source: string;

  constructor(source: string, issues: ConfigIssue[]) {
    super(`config error in ${source}:\n${issues.map((i) => `  ${issueLine(i)}`).join('\n')}`);
    this.name = 'ConfigError';
    this.source = source;
    this.issues = issues;
  }

  /** One line per issue, without the header. */
  lines(): string[] {
    return this.issues.map(issueLine);
  }
}

const BARE_KEY = /^[A-Za-z0-9_-]+$/;

export function formatPath(segments: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of segments) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else {
      const key = String(seg);
      const part = BARE_KEY.test(key) ? key : JSON.stringify(key);
      out += out === '' ? part : `.${part}`;
    }
  }
  return out;
}

export function describeValue(value: unknown): string {
  if (typeof value === 'string')
    return JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}...` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  if (value instanceof Date) return 'a date';
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  if (typeof value === 'object') return 'a table';
  return String(value);
}

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  array: 'an array',
  object: 'a table',
};

/** Per-parse error map: used only where a field builder gave no message of its own. */
export function defaultMessage(issue: z.core.$ZodRawIssue): string | undefined {
  switch (issue.code) {
    case 'invalid_type':
      return `expected ${TYPE_WORDS[issue.expected] ?? issue.expected}`;
    case 'invalid_value':
      return `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'too_small':
      return issue.origin === 'array'
        ? `expected at least ${issue.minimum} items`
        : `expected >= ${issue.minimum}`;
    case 'too_big':
      return issue.origin === 'array'
        ? `expected at most ${issue.maximum} items`
        : `expected <= ${issue.maximum}`;
    default:
      return undefined;
  }
}

// Keys people put in the wrong section, with where they actually live.
const MOVED_KEYS: Record<string, string> = {
  'spooler.tlsrpt.report_retention_days':
    'report_retention_days lives in [spooler.dmarc_rua_ingest]; it also governs TLS-RPT pending rows',
  'spooler.report_retention_days': 'report_retention_days lives in [spooler.dmarc_rua_ingest]',
  'spooler.dmarc_retention_days': 'dmarc_retention_days lives in [spooler.dmarc_rua_ingest]',
  'smtp.credential_key_file': 'credential_key_file lives in [api]',
  // Postfix spellings of the [smtp] error limits.
  'smtp.smtpd_soft_error_limit': 'the [smtp] key is soft_error_limit',
  'smtp.smtpd_hard_error_limit': 'the [smtp] key is hard_error_limit',
  'smtp.smtpd_error_sleep_time': 'the [smtp] key is error_sleep_ms, in milliseconds',
  'ipfs.auth_token':
    "the pin daemon's own token is [pind] auth_token; the server's token for it is [ipfs] pind_auth_token",
};

interface WalkableDef {
  type: string;
  innerType?: z.core.$ZodType;
  in?: z.core.$ZodType;
  shape?: Record<string, z.core.$ZodType>;
  element?: z.core.$ZodType;
}

function unwrap(schema: z.core.$ZodType): WalkableDef {
  let def = schema._zod.def as WalkableDef;
  for (;;) {
    if (def.innerType) def = def.innerType._zod.def as WalkableDef;
    else if (def.type === 'pipe' && def.in) def = def.in._zod.def as WalkableDef;
    else return def;
  }
}

/** The keys a strict table at `path` accepts, for "did you mean" hints. */
export function knownKeysAt(root: z.core.$ZodType, path: readonly PropertyKey[]): string[] {
  let def = unwrap(root);
  for (const seg of path) {
    const next = typeof seg === 'number' ? def.element : def.shape?.[String(seg)];
    if (!next) return [];
    def = unwrap(next);
  }
  return Object.keys(def.shape ?? {});
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row.push(Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost));
    }
    prev = row;
  }
  return prev[b.length] ?? 0;
}

function closest(key: string, candidates: string[]): string | undefined {
  let best: string | undefined;
  let bestScore = Math.max(2, Math.floor(key.length / 3)) + 1;
  for (const c of candidates) {
    const d = editDistance(key.toLowerCase(), c);
    if (d < bestScore) {
      best = c;
      bestScore = d;
    }
  }
  return best;
}

function unknownKeyIssue(root: z.core.$ZodType, parent: readonly PropertyKey[], key: string): ConfigIssue {
  const path = formatPath([...parent, key]);
  const patternPath = formatPath([...parent, key].filter((s) => typeof s !== 'number'));
  const moved = MOVED_KEYS[patternPath];
  const suggestion = closest(key, knownKeysAt(root, parent));
  let message = `unknown key ${path}`;
  if (moved) message += ` (${moved})`;
  else if (suggestion) message += ` (did you mean ${formatPath([...parent, suggestion])}?)`;
  return { kind: 'unknown_key', path, message };
}

export function issuesFromZod(error: z.ZodError, root: z.core.$ZodType): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) out.push(unknownKeyIssue(root, issue.path, key));
      continue;
    }
    const input = (issue as { input?: unknown }).input;
    let message = issue.message;
    if (issue.code === 'invalid_type' && input === undefined)
      message = `required key is missing (${message})`;
    else if (message.startsWith('expected') && !message.includes(', got ') && input !== undefined) {
      message += `, got ${describeValue(input)}`;
    }
    out.push({ kind: 'invalid', path: formatPath(issue.path), message });
  }
  return out;
}
