// Inbound sender checks ([smtp] sender_auth). Returns results; the MX turns
// them into replies, records each evaluation (with the client's IP) and puts
// the Authentication-Results value (RFC 8601) in each delivered copy.
//   spf        — SPF at MAIL FROM: `fail` is refused (550 5.7.23), a DNS
//                temperror deferred (451 4.7.24), everything else accepted.
//                DKIM and DMARC are evaluated at the end of DATA for the
//                Authentication-Results field only; they never refuse.
//   dmarc-lite — SPF is only recorded at MAIL FROM; at end of DATA, DKIM and
//                DMARC are evaluated on the message and a DMARC `fail` under
//                `p=reject` is refused (550 5.7.1). Quarantine is accepted
//                (there is no spam folder on chain) and recorded.
//   none       — nothing is checked (tests, trusted relays); the field says
//                `none`.
// The result text is mailauth's own (`info` of each SPF, DKIM and DMARC
// result), joined the way mailauth's `authenticate` joins it; SPF is not
// evaluated twice: the MAIL FROM result is the one reported and the one
// DMARC aligns with.
import { promises as dns } from 'node:dns';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { dmarc as dmarcVerify } from 'mailauth/lib/dmarc/index.js';
import { spf } from 'mailauth/lib/spf/index.js';
import { foldLines } from 'nodemailer/lib/mime-funcs';
import type { SenderEvaluation } from '../../core/store/sender-evaluations-repo.ts';
import { SmtpReply } from '../../mail/smtp-error.ts';
import { noAuthResults } from '../../mail/trace.ts';

export type SenderAuthMode = 'spf' | 'dmarc-lite' | 'none';

export type DnsLookup = (name: string, rrtype: string) => Promise<string[][] | string[]>;

export type { SenderEvaluation };

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
  /** The domain checked (MAIL FROM's, or HELO's for the null sender). */
  domain?: string;
  /** mailauth's Authentication-Results text for this result (`spf=… (…) smtp.mailfrom=…`). */
  info?: string;
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
    const facts = { domain: r.domain, info: r.info };
    if (this.opts.mode === 'spf') {
      if (result === 'fail') {
        return {
          result,
          ...facts,
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
          ...facts,
          reply: new SmtpReply(451, '4.7.24', 'Temporary SPF validation error, try again later'),
        };
      }
    }
    return { result, ...facts };
  }

  /**
   * End of DATA: DKIM and DMARC on the message (every mode but `none`) and
   * the Authentication-Results value. Only under dmarc-lite does it resolve
   * with a reply to refuse with; under `spf` a verification error is written
   * as `dkim=temperror` instead of thrown.
   */
  async checkMessage(input: {
    ip: string;
    helo: string;
    mailFrom: string;
    message: Buffer;
    /** The MAIL FROM result: reported as is and used for DMARC alignment. */
    spf?: SpfOutcome;
  }): Promise<MessageVerdict> {
    const mta = this.opts.mta;
    if (this.opts.mode === 'none') return { evaluation: {}, authResults: noAuthResults(mta) };
    const spfInfo = input.spf?.info ?? `spf=${input.spf?.result ?? 'none'}`;
    let dkim: Awaited<ReturnType<typeof dkimVerify>>;
    let dmarc: Awaited<ReturnType<typeof dmarcVerify>> = false;
    try {
      dkim = await dkimVerify(input.message, { resolver: this.lookup, sender: input.mailFrom || undefined });
      if (dkim.headerFrom?.length) {
        dmarc = await dmarcVerify({
          headerFrom: dkim.headerFrom,
          spfDomains: input.spf?.result === 'pass' && input.spf.domain ? [input.spf.domain] : [],
          dkimDomains: dkim.results
            .filter((r) => r.status.result === 'pass')
            .map((r) => ({
              id: r.id,
              domain: r.signingDomain,
              aligned: r.status.aligned,
              underSized: r.status.underSized,
            })),
          resolver: this.lookup,
        });
      }
    } catch (err) {
      if (this.opts.mode === 'dmarc-lite') throw err;
      const failed = `dkim=temperror (${mta}: ${(err as Error).message.replace(/[()\\\r\n]/g, ' ')})`;
      return {
        evaluation: { dkim: 'temperror' },
        authResults: joinResults(mta, [failed, spfInfo]),
        error: err as Error,
      };
    }
    const results = [...dkim.results.map((r) => r.info), spfInfo, ...(dmarc ? [dmarc.info] : [])];
    const evaluation: Partial<SenderEvaluation> = {
      headerFrom: dmarc ? dmarc.domain : undefined,
      dkim: dkim.results.map((d) => d.status.result).join(',') || 'none',
      dmarc: dmarc ? dmarc.status.result : 'none',
      dmarcPolicy: dmarc ? dmarc.policy : undefined,
    };
    const authResults = joinResults(mta, results);
    if (
      this.opts.mode === 'dmarc-lite' &&
      dmarc &&
      dmarc.status.result === 'fail' &&
      dmarc.policy === 'reject'
    ) {
      return {
        evaluation,
        authResults,
        reply: new SmtpReply(550, '5.7.1', `Message rejected by the DMARC policy of ${dmarc.domain}`),
      };
    }
    return { evaluation, authResults };
  }
}

export interface MessageVerdict {
  evaluation: Partial<SenderEvaluation>;
  /** The Authentication-Results value: `<our hostname>; <results>`. */
  authResults: string;
  /** Set when the message must be refused (dmarc-lite only). */
  reply?: SmtpReply;
  /** A verification error that was reported as temperror instead of refusing (`spf` mode). */
  error?: Error;
}

/** `authserv-id;` then one result per folded line, as mailauth's `authenticate` writes it. */
function joinResults(mta: string, results: string[]): string {
  return `${mta};\r\n ${results.map((r) => foldLines(r, 160)).join(';\r\n ')}`;
}
