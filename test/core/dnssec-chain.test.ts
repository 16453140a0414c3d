// The DNSSEC chain verifier on its own: a root (RSASHA256), TLD
// (ECDSAP256SHA256) and domain (ED25519) hierarchy signed by the test helper,
// the canonical form (case, order, duplicates), and each way a link breaks,
// named by problem and link.
import type * as packet from 'dns-packet';
import { describe, expect, it } from 'vitest';
import {
  type ChainRecord,
  DnssecError,
  type DnssecProblem,
  dsDigest,
  keyTag,
  parseChain,
  verifyRRsig,
  verifyTxtChain,
} from '../../src/core/dns/dnssec-chain.ts';
import {
  buildReclaimChain,
  encodeRecord,
  makeHierarchyKeys,
  type ReclaimChainOptions,
  type TestRecord,
} from '../support/dnssec-zones.ts';

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

  // Published examples signed by other implementations: the key tag, the DS
  // digest and the signed data (canonical form) must agree byte for byte.
  const rfcVectors = [
    {
      rfc: 'RFC 8080 §6.1 (erratum 4935), ED25519',
      zone: 'example.com',
      dnskey: { flags: 257, algorithm: 15, key: 'l02Woi0iS8Aa25FQkUd9RMzZHJpBoRQwAQEX1SxZJA4=' },
      tag: 3613,
      ds: '3aa5ab37efce57f737fc1627013fee07bdf241bd10f3b1964ab55c78e79a304b',
      set: { name: 'example.com', type: 'MX', data: { preference: 10, exchange: 'mail.example.com' } },
      sig: {
        labels: 2,
        expiration: 1440021600,
        inception: 1438207200,
        signature: 'oL9krJun7xfBOIWcGHi7mag5/hdZrKWw15jPGrHpjQeRAvTdszaPD+QLs3fx8A4M3e23mRZ9VrbpMngwcrqNAg==',
      },
    },
    {
      rfc: 'RFC 6605 §6.1, ECDSAP256SHA256',
      zone: 'example.net',
      dnskey: {
        flags: 257,
        algorithm: 13,
        key: 'GojIhhXUN/u4v54ZQqGSnyhWJwaubCvTmeexv7bR6edbkrSqQpF64cYbcB7wNcP+e+MAnLr+Wi9xMWyQLc8NAA==',
      },
      tag: 55648,
      ds: 'b4c8c1fe2e7477127b27115656ad6256f424625bf5c1e2770ce6d6e37df61d17',
      set: { name: 'www.example.net', type: 'A', data: '192.0.2.1' },
      sig: {
        labels: 3,
        expiration: 1284026679,
        inception: 1281607479,
        signature: 'qx6wLYqmh+l9oCKTN6qIc+bw6ya+KJ8oMz0YP107epXAyGmt+3SNruPFKG7tZoLBLlUzGGus7ZwmwWep666VCw==',
      },
    },
  ] as const;

  for (const v of rfcVectors) {
    it(`agrees with the ${v.rfc} example`, () => {
      const dnskey: TestRecord = {
        name: v.zone,
        type: 'DNSKEY',
        ttl: 3600,
        data: {
          flags: v.dnskey.flags,
          algorithm: v.dnskey.algorithm,
          key: Buffer.from(v.dnskey.key, 'base64'),
        },
      };
      const rrsig = (signature: Buffer): TestRecord => ({
        name: v.set.name,
        type: 'RRSIG',
        ttl: 3600,
        data: {
          typeCovered: v.set.type,
          algorithm: v.dnskey.algorithm,
          labels: v.sig.labels,
          originalTTL: 3600,
          expiration: v.sig.expiration,
          inception: v.sig.inception,
          keyTag: v.tag,
          signersName: v.zone,
          signature,
        },
      });
      const signature = Buffer.from(v.sig.signature, 'base64');
      const wire = (sig: Buffer) =>
        parseChain(
          Buffer.concat([dnskey, { ...v.set, ttl: 3600 } as TestRecord, rrsig(sig)].map(encodeRecord)),
        );
      const [key, record, sig] = wire(signature) as [ChainRecord, ChainRecord, ChainRecord];
      expect(keyTag(key.rdata)).toBe(v.tag);
      expect(dsDigest(v.zone, key.rdata).toString('hex')).toBe(v.ds);
      const during = v.sig.inception + 1000;
      expect(() => verifyRRsig([record], sig, [key], v.zone, during)).not.toThrow();

      expect(() => verifyRRsig([record], sig, [key], v.zone, v.sig.expiration + 1)).toThrow(
        expect.objectContaining({ problem: 'signature_expired' }),
      );
      const flipped = Buffer.from(signature);
      flipped[0] = (flipped[0] as number) ^ 1;
      const [, , bad] = wire(flipped) as [ChainRecord, ChainRecord, ChainRecord];
      expect(() => verifyRRsig([record], bad, [key], v.zone, during)).toThrow(
        expect.objectContaining({ problem: 'bad_signature' }),
      );
    });
  }
});
