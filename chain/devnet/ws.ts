// PubSub over WebSocket, as a Solana node serves it on RPC port + 1:
// signature, account, program, slot, root and logs subscriptions with
// notifications at the requested commitment. Signature subscriptions end
// after their one notification (web3.js expects the server to drop them).
import type { Logger } from 'pino';
import type { RawData, WebSocket, WebSocketServer } from 'ws';
import type { AccountState, Address } from './account-store.ts';
import type { Bank, Commitment } from './bank.ts';
import { SYSTEM_PROGRAM_ID } from './constants.ts';
import type { TxRecord } from './history.ts';
import { toJsonText } from './json-text.ts';
import { type AccountView, accountViewParam, encodeAccount } from './rpc-encode.ts';
import { RpcCode, RpcError } from './rpc-errors.ts';
import { type Filter, filterProgramAccount, parseFilters } from './rpc-filters.ts';
import { commitmentParam, configParam, integer, param, pubkeyParam, signatureParam } from './rpc-params.ts';

type Kind = 'signature' | 'account' | 'program' | 'slot' | 'root' | 'logs';

interface Sub {
  id: number;
  kind: Kind;
  socket: WebSocket;
  commitment: Commitment;
  key?: string;
  view?: AccountView;
  filters?: Filter[];
  received?: boolean;
  mentions?: Address | null;
}

const RANK: Record<Commitment, number> = { processed: 0, confirmed: 1, finalized: 2 };
const MAX_SUBS_PER_SOCKET = 10_000;
const MAX_BUFFERED_BYTES = 16 * 1024 * 1024;
const CLOSED: AccountState = {
  lamports: 0n,
  owner: SYSTEM_PROGRAM_ID,
  data: new Uint8Array(0),
  executable: false,
};

const NOTIFICATION: Record<Kind, string> = {
  signature: 'signatureNotification',
  account: 'accountNotification',
  program: 'programNotification',
  slot: 'slotNotification',
  root: 'rootNotification',
  logs: 'logsNotification',
};

export interface Pubsub {
  close(): Promise<void>;
}

