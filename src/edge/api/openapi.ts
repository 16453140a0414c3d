// The OpenAPI 3.1 document, generated from the routes as Fastify registered
// them (collected by an onRoute hook): the same schemas that validate
// requests and serialize responses, plus each route's `config.doc`. Routes
// from plugins appear too, with whatever schema they declare.
import type { RouteOptions } from 'fastify';
import type { AuthMode, RouteDoc } from './context.ts';
import { STEP_UP_HEADER } from './context.ts';
import { ERROR_BODY_SCHEMA } from './errors.ts';

export interface CollectedRoute {
  method: string;
  url: string;
  schema?: RouteOptions['schema'];
  auth: AuthMode;
  stepUp: boolean;
  doc?: RouteDoc;
}

const STATUS_TEXT: Record<number, string> = {
  400: 'invalid request (body, parameter or step-up proof encoding)',
  401: 'missing, invalid, expired or revoked credentials',
  403: 'refused: step-up proof does not verify, or registration is closed',
  404: 'no such account (or route)',
  409: 'conflict with the current state (e.g. the message is already in that folder)',
  413: 'body larger than [api] max_body_bytes',
  415: 'body is not Content-Type: application/json',
  422: 'unknown pin provider kind',
  428: 'step-up proof missing, expired or already spent: {"error":"step_up_required"}',
  429: 'rate limited; see retry-after',
  500: 'internal error (nothing half-written)',
  503: 'a dependency is unavailable (e.g. chain_unavailable: the chain RPC does not answer); try again',
};

/** `/v1/x/:id` → `/v1/x/{id}`. */
export function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function parameters(route: CollectedRoute): unknown[] {
  const out: unknown[] = [];
  const params = route.schema?.params as { properties?: Record<string, unknown> } | undefined;
  for (const name of route.url.match(/:([A-Za-z0-9_]+)/g) ?? []) {
    const key = name.slice(1);
    out.push({
      name: key,
      in: 'path',
      required: true,
      schema: params?.properties?.[key] ?? { type: 'string' },
    });
  }
  if (route.stepUp) {
    out.push({
      name: STEP_UP_HEADER,
      in: 'header',
      required: true,
      description:
        'base58 ed25519 signature by the token wallet over the exact nonce of POST /v1/auth/step-up; single use',
      schema: { type: 'string' },
    });
  }
  return out;
}

function operation(route: CollectedRoute): Record<string, unknown> {
  const doc = route.doc;
  const responses: Record<string, unknown> = {};
  const declared = (route.schema?.response ?? {}) as Record<string, unknown>;
  for (const [status, schema] of Object.entries(declared)) {
    responses[status] = { description: 'success', content: { 'application/json': { schema } } };
  }
  for (const [status, r] of Object.entries(doc?.responses ?? {})) {
    responses[status] = r.schema
      ? {
          description: r.description,
          content: { [r.contentType ?? 'application/json']: { schema: r.schema } },
        }
      : { description: r.description };
  }
  for (const status of doc?.errors ?? []) {
    responses[String(status)] = {
      description: STATUS_TEXT[status] ?? 'error',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
  }
  if (Object.keys(responses).length === 0) responses.default = { description: 'see the route' };
  const op: Record<string, unknown> = {
    operationId: `${route.method.toLowerCase()}${openApiPath(route.url).replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ?? '').toUpperCase())}`,
    summary: doc?.summary ?? `${route.method} ${route.url}`,
    tags: doc?.tags ?? [],
    responses,
  };
  if (doc?.description) op.description = doc.description;
  if (route.auth === 'jwt') op.security = [{ sessionToken: [] }];
  else if (route.auth === 'admin') op.security = [{ adminToken: [] }];
  else op.security = [];
  const params = parameters(route);
  if (params.length > 0) op.parameters = params;
  const body = doc?.body ?? (route.schema?.body as Record<string, unknown> | undefined);
  if (body) op.requestBody = { required: true, content: { 'application/json': { schema: body } } };
  return op;
}

export function buildOpenApi(
  routes: CollectedRoute[],
  info: { version: string; serverUrl: string },
): unknown {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of [...routes].sort((a, b) => a.url.localeCompare(b.url))) {
    const path = openApiPath(route.url);
    paths[path] ??= {};
    (paths[path] as Record<string, unknown>)[route.method.toLowerCase()] = operation(route);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Sealpost account API',
      version: info.version,
      description:
        'Wallet login, account settings, personal pin provider, export; the marketplace index (listings, offers, bids) and your pending timelocks, read from chain state; admin export and delete. Every error body is {"error": "<code>", "message": "…"}, except 428 which is exactly {"error":"step_up_required"}.',
    },
    servers: [{ url: info.serverUrl }],
    components: {
      securitySchemes: {
        sessionToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        adminToken: { type: 'http', scheme: 'bearer', description: 'the token in [api] admin_token_file' },
      },
      schemas: { Error: ERROR_BODY_SCHEMA },
    },
    paths,
  };
}
