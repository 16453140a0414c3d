// The rspamd client: one POST /checkv2 per message, with the envelope and
// connection facts as rspamd's HTTP protocol headers (IP, Helo, Hostname,
// From, Rcpt once per recipient, Queue-Id, User, TLS-Cipher/TLS-Version),
// bounded by a timeout. What rspamd answers is reduced to a verdict the MX
// acts on (./policy.ts); an rspamd that is down, slow, answers an error
// status or garbage gives a ScanFailure, never a hang.
import { request } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** rspamd's actions (metric "default"). */
export type RspamdAction =
  | 'reject'
  | 'soft reject'
  | 'rewrite subject'
  | 'add header'
  | 'greylist'
  | 'no action';

const ACTIONS: readonly RspamdAction[] = [
  'reject',
  'soft reject',
  'rewrite subject',
  'add header',
  'greylist',
  'no action',
];

export interface ScanRequest {
  message: Buffer;
  ip: string;
  helo?: string;
  /** The client's forward-confirmed reverse name, when known. */
  hostname?: string;
  from: string;
  rcpts: string[];
  queueId: string;
  /** The authenticated submission user. */
  user?: string;
  tls?: { version: string; cipher: string };
}

export interface ScanResult {
  action: RspamdAction;
  score: number;
  requiredScore: number;
  /** Symbol names with their scores, highest first. */
  symbols: { name: string; score: number }[];
  /** rspamd's SMTP message for the reply (`messages.smtp_message`), when it gave one. */
  smtpMessage?: string;
  /** The subject rspamd proposes under `rewrite subject`. */
  subject?: string;
  /** Time the scan took, in seconds. */
  seconds: number;
}

export type ScanFailureKind = 'unreachable' | 'timeout' | 'status' | 'garbage';

export class ScanFailure extends Error {
  constructor(
    readonly kind: ScanFailureKind,
    message: string,
  ) {
    super(message);
    this.name = 'ScanFailure';
  }
}

export interface RspamdClientOptions {
  /** The normal worker's (or proxy's) base URL, e.g. http://127.0.0.1:11333. */
  url: string;
  /** Whole request, connect to last byte of the answer. */
  timeoutMs: number;
  /** Sent as `Password` (a controller, or a worker that requires one). */
  password?: string;
}

/** A header value without CR/LF (client-supplied words go into HTTP headers). */
function headerSafe(s: string): string {
  return s.replace(/[\r\n\0]/g, ' ').slice(0, 998);
}

export class RspamdClient {
  private readonly base: URL;

  constructor(private readonly opts: RspamdClientOptions) {
    this.base = new URL(opts.url);
  }

  get url(): string {
    return this.base.toString();
  }

  async check(req: ScanRequest): Promise<ScanResult> {
    const headers: Record<string, string | string[]> = {
      'Content-Type': 'message/rfc822',
      'Content-Length': String(req.message.length),
      IP: headerSafe(req.ip),
      From: headerSafe(req.from || '<>'),
      'Queue-Id': headerSafe(req.queueId),
      Pass: 'all',
    };
    if (req.rcpts.length) headers.Rcpt = req.rcpts.map(headerSafe);
    if (req.helo) headers.Helo = headerSafe(req.helo);
    if (req.hostname) headers.Hostname = headerSafe(req.hostname);
    if (req.user) headers.User = headerSafe(req.user);
    if (req.tls) {
      headers['TLS-Cipher'] = headerSafe(req.tls.cipher);
      headers['TLS-Version'] = headerSafe(req.tls.version);
    }
    if (this.opts.password) headers.Password = this.opts.password;
    const started = performance.now();
    const { status, body } = await this.post('/checkv2', headers, req.message);
    const seconds = (performance.now() - started) / 1000;
    if (status !== 200)
      throw new ScanFailure('status', `rspamd answered HTTP ${status}: ${body.slice(0, 200)}`);
    return { ...parseCheckV2(body), seconds };
  }

