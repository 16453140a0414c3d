// The account API as `sealpost account` uses it: which URL (the rule is in
// apiBaseUrl), wallet login and step-up signed locally with the wallet key,
// (or a bearer token the holder already has), and every failure turned into
// one line for the holder. Nothing here keeps a token or a key beyond the
// command.
import type { Config } from '../../../core/config/types.ts';
import { signDetachedBase58 } from '../../../core/keys/ed25519-sign.ts';
import type { Keypair } from '../../../core/keys/keypair-file.ts';
import { readCappedBody } from '../../../mail/seal/gateway.ts';
import { CliError } from '../../common.ts';

const STEP_UP_HEADER = 'x-sealpost-step-up';
const REQUEST_TIMEOUT_MS = 30_000;

export interface ApiTarget {
  url: string;
  /** Where the URL came from, for the holder: `--api`, `[api] public_url`, `[api] host/port`. */
  source: string;
}

/**
 * The account API to talk to: `--api` when given; else `[api] public_url`
 * (the address the deployment publishes for holders); else the API's own
 * listen address `[api] host`:`port`, with a wildcard bind (0.0.0.0, ::)
 * reached on loopback — the case of a command run on the server itself or
 * against `sealpost dev`.
 */
export function apiBaseUrl(config: Config, override?: string): ApiTarget {
  if (override !== undefined) return { url: trimSlash(checkUrl(override, '--api')), source: '--api' };
  if (config.api.public_url) return { url: trimSlash(config.api.public_url), source: '[api] public_url' };
  const host =
    config.api.host === '0.0.0.0' ? '127.0.0.1' : config.api.host === '::' ? '::1' : config.api.host;
  const shown = host.includes(':') ? `[${host}]` : host;
  return { url: `http://${shown}:${config.api.port}`, source: '[api] host and port' };
}

function checkUrl(value: string, what: string): string {
  try {
    const url = new URL(value);
    if (url.protocol === 'http:' || url.protocol === 'https:') return value;
  } catch {
    // reported below
  }
  throw new CliError(`${what} must be an http:// or https:// URL, got "${value}"`, 2);
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

export interface ApiAnswer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: JSON bodies are read field by field.
  body: any;
}

/** An answer the command does not expect: the API's own code and message. */
export class ApiRefusal extends CliError {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export class AccountApi {
  private token: string | null;

  /** `key` signs the login and step-up nonces; without it, `token` (a bearer token got elsewhere) is the only way in. */
  constructor(
    readonly target: ApiTarget,
    private readonly key: Keypair | null,
    token: string | null = null,
  ) {
    this.token = token;
  }

  private async send(
    method: string,
    path: string,
    opts: { json?: unknown; headers?: Record<string, string>; accept?: string; timeoutMs?: number },
  ): Promise<Response> {
    const headers: Record<string, string> = { accept: opts.accept ?? 'application/json', ...opts.headers };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    if (opts.json !== undefined) headers['content-type'] = 'application/json';
    try {
      return await fetch(this.target.url + path, {
        method,
        headers,
        body: opts.json === undefined ? undefined : JSON.stringify(opts.json),
        signal: AbortSignal.timeout(opts.timeoutMs ?? REQUEST_TIMEOUT_MS),
      });
    } catch (err) {
      throw new CliError(
        `cannot reach the account API at ${this.target.url} (from ${this.target.source}): ${reason(err, opts.timeoutMs)}; nothing was changed`,
      );
    }
  }

  private async answer(res: Response, method: string, path: string): Promise<ApiAnswer> {
    const text = await res.text();
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      throw new CliError(
        `${this.target.url} answered ${method} ${path} with HTTP ${res.status} and no JSON: is it the Sealpost account API? (set --api or [api] public_url)`,
      );
    }
    return { status: res.status, body };
  }

  async request(
    method: string,
    path: string,
    opts: { json?: unknown; headers?: Record<string, string> } = {},
  ): Promise<ApiAnswer> {
    return this.answer(await this.send(method, path, opts), method, path);
  }

  /**
   * GET of a binary body (a sealed object), at most `maxBytes` of it. A 200
   * comes back as `bytes`; any other status as the API's JSON error answer.
   */
  async getBytes(
    path: string,
    opts: { maxBytes: number; timeoutMs?: number },
  ): Promise<{ bytes: Uint8Array } | { refused: ApiAnswer }> {
    const res = await this.send('GET', path, {
      accept: 'application/octet-stream, application/json',
      timeoutMs: opts.timeoutMs,
    });
    if (res.status !== 200) return { refused: await this.answer(res, 'GET', path) };
    const bytes = await readCappedBody(
      res,
      opts.maxBytes,
      () => new CliError(`${this.target.url}${path} is over the ${opts.maxBytes}-byte limit (--max-bytes)`),
    );
    return { bytes };
  }

  /** Throws the API's own message for an unexpected status. */
  static refuse(answer: ApiAnswer, doing: string): never {
    const code = typeof answer.body?.error === 'string' ? answer.body.error : `http_${answer.status}`;
    const message = typeof answer.body?.message === 'string' ? answer.body.message : code;
    throw new ApiRefusal(
      answer.status,
      code,
      `the account API refused ${doing} (${answer.status} ${code}): ${message}`,
    );
  }

  private get signer(): Keypair {
    if (!this.key) throw new CliError('logging in to the account API needs the wallet key (--key FILE)', 2);
    return this.key;
  }

  private sign(text: string): string {
    return signDetachedBase58(this.signer, new TextEncoder().encode(text));
  }

  /** Challenge → local signature → token. Retries once: another client may just have used the shared nonce. */
  async login(): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const challenge = await this.request('POST', '/v1/auth/challenge', {
        json: { wallet: this.signer.address },
      });
      if (challenge.status !== 200 || typeof challenge.body?.nonce !== 'string')
        AccountApi.refuse(challenge, 'the login challenge');
      const nonce = challenge.body.nonce as string;
      if (!nonce.startsWith('Sealpost login nonce: '))
        throw new CliError(
          `the login challenge from ${this.target.url} is not a Sealpost login nonce; not signing it`,
        );
      const login = await this.request('POST', '/v1/auth/login', {
        json: { wallet: this.signer.address, signature: this.sign(nonce) },
      });
      if (login.status === 200 && typeof login.body?.token === 'string') {
        this.token = login.body.token;
        return;
      }
      if (login.status === 401 && attempt === 0) continue;
      AccountApi.refuse(login, 'the login');
    }
  }

  /** A fresh step-up proof for the next write: the nonce signed locally. */
  async stepUp(): Promise<Record<string, string>> {
    const challenge = await this.request('POST', '/v1/auth/step-up');
    if (challenge.status !== 200 || typeof challenge.body?.nonce !== 'string')
      AccountApi.refuse(challenge, 'the step-up challenge');
    const nonce = challenge.body.nonce as string;
    if (!nonce.startsWith('Sealpost step-up nonce: '))
      throw new CliError(
        `the step-up challenge from ${this.target.url} is not a Sealpost step-up nonce; not signing it`,
      );
    return { [STEP_UP_HEADER]: this.sign(nonce) };
  }
}

function reason(err: unknown, timeoutMs = REQUEST_TIMEOUT_MS): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError') return `no answer within ${timeoutMs / 1000} s`;
  if (e?.cause?.code) return e.cause.code;
  return e?.cause?.message ?? e?.message ?? String(err);
}
