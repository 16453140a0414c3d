// The pin daemon: a pin surface (POST /pins, GET /pins/{cid}) and an IPFS
// gateway (GET /ipfs/{cid}) over one blockstore on disk. One listener serves
// both roles; given a separate gateway address, the first listener is the pin
// surface and the second the gateway (DESIGN.md, "Pin daemon surface").
// Both listeners answer GET /health (alive) and GET /ready (the store's
// directory is readable and writable), without a token.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger, type Logger, newRequestId } from '../../src/core/log.ts';
import {
  HEALTH_BODY,
  HEALTH_PATH,
  READY_PATH,
  Readiness,
  readyStatus,
} from '../../src/core/metrics/health.ts';
import { directoryCheck } from '../../src/core/metrics/health-checks.ts';
import { handleIpfs } from './gateway.ts';
import { formatUrl, isLoopbackHost, preflight, sendError, sendJson, setCors, tokenDigest } from './http.ts';
import { acquireLock } from './lock.ts';
import { ClientGoneError, declaredLength, handlePins, type PindContext, sendTooLarge } from './pin-routes.ts';
import { PindStore } from './store.ts';

export interface PindAddress {
  host: string;
  port: number;
}

export interface StartPindOptions {
  dataDir: string;
  pin: PindAddress;
  /** Absent, or the same host:port as `pin`: one listener serves both roles. */
  gateway?: PindAddress;
  /** Bearer token for the pin surface; required for a non-loopback bind. */
  authToken?: string;
  maxPinBytes: number;
  logger?: Logger;
  /** How long close() lets running requests finish (default 5 s). */
  drainMs?: number;
}

export interface Pind {
  pinUrl: string;
  gatewayUrl: string;
  close(): Promise<void>;
}

/** Refusal to start: the message is meant for the operator as is. */
export class PindConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PindConfigError';
  }
}

interface Roles {
  pin: boolean;
  gateway: boolean;
}

export async function startPind(opts: StartPindOptions): Promise<Pind> {
  const authToken = opts.authToken ? opts.authToken : undefined;
  const split =
    opts.gateway !== undefined &&
    !(opts.gateway.host === opts.pin.host && opts.gateway.port === opts.pin.port && opts.pin.port !== 0);
  const binds = split && opts.gateway ? [opts.pin, opts.gateway] : [opts.pin];
  for (const bind of binds) {
    if (!authToken && !isLoopbackHost(bind.host)) {
      throw new PindConfigError(
        `refusing to listen on ${bind.host}, which is not a loopback address, without an auth token: set [pind] auth_token (clients then send it as a bearer token)`,
      );
    }
  }
  if (!Number.isSafeInteger(opts.maxPinBytes) || opts.maxPinBytes <= 0) {
    throw new PindConfigError(`max_pin_bytes must be a positive integer, got ${opts.maxPinBytes}`);
  }
  const logger = opts.logger ?? createLogger({ name: 'pind' });
  const store = await PindStore.open(opts.dataDir);
  const release = acquireLock(opts.dataDir);
  const ctx: PindContext = {
    store,
    maxPinBytes: opts.maxPinBytes,
    tokenDigest: authToken ? tokenDigest(authToken) : null,
    logger,
  };
  const servers: Server[] = [];
  const readiness = new Readiness([directoryCheck('store', opts.dataDir)]);
  try {
    if (split) {
      servers.push(await listen(ctx, readiness, opts.pin, { pin: true, gateway: false }));
      servers.push(await listen(ctx, readiness, opts.gateway as PindAddress, { pin: false, gateway: true }));
    } else {
      servers.push(await listen(ctx, readiness, opts.pin, { pin: true, gateway: true }));
    }
  } catch (err) {
    await Promise.all(servers.map(closeServer(0)));
    release();
    throw err;
  }
  const urls = servers.map((s) => {
    const addr = s.address() as AddressInfo;
    return formatUrl(addr.address, addr.port);
  });
  const pinUrl = urls[0] as string;
  const gatewayUrl = urls[1] ?? pinUrl;
  logger.info({ pinUrl, gatewayUrl, auth: authToken !== undefined, dataDir: opts.dataDir }, 'pind listening');
  let closing: Promise<void> | null = null;
  return {
    pinUrl,
    gatewayUrl,
    close() {
      closing ??= (async () => {
        await Promise.all(servers.map(closeServer(opts.drainMs ?? 5000)));
        release();
      })();
      return closing;
    },
  };
}

function listen(ctx: PindContext, readiness: Readiness, at: PindAddress, roles: Roles): Promise<Server> {
  const server = createServer({ requestTimeout: 120_000, headersTimeout: 30_000, keepAliveTimeout: 5_000 });
  server.on('request', (req, res) => route(ctx, readiness, roles, req, res));
  // curl and other clients ask before sending a large body: refuse over-cap
  // uploads before they are sent.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    const length = declaredLength(req);
    const path = (req.url ?? '').split('?')[0];
    const pinning = roles.pin && req.method === 'POST' && (path === '/pins' || path === '/pins/');
    if (pinning && length !== null && length > ctx.maxPinBytes) {
      setCors(res);
      sendTooLarge(res, ctx.maxPinBytes, false);
      return;
    }
    res.writeContinue();
    route(ctx, readiness, roles, req, res);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(at.port, at.host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

function route(
  ctx: PindContext,
  readiness: Readiness,
  roles: Roles,
  req: IncomingMessage,
  res: ServerResponse,
): void {
  setCors(res);
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const query = new URLSearchParams(q === -1 ? '' : url.slice(q + 1));
  let handling: Promise<void> | undefined;
  if (req.method === 'OPTIONS') {
    preflight(res);
    return;
  }
  if ((path === HEALTH_PATH || path === READY_PATH) && (req.method === 'GET' || req.method === 'HEAD')) {
    req.resume();
    handling =
      path === HEALTH_PATH
        ? Promise.resolve(sendJson(res, 200, HEALTH_BODY))
        : readiness.report().then((report) => sendJson(res, readyStatus(report), report));
  } else if (roles.pin && (path === '/pins' || path.startsWith('/pins/'))) {
    handling = handlePins(ctx, req, res, path);
  } else if (roles.gateway && path.startsWith('/ipfs/')) {
    handling = handleIpfs(ctx, req, res, path, query);
  } else {
    req.resume();
    const role =
      roles.pin && roles.gateway
        ? ''
        : roles.pin
          ? ' (this listener is the pin surface)'
          : ' (this listener is the gateway)';
    sendError(res, 404, 'not_found', `no route ${req.method} ${path}${role}`);
    return;
  }
  handling.catch((err: unknown) => {
    if (err instanceof ClientGoneError) return;
    const reqid = newRequestId();
    ctx.logger.error({ err, reqid, method: req.method, path }, 'request failed');
    if (res.headersSent) res.destroy();
    else sendError(res, 500, 'internal', `internal error (request ${reqid})`);
  });
}

function closeServer(drainMs: number): (server: Server) => Promise<void> {
  return (server) =>
    new Promise((resolve) => {
      if (!server.listening) return resolve();
      const force = setTimeout(() => server.closeAllConnections(), drainMs);
      server.close(() => {
        clearTimeout(force);
        resolve();
      });
      server.closeIdleConnections();
    });
}
