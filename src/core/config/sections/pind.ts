// [pind]: the pin daemon (pin surface + /ipfs/{cid} gateway).
import * as z from 'zod';
import { filePath, host, port, positiveInt, text } from '../fields.ts';

export const pindSchema = z.strictObject({
  host: host()
    .default('127.0.0.1')
    .meta({ description: 'Pin surface bind address (`POST /pins`, `GET /pins/{cid}`).' }),
  port: port().default(8182).meta({ description: 'Pin surface port.' }),
  gateway_host: host()
    .default('127.0.0.1')
    .meta({ description: 'Gateway (`GET /ipfs/{cid}`) bind address.' }),
  gateway_port: port().default(8183).meta({
    description:
      'Gateway port. The same host and port as the pin surface means one listener serves both roles.',
  }),
  auth_token: text().optional().meta({
    description:
      'Bearer token required on the pin surface. The daemon refuses to start on a non-loopback bind without one.',
    default: 'none',
  }),
  max_pin_bytes: positiveInt()
    .default(32 * 1024 * 1024)
    .meta({ description: 'Larger uploads answer 413.', default: '`33554432` (32 MiB)' }),
  data_dir: filePath()
    .optional()
    .meta({ description: 'Where pinned objects are kept.', default: '`<data_dir>/pind`' }),
});

export type PindInput = z.output<typeof pindSchema>;
