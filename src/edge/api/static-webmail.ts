// Serves the built webmail (webmail/dist, `npm run build:webmail`) from the
// API server at `/`, so the page and the account API share an origin, plus
// `/config.json`: the public chain and IPFS addresses the page uses as its
// defaults on a first visit. The page's CSP allows only its own scripts
// (and WebAssembly, for libsodium) but any connect target, because the
// chain RPC, gateway and pin service are the user's choice.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Config } from '../../core/config/types.ts';

export const DEFAULT_WEBMAIL_DIR = fileURLToPath(new URL('../../../webmail/dist', import.meta.url));

const CSP = [
  "default-src 'self'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "style-src 'self' 'unsafe-inline'",
  'img-src * data: blob:',
  'media-src * data: blob:',
  'connect-src *',
  "frame-src 'self' blob: data:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
};

const ASSET_RE = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,200}$/;

function secure(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY')
    .header('cross-origin-opener-policy', 'same-origin');
}

/** The public values of config.json: nothing secret, only where the page finds the chain and IPFS. */
export function webmailPublicConfig(config: Config): Record<string, string> {
  const out: Record<string, string> = {
    rpc_url: config.chain.rpc_url,
    gateway_url: config.ipfs.gateway_url,
    program_id: config.chain.program_id,
  };
  if (config.ipfs.operator === 'pind') out.pin_url = config.ipfs.pind_url;
  return out;
}

export async function staticWebmail(app: FastifyInstance, config: Config): Promise<void> {
  const root = config.api.webmail_dir ?? DEFAULT_WEBMAIL_DIR;
  const assetsDir = join(root, 'assets');
  // Asset names are content hashes, so a compressed copy never goes stale.
  const gzipped = new Map<string, Buffer>();
  const publicConfig = webmailPublicConfig(config);

  app.get(
    '/',
    {
      config: {
        doc: {
          summary: 'The webmail page (served when the webmail is built)',
          tags: ['webmail'],
          errors: [429],
          responses: {
            200: { description: 'the page', contentType: 'text/html' },
            503: { description: 'the webmail is not built on this server' },
          },
        },
      },
    },
    async (_request, reply) => {
      const index = join(root, 'index.html');
      if (!existsSync(index)) {
        return reply.code(503).send({
          error: 'webmail_not_built',
          message:
            'the webmail is not built on this server: run `npm run build:webmail` (or set [api] webmail_dir)',
        });
      }
      return secure(reply)
        .header('content-type', 'text/html; charset=utf-8')
        .header('cache-control', 'no-cache')
        .send(readFileSync(index));
    },
  );

  app.get(
    '/config.json',
    {
      config: {
        doc: {
          summary: "The webmail's default chain RPC, gateway, pin service and program id",
          tags: ['webmail'],
          errors: [429],
          responses: {
            200: {
              description: 'public addresses only',
              schema: { type: 'object', additionalProperties: { type: 'string' } },
            },
          },
        },
      },
    },
    async (_request, reply) => reply.header('cache-control', 'no-store').send(publicConfig),
  );

  app.get(
    '/assets/:file',
    {
      config: {
        doc: {
          summary: 'A static asset of the webmail (content-hashed name, cached for a year)',
          tags: ['webmail'],
          errors: [404, 429],
          responses: { 200: { description: 'the asset' } },
        },
      },
    },
    async (request, reply) => {
      const { file } = request.params as { file: string };
      const path = join(assetsDir, file);
      if (!ASSET_RE.test(file) || !existsSync(path)) {
        return reply
          .code(404)
          .send({ error: 'asset_not_found', message: `no webmail asset ${JSON.stringify(file)}` });
      }
      const ext = file.slice(file.lastIndexOf('.'));
      secure(reply)
        .header('content-type', TYPES[ext] ?? 'application/octet-stream')
        .header('cache-control', 'public, max-age=31536000, immutable')
        .header('vary', 'accept-encoding');
      if (/\bgzip\b/.test(String(request.headers['accept-encoding'] ?? '')) && ext !== '.png') {
        let body = gzipped.get(file);
        if (!body) {
          body = gzipSync(readFileSync(path), { level: 9 });
          gzipped.set(file, body);
        }
        return reply.header('content-encoding', 'gzip').send(body);
      }
      return reply.send(readFileSync(path));
    },
  );
}
