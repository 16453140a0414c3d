// Field builders shared by the section schemas. Each builder carries an
// "expected …" message; the issue formatter appends what was actually found,
// so every config error reads `path: expected X, got Y`.
import { isIP } from 'node:net';
import bs58 from 'bs58';
import * as z from 'zod';

function integer(expected: string, min: number, max: number = Number.MAX_SAFE_INTEGER) {
  const error = expected;
  return z.number({ error }).int({ error }).min(min, { error }).max(max, { error });
}

export const port = () => integer('expected integer 1-65535', 1, 65535);
export const positiveInt = () => integer('expected integer >= 1', 1);
export const nonNegativeInt = () => integer('expected integer >= 0', 0);
export const intBetween = (min: number, max: number) => integer(`expected integer ${min}-${max}`, min, max);
export const bool = () => z.boolean({ error: 'expected true or false' });
export const text = () =>
  z.string({ error: 'expected a string' }).min(1, { error: 'expected a non-empty string' });

/** A short name such as a listener name: letters, digits, `-` and `_`. */
export const identifier = () =>
  text().regex(/^[A-Za-z0-9][A-Za-z0-9_-]*$/, { error: 'expected a name of letters, digits, "-" or "_"' });

/** True for an IP address or an `address/prefix` network (IPv4 /0-32, IPv6 /0-128). */
export function isIpOrCidr(value: string): boolean {
  const slash = value.indexOf('/');
  if (slash === -1) return isIP(value) !== 0;
  const family = isIP(value.slice(0, slash));
  const bits = value.slice(slash + 1);
  if (family === 0 || !/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

/** An IP address or CIDR network, e.g. `10.0.0.0/8` or `::1`. */
export const ipOrCidr = () =>
  z
    .string({ error: 'expected an IP address or CIDR network' })
    .refine(isIpOrCidr, { error: 'expected an IP address or CIDR network such as 10.0.0.0/8' });

export function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  const error = `expected one of ${values.map((v) => JSON.stringify(v)).join(', ')}`;
  return z.enum(values, { error });
}

const DNS_NAME =
  /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i;

export function isDnsName(value: string): boolean {
  return DNS_NAME.test(value);
}

/** A DNS name such as `mail.example.org`; stored lowercased without a trailing dot. */
export const dnsName = () =>
  text()
    .refine(isDnsName, { error: 'expected a DNS name' })
    .transform((v) => v.toLowerCase().replace(/\.$/, ''));

/** A bind or connect host: a DNS name or an IPv4/IPv6 literal (no brackets). */
export const host = () =>
  text().refine((v) => isIP(v) !== 0 || isDnsName(v), { error: 'expected a host name or IP address' });

export function isBase58Pubkey(value: string): boolean {
  try {
    return bs58.decode(value).length === 32;
  } catch {
    return false;
  }
}

/** A base58 ed25519 public key (wallet or program id): exactly 32 bytes once decoded. */
export const pubkey = () =>
  text().superRefine((v, ctx) => {
    const expected = `expected a base58 public key (32 bytes), got ${JSON.stringify(v)}`;
    let bytes: Uint8Array;
    try {
      bytes = bs58.decode(v);
    } catch {
      ctx.addIssue({ code: 'custom', message: `${expected}, which is not base58 (no 0, O, I or l)` });
      return;
    }
    if (bytes.length !== 32) {
      ctx.addIssue({ code: 'custom', message: `${expected}, which decodes to ${bytes.length} bytes` });
    }
  });

function urlWith(protocols: string[]) {
  const expected = `expected a ${protocols.map((p) => `${p}//`).join(' or ')} URL`;
  return text().refine(
    (v) => {
      try {
        return protocols.includes(new URL(v).protocol);
      } catch {
        return false;
      }
    },
    { error: expected },
  );
}

export const httpUrl = () => urlWith(['http:', 'https:']);
export const wsUrl = () => urlWith(['ws:', 'wss:']);
export const redisUrl = () => urlWith(['redis:', 'rediss:']);

/** A file path; relative paths are resolved against the config file's directory later. */
export const filePath = () => text();

/** `host:port` or `[v6]:port`, normalized to include the port (default when omitted). */
export const hostPort = (defaultPort: number) =>
  text()
    .superRefine((v, ctx) => {
      try {
        splitHostPort(v, defaultPort);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
      }
    })
    .transform((v) => {
      try {
        const { host, port } = splitHostPort(v, defaultPort);
        return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
      } catch {
        return v; // already reported by the refinement above
      }
    });

/**
 * Splits `host:port`, `[::1]:port`, or (with a default port) a bare host.
 * Throws with an "expected …" message on anything else.
 */
export function splitHostPort(
  value: string,
  defaultPort?: number,
  opts: { allowPortZero?: boolean } = {},
): { host: string; port: number } {
  const expected = defaultPort === undefined ? 'expected HOST:PORT' : 'expected HOST[:PORT]';
  let hostPart: string;
  let portPart: string | undefined;
  const bracketed = /^\[([^\]]+)\](?::(.*))?$/.exec(value);
  if (bracketed) {
    hostPart = bracketed[1] ?? '';
    portPart = bracketed[2];
    if (isIP(hostPart) !== 6) throw new Error(`${expected} (bracketed hosts must be IPv6)`);
  } else if (isIP(value) === 6) {
    // A bare IPv6 literal has no port; brackets are required to add one.
    hostPart = value;
  } else {
    const at = value.lastIndexOf(':');
    hostPart = at === -1 ? value : value.slice(0, at);
    portPart = at === -1 ? undefined : value.slice(at + 1);
  }
  if (hostPart === '' || (isIP(hostPart) === 0 && !isDnsName(hostPart))) throw new Error(expected);
  if (portPart === undefined) {
    if (defaultPort === undefined) throw new Error(`${expected} (the port is missing)`);
    return { host: hostPart, port: defaultPort };
  }
  const min = opts.allowPortZero ? 0 : 1;
  const port = /^\d{1,5}$/.test(portPart) ? Number(portPart) : Number.NaN;
  if (!(port >= min && port <= 65535)) throw new Error(`${expected} with a port ${min}-65535`);
  return { host: hostPart, port };
}
