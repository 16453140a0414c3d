// PDA derivation for every account kind (docs/protocol.md seed table).
// Each returns web3.js's [address, canonical bump].
import type { PublicKey } from '@solana/web3.js';
import { SEEDS } from '../protocol/schema.ts';
import { type Key, keyBytes, Remembered, toPublicKey, u64Le, utf8 } from './bytes.ts';
import { findProgramAddress } from './curve.ts';
import { aliasNameHash, domainNameHash } from './hash.ts';

export type Pda = [PublicKey, number];

/** Seed prefixes, one per kind (chain/protocol/schema.ts). */
export const SEED = Object.fromEntries(Object.entries(SEEDS).map(([k, s]) => [k, s.prefix])) as {
  readonly [K in keyof typeof SEEDS]: (typeof SEEDS)[K]['prefix'];
};

// The seed lists of the core kinds, as the program hashes them.
export const seeds = {
  mailbox: (owner: Uint8Array): Uint8Array[] => [utf8(SEED.mailbox), owner],
  mailboxKey: (owner: Uint8Array): Uint8Array[] => [utf8(SEED.mailboxKey), owner],
  email: (recipient: Uint8Array, index: bigint): Uint8Array[] => [utf8(SEED.email), recipient, u64Le(index)],
  frombox: (fromHash: Uint8Array, recipient: Uint8Array): Uint8Array[] => [
    utf8(SEED.frombox),
    fromHash,
    recipient,
  ],
  alias: (nameHash: Uint8Array): Uint8Array[] => [utf8(SEED.alias), nameHash],
  domain: (nameHash: Uint8Array): Uint8Array[] => [utf8(SEED.domain), nameHash],
  postoffice: (): Uint8Array[] => [utf8(SEED.postoffice)],
};

// Derivation costs a hash and a curve check per bump tried (./curve.ts), and
// the pipeline derives the same mailbox, postoffice and domain addresses for
// every message: results are kept, keyed by program and seeds.
const found = new Remembered<Pda>(20_000);
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
const hex = (b: Uint8Array): string => {
  let out = '';
  for (const x of b) out += HEX[x];
  return out;
};

// A program's part of the key, per (cached, see toPublicKey) PublicKey.
const programHex = new WeakMap<PublicKey, string>();

function find(programId: Key, list: Uint8Array[]): Pda {
  const program = toPublicKey(programId);
  let head = programHex.get(program);
  if (head === undefined) {
    head = hex(program.toBytes());
    programHex.set(program, head);
  }
  return found.get(`${head}/${list.map(hex).join('/')}`, () => findProgramAddress(list, program));
}

function hash32(h: Uint8Array, what: string): Uint8Array {
  if (h.length !== 32) throw new TypeError(`${what} must be 32 bytes`);
  return h;
}

export function mailboxAddress(programId: Key, owner: Key): Pda {
  return find(programId, seeds.mailbox(keyBytes(owner)));
}

export function mailboxKeyAddress(programId: Key, owner: Key): Pda {
  return find(programId, seeds.mailboxKey(keyBytes(owner)));
}

export function emailAddress(programId: Key, recipient: Key, index: bigint): Pda {
  return find(programId, seeds.email(keyBytes(recipient), index));
}

export function fromboxAddress(programId: Key, fromHash: Uint8Array, recipient: Key): Pda {
  return find(programId, seeds.frombox(hash32(fromHash, 'fromHash'), keyBytes(recipient)));
}

/** The Alias PDA of an already normalized alias (see normalizeAlias). */
export function aliasAddress(programId: Key, normalizedAlias: string): Pda {
  return find(programId, seeds.alias(aliasNameHash(normalizedAlias)));
}

/** The MailDomain PDA of a domain name (lowercased here). */
export function domainAddress(programId: Key, domain: string): Pda {
  return find(programId, seeds.domain(domainNameHash(domain)));
}

export function postofficeAddress(programId: Key): Pda {
  return find(programId, seeds.postoffice());
}

export function aliasListingAddress(programId: Key, alias: Key): Pda {
  return find(programId, [utf8(SEED.aliasListing), keyBytes(alias)]);
}

export function domainListingAddress(programId: Key, domain: Key): Pda {
  return find(programId, [utf8(SEED.domainListing), keyBytes(domain)]);
}

export function aliasEscrowAddress(programId: Key, alias: Key): Pda {
  return find(programId, [utf8(SEED.aliasEscrow), keyBytes(alias)]);
}

export function aliasBidAddress(programId: Key, listing: Key, bidder: Key): Pda {
  return find(programId, [utf8(SEED.aliasBid), keyBytes(listing), keyBytes(bidder)]);
}

export function beaconAddress(programId: Key, owner: Key): Pda {
  return find(programId, [utf8(SEED.beacon), keyBytes(owner)]);
}

export function attestationAddress(programId: Key, domain: Key, wallet: Key): Pda {
  return find(programId, [utf8(SEED.attestation), keyBytes(domain), keyBytes(wallet)]);
}

export function reputationAddress(programId: Key, wallet: Key): Pda {
  return find(programId, [utf8(SEED.reputation), keyBytes(wallet)]);
}

export function recipientRuleAddress(programId: Key, owner: Key): Pda {
  return find(programId, [utf8(SEED.recipientRule), keyBytes(owner)]);
}

export function pinLeaseAddress(programId: Key, cidHash: Uint8Array, holder: Key): Pda {
  return find(programId, [utf8(SEED.pinLease), hash32(cidHash, 'cidHash'), keyBytes(holder)]);
}

export function pendingCloseAddress(programId: Key, wallet: Key): Pda {
  return find(programId, [utf8(SEED.pendingClose), keyBytes(wallet)]);
}

export function pendingDeactivationAddress(programId: Key, domain: Key): Pda {
  return find(programId, [utf8(SEED.pendingDeactivation), keyBytes(domain)]);
}

export function pendingReclaimAddress(programId: Key, domain: Key): Pda {
  return find(programId, [utf8(SEED.pendingReclaim), keyBytes(domain)]);
}