export function startPubsub(
  wss: WebSocketServer,
  bank: Bank,
  logger: Logger,
  /** Fidelity's status lag: a signature this says is hidden is notified only once it is not. */
  hides: (signature: string, slot: number) => boolean = () => false,
): Pubsub {
  const subs = new Map<number, Sub>();
  const bySocket = new Map<WebSocket, Set<number>>();
  let nextId = 0;

  const send = (socket: WebSocket, message: object) => {
    if (socket.readyState !== socket.OPEN) return;
    if (socket.bufferedAmount > MAX_BUFFERED_BYTES) {
      socket.terminate();
      return;
    }
    socket.send(toJsonText(message));
  };
  const notify = (sub: Sub, result: unknown) =>
    send(sub.socket, {
      jsonrpc: '2.0',
      method: NOTIFICATION[sub.kind],
      params: { result, subscription: sub.id },
    });
  const remove = (id: number) => {
    const sub = subs.get(id);
    if (!sub) return false;
    subs.delete(id);
    bySocket.get(sub.socket)?.delete(id);
    return true;
  };
  const each = (kind: Kind, fn: (sub: Sub) => void) => {
    for (const sub of [...subs.values()]) if (sub.kind === kind) fn(sub);
  };

  /** Notifies (and ends) a signature subscription once its transaction reached the commitment. */
  const checkSignature = (sub: Sub) => {
    const status = bank.signatureStatus(sub.key as string, true);
    if (!status || RANK[status.confirmationStatus] < RANK[sub.commitment]) return;
    if (hides(sub.key as string, status.slot)) return;
    remove(sub.id);
    notify(sub, { context: { slot: status.slot }, value: { err: status.err } });
  };

  const accountChanged = (
    commitment: Commitment,
    slot: number,
    address: Address,
    state: AccountState | null,
  ) => {
    const shown = state ?? CLOSED;
    for (const sub of subs.values()) {
      if (sub.commitment !== commitment) continue;
      if (sub.kind === 'account' && sub.key === address) {
        notify(sub, { context: { slot }, value: encodeAccount(shown, sub.view as AccountView) });
      } else if (sub.kind === 'program' && state && state.owner === sub.key) {
        if (!filterProgramAccount(state, sub.filters ?? [])) continue;
        notify(sub, {
          context: { slot },
          value: { pubkey: address, account: encodeAccount(state, sub.view as AccountView) },
        });
      }
    }
  };

  const logsLanded = (commitment: Commitment, record: TxRecord) => {
    each('logs', (sub) => {
      if (sub.commitment !== commitment) return;
      if (sub.mentions && !record.accountKeys.includes(sub.mentions)) return;
      notify(sub, {
        context: { slot: record.slot },
        value: { signature: record.signature, err: record.err, logs: record.logs },
      });
    });
  };

  const unsubscribers = [
    bank.events.onProcessed((record, writes) => {
      for (const sub of [...subs.values()]) {
        if (sub.kind !== 'signature' || sub.key !== record.signature) continue;
        if (sub.commitment === 'processed') checkSignature(sub);
        else if (sub.received) {
          sub.received = false;
          notify(sub, { context: { slot: record.slot }, value: 'receivedSignature' });
        }
      }
      for (const [address, state] of writes) accountChanged('processed', record.slot, address, state);
      logsLanded('processed', record);
    }),
    bank.events.onCommitted((record, commitment) => {
      for (const [address, state] of record.accounts) accountChanged(commitment, record.slot, address, state);
      for (const tx of record.txs) logsLanded(commitment, tx);
      if (commitment === 'finalized') each('root', (sub) => notify(sub, record.slot));
    }),
    bank.events.onSlot((slot) => {
      each('signature', checkSignature);
      each('slot', (sub) => notify(sub, { parent: slot - 1, root: bank.slotAt('finalized'), slot }));
    }),
  ];

  const subscribe = (socket: WebSocket, kind: Kind, params: unknown[]): Sub => {
    const owned = bySocket.get(socket) ?? new Set<number>();
    bySocket.set(socket, owned);
    if (owned.size >= MAX_SUBS_PER_SOCKET)
      throw new RpcError(RpcCode.InvalidRequest, 'Too many subscriptions');
    const sub: Sub = { id: ++nextId, kind, socket, commitment: 'finalized' };
    if (kind === 'signature') {
      sub.key = signatureParam(param(params, 0, 'signature'));
      const config = configParam(params, 1);
      sub.commitment = commitmentParam(config);
      sub.received = config.enableReceivedNotification === true;
    } else if (kind === 'account' || kind === 'program') {
      sub.key = pubkeyParam(param(params, 0, 'pubkey'));
      const config = configParam(params, 1);
      sub.commitment = commitmentParam(config);
      sub.view = accountViewParam(config);
      if (kind === 'program') sub.filters = parseFilters(config.filters);
    } else if (kind === 'logs') {
      const filter = param(params, 0, 'filter');
      const mentions = (filter as { mentions?: unknown } | null)?.mentions;
      if (filter === 'all' || filter === 'allWithVotes') sub.mentions = null;
      else if (Array.isArray(mentions) && mentions.length === 1) sub.mentions = pubkeyParam(mentions[0]);
      else
        throw new RpcError(RpcCode.InvalidParams, 'Invalid params: expected "all" or {mentions: [pubkey]}');
      sub.commitment = commitmentParam(configParam(params, 1));
    }
    subs.set(sub.id, sub);
    owned.add(sub.id);
    return sub;
  };

  const handle = (socket: WebSocket, request: unknown): object | null => {
    const req = (typeof request === 'object' && request !== null ? request : {}) as Record<string, unknown>;
    const id = typeof req.id === 'string' || typeof req.id === 'number' ? req.id : null;
    const fail = (err: RpcError) => ({ jsonrpc: '2.0', error: err.toJson(), id });
    if (req.jsonrpc !== '2.0' || typeof req.method !== 'string')
      return fail(new RpcError(RpcCode.InvalidRequest, 'Invalid request'));
    if (!('id' in req)) return null;
    const params = Array.isArray(req.params) ? req.params : req.params == null ? [] : null;
    if (!params)
      return fail(new RpcError(RpcCode.InvalidParams, 'Invalid params: expected an array of parameters'));
    const match = /^(signature|account|program|slot|root|logs)(Subscribe|Unsubscribe)$/.exec(req.method);
    if (!match) return fail(new RpcError(RpcCode.MethodNotFound, 'Method not found'));
    const kind = match[1] as Kind;
    try {
      if (match[2] === 'Unsubscribe') {
        const subId = integer(param(params, 0, 'subscription id'), 'subscription id');
        const sub = subs.get(subId);
        if (!sub || sub.kind !== kind || sub.socket !== socket) {
          return fail(new RpcError(RpcCode.InvalidParams, 'Invalid subscription id.'));
        }
        remove(subId);
        return { jsonrpc: '2.0', result: true, id };
      }
      const sub = subscribe(socket, kind, params);
      send(socket, { jsonrpc: '2.0', result: sub.id, id });
      // A signature that already landed at the requested commitment is reported right away.
      if (kind === 'signature') checkSignature(sub);
      return null;
    } catch (err) {
      if (err instanceof RpcError) return fail(err);
      logger.error({ err, method: req.method }, 'devnet pubsub handler failed');
      return fail(new RpcError(RpcCode.Internal, 'Internal error'));
    }
  };

  wss.on('connection', (socket: WebSocket) => {
    bySocket.set(socket, new Set());
    socket.on('message', (data: RawData) => {
      let body: unknown;
      try {
        body = JSON.parse(data.toString());
      } catch {
        send(socket, {
          jsonrpc: '2.0',
          error: { code: RpcCode.ParseError, message: 'Parse error' },
          id: null,
        });
        return;
      }
      const requests = Array.isArray(body) ? body : [body];
      for (const request of requests) {
        const response = handle(socket, request);
        if (response) send(socket, response);
      }
    });
    socket.on('close', () => {
      for (const id of bySocket.get(socket) ?? []) subs.delete(id);
      bySocket.delete(socket);
    });
    socket.on('error', () => {});
  });

  return {
    close: async () => {
      for (const off of unsubscribers) off();
      // Code 1000 tells web3.js (rpc-websockets) not to reconnect.
      const closing = [...wss.clients].map(
        (socket) =>
          new Promise<void>((resolve) => {
            const timer = setTimeout(() => socket.terminate(), 1000);
            socket.once('close', () => {
              clearTimeout(timer);
              resolve();
            });
            socket.close(1000, 'devnet shutting down');
          }),
      );
      await Promise.all(closing);
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
