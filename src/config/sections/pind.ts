// [pind]: the pin daemon (pin surface + /ipfs/{cid} gateway).
import * as z from 'zod';
import { filePath, host, port, positiveInt, text } from '../fields.ts';

export const pindSchema = z.strictObject({
  host: host().default('127.0.0.1'),
  port: port().default(8182),
  gateway_host: host().default('127.0.0.1'),
  gateway_port: port().default(8183),
  auth_token: text().optional(),
  max_pin_bytes: positiveInt().default(32 * 1024 * 1024),
  data_dir: filePath().optional(),
});

export type PindInput = z.output<typeof pindSchema>;
