// PDA derivation for the program, memoized: every derivation is a pure
// function of (seeds, bump) and each candidate needs an on-curve test, so
// repeated mailboxes, fromboxes and the postoffice cost a map lookup.
import bs58 from 'bs58';
import { toHex } from '../../bytes.ts';
import { createProgramAddress, findProgramAddress } from './curve.ts';

const MAX_ENTRIES = 100_000;

export interface Derived {
  address: string;
  bump: number;
}

export class Pdas {
  private readonly programKey: Uint8Array;
  private readonly found = new Map<string, Derived>();
  private readonly checked = new Map<string, string | null>();

  constructor(programId: string) {
    this.programKey = bs58.decode(programId);
  }

  /** Canonical address and bump for `seeds` (web3.js findProgramAddressSync). */
  find(seeds: Uint8Array[]): Derived {
    const key = cacheKey(seeds);
    const hit = this.found.get(key);
    if (hit) return hit;
    const [address, bump] = findProgramAddress(seeds, this.programKey);
    const derived = { address: bs58.encode(address), bump };
    remember(this.found, key, derived);
    return derived;
  }

  /** The address for `seeds` with a stored bump, or null when that bump gives no valid PDA. */
  withBump(seeds: Uint8Array[], bump: number): string | null {
    const key = `${cacheKey(seeds)}:${bump}`;
    const hit = this.checked.get(key);
    if (hit !== undefined) return hit;
    const raw = createProgramAddress(seeds, bump, this.programKey);
    const address = raw && bs58.encode(raw);
    remember(this.checked, key, address);
    return address;
  }
}

function cacheKey(seeds: Uint8Array[]): string {
  let key = '';
  for (const s of seeds) key += `${toHex(s)}.`;
  return key;
}

// A full cache starts over rather than tracking recency: hot keys refill at once.
function remember<V>(map: Map<string, V>, key: string, value: V): void {
  if (map.size >= MAX_ENTRIES) map.clear();
  map.set(key, value);
}
