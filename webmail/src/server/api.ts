// The account API client for server mode. Errors come back as the API's
// `{error, message}` body and are shown by their message.
import { bytesToBase64 } from '../mail/build-message.ts';

export class ApiRequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The parsed error body, for errors that carry more than a message (the 402 of sending). */
    readonly body: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ApiRequestError';
  }
}

/** A recipient the server held for postage (the 402 of POST /v1/mail/send). */
export interface PostageHold {
  address: string;
  wallet: string;
  requiredPostage: bigint;
}

/** The recipients a `postage_required` refusal names, or null for any other error. */
export function postageHolds(err: unknown): PostageHold[] | null {
  if (!(err instanceof ApiRequestError) || err.status !== 402 || err.code !== 'postage_required') return null;
  const list = err.body.recipients;
  if (!Array.isArray(list)) return null;
  const out: PostageHold[] = [];
  for (const r of list as Record<string, unknown>[]) {
    if (typeof r?.address !== 'string' || typeof r.wallet !== 'string') return null;
    if (typeof r.required_postage !== 'string' || !/^\d+$/.test(r.required_postage)) return null;
    out.push({ address: r.address, wallet: r.wallet, requiredPostage: BigInt(r.required_postage) });
  }
  return out.length > 0 ? out : null;
}

export interface AccountView {
  account: { wallet: string; timezone: string | null; expose_dnd_schedule: boolean; [k: string]: unknown };
  away_schedule: unknown;
  quota: unknown;
}

export interface ServerMailbox {
  id: string;
  name: string;
  messages: number;
  unseen: number;
}

export interface ServerMessage {
  id: string;
  uid: number;
  received_at: number;
  size: number;
  cid: string | null;
  email_address: string | null;
  flags: string[];
}

export interface DndWindow {
  days: string[];
  start: string;
  end: string;
}

export interface SettingsPatch {
  timezone?: string | null;
  dnd_schedule?: { windows: DndWindow[]; exclusions: string[] } | null;
  expose_dnd_schedule?: boolean;
  pop3_dele_closes_on_chain?: boolean;
}

export type PinProviderBody =
  | { kind: 'hosted_jwt'; jwt: string; gateway: string }
  | { kind: 's3_bucket'; access_key: string; secret_key: string; bucket: string; endpoint?: string }
  | { kind: 'remote'; endpoint?: string; auth_token?: string };

// The market and timelock rows are the API's response types (src/contracts; type-only, nothing is bundled).
import type {
  ListingRow as MarketListing,
  EscrowRow as MarketOffer,
  TimelockRow,
} from '../../../src/contracts/api-responses.ts';

export type { MarketListing, MarketOffer, TimelockRow };

export interface Freshness {
  refreshed_at: number;
  chain_time: number;
}

export const STEP_UP_HEADER = 'x-sealpost-step-up';

export class ApiClient {
  token: string | null = null;

  constructor(
    readonly base: string,
    private readonly fetchImpl: typeof fetch = (...a) => fetch(...a),
  ) {}

  private async call(
    method: string,
    path: string,
    opts: { json?: unknown; headers?: Record<string, string> } = {},
  ): Promise<Response> {
    const headers: Record<string, string> = { ...opts.headers };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    let body: string | undefined;
    if (opts.json !== undefined) {
      body = JSON.stringify(opts.json);
      headers['content-type'] = 'application/json';
    }
    let res: Response;
    try {
      res = await this.fetchImpl(`${this.base}${path}`, { method, headers, body });
    } catch {
      throw new ApiRequestError(
        0,
        'unreachable',
        `The account API at ${this.base} does not answer. Check the API URL in Settings.`,
      );
    }
    if (res.ok) return res;
    const text = await res.text();
    let code = 'http_error';
    let message = `The account API answered ${res.status}.`;
    let errorBody: Record<string, unknown> = {};
    try {
      const b = JSON.parse(text) as { error?: string; message?: string };
      if (b && typeof b === 'object') errorBody = b;
      code = b.error ?? code;
      if (code === 'step_up_required')
        message = 'The step-up signature was missing, expired or already used. Try again.';
      else if (b.message) message = b.message;
    } catch {
      // Not JSON: keep the generic message.
    }
    if (res.status === 401 && code !== 'login_failed')
      message = `Your session ended (${message}). Log in again.`;
    throw new ApiRequestError(res.status, code, message, errorBody);
  }

  private async json<T>(
    method: string,
    path: string,
    opts: { json?: unknown; headers?: Record<string, string> } = {},
  ): Promise<T> {
    const res = await this.call(method, path, opts);
    return (res.status === 204 ? undefined : await res.json()) as T;
  }

