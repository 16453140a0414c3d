// The mail program's default id: base58 of sha256("sealpost:mail-program:v1")
// (chain/protocol/schema.ts). Devnet deploys the program binary at this
// address (through the upgradeable loader; no keypair exists for it, see
// docs/devnet.md, Programs) unless `[chain] program_id` says otherwise; a real
// cluster deployment configures its own.
import { PROGRAM } from '../protocol/schema.ts';

export const DEFAULT_PROGRAM_ID: string = PROGRAM.address;
