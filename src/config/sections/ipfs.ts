// [ipfs]: the operator pin (pind or kubo) and the gateway readers use.
import * as z from 'zod';
import { httpUrl, oneOf, positiveInt, text } from '../fields.ts';

export const ipfsSchema = z.strictObject({
  operator: oneOf(['pind', 'kubo']).default('pind'),
  pind_url: httpUrl().default('http://127.0.0.1:8182'),
  pind_auth_token: text().optional(),
  kubo_rpc_url: httpUrl().default('http://127.0.0.1:5001'),
  gateway_url: httpUrl().default('http://127.0.0.1:8183'),
  max_pin_bytes: positiveInt().default(32 * 1024 * 1024),
  recipient_pin_timeout_secs: positiveInt().default(30),
});

export type IpfsInput = z.output<typeof ipfsSchema>;