  challenge(wallet: string) {
    return this.json<{ nonce: string; expires_in: number }>('POST', '/v1/auth/challenge', {
      json: { wallet },
    });
  }

  async login(wallet: string, signature: string): Promise<string> {
    const r = await this.json<{ token: string }>('POST', '/v1/auth/login', { json: { wallet, signature } });
    this.token = r.token;
    return r.token;
  }

  account() {
    return this.json<AccountView>('GET', '/v1/account');
  }

  createAccount() {
    return this.json<AccountView>('POST', '/v1/account');
  }

  patchSettings(patch: SettingsPatch) {
    return this.json<AccountView>('PATCH', '/v1/account/settings', { json: patch });
  }

  stepUpChallenge() {
    return this.json<{ nonce: string; expires_in: number }>('POST', '/v1/auth/step-up');
  }

  setMailPassword(password: string, proof: string) {
    return this.json<void>('PUT', '/v1/account/mail-password', {
      json: { password },
      headers: { [STEP_UP_HEADER]: proof },
    });
  }

  pinProvider() {
    return this.json<{ configured: boolean; kind: string | null }>('GET', '/v1/account/pin-provider');
  }

  setPinProvider(body: PinProviderBody, proof: string) {
    return this.json<void>('PUT', '/v1/account/pin-provider', {
      json: body,
      headers: { [STEP_UP_HEADER]: proof },
    });
  }

  deletePinProvider(proof: string) {
    return this.json<void>('DELETE', '/v1/account/pin-provider', { headers: { [STEP_UP_HEADER]: proof } });
  }

  async exportDocument(): Promise<Blob> {
    return (await this.call('GET', '/v1/account/export')).blob();
  }

  mailboxes() {
    return this.json<{ addresses: string[]; mailboxes: ServerMailbox[] }>('GET', '/v1/mail/mailboxes');
  }

  messages(mailbox: string, before?: number) {
    const q = new URLSearchParams({ mailbox });
    if (before !== undefined) q.set('before', String(before));
    return this.json<{ messages: ServerMessage[]; next_before: number | null }>(
      'GET',
      `/v1/mail/messages?${q}`,
    );
  }

  async sealed(id: string): Promise<Uint8Array> {
    const res = await this.call('GET', `/v1/mail/messages/${encodeURIComponent(id)}/sealed`);
    return new Uint8Array(await res.arrayBuffer());
  }

  setFlags(id: string, flags: string[]) {
    return this.json<ServerMessage>('PATCH', `/v1/mail/messages/${encodeURIComponent(id)}`, {
      json: { flags },
    });
  }

  send(raw: Uint8Array, to: string[]) {
    return this.json<{ msgid: string; local: number; remote: number }>('POST', '/v1/mail/send', {
      json: { raw: bytesToBase64(raw), to },
    });
  }

  /** Moves a message; `learnRaw` (the opened plaintext) lets a Junk move train the spam filter. */
  moveMessage(id: string, mailbox: string, learnRaw?: Uint8Array) {
    return this.json<{
      message: ServerMessage;
      mailbox: { id: string; name: string };
      learned: string | null;
    }>('POST', `/v1/mail/messages/${encodeURIComponent(id)}/move`, {
      json: { mailbox, ...(learnRaw ? { learn_raw: bytesToBase64(learnRaw) } : {}) },
    });
  }

  /** Deletes a message for good (expunge). */
  deleteMessage(id: string) {
    return this.json<{ deleted: string }>('DELETE', `/v1/mail/messages/${encodeURIComponent(id)}`);
  }

  /** Stores a draft in Drafts (sealed on the server as IMAP APPEND stores it), replacing `replaces`. */
  saveDraft(raw: Uint8Array, replaces?: string) {
    return this.json<ServerMessage>('POST', '/v1/mail/drafts', {
      json: { raw: bytesToBase64(raw), ...(replaces ? { replaces } : {}) },
    });
  }

  marketListings(opts: { fresh?: boolean; cursor?: string } = {}) {
    const q = new URLSearchParams();
    if (opts.fresh) q.set('fresh', 'true');
    if (opts.cursor) q.set('cursor', opts.cursor);
    return this.json<{ listings: MarketListing[]; next_cursor: string | null } & Freshness>(
      'GET',
      `/v1/market/listings${q.size > 0 ? `?${q}` : ''}`,
    );
  }

  marketOffers(fresh = false) {
    return this.json<{ received: MarketOffer[]; made: MarketOffer[] } & Freshness>(
      'GET',
      `/v1/market/offers${fresh ? '?fresh=true' : ''}`,
    );
  }

  timelocks() {
    return this.json<{ timelocks: TimelockRow[]; chain_time: number }>('GET', '/v1/timelocks');
  }
}
