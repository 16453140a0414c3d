import { ed25519 } from '@noble/curves/ed25519.js';
import { blake3 } from '@noble/hashes/blake3.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { Keypair, PublicKey } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { fromHash } from './hash.ts';
import {
  aliasAddress,
  aliasBidAddress,
  aliasEscrowAddress,
  aliasListingAddress,
  attestationAddress,
  beaconAddress,
  domainAddress,
  domainListingAddress,
  emailAddress,
  fromboxAddress,
  mailboxAddress,
  mailboxKeyAddress,
  pendingCloseAddress,
  pendingDeactivationAddress,
  pendingReclaimAddress,
  pinLeaseAddress,
  postofficeAddress,
  reputationAddress,
} from './pda.ts';
import { DEFAULT_PROGRAM_ID } from './program-id.ts';

const programId = new PublicKey(DEFAULT_PROGRAM_ID);
const enc = (s: string) => new TextEncoder().encode(s);

function onCurve(b: Uint8Array): boolean {
  try {
    ed25519.Point.fromBytes(b);
    return true;
  } catch {
    return false;
  }
}

// Solana's derivation written out: sha256(seeds ‖ bump ‖ program id ‖ "ProgramDerivedAddress"), first bump from 255 off the curve.
function byHand(seeds: Uint8Array[]): [string, number] {
  for (let bump = 255; bump >= 0; bump--) {
    const parts = [...seeds, Uint8Array.of(bump), programId.toBytes(), enc('ProgramDerivedAddress')];
    const h = sha256(Uint8Array.from(parts.flatMap((p) => Array.from(p))));
    if (!onCurve(h)) return [new PublicKey(h).toBase58(), bump];
  }
  throw new Error('no bump');
}

const show = ([pk, bump]: [PublicKey, number]): [string, number] => [pk.toBase58(), bump];

describe('PDA derivation', () => {
  const owner = Keypair.generate().publicKey;

  it('matches a hand computation for mailbox, email, frombox, alias and domain', () => {
    expect(show(mailboxAddress(programId, owner))).toEqual(byHand([enc('mailbox'), owner.toBytes()]));
    const index = Uint8Array.of(7, 1, 0, 0, 0, 0, 0, 0);
    expect(show(emailAddress(programId, owner, 263n))).toEqual(
      byHand([enc('email'), owner.toBytes(), index]),
    );
    const fh = fromHash('alice@example.org');
    expect(show(fromboxAddress(programId, fh, owner))).toEqual(byHand([enc('frombox'), fh, owner.toBytes()]));
    expect(show(aliasAddress(programId, 'bob'))).toEqual(byHand([enc('alias'), blake3(enc('bob'))]));
    expect(show(domainAddress(programId, 'Example.ORG'))).toEqual(
      byHand([enc('domain'), blake3(enc('example.org'))]),
    );
    expect(show(postofficeAddress(programId))).toEqual(byHand([enc('postoffice')]));
  });

  it('matches web3.js for the remaining kinds', () => {
    const k = Keypair.generate().publicKey;
    const h = new Uint8Array(32).fill(9);
    const find = (seeds: Uint8Array[]) => show(PublicKey.findProgramAddressSync(seeds, programId));
    expect(show(mailboxKeyAddress(programId, owner))).toEqual(find([enc('mailbox_key'), owner.toBytes()]));
    expect(show(aliasListingAddress(programId, k))).toEqual(find([enc('alias_listing'), k.toBytes()]));
    expect(show(domainListingAddress(programId, k))).toEqual(find([enc('domain_listing'), k.toBytes()]));
    expect(show(aliasEscrowAddress(programId, k))).toEqual(find([enc('alias_escrow'), k.toBytes()]));
    expect(show(aliasBidAddress(programId, k, owner))).toEqual(
      find([enc('alias_bid'), k.toBytes(), owner.toBytes()]),
    );
    expect(show(beaconAddress(programId, owner))).toEqual(find([enc('beacon'), owner.toBytes()]));
    expect(show(attestationAddress(programId, k, owner))).toEqual(
      find([enc('attestation'), k.toBytes(), owner.toBytes()]),
    );
    expect(show(reputationAddress(programId, owner))).toEqual(find([enc('reputation'), owner.toBytes()]));
    expect(show(pinLeaseAddress(programId, h, owner))).toEqual(find([enc('pin_lease'), h, owner.toBytes()]));
    expect(show(pendingCloseAddress(programId, owner))).toEqual(
      find([enc('pending_close'), owner.toBytes()]),
    );
    expect(show(pendingDeactivationAddress(programId, k))).toEqual(
      find([enc('pending_deactivation'), k.toBytes()]),
    );
    expect(show(pendingReclaimAddress(programId, k))).toEqual(find([enc('pending_reclaim'), k.toBytes()]));
  });

  it('accepts base58 strings for keys', () => {
    expect(show(mailboxAddress(DEFAULT_PROGRAM_ID, owner.toBase58()))).toEqual(
      show(mailboxAddress(programId, owner)),
    );
  });

  it('refuses hashes that are not 32 bytes', () => {
    expect(() => fromboxAddress(programId, new Uint8Array(31), owner)).toThrow(/32 bytes/);
  });
});
