// The mail program's default id: base58 of sha256("sealpost:mail-program:v1").
// Devnet deploys the program binary at this address (through the upgradeable
// loader; no keypair exists for it, see docs/devnet.md, Programs) unless
// `[chain] program_id` says otherwise; a real cluster deployment configures its own.
export const DEFAULT_PROGRAM_ID = 'FAiWAmxJdi1NV9geyDCRr6RegVEMLpS2ercAe1CQy8Mp';
