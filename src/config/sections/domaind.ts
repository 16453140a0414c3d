// [domaind]: domain authorization service, MTA-STS policy, autoconfig.
import * as z from 'zod';
import { dnsName, filePath, host, hostPort, oneOf, port, positiveInt } from '../fields.ts';

export const domaindSchema = z.strictObject({
  host: host().default('127.0.0.1'),
  port: port().default(8081),
  resolver: hostPort(53).default('1.1.1.1:53'),
  mta_sts_mode: oneOf(['testing', 'enforce', 'none']).default('testing'),
  mta_sts_max_age_secs: positiveInt().default(604800),
  mta_sts_mx: z.array(dnsName(), { error: 'expected an array of MX host patterns' }).optional(),
  public_host: dnsName().optional(),
  dmarc_policy: oneOf(['none', 'quarantine', 'reject']).default('none'),
  tls_cert_file: filePath().optional(),
  tls_key_file: filePath().optional(),
});

export type DomaindInput = z.output<typeof domaindSchema>;
