// The per-wallet pin provider object of the reference ("Pin provider"):
// a JSON object tagged by `kind`, validated here for both the account API
// (PUT /v1/account/pin-provider) and the delivery pipeline (after unsealing
// the stored credentials). Error texts are binding: `<kind>.<field> must not
// be empty` for a missing or empty required credential.

export const PIN_PROVIDER_KINDS = ['hosted_jwt', 's3_bucket', 'remote'] as const;
export type PinProviderKind = (typeof PIN_PROVIDER_KINDS)[number];

export interface HostedJwtProvider {
  kind: 'hosted_jwt';
  jwt: string;
  /** Dedicated gateway URL (https). */
  gateway: string;
  /** API base URL of the pinning service; absent means the service's public API. */
  api_url?: string;
}

export interface S3BucketProvider {
  kind: 's3_bucket';
  access_key: string;
  secret_key: string;
  bucket: string;
  /** Absent means the pinning service's standard S3 endpoint. */
  endpoint?: string;
}

export interface RemoteProvider {
  kind: 'remote';
  /** Absent means http://127.0.0.1:8182. */
  endpoint?: string;
  auth_token?: string;
}

export type PinProviderConfig = HostedJwtProvider | S3BucketProvider | RemoteProvider;

export const DEFAULT_HOSTED_API_URL = 'https://api.pinata.cloud';
export const DEFAULT_S3_ENDPOINT = 'https://s3.filebase.com';
export const DEFAULT_REMOTE_ENDPOINT = 'http://127.0.0.1:8182';

export type ProviderValidation =
  | { ok: true; value: PinProviderConfig }
  /** `unknown_kind` maps to 422; `invalid` to 400 with `message` as the body's error text. */
  | { ok: false; reason: 'unknown_kind' | 'invalid'; message: string };

const REQUIRED: Record<PinProviderKind, readonly string[]> = {
  hosted_jwt: ['jwt', 'gateway'],
  s3_bucket: ['access_key', 'secret_key', 'bucket'],
  remote: [],
};
const OPTIONAL: Record<PinProviderKind, readonly string[]> = {
  hosted_jwt: ['api_url'],
  s3_bucket: ['endpoint'],
  remote: ['endpoint', 'auth_token'],
};
const URL_FIELDS = new Set(['gateway', 'api_url', 'endpoint']);

function isKind(v: unknown): v is PinProviderKind {
  return typeof v === 'string' && (PIN_PROVIDER_KINDS as readonly string[]).includes(v);
}

function checkUrl(kind: string, field: string, value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `${kind}.${field} must be an absolute URL`;
  }
  if (kind === 'hosted_jwt' && field === 'gateway' && url.protocol !== 'https:') {
    return `${kind}.${field} must be an https URL`;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `${kind}.${field} must be an http(s) URL`;
  if (url.username || url.password) return `${kind}.${field} must not carry credentials`;
  return null;
}

/** Validates an untrusted JSON value as a pin provider object. */
export function parsePinProvider(input: unknown): ProviderValidation {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return { ok: false, reason: 'invalid', message: 'body must be a JSON object with a "kind"' };
  }
  const obj = input as Record<string, unknown>;
  if (obj.kind === undefined) return { ok: false, reason: 'invalid', message: 'kind must not be empty' };
  if (!isKind(obj.kind)) {
    return {
      ok: false,
      reason: 'unknown_kind',
      message: `unknown kind ${JSON.stringify(obj.kind)}; expected one of ${PIN_PROVIDER_KINDS.join(', ')}`,
    };
  }
  const kind = obj.kind;
  const allowed = new Set(['kind', ...REQUIRED[kind], ...OPTIONAL[kind]]);
  for (const key of Object.keys(obj)) {
    if (!allowed.has(key))
      return { ok: false, reason: 'invalid', message: `${kind}.${key} is not a known field` };
  }
  const out: Record<string, string> = { kind };
  for (const field of REQUIRED[kind]) {
    const v = obj[field];
    if (typeof v !== 'string' || v.trim() === '') {
      return { ok: false, reason: 'invalid', message: `${kind}.${field} must not be empty` };
    }
    out[field] = v;
  }
  for (const field of OPTIONAL[kind]) {
    const v = obj[field];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string' || v.trim() === '') {
      return {
        ok: false,
        reason: 'invalid',
        message: `${kind}.${field} must be a non-empty string when given`,
      };
    }
    out[field] = v;
  }
  for (const [field, v] of Object.entries(out)) {
    if (!URL_FIELDS.has(field)) continue;
    const problem = checkUrl(kind, field, v);
    if (problem) return { ok: false, reason: 'invalid', message: problem };
  }
  return { ok: true, value: out as unknown as PinProviderConfig };
}
