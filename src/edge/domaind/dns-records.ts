// Every DNS record of the reference's "DNS records an operator publishes"
// table for this config: one set per local domain plus the records of the
// mail host itself (TLSA, the PTR reminder). Values come from the config and
// the key files: DKIM p= from the signing key, TLSA from the certificate, the
// MTA-STS id from the policy text, the authority TXT from the authority key.
import { createHash, createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Config } from '../../core/config/index.ts';
import { normalizeDomainName } from '../../core/dns/name.ts';
import { readKeypairFile } from '../../core/keys/keypair-file.ts';
import { authorityRecordName } from './authority-record.ts';
import { mtaStsDiscoveryRecord, mtaStsPolicyInput, renderMtaStsPolicy } from './mta-sts.ts';

export type RecordType = 'MX' | 'TXT' | 'TLSA' | 'SRV' | 'CNAME' | 'PTR';

export type RecordData =
  | { priority: number; exchange: string }
  | { text: string }
  | { usage: number; selector: number; matchingType: number; data: string }
  | { priority: number; weight: number; port: number; target: string }
  | { target: string };

export interface DnsRecordSpec {
  /** The local domain the record belongs to, or the mail host for host records. */
  zone: string;
  purpose: string;
  /** Owner name, lowercase, no trailing dot. */
  name: string;
  type: RecordType;
  /** Presentation form of the data (TXT without quotes). */
  value: string;
  data: RecordData;
  note?: string;
}

export interface DnsRecordsResult {
  records: DnsRecordSpec[];
  /** Records that could not be filled in, and why. */
  warnings: string[];
}

export interface BuildOptions {
  /** Also print `2 1 1` for the certificate's issuing CA. */
  tlsaCa?: boolean;
}

export const MX_PRIORITY = 10;
const fqdn = (name: string) => (name === '.' ? '.' : `${name}.`);

/** base64 of the public key's DER SubjectPublicKeyInfo, for DKIM p=. */
export function dkimPublicKey(keyFile: string): {
  p: string;
  bits: number | undefined;
  type: string | undefined;
} {
  const key = createPrivateKey(readFileSync(keyFile));
  const der = createPublicKey(key).export({ type: 'spki', format: 'der' });
  return {
    p: der.toString('base64'),
    bits: key.asymmetricKeyDetails?.modulusLength,
    type: key.asymmetricKeyType,
  };
}

/** The certificates of a PEM chain file, leaf first. */
export function readCertificateChain(file: string): X509Certificate[] {
  const pem = readFileSync(file, 'utf8');
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((b) => new X509Certificate(b));
}

/** sha256 of the certificate's DER SubjectPublicKeyInfo (TLSA selector 1, matching type 1). */
export function spkiSha256(cert: X509Certificate): string {
  return createHash('sha256')
    .update(cert.publicKey.export({ type: 'spki', format: 'der' }))
    .digest('hex');
}

function srvRecords(zone: string, config: Config): DnsRecordSpec[] {
  const h = config.mail_hosts;
  const protocols = [
    {
      label: 'IMAP',
      implicit: '_imaps',
      starttls: '_imap',
      enabled: h.imap_enabled,
      tls: h.imap_tls,
      host: h.imap_host,
      port: h.imap_port,
    },
    {
      label: 'POP3',
      implicit: '_pop3s',
      starttls: '_pop3',
      enabled: h.pop3_enabled,
      tls: h.pop3_tls,
      host: h.pop3_host,
      port: h.pop3_port,
    },
    {
      label: 'submission',
      implicit: '_submissions',
      starttls: '_submission',
      enabled: h.submission_enabled,
      tls: h.submission_tls,
      host: h.smtp_host,
      port: h.submission_port,
    },
  ];
  const out: DnsRecordSpec[] = [];
  for (const p of protocols) {
    for (const mode of ['implicit', 'starttls'] as const) {
      const offered = p.enabled && p.tls === mode;
      // RFC 6186 §4 / RFC 8314 §5.1: implicit TLS is preferred (priority 0), STARTTLS after it (10).
      const data = offered
        ? { priority: mode === 'implicit' ? 0 : 10, weight: 1, port: p.port, target: p.host }
        : { priority: 0, weight: 0, port: 0, target: '.' };
      out.push({
        zone,
        purpose: offered
          ? `client access: ${p.label} (${mode === 'implicit' ? 'implicit TLS' : 'STARTTLS'})`
          : `${p.label} ${mode === 'implicit' ? 'implicit TLS' : 'STARTTLS'} not offered`,
        name: `${p[mode]}._tcp.${zone}`,
        type: 'SRV',
        value: `${data.priority} ${data.weight} ${data.port} ${fqdn(data.target)}`,
        data,
      });
    }
  }
  return out;
}

