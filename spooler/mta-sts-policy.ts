// MTA-STS (RFC 8461) text formats: the `_mta-sts` TXT discovery record and
// the policy file, and the MX pattern match of §4.1. Pure functions; the
// fetching and caching live in mta-sts.ts.

export type StsMode = 'enforce' | 'testing' | 'none';

export interface StsPolicy {
  mode: StsMode;
  /** MX patterns, lowercased: `mail.example.org` or `*.example.org`. */
  mx: string[];
  maxAgeSecs: number;
  /** The policy's lines as served (without terminators), for TLS-RPT `policy-string`. */
  lines: string[];
}

export class StsPolicyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StsPolicyError';
  }
}

/** RFC 8461 §3.2: max_age is at most 31557600 seconds (one year). */
export const STS_MAX_AGE_LIMIT = 31_557_600;
const ID = /^[A-Za-z0-9]{1,32}$/;
const PATTERN = /^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * The policy id from the `_mta-sts.<domain>` TXT strings, or null when the
 * domain has no usable record: records not starting with `v=STSv1` are
 * ignored, and anything but exactly one valid record means "no policy" (§3.1).
 */
export function parseStsRecord(txts: readonly string[]): string | null {
  const candidates = txts.filter((t) => /^v=STSv1;/.test(t) || t === 'v=STSv1');
  if (candidates.length !== 1) return null;
  const fields = new Map<string, string>();
  for (const part of (candidates[0] as string).split(';')) {
    const trimmed = part.trim();
    if (trimmed === '') continue;
    const eq = trimmed.indexOf('=');
    if (eq <= 0) return null;
    fields.set(trimmed.slice(0, eq).trim(), trimmed.slice(eq + 1).trim());
  }
  const id = fields.get('id');
  return id !== undefined && ID.test(id) ? id : null;
}

/** Parses a policy file; throws StsPolicyError naming the problem. */
export function parseStsPolicy(text: string): StsPolicy {
  const lines = text.split(/\r?\n/).filter((l, i, all) => !(l === '' && i === all.length - 1));
  const fields = new Map<string, string[]>();
  for (const line of lines) {
    if (line.trim() === '') continue;
    const colon = line.indexOf(':');
    if (colon <= 0)
      throw new StsPolicyError(`policy line is not "key: value": ${JSON.stringify(line.slice(0, 80))}`);
    const k = line.slice(0, colon).trim();
    const v = line.slice(colon + 1).trim();
    fields.set(k, [...(fields.get(k) ?? []), v]);
  }
  const one = (k: string) => {
    const v = fields.get(k);
    if (!v || v.length === 0) throw new StsPolicyError(`policy has no ${k} field`);
    if (v.length > 1) throw new StsPolicyError(`policy has ${v.length} ${k} fields`);
    return v[0] as string;
  };
  if (one('version') !== 'STSv1') throw new StsPolicyError('policy version is not STSv1');
  const mode = one('mode');
  if (mode !== 'enforce' && mode !== 'testing' && mode !== 'none') {
    throw new StsPolicyError(`policy mode ${JSON.stringify(mode)} is not enforce, testing or none`);
  }
  const maxAgeText = one('max_age');
  if (!/^\d{1,10}$/.test(maxAgeText) || Number(maxAgeText) > STS_MAX_AGE_LIMIT) {
    throw new StsPolicyError(`policy max_age ${JSON.stringify(maxAgeText)} is not 0-${STS_MAX_AGE_LIMIT}`);
  }
  const mx = [...new Set((fields.get('mx') ?? []).map((m) => m.toLowerCase().replace(/\.$/, '')))];
  for (const m of mx)
    if (!PATTERN.test(m)) throw new StsPolicyError(`policy mx ${JSON.stringify(m)} is not a host pattern`);
  if (mode !== 'none' && mx.length === 0)
    throw new StsPolicyError(`policy mode ${mode} needs at least one mx`);
  return { mode, mx, maxAgeSecs: Number(maxAgeText), lines: lines.filter((l) => l.trim() !== '') };
}

/**
 * RFC 8461 §4.1: an MX host matches a pattern exactly, or a `*.` pattern
 * when the host has exactly one more label in front of its suffix.
 */
export function mxMatchesPolicy(host: string, patterns: readonly string[]): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return patterns.some((p) => {
    if (!p.startsWith('*.')) return p === h;
    const suffix = p.slice(1);
    if (!h.endsWith(suffix)) return false;
    const label = h.slice(0, -suffix.length);
    return label.length > 0 && !label.includes('.');
  });
}
