// [domaind]: domain authorization service, MTA-STS policy, autoconfig.
import * as z from 'zod';
import { dnsName, filePath, host, hostPort, oneOf, port, positiveInt } from '../fields.ts';

export const domaindSchema = z.strictObject({
  host: host().default('127.0.0.1').meta({ description: 'Bind address.' }),
  port: port().default(8081).meta({ description: 'Bind port.' }),
  resolver: hostPort(53)
    .default('1.1.1.1:53')
    .meta({ description: 'Public resolver for `_solana.authority.{domain}` TXT lookups (`HOST[:PORT]`).' }),
  mta_sts_mode: oneOf(['testing', 'enforce', 'none'])
    .default('testing')
    .meta({ description: '`mode:` of the served MTA-STS policy: `"testing"`, `"enforce"` or `"none"`.' }),
  mta_sts_max_age_secs: positiveInt()
    .default(604800)
    .meta({ description: '`max_age:` of the policy.', default: '`604800` (1 week)' }),
  mta_sts_mx: z.array(dnsName(), { error: 'expected an array of MX host patterns' }).optional().meta({
    description: '`mx:` patterns; must cover every MX host.',
    default: 'derived: `[smtp.hostname]`',
  }),
  public_host: dnsName().optional().meta({
    description:
      'Host serving this service: the CNAME target `dns-records` prints for `mta-sts.`, `autoconfig.` and `autodiscover.<domain>`.',
    default: 'derived: `[smtp] hostname`',
  }),
  dmarc_policy: oneOf(['none', 'quarantine', 'reject'])
    .default('none')
    .meta({ description: '`p=` of the printed `_dmarc` records: `"none"`, `"quarantine"` or `"reject"`.' }),
  tls_cert_file: filePath().optional().meta({
    description:
      'With `tls_key_file`: serve HTTPS with this PEM chain (MTA-STS needs HTTPS; or put a TLS proxy in front).',
    default: 'none',
  }),
  tls_key_file: filePath().optional().meta({
    description: 'PEM private key for it; the two keys are set together or not at all.',
    default: 'none',
  }),
});

export type DomaindInput = z.output<typeof domaindSchema>;
