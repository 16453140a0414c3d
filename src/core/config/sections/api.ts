// [api]: the account API (/v1, /v1/admin) and the key files it needs.
import * as z from 'zod';
import { bool, filePath, host, httpUrl, ipOrCidr, nonNegativeInt, port, positiveInt } from '../fields.ts';

export const apiSchema = z.strictObject({
  host: host().default('127.0.0.1').meta({ description: 'Bind address.' }),
  port: port().default(8080).meta({ description: 'Bind port.' }),
  public_url: httpUrl().optional().meta({
    description: 'The `{base_url}` clients use.',
    default: 'derived: `http://<host>:<port>` (`[smtp] hostname` for wildcard binds)',
  }),
  open_registration: bool().default(true).meta({
    description:
      '`POST /v1/account` by any logged-in wallet. `false`: only admins and deliveries create accounts.',
  }),
  admin_token_file: filePath().optional().meta({
    description:
      'Bearer token for `/v1/admin`, compared in constant time. `sealpost dev` writes it. Read again at each [reload](#reload-sighup-sealpost-reload) of `sealpost serve`.',
    default: '`<data_dir>/admin.token`',
  }),
  credential_key_file: filePath().optional().meta({
    description:
      "The server-wide credential key: exactly 32 raw bytes, AES-256-GCM key sealing mail passwords and pin-provider credentials (the reference's `credential_key_file`). `sealpost keygen credential-key FILE` makes one.",
    default: '`<data_dir>/credential.key`',
  }),
  jwt_secret_file: filePath()
    .optional()
    .meta({ description: 'Optional key (≥ 32 bytes) for signing login JWTs.', default: 'none' }),
  max_body_bytes: positiveInt().default(65536).meta({
    description: 'Largest request body the API reads; a bigger one answers 413 `payload_too_large`.',
    default: '`65536` (64 KiB)',
  }),
  rate_limit_ip_per_min: nonNegativeInt().default(600).meta({
    description:
      'Requests per minute from one client IP (all routes); over it: 429 `rate_limited` with `retry-after`. `0` turns it off.',
  }),
  rate_limit_wallet_per_min: nonNegativeInt().default(300).meta({
    description:
      'Requests per minute by one logged-in wallet (routes with a JWT). `0` turns it off. Windows live in Redis (`docs/api.md`).',
  }),
  /**
   * Reverse proxies in front of the API (addresses or CIDR networks). A
   * request from one of them is attributed to the client its
   * X-Forwarded-For names (per-IP limits, audit); from anyone else the
   * header is ignored. Empty: the socket address always counts.
   */
  trusted_proxies: z
    .array(ipOrCidr(), { error: 'expected a list of IP addresses or CIDR networks' })
    .default([])
    .meta({
      description:
        'Reverse proxies in front of the API, as IP addresses or CIDR networks (`["127.0.0.1", "10.0.0.0/8"]`). A request from one of them counts as coming from the client its `X-Forwarded-For` names (per-IP rate limit, audit records); the header is ignored from anyone else. Empty: the socket address always counts.',
    }),
  webmail_dir: filePath().optional().meta({
    description:
      'Directory of the built webmail (`npm run build:webmail`), served at `/` next to the API (`docs/webmail.md`). Without an `index.html` there, `/` answers 503 saying how to build it.',
    default: "the package's `webmail/dist`",
  }),
});

export type ApiInput = z.output<typeof apiSchema>;
