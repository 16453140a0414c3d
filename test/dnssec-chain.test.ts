// The DNSSEC chain verifier on its own: a root (RSASHA256), TLD
// (ECDSAP256SHA256) and domain (ED25519) hierarchy signed by the test helper,
// the canonical form (case, order, duplicates), and each way a link breaks,
// named by problem and link.
import type * as packet from 'dns-packet';
import { describe, expect, it } from 'vitest';
import { DnssecError, type DnssecProblem, verifyTxtChain } from '../src/dns/dnssec-chain.ts';
import {
  buildReclaimChain,
  makeHierarchyKeys,
  type ReclaimChainOptions,
  type TestRecord,
} from './helpers/dnssec-zones.ts';

const NOW = Math.floor(Date.now() / 1000);
const DOMAIN = 'example.org';
const TARGET = `_solana.authority.${DOMAIN}`;
const KEY = 'AuthorityKey1111111111111111111111111111111';

// One set of keys for every chain but the "other root" (RSA key generation is the slow part).
const KEYS = makeHierarchyKeys(DOMAIN);

function chain(opts: Partial<ReclaimChainOptions> = {}) {
  return buildReclaimChain({ domain: DOMAIN, txt: [KEY], now: NOW, keys: KEYS, ...opts });
}

function find(records: TestRecord[], name: string, type: string, covered?: string): TestRecord {
  const r = records.find(
    (x) =>
      x.name === name &&
      x.type === type &&
      (covered === undefined || (x.data as packet.RrsigData).typeCovered === covered),
  );
  if (!r) throw new Error(`no ${name} ${type} ${covered ?? ''} in the test chain`);
  return r;
}

function refusal(
  proof: Uint8Array,
  anchor: Uint8Array,
): { problem: DnssecProblem; link: string; zone?: string } {
  try {
    verifyTxtChain(proof, { anchorDigest: anchor, target: TARGET, now: NOW });
  } catch (err) {
    if (!(err instanceof DnssecError)) throw err;
    return { problem: err.problem, link: err.link, ...(err.zone ? { zone: err.zone } : {}) };
  }
  throw new Error('the chain was accepted');
}

