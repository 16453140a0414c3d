// Inbound sender checks ([smtp] sender_auth). Returns results; the MX turns
// them into replies and records each evaluation (with the client's IP).
//   spf        — SPF at MAIL FROM: `fail` is refused (550 5.7.23), a DNS
//                temperror deferred (451 4.7.24), everything else accepted.
//   dmarc-lite — SPF is only recorded at MAIL FROM; at end of DATA, DKIM and
//                DMARC are evaluated on the message and a DMARC `fail` under
//                `p=reject` is refused (550 5.7.1). Quarantine is accepted
//                (there is no spam folder on chain) and recorded.
//   none       — nothing is checked (tests, trusted relays).
import { promises as dns } from 'node:dns';
import { authenticate } from 'mailauth';
import { spf } from 'mailauth/lib/spf/index.js';
import { SmtpReply } from './smtp-error.ts';

export type SenderAuthMode = 'spf' | 'dmarc-lite' | 'none';

export type DnsLookup = (name: string, rrtype: string) => Promise<string[][] | string[]>;

export interface SenderEvaluation {
  at: number;
  sourceIp: string;
  helo: string;
  mailFrom: string;
  spf: string;
  headerFrom?: string;
  dkim?: string;
  dmarc?: string;
  dmarcPolicy?: string;
  disposition: 'accept' | 'reject' | 'defer';
}

export interface SenderAuthOptions {
  mode: SenderAuthMode;
  /** Our hostname, used in the SPF comment. */
  mta: string;
  /** `host:port` resolvers; empty means the system's. */
  resolvers?: string[];
  lookup?: DnsLookup;
  timeoutMs?: number;
}

export function dnsLookupFor(resolvers: string[] = [], timeoutMs = 3000): DnsLookup {
  const r = new dns.Resolver({ timeout: timeoutMs, tries: 2 });
  if (resolvers.length > 0) r.setServers(resolvers);
  return (name, rrtype) => r.resolve(name, rrtype) as Promise<string[][] | string[]>;
}

export interface SpfOutcome {
  result: string;
  /** Set when the MX must answer MAIL FROM with this instead of 250. */
  reply?: SmtpReply;
}

export class SenderAuth {
  private readonly lookup: DnsLookup;

  constructor(private readonly opts: SenderAuthOptions) {
    this.lookup = opts.lookup ?? dnsLookupFor(opts.resolvers, opts.timeoutMs);
  }

  get mode(): SenderAuthMode {
    return this.opts.mode;
  }

  async checkMailFrom(input: { ip: string; helo: string; mailFrom: string }): Promise<SpfOutcome> {
    if (this.opts.mode === 'none') return { result: 'none' };
    const r = await spf({
      sender: input.mailFrom || undefined,
      ip: input.ip,
      helo: input.helo,
      mta: this.opts.mta,
      resolver: this.lookup,
    });
    const result = r.status.result;
    if (this.opts.mode === 'spf') {
      if (result === 'fail') {
        return {
          result,
          reply: new SmtpReply(
            550,
            '5.7.23',
            `SPF validation failed: ${input.ip} is not allowed to send for ${r.domain}`,
          ),
        };
      }
      if (result === 'temperror') {
        return {
          result,
          reply: new SmtpReply(451, '4.7.24', 'Temporary SPF validation error, try again later'),
        };
      }
    }
    return { result };
  }

  /** dmarc-lite at end of DATA; resolves with the reply to refuse with, if any. */
  async checkMessage(input: {
    ip: string;
    helo: string;
    mailFrom: string;
    message: Buffer;
  }): Promise<{ evaluation: Partial<SenderEvaluation>; reply?: SmtpReply }> {
    if (this.opts.mode !== 'dmarc-lite') return { evaluation: {} };
    const r = await authenticate(input.message, {
      ip: input.ip,
      helo: input.helo,
      sender: input.mailFrom || undefined,
      mta: this.opts.mta,
      resolver: this.lookup,
      disableArc: true,
      disableBimi: true,
    });
    const dmarc = r.dmarc || undefined;
    const dkim = r.dkim.results?.map((d) => d.status.result).join(',') || 'none';
    const evaluation: Partial<SenderEvaluation> = {
      headerFrom: dmarc?.domain,
      dkim,
      dmarc: dmarc ? dmarc.status.result : 'none',
      dmarcPolicy: dmarc?.policy,
    };
    if (dmarc && dmarc.status.result === 'fail' && dmarc.policy === 'reject') {
      return {
        evaluation,
        reply: new SmtpReply(550, '5.7.1', `Message rejected by the DMARC policy of ${dmarc.domain}`),
      };
    }
    return { evaluation };
  }
}
