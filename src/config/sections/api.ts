// [api]: the account API (/v1, /v1/admin) and the key files it needs.
import * as z from 'zod';
import { bool, filePath, host, httpUrl, ipOrCidr, nonNegativeInt, port, positiveInt } from '../fields.ts';

export const apiSchema = z.strictObject({
  host: host().default('127.0.0.1'),
  port: port().default(8080),
  public_url: httpUrl().optional(),
  open_registration: bool().default(true),
  admin_token_file: filePath().optional(),
  credential_key_file: filePath().optional(),
  jwt_secret_file: filePath().optional(),
  max_body_bytes: positiveInt().default(65536),
  rate_limit_ip_per_min: nonNegativeInt().default(600),
  rate_limit_wallet_per_min: nonNegativeInt().default(300),
  /**
   * Reverse proxies in front of the API (addresses or CIDR networks). A
   * request from one of them is attributed to the client its
   * X-Forwarded-For names (per-IP limits, audit); from anyone else the
   * header is ignored. Empty: the socket address always counts.
   */
  trusted_proxies: z
    .array(ipOrCidr(), { error: 'expected a list of IP addresses or CIDR networks' })
    .default([]),
  webmail_dir: filePath().optional(),
});

export type ApiInput = z.output<typeof apiSchema>;
