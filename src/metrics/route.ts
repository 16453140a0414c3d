// GET /metrics on the account API, for Prometheus. Admin only: the route is
// marked `auth: 'admin'`, so the API's guard demands the admin bearer token
// (Prometheus: `authorization: { credentials_file: <admin token file> }`).
// Queue names and failure counts say how busy a deployment is; they are not
// for the public.
import type { FastifyPluginAsync } from 'fastify';
import { METRICS_CONTENT_TYPE, type SealpostMetrics } from './sealpost-metrics.ts';

export const METRICS_PATH = '/metrics';

export function metricsRoute(metrics: SealpostMetrics): FastifyPluginAsync {
  return async (app) => {
    app.get(
      METRICS_PATH,
      {
        config: {
          auth: 'admin',
          doc: {
            summary: 'Prometheus metrics of this process (text exposition format 0.0.4)',
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
