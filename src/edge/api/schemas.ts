// JSON schemas shared by several routes (validation and OpenAPI alike).

export const WALLET_SCHEMA = {
  type: 'string',
  description: 'base58 ed25519 public key (32 bytes)',
  pattern: '^[1-9A-HJ-NP-Za-km-z]{32,44}$',
  examples: ['4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T'],
} as const;

export const WALLET_PARAMS = {
  type: 'object',
  required: ['wallet'],
  additionalProperties: false,
  properties: { wallet: WALLET_SCHEMA },
} as const;

export const CHALLENGE_SCHEMA = {
  type: 'object',
  required: ['nonce', 'expires_in'],
  additionalProperties: false,
  properties: {
    nonce: { type: 'string', description: 'sign these exact UTF-8 bytes' },
    expires_in: { type: 'integer', description: 'seconds' },
  },
} as const;

export const PIN_PROVIDER_STATUS_SCHEMA = {
  type: 'object',
  required: ['configured', 'kind'],
  additionalProperties: false,
  properties: {
    configured: { type: 'boolean' },
    kind: { type: ['string', 'null'], enum: ['hosted_jwt', 's3_bucket', 'remote', null] },
  },
} as const;