describe('DNSSEC chain verification', () => {
  it('walks root → org → example.org to the TXT with RSASHA256, ECDSAP256SHA256 and ED25519', () => {
    const c = chain();
    const verified = verifyTxtChain(c.proof(), { anchorDigest: c.anchor, target: TARGET, now: NOW });
    expect(verified).toEqual({
      values: [KEY],
      zones: ['.', 'org.', 'example.org.'],
      anchorKeyTag: c.rootKsk.tag,
    });
  });

  it('checks the canonical form: owner and signer case, record order and duplicates do not matter', () => {
    const c = chain({ txt: ['second-value', 'first-value'] });
    const shuffled = [...c.records].reverse().map((r) => ({ ...r, name: r.name.toUpperCase() }));
    const txt = find(shuffled, TARGET.toUpperCase(), 'TXT');
    const sig = find(shuffled, TARGET.toUpperCase(), 'RRSIG', 'TXT');
    (sig.data as packet.RrsigData).signersName = 'Example.ORG';
    const verified = verifyTxtChain(c.proof([...shuffled, txt]), {
      anchorDigest: c.anchor,
      target: TARGET,
      now: NOW,
    });
    // Sorted by RDATA: the length octet first, then the bytes.
    expect(verified.values).toEqual(['first-value', 'second-value']);
  });

  it('names the link that fails', () => {
    const c = chain();
    const other = chain({ keys: makeHierarchyKeys(DOMAIN) });
    expect(refusal(c.proof(), other.anchor)).toEqual({
      problem: 'root_key_mismatch',
      link: '. DNSKEY',
      zone: '.',
    });

    const expired = chain({ windows: { txt: [NOW - 200, NOW - 100] } });
    expect(refusal(expired.proof(), expired.anchor)).toEqual({
      problem: 'signature_expired',
      link: `${TARGET}. TXT`,
      zone: 'example.org.',
    });
    const early = chain({ windows: { 'org-ds': [NOW + 100, NOW + 200] } });
    expect(refusal(early.proof(), early.anchor)).toMatchObject({
      problem: 'signature_not_yet_valid',
      link: 'org. DS',
    });

    const stray = chain({ strayDomainDs: true });
    expect(refusal(stray.proof(), stray.anchor)).toEqual({
      problem: 'ds_mismatch',
      link: 'example.org. DS',
      zone: 'org.',
    });
  });

  it('refuses tampered RDATA, a tampered DS digest and a tampered signature', () => {
    const c = chain();
    find(c.records, TARGET, 'TXT').data = [Buffer.from(KEY.replace('1', '2'))];
    expect(refusal(c.proof(), c.anchor)).toMatchObject({
      problem: 'bad_signature',
      link: `${TARGET}. TXT`,
    });

    const again = chain();
    const ds = find(again.records, DOMAIN, 'DS').data as packet.DsData;
    ds.digest = Buffer.from(ds.digest);
    ds.digest[0] = (ds.digest[0] as number) ^ 1;
    expect(refusal(again.proof(), again.anchor)).toMatchObject({
      problem: 'bad_signature',
      link: 'example.org. DS',
    });

    const third = chain();
    const sig = find(third.records, 'org', 'RRSIG', 'DNSKEY').data as packet.RrsigData;
    sig.signature = Buffer.from(sig.signature);
    sig.signature[5] = (sig.signature[5] as number) ^ 0xff;
    expect(refusal(third.proof(), third.anchor)).toMatchObject({
      problem: 'bad_signature',
      link: 'org. DNSKEY',
    });
  });

  it('refuses missing RRsets and signatures, wildcard label counts, unknown algorithms and key tags', () => {
    const c = chain();
    const without = (drop: (r: TestRecord) => boolean) => c.proof(c.records.filter((r) => !drop(r)));
    expect(
      refusal(
        without((r) => r.name === 'org' && r.type === 'DNSKEY'),
        c.anchor,
      ),
    ).toMatchObject({
      problem: 'missing_rrset',
      link: 'org. DNSKEY',
    });
    expect(
      refusal(
        without((r) => r.type === 'RRSIG' && (r.data as packet.RrsigData).typeCovered === 'TXT'),
        c.anchor,
      ),
    ).toEqual({ problem: 'missing_signature', link: `${TARGET}. TXT`, zone: 'example.org.' });

    const mutateTxtSig = (change: (s: packet.RrsigData) => void) => {
      const fresh = chain();
      change(find(fresh.records, TARGET, 'RRSIG', 'TXT').data as packet.RrsigData);
      return refusal(fresh.proof(), fresh.anchor);
    };
    expect(mutateTxtSig((s) => Object.assign(s, { labels: 3 }))).toMatchObject({ problem: 'label_count' });
    expect(mutateTxtSig((s) => Object.assign(s, { algorithm: 5 }))).toMatchObject({
      problem: 'unsupported_algorithm',
    });
    expect(mutateTxtSig((s) => Object.assign(s, { keyTag: (s.keyTag + 1) & 0xffff }))).toMatchObject({
      problem: 'no_matching_key',
    });
  });

  it('refuses bytes that are not a chain of uncompressed records', () => {
    const c = chain();
    const proof = c.proof();
    expect(refusal(new Uint8Array(0), c.anchor).problem).toBe('malformed');
    expect(refusal(proof.subarray(0, proof.length - 5), c.anchor).problem).toBe('malformed');
    // A second record whose owner is a compression pointer to the first one's name.
    const first = c.proof([c.records[0] as TestRecord]);
    const pointer = Buffer.concat([first, Buffer.from([0xc0, 0x00]), first.subarray(1)]);
    expect(refusal(pointer, c.anchor)).toMatchObject({
      problem: 'malformed',
      link: expect.stringMatching(/^record 2/),
    });
  });
});
