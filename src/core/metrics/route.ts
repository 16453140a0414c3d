// GET /metrics on the account API, for Prometheus. Admin only: the route is
// marked `auth: 'admin'`, so the API's guard demands the admin bearer token
// (Prometheus: `authorization: { credentials_file: <admin token file> }`).
// Queue names and failure counts say how busy a deployment is; they are not
// for the public.
import type { FastifyPluginAsync } from 'fastify';
import { METRICS_CONTENT_TYPE } from './sealpost-metrics.ts';

/** What GET /metrics renders: one process's SealpostMetrics, or all serve processes summed (src/run/serve/cluster.ts). */
export interface MetricsSource {
  render(): Promise<string>;
}

export const METRICS_PATH = '/metrics';

export function metricsRoute(metrics: MetricsSource): FastifyPluginAsync {
  return async (app) => {
    app.get(
      METRICS_PATH,
      {
        config: {
          auth: 'admin',
          doc: {
            summary:
              'Prometheus metrics of this process, or of every process of a `serve --workers N` (text exposition format 0.0.4)',
            tags: ['admin'],
            errors: [401, 429],
            responses: {
              200: { description: 'Prometheus text exposition', contentType: 'text/plain' },
            },
          },
        },
      },
      async (_request, reply) => reply.type(METRICS_CONTENT_TYPE).send(await metrics.render()),
    );
  };
}
