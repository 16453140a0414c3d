// `sealpost dns-records --check`: resolves each expected record and says
// whether what is published is ok, missing or different (or could not be
// checked because the resolver failed).
import { DnsLookupError, type DnsResolver } from '../../core/dns/resolver.ts';
import type { DnsRecordSpec, RecordData } from './dns-records.ts';

export type CheckStatus = 'ok' | 'missing' | 'different' | 'error';

export interface RecordCheck {
  record: DnsRecordSpec;
  status: CheckStatus;
  /** What the resolver returned, in presentation form. */
  found: string[];
  note?: string;
}

const host = (name: string) => (name === '' || name === '.' ? '.' : name.toLowerCase().replace(/\.$/, ''));
const fq = (name: string) => (name === '.' ? '.' : `${name}.`);

/** Tag-value records compare without the optional spaces around `;` and a trailing `;`. */
function normalizeTags(s: string): string {
  return s
    .replace(/\s*;\s*/g, ';')
    .replace(/;$/, '')
    .trim();
}

const TXT_PREFIX: [RegExp, string][] = [
  [/^v=spf1(\s|$)/i, 'v=spf1'],
  [/^v=DKIM1/i, 'v=DKIM1'],
  [/^v=DMARC1/i, 'v=DMARC1'],
  [/^v=STSv1/i, 'v=STSv1'],
  [/^v=TLSRPTv1/i, 'v=TLSRPTv1'],
];

async function empty<T>(p: Promise<T[]>): Promise<T[]> {
  try {
    return await p;
  } catch (err) {
    if (err instanceof DnsLookupError && err.isNegative) return [];
    throw err;
  }
}

function compareTxt(expected: string, found: string[]): { status: CheckStatus; relevant: string[] } {
  const prefix = TXT_PREFIX.find(([re]) => re.test(expected));
  // Other TXT records may share the name (site verifications): only the same kind counts.
  const relevant = prefix ? found.filter((f) => prefix[0].test(f.trim())) : found;
  if (relevant.length === 0) return { status: 'missing', relevant };
  if (prefix?.[1] === 'v=spf1') {
    // Extra mechanisms are the operator's to add; ours must all be there.
    const want = expected.split(/\s+/);
    const ok = relevant.some((f) => {
      const have = new Set(f.trim().toLowerCase().split(/\s+/));
      return want.every((t) => have.has(t.toLowerCase()) || (t === 'mx' && have.has('+mx')));
    });
    return { status: ok ? 'ok' : 'different', relevant };
  }
  const match = relevant.some((f) =>
    prefix ? normalizeTags(f) === normalizeTags(expected) : f.trim() === expected,
  );
  return { status: match ? 'ok' : 'different', relevant };
}

async function checkOne(resolver: DnsResolver, r: DnsRecordSpec): Promise<Omit<RecordCheck, 'record'>> {
  const d = r.data as RecordData & Record<string, unknown>;
  switch (r.type) {
    case 'MX': {
      const mx = await empty(resolver.mx(r.name));
      const found = mx.map((m) => `${m.priority} ${fq(host(m.exchange))}`);
      if (mx.length === 0) return { status: 'missing', found };
      const exchange = String(d.exchange);
      if (!mx.some((m) => host(m.exchange) === exchange && m.priority === d.priority))
        return { status: 'different', found };
      if ((await empty(resolver.cname(exchange))).length > 0) {
        return {
          status: 'different',
          found,
          note: `${exchange} is a CNAME; an MX target must have A/AAAA records`,
        };
      }
      return { status: 'ok', found };
    }
    case 'TXT': {
      const txt = await empty(resolver.txt(r.name));
      const { status, relevant } = compareTxt(String(d.text), txt);
      return { status, found: relevant.length ? relevant : txt };
    }
    case 'SRV': {
      const srv = await empty(resolver.srv(r.name));
      const found = srv.map((s) => `${s.priority} ${s.weight} ${s.port} ${fq(host(s.target))}`);
      if (srv.length === 0) return { status: 'missing', found };
      return { status: found.includes(r.value) ? 'ok' : 'different', found };
    }
    case 'TLSA': {
      const tlsa = await empty(resolver.tlsa(r.name));
      const found = tlsa.map((t) => `${t.usage} ${t.selector} ${t.matchingType} ${t.data}`);
      if (tlsa.length === 0) return { status: 'missing', found };
      return { status: found.includes(r.value) ? 'ok' : 'different', found };
    }
    case 'CNAME': {
      const target = String(d.target);
      const cname = await empty(resolver.cname(r.name));
      if (cname.length > 0) {
        const found = cname.map((c) => fq(host(c)));
        return { status: cname.some((c) => host(c) === target) ? 'ok' : 'different', found };
      }
      // A/AAAA instead of a CNAME is allowed when they are the service host's addresses.
      const addrs = [...(await empty(resolver.a(r.name))), ...(await empty(resolver.aaaa(r.name)))];
      if (addrs.length === 0) return { status: 'missing', found: [] };
      const want = new Set([...(await empty(resolver.a(target))), ...(await empty(resolver.aaaa(target)))]);
      return { status: addrs.every((a) => want.has(a)) ? 'ok' : 'different', found: addrs };
    }
    case 'PTR': {
      const name = String(d.target);
      const addrs = [...(await empty(resolver.a(name))), ...(await empty(resolver.aaaa(name)))];
      if (addrs.length === 0)
        return { status: 'missing', found: [], note: `${name} has no A/AAAA record to reverse` };
      const found: string[] = [];
      let ok = true;
      for (const ip of addrs) {
        const ptr = (await empty(resolver.reverse(ip))).map(host);
        found.push(`${ip} -> ${ptr.length ? ptr.map(fq).join(', ') : '(no PTR)'}`);
        if (!ptr.includes(name)) ok = false;
      }
      return {
        status: ok ? 'ok' : found.some((f) => f.endsWith('(no PTR)')) ? 'missing' : 'different',
        found,
      };
    }
  }
}

export async function checkDnsRecords(
  resolver: DnsResolver,
  records: DnsRecordSpec[],
): Promise<RecordCheck[]> {
  const out: RecordCheck[] = [];
  for (const record of records) {
    try {
      out.push({ record, ...(await checkOne(resolver, record)) });
    } catch (err) {
      const note = err instanceof DnsLookupError ? `${err.kind}: ${err.message}` : (err as Error).message;
      out.push({ record, status: 'error', found: [], note });
    }
  }
  return out;
}

export function renderCheckText(checks: RecordCheck[]): string {
  const width = Math.max(...checks.map((c) => c.record.name.length));
  const lines = checks.map((c) => {
    const head = `${c.status.padEnd(9)} ${c.record.type.padEnd(5)} ${c.record.name.padEnd(width)}  ${c.record.value}`;
    const extra = c.status === 'ok' ? '' : c.found.length ? `\n          found: ${c.found.join(' | ')}` : '';
    return `${head}${extra}${c.note ? `\n          note: ${c.note}` : ''}`;
  });
  const bad = checks.filter((c) => c.status !== 'ok').length;
  lines.push('', bad === 0 ? `all ${checks.length} records ok` : `${bad} of ${checks.length} records not ok`);
  return `${lines.join('\n')}\n`;
}
