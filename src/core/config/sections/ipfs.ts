// [ipfs]: the operator pin (pind or kubo) and the gateway readers use.
import * as z from 'zod';
import { httpUrl, oneOf, positiveInt, text } from '../fields.ts';

export const ipfsSchema = z.strictObject({
  operator: oneOf(['pind', 'kubo'])
    .default('pind')
    .meta({ description: 'Operator pin backend: `"pind"` (Sealpost\'s pin daemon) or `"kubo"` (Kubo RPC).' }),
  pind_url: httpUrl()
    .default('http://127.0.0.1:8182')
    .meta({ description: 'Pin surface of the pin daemon (operator = pind).' }),
  pind_auth_token: text()
    .optional()
    .meta({ description: 'Bearer token sent to the pin daemon.', default: 'derived: `[pind] auth_token`' }),
  kubo_rpc_url: httpUrl()
    .default('http://127.0.0.1:5001')
    .meta({ description: 'Kubo RPC API (operator = kubo).' }),
  gateway_url: httpUrl().default('http://127.0.0.1:8183').meta({
    description: "IPFS gateway used to read bodies (`GET /ipfs/{cid}`); with kubo set it to kubo's gateway.",
  }),
  max_pin_bytes: positiveInt()
    .default(32 * 1024 * 1024)
    .meta({
      description: 'Largest sealed object the server pins; larger ones fail before any upload.',
      default: '`33554432` (32 MiB)',
    }),
  recipient_pin_timeout_secs: positiveInt()
    .default(30)
    .meta({ description: "Budget for one best-effort pin to a recipient's own provider." }),
});

export type IpfsInput = z.output<typeof ipfsSchema>;
