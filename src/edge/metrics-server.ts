// A metrics listener for processes without the account API (`sealpost
// worker --metrics-listen HOST:PORT`): GET /metrics with the same admin
// bearer token as the API; GET /health (alive) and GET /ready (the worker's
// dependencies, 200 or 503) unauthenticated, for health checks.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HEALTH_BODY, HEALTH_PATH, READY_PATH, type Readiness, readyStatus } from '../core/metrics/health.ts';
import { METRICS_PATH } from '../core/metrics/route.ts';
import { METRICS_CONTENT_TYPE, type SealpostMetrics } from '../core/metrics/sealpost-metrics.ts';
import { AdminAuth } from './api/auth/admin-auth.ts';
import { ApiError } from './api/errors.ts';

export interface MetricsServerOptions {
  host: string;
  port: number;
  metrics: SealpostMetrics;
  /** The admin token (`[api] admin_token_file`); null: /metrics refuses everyone, as the API does. */
  adminToken: string | null;
  /** What GET /ready reports; without it /ready answers like /health. */
  readiness?: Readiness;
}

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

export async function startMetricsServer(opts: MetricsServerOptions): Promise<MetricsServer> {
  const auth = new AdminAuth(opts.adminToken);
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET') return sendJson(res, 405, { error: 'method_not_allowed', message: 'GET only' });
    if (path === HEALTH_PATH) return sendJson(res, 200, HEALTH_BODY);
    if (path === READY_PATH) {
      if (!opts.readiness) return sendJson(res, 200, { status: 'ok', dependencies: {} });
      const report = await opts.readiness.report();
      return sendJson(res, readyStatus(report), report);
    }
    if (path !== METRICS_PATH)
      return sendJson(res, 404, { error: 'not_found', message: `no route GET ${path}; try ${METRICS_PATH}` });
    try {
      auth.check(req.headers.authorization);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      return sendJson(res, err.statusCode, { error: err.code, message: err.message });
    }
    const text = await opts.metrics.render();
    res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE });
    res.end(text);
  };
  const server = createServer((req, res) => {
    req.resume();
    handle(req, res).catch((err: Error) => {
      if (!res.headersSent) sendJson(res, 500, { error: 'internal', message: err.message });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