  /**
   * POST /learnspam or /learnham on the controller: 'learned' (200, or 208:
   * learned before), 'skipped' (204: rspamd learned nothing, e.g. too few
   * tokens or no classifier storage configured).
   */
  async learn(kind: 'spam' | 'ham', message: Buffer): Promise<'learned' | 'skipped'> {
    const headers: Record<string, string> = { 'Content-Length': String(message.length) };
    if (this.opts.password) headers.Password = this.opts.password;
    const { status, body } = await this.post(`/learn${kind}`, headers, message);
    // 208: rspamd had learned this message already (as this kind): nothing to do.
    if (status === 200 || status === 208) return 'learned';
    if (status === 204) return 'skipped';
    throw new ScanFailure('status', `rspamd learn${kind}: HTTP ${status}: ${body.slice(0, 200)}`);
  }

  private post(
    path: string,
    headers: Record<string, string | string[]>,
    payload: Buffer,
  ): Promise<{ status: number; body: string }> {
    const target = new URL(
      path.replace(/^\//, ''),
      this.base.toString().endsWith('/') ? this.base : `${this.base}/`,
    );
    const send = target.protocol === 'https:' ? httpsRequest : request;
    return new Promise((resolve, reject) => {
      let settled = false;
      const fail = (err: ScanFailure) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        req.destroy();
        reject(err);
      };
      const req = send(target, { method: 'POST', headers, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (d: Buffer) => {
          size += d.length;
          // A verdict is a few kB; anything this large is not one.
          if (size > 4 * 1024 * 1024)
            return fail(new ScanFailure('garbage', 'rspamd answer larger than 4 MiB'));
          chunks.push(d);
        });
        res.on('end', () => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
        });
        res.on('error', (err) => fail(new ScanFailure('unreachable', err.message)));
      });
      const timer = setTimeout(
        () => fail(new ScanFailure('timeout', `rspamd did not answer within ${this.opts.timeoutMs} ms`)),
        this.opts.timeoutMs,
      );
      req.on('error', (err) => fail(new ScanFailure('unreachable', `rspamd unreachable: ${err.message}`)));
      req.end(payload);
    });
  }
}

/** The verdict in a /checkv2 answer; ScanFailure('garbage') when it is not one. */
export function parseCheckV2(body: string): Omit<ScanResult, 'seconds'> {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new ScanFailure('garbage', `rspamd answer is not JSON: ${body.slice(0, 80)}`);
  }
  if (!json || typeof json !== 'object') throw new ScanFailure('garbage', 'rspamd answer is not an object');
  const o = json as Record<string, unknown>;
  const action = o.action;
  if (typeof action !== 'string' || !(ACTIONS as readonly string[]).includes(action))
    throw new ScanFailure('garbage', `rspamd answer has no known action (${String(action).slice(0, 40)})`);
  const score = typeof o.score === 'number' && Number.isFinite(o.score) ? o.score : Number.NaN;
  if (Number.isNaN(score)) throw new ScanFailure('garbage', 'rspamd answer has no score');
  const requiredScore =
    typeof o.required_score === 'number' && Number.isFinite(o.required_score) ? o.required_score : 0;
  const symbols: { name: string; score: number }[] = [];
  if (o.symbols && typeof o.symbols === 'object') {
    for (const [name, v] of Object.entries(o.symbols as Record<string, unknown>)) {
      const s = v && typeof v === 'object' ? (v as Record<string, unknown>).score : undefined;
      symbols.push({ name, score: typeof s === 'number' && Number.isFinite(s) ? s : 0 });
    }
  }
  symbols.sort((a, b) => b.score - a.score || (a.name < b.name ? -1 : 1));
  const messages =
    o.messages && typeof o.messages === 'object' ? (o.messages as Record<string, unknown>) : {};
  const smtpMessage = typeof messages.smtp_message === 'string' ? messages.smtp_message : undefined;
  const subject = typeof o.subject === 'string' ? o.subject : undefined;
  return {
    action: action as RspamdAction,
    score,
    requiredScore,
    symbols,
    ...(smtpMessage ? { smtpMessage } : {}),
    ...(subject ? { subject } : {}),
  };
}