export function buildDnsRecords(config: Config, opts: BuildOptions = {}): DnsRecordsResult {
  const warnings: string[] = [];
  const records: DnsRecordSpec[] = [];
  const mailHost = config.smtp.hostname;
  const serviceHost = config.domaind.public_host;
  const policy = renderMtaStsPolicy(mtaStsPolicyInput(config));
  const ruaAddress = config.spooler.dmarc_rua_ingest.address;
  const ruaDomain = ruaAddress.slice(ruaAddress.lastIndexOf('@') + 1);
  const tlsrptContact = config.spooler.tlsrpt.contact;

  let authority: string | null = null;
  if (config.chain.authority_key_file) {
    try {
      authority = readKeypairFile(config.chain.authority_key_file).address;
    } catch (err) {
      warnings.push(`authority TXT not printed: ${(err as Error).message}`);
    }
  } else {
    warnings.push('authority TXT not printed: [chain] authority_key_file is not configured');
  }

  const txt = (zone: string, purpose: string, name: string, text: string, note?: string): DnsRecordSpec => ({
    zone,
    purpose,
    name,
    type: 'TXT',
    value: text,
    data: { text },
    ...(note ? { note } : {}),
  });
  const cname = (zone: string, purpose: string, name: string, target: string): DnsRecordSpec => ({
    zone,
    purpose,
    name,
    type: 'CNAME',
    value: fqdn(target),
    data: { target },
    note: 'a CNAME, or A/AAAA records of the host serving `sealpost domaind`',
  });

  for (const raw of config.smtp.local_domains) {
    const domain = normalizeDomainName(raw).ascii;
    records.push({
      zone: domain,
      purpose: 'inbound mail',
      name: domain,
      type: 'MX',
      value: `${MX_PRIORITY} ${fqdn(mailHost)}`,
      data: { priority: MX_PRIORITY, exchange: mailHost },
      note: 'the target must have A/AAAA records, not a CNAME',
    });
    records.push(txt(domain, 'SPF', domain, 'v=spf1 mx -all', 'add ip4:/ip6:/include: as needed'));
    const dkims = config.spooler.dkim.filter((d) => d.domain === domain);
    if (dkims.length === 0)
      warnings.push(`no DKIM record for ${domain}: add a [[spooler.dkim]] entry for it`);
    for (const d of dkims) {
      try {
        const key = dkimPublicKey(d.key_file);
        if (key.type !== 'rsa') throw new Error(`it is a ${key.type} key; DKIM signing here is rsa-sha256`);
        if (key.bits !== undefined && key.bits < 2048)
          warnings.push(`DKIM key ${d.key_file} has ${key.bits} bits; use 2048`);
        records.push(txt(domain, 'DKIM', `${d.selector}._domainkey.${domain}`, `v=DKIM1; k=rsa; p=${key.p}`));
      } catch (err) {
        warnings.push(
          `DKIM record for ${d.selector}._domainkey.${domain} not printed: ${(err as Error).message}`,
        );
      }
    }
    records.push(
      txt(
        domain,
        'DMARC',
        `_dmarc.${domain}`,
        `v=DMARC1; p=${config.domaind.dmarc_policy}; rua=mailto:${ruaAddress}`,
      ),
    );
    if (ruaDomain !== domain) {
      // RFC 7489 §7.1: the rua domain must consent to reports about other domains.
      records.push(
        txt(
          domain,
          'DMARC external report authorization',
          `${domain}._report._dmarc.${ruaDomain}`,
          'v=DMARC1',
          `published in the zone of ${ruaDomain}`,
        ),
      );
    }
    records.push(
      txt(
        domain,
        'MTA-STS discovery',
        `_mta-sts.${domain}`,
        mtaStsDiscoveryRecord(policy),
        'the id follows the policy text',
      ),
    );
    records.push(cname(domain, 'MTA-STS policy host', `mta-sts.${domain}`, serviceHost));
    records.push(txt(domain, 'TLS-RPT', `_smtp._tls.${domain}`, `v=TLSRPTv1; rua=mailto:${tlsrptContact}`));
    records.push(...srvRecords(domain, config));
    records.push(cname(domain, 'autoconfig', `autoconfig.${domain}`, serviceHost));
    records.push(cname(domain, 'autodiscover', `autodiscover.${domain}`, serviceHost));
    if (authority)
      records.push(txt(domain, 'domain authority proof', authorityRecordName(domain), authority));
  }

  try {
    const chain = readCertificateChain(config.smtp.tls_cert_file);
    const [leaf, issuer] = chain;
    if (!leaf) throw new Error(`${config.smtp.tls_cert_file} holds no PEM certificate`);
    const tlsa = (usage: number, cert: X509Certificate, purpose: string): DnsRecordSpec => {
      const data = spkiSha256(cert);
      return {
        zone: mailHost,
        purpose,
        name: `_25._tcp.${mailHost}`,
        type: 'TLSA',
        value: `${usage} 1 1 ${data}`,
        data: { usage, selector: 1, matchingType: 1, data },
        note: 'the zone must be DNSSEC-signed',
      };
    };
    records.push(tlsa(3, leaf, 'DANE (this certificate)'));
    if (opts.tlsaCa) {
      if (issuer) records.push(tlsa(2, issuer, 'DANE (issuing CA)'));
      else
        warnings.push(
          `2 1 1 TLSA not printed: ${config.smtp.tls_cert_file} holds no issuing CA certificate after the leaf`,
        );
    }
  } catch (err) {
    warnings.push(`TLSA not printed: ${(err as Error).message}`);
  }

  records.push({
    zone: mailHost,
    purpose: 'PTR reminder',
    name: 'reverse of the outbound IP',
    type: 'PTR',
    value: fqdn(config.spooler.hostname),
    data: { target: config.spooler.hostname },
    note: `set at the hosting provider: the outbound IP's PTR must resolve to ${config.spooler.hostname} (the EHLO name)`,
  });
  return { records, warnings };
}
