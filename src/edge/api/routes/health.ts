// GET /health (alive) and GET /ready (dependencies) on the account API, for
// load balancers, orchestrators and docker compose. Unauthenticated, outside
// the rate windows (the guard skips `probe` routes, so a Redis outage cannot
// turn /ready into a 500 and a busy client cannot turn it into a 429), and
// logged only at warn and above. Readiness results are shared and cached
// for a second (src/core/metrics/health.ts), so probing costs the dependencies
// little however often it comes.
import type { FastifyInstance } from 'fastify';
import {
  HEALTH_BODY,
  HEALTH_PATH,
  READY_PATH,
  type Readiness,
  readyStatus,
} from '../../../core/metrics/health.ts';

const DEPENDENCY_SCHEMA = {
  type: 'object',
  required: ['state', 'latency_ms'],
  additionalProperties: false,
  properties: {
    state: { type: 'string', enum: ['up', 'down'] },
    latency_ms: { type: 'integer' },
    error: { type: 'string', description: 'why it is down, one line' },
    detail: {
      type: 'object',
      description:
        'figures a check reports besides its state (spool_reconcile: recovered_total, recovered_last_run, without_jobs, corrupt_total, last_run_at)',
      additionalProperties: { type: ['number', 'string'] },
    },
  },
} as const;

const READY_SCHEMA = {
  type: 'object',
  required: ['status', 'dependencies'],
  additionalProperties: false,
  properties: {
    status: { type: 'string', enum: ['ok', 'unavailable'] },
    dependencies: {
      type: 'object',
      description: 'one entry per dependency: redis, store, chain_rpc and (where workers run) operator_pin',
      additionalProperties: DEPENDENCY_SCHEMA,
    },
  },
} as const;

export async function healthRoutes(app: FastifyInstance, readiness: Readiness): Promise<void> {
  app.get(
    HEALTH_PATH,
    {
      logLevel: 'warn',
      config: {
        probe: true,
        doc: {
          summary: 'Liveness: the process answers HTTP',
          description:
            'Always 200 {"status":"ok"} while the process serves requests. No auth, no rate limit.',
          tags: ['meta'],
          errors: [],
        },
      },
      schema: {
        response: {
          200: {
            type: 'object',
            required: ['status'],
            additionalProperties: false,
            properties: { status: { type: 'string', enum: ['ok'] } },
          },
        },
      },
    },
    async () => HEALTH_BODY,
  );

  app.get(
    READY_PATH,
    {
      logLevel: 'warn',
      config: {
        probe: true,
        doc: {
          summary: 'Readiness: every dependency of this process, with its state',
          description:
            '200 when every dependency is up, 503 (same body) naming the ones that are down with a short error. Checks run at most once a second, each within 2.5 s. No auth, no rate limit.',
          tags: ['meta'],
          errors: [],
          responses: { 503: { description: 'a dependency is down', schema: READY_SCHEMA } },
        },
      },
      schema: { response: { 200: READY_SCHEMA, 503: READY_SCHEMA } },
    },
    async (_request, reply) => {
      const report = await readiness.report();
      return reply.code(readyStatus(report)).send(report);
    },
  );
}
