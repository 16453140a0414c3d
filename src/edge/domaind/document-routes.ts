// The documents the domain service hosts for each local domain, chosen by the
// Host header (mta-sts.<domain>, autoconfig.<domain>, autodiscover.<domain>
// or the mail domain itself) or, for autoconfig/autodiscover, by the domain
// of the address the client asks about.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { MailHostsConfig } from '../../core/config/index.ts';
import { DomainNameError, normalizeDomainName } from '../../core/dns/name.ts';
import {
  AutodiscoverRequestError,
  parseAutodiscoverRequest,
  renderAutoconfig,
  renderAutodiscover,
  renderAutodiscoverError,
} from './client-config.ts';
import { DomaindError } from './errors.ts';
import { MTA_STS_PATH } from './mta-sts.ts';

export interface DocumentRouteDeps {
  /** Normalized (ASCII) local domains. */
  localDomains: readonly string[];
  mailHosts: MailHostsConfig;
  /** The policy text served for every local domain (the MX hosts are shared). */
  mtaStsPolicy: string;
}

export const AUTOCONFIG_PATHS = ['/mail/config-v1.1.xml', '/.well-known/autoconfig/mail/config-v1.1.xml'];
// Outlook capitalizes the path; other clients do not.
export const AUTODISCOVER_PATHS = ['/autodiscover/autodiscover.xml', '/Autodiscover/Autodiscover.xml'];

function ascii(name: string): string | null {
  try {
    return normalizeDomainName(name).ascii;
  } catch (err) {
    if (err instanceof DomainNameError) return null;
    throw err;
  }
}

/** The local domain a Host header names: `<prefix>.<domain>` or (when allowed) the domain itself. */
export function domainFromHost(
  hostname: string,
  prefix: string,
  localDomains: readonly string[],
  allowBare: boolean,
): string | null {
  const host = ascii(hostname.replace(/:\d+$/, '').replace(/^\[.*\]$/, ''));
  if (!host) return null;
  if (host.startsWith(`${prefix}.`)) {
    const rest = host.slice(prefix.length + 1);
    if (localDomains.includes(rest)) return rest;
  }
  return allowBare && localDomains.includes(host) ? host : null;
}

function emailDomain(address: unknown): string | null {
  if (typeof address !== 'string') return null;
  const at = address.lastIndexOf('@');
  return at > 0 ? ascii(address.slice(at + 1)) : null;
}

export async function documentRoutes(app: FastifyInstance, deps: DocumentRouteDeps): Promise<void> {
  const local = deps.localDomains;

  app.get(MTA_STS_PATH, async (request, reply) => {
    const domain = domainFromHost(request.hostname, 'mta-sts', local, false);
    if (!domain) {
      throw new DomaindError(
        'unknown_domain',
        `no MTA-STS policy for host ${JSON.stringify(request.hostname)}`,
        {
          served: local.map((d) => `mta-sts.${d}`),
        },
      );
    }
    reply.header('cache-control', 'max-age=300').type('text/plain; charset=utf-8');
    return deps.mtaStsPolicy;
  });

  const autoconfig = async (request: FastifyRequest, reply: FastifyReply) => {
    const query = (request.query ?? {}) as Record<string, unknown>;
    const fromAddress = emailDomain(query.emailaddress);
    const domain =
      (fromAddress && local.includes(fromAddress) ? fromAddress : null) ??
      domainFromHost(request.hostname, 'autoconfig', local, true);
    if (!domain) {
      throw new DomaindError('unknown_domain', 'this service has no mail settings for that domain', {
        served: local,
      });
    }
    reply.type('application/xml; charset=utf-8');
    return renderAutoconfig(domain, deps.mailHosts);
  };
  for (const path of AUTOCONFIG_PATHS) app.get(path, autoconfig);

  const autodiscover = async (request: FastifyRequest, reply: FastifyReply) => {
    reply.type('application/xml; charset=utf-8');
    const body = typeof request.body === 'string' ? request.body : '';
    let parsed: ReturnType<typeof parseAutodiscoverRequest>;
    try {
      parsed = parseAutodiscoverRequest(body);
    } catch (err) {
      if (!(err instanceof AutodiscoverRequestError)) throw err;
      reply.code(400);
      return renderAutodiscoverError(err.errorCode, err.message);
    }
    const domain = ascii(parsed.domain);
    if (!domain || !local.includes(domain)) {
      reply.code(404);
      return renderAutodiscoverError(500, `no mail settings for the domain of ${parsed.emailAddress}`);
    }
    return renderAutodiscover(parsed.emailAddress, deps.mailHosts);
  };
  for (const path of AUTODISCOVER_PATHS) app.post(path, autodiscover);
}
