// Verifies a self-contained DNSSEC authentication chain, offline: the
// serialized form of RFC 9102 §2.3 (uncompressed wire-format resource
// records, concatenated; RRSIGs next to what they cover, in any order) from
// the root zone's DNSKEY set down to one TXT RRset. The trust anchor is the
// SHA-256 DS digest (digest type 2) of a root key-signing key, as the IANA
// root anchor publishes it and as the Postoffice's `root_ksk` holds it.
//
// What is checked (RFC 4034/4035): a root DNSKEY whose DS digest is the
// anchor signs the root DNSKEY set; from each verified zone, a DS RRset
// signed by that zone delegates to the next zone toward the target, whose
// DNSKEY set holds a key matching one of those DS records (key tag,
// algorithm, digest) and is signed by it; the target TXT RRset is signed by
// the last zone. Every RRSIG: its signer is the zone whose keys sign it, its
// label count is the owner's (no wildcard expansion), its inception ≤ now ≤
// expiration (RFC 1982 serial arithmetic), its key tag and algorithm name a
// zone key (flags bit 7 set, not revoked), and the signature verifies over the
// canonical form of RFC 4034 §6 (lowercased owner, original TTL, RRs sorted by
// RDATA, duplicates removed). Algorithms: RSASHA256 (8), ECDSAP256SHA256 (13),
// ED25519 (15); DS digests SHA-256 (2) and SHA-384 (4). Not supported:
// denial of existence (NSEC/NSEC3, so no wildcard answers and no insecure
// delegations), CNAME/DNAME on the path, other algorithms and digest types.
// Records the walk does not need are ignored.
import { createHash, createPublicKey, verify as cryptoVerify, type KeyObject } from 'node:crypto';
import * as packet from 'dns-packet';

export type DnssecProblem =
  | 'malformed'
  | 'root_key_mismatch'
  | 'missing_rrset'
  | 'missing_signature'
  | 'no_matching_key'
  | 'unsupported_algorithm'
  | 'label_count'
  | 'signature_expired'
  | 'signature_not_yet_valid'
  | 'bad_signature'
  | 'ds_mismatch';

/** A link of the chain that did not hold: `link` names the RRset ("org. DS"), `zone` the zone checking it. */
export class DnssecError extends Error {
  constructor(
    readonly problem: DnssecProblem,
    readonly link: string,
    message: string,
    readonly zone?: string,
  ) {
    super(message);
    this.name = 'DnssecError';
  }
}

/** dns-packet's record-level codecs, which its type declarations do not list. */
interface RecordCodecs {
  answer: { decode(buf: Buffer, offset?: number): packet.Answer & { class?: string } } & {
    decode: { bytes: number };
  };
  name: { encode(name: string): Buffer; decode(buf: Buffer, offset?: number): string } & {
    encode: { bytes: number };
    decode: { bytes: number };
  };
}
const codecs = packet as unknown as RecordCodecs;

/** One record as read from the chain; `rdata` is the RDATA exactly as sent. */
export interface ChainRecord {
  /** Lowercased, no trailing dot; the root is ".". */
  owner: string;
  type: string;
  ttl: number;
  rdata: Buffer;
  data: unknown;
}

const ZONE_KEY_FLAG = 0x0100;
const REVOKE_FLAG = 0x0080;
const DIGESTS: Readonly<Record<number, string>> = { 2: 'sha256', 4: 'sha384' };
export const DNSSEC_ALGORITHMS: Readonly<Record<number, string>> = {
  8: 'RSASHA256',
  13: 'ECDSAP256SHA256',
  15: 'ED25519',
};

export function labelCount(name: string): number {
  return name === '.' ? 0 : name.split('.').length;
}

function fqdn(name: string): string {
  return name === '.' ? '.' : `${name}.`;
}

/** True when `name` equals `zone` or lies below it (lowercased, the root is "."). */
function isAtOrBelow(name: string, zone: string): boolean {
  return zone === '.' || name === zone || name.endsWith(`.${zone}`);
}

/** The uncompressed wire form of a name, lowercased (RFC 4034 §6.2). */
export function canonicalName(name: string): Buffer {
  return wireName(name.toLowerCase());
}

/** The uncompressed wire form of a name as written (dns-packet may over-allocate its buffer). */
function wireName(name: string): Buffer {
  const buf = codecs.name.encode(name);
  return buf.subarray(0, codecs.name.encode.bytes);
}

/** Parses the concatenated records; refuses compression, non-IN classes and trailing bytes. */
export function parseChain(bytes: Uint8Array): ChainRecord[] {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const records: ChainRecord[] = [];
  let offset = 0;
  while (offset < buf.length) {
    const at = `record ${records.length + 1} (byte ${offset})`;
    let decoded: packet.Answer & { class?: string; ttl?: number };
    let size: number;
    let nameBytes: number;
    let owner: string;
    try {
      owner = codecs.name.decode(buf, offset);
      nameBytes = codecs.name.decode.bytes;
      decoded = codecs.answer.decode(buf, offset);
      size = codecs.answer.decode.bytes;
    } catch (err) {
      throw new DnssecError('malformed', at, `${at} is not a DNS resource record: ${(err as Error).message}`);
    }
    // Uncompressed ASCII names only: the name must re-encode to the bytes sent.
    const raw = buf.subarray(offset, offset + nameBytes);
    if (!wireName(owner).equals(raw)) {
      throw new DnssecError('malformed', at, `${at}: owner names must be uncompressed ASCII labels`);
    }
    const rdStart = offset + nameBytes + 10;
    if (offset + size > buf.length || buf.readUInt16BE(rdStart - 2) !== offset + size - rdStart) {
      throw new DnssecError('malformed', at, `${at}: its RDATA length does not match the record`);
    }
    if (decoded.type === 'OPT' || decoded.class !== 'IN') {
      throw new DnssecError('malformed', at, `${at}: only class IN records belong in a chain`);
    }
    records.push({
      owner: owner.toLowerCase(),
      type: decoded.type,
      ttl: decoded.ttl ?? 0,
      rdata: Buffer.from(buf.subarray(rdStart, offset + size)),
      data: (decoded as { data: unknown }).data,
    });
    offset += size;
  }
  if (records.length === 0) throw new DnssecError('malformed', 'chain', 'the DNSSEC chain is empty');
  return records;
}

/** RFC 4034 Appendix B. */
export function keyTag(dnskeyRdata: Uint8Array): number {
  let ac = 0;
  for (let i = 0; i < dnskeyRdata.length; i++)
    ac += i & 1 ? (dnskeyRdata[i] as number) : (dnskeyRdata[i] as number) << 8;
  ac += (ac >> 16) & 0xffff;
  return ac & 0xffff;
}

/** The DS digest of a DNSKEY (RFC 4034 §5.1.4): hash(owner wire form | DNSKEY RDATA). */
export function dsDigest(owner: string, dnskeyRdata: Uint8Array, digestType = 2): Buffer {
  const alg = DIGESTS[digestType];
  if (!alg) throw new Error(`DS digest type ${digestType} is not supported`);
  return createHash(alg).update(canonicalName(owner)).update(dnskeyRdata).digest();
}

interface ZoneKey {
  tag: number;
  flags: number;
  algorithm: number;
  key: Buffer;
  rdata: Buffer;
}

function zoneKeys(set: ChainRecord[]): ZoneKey[] {
  return set.flatMap((r) => {
    const d = r.data as packet.DnskeyData;
    if ((d.flags & ZONE_KEY_FLAG) === 0 || (d.flags & REVOKE_FLAG) !== 0) return [];
    return [{ tag: keyTag(r.rdata), flags: d.flags, algorithm: d.algorithm, key: d.key, rdata: r.rdata }];
  });
}

const b64url = (b: Buffer) => b.toString('base64url');

/** A DNSKEY's public key as node:crypto's KeyObject, or null when it cannot be one. */
function publicKey(algorithm: number, key: Buffer): KeyObject | null {
  try {
    if (algorithm === 8) {
      // RFC 3110: exponent length (1 octet, or 0 then 2 octets), exponent, modulus.
      const long = key[0] === 0;
      const expLen = long ? key.readUInt16BE(1) : (key[0] as number);
      const start = long ? 3 : 1;
      const e = key.subarray(start, start + expLen);
      const n = key.subarray(start + expLen);
      if (e.length === 0 || n.length * 8 < 1024) return null;
      return createPublicKey({ key: { kty: 'RSA', n: b64url(n), e: b64url(e) }, format: 'jwk' });
    }
    if (algorithm === 13) {
      if (key.length !== 64) return null;
      const [x, y] = [key.subarray(0, 32), key.subarray(32)];
      return createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: b64url(x), y: b64url(y) }, format: 'jwk' });
    }
    if (algorithm === 15) {
      if (key.length !== 32) return null;
      return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: b64url(key) }, format: 'jwk' });
    }
  } catch {
    return null;
  }
  return null;
}

function signatureValid(algorithm: number, key: KeyObject, data: Buffer, signature: Buffer): boolean {
  if (algorithm === 8) return cryptoVerify('sha256', data, key, signature);
  if (algorithm === 13) return cryptoVerify('sha256', data, { key, dsaEncoding: 'ieee-p1363' }, signature);
  return cryptoVerify(null, data, key, signature);
}

/** An RRSIG time field as seconds since the epoch, the one nearest `now` (RFC 1982). */
function serialTime(serial: number, now: number): number {
  return now + ((serial - now) | 0);
}

/** RFC 4034 §3.1.8.1: the RRSIG RDATA without its signature, then the RRset in canonical form. */
export function signedData(sig: ChainRecord, set: ChainRecord[]): Buffer {
  const s = sig.data as packet.RrsigData;
  const head = Buffer.concat([sig.rdata.subarray(0, 18), canonicalName(s.signersName)]);
  const owner = canonicalName(set[0]?.owner ?? '.');
  const fixed = Buffer.alloc(8);
  fixed.writeUInt16BE(typeCode(sig), 0);
  fixed.writeUInt16BE(1, 2);
  fixed.writeUInt32BE(s.originalTTL, 4);
  const parts = canonicalRdata(set).map((rdata) => {
    const len = Buffer.alloc(2);
    len.writeUInt16BE(rdata.length, 0);
    return Buffer.concat([owner, fixed, len, rdata]);
  });
  return Buffer.concat([head, ...parts]);
}

/** The RRset's RDATA in canonical order, duplicates removed (RFC 4034 §6.3). */
function canonicalRdata(set: ChainRecord[]): Buffer[] {
  return [...new Map(set.map((r) => [r.rdata.toString('hex'), r.rdata])).values()].sort(Buffer.compare);
}

/** The type covered, as the RRSIG's first two RDATA octets say. */
function typeCode(sig: ChainRecord): number {
  return sig.rdata.readUInt16BE(0);
}

interface Zone {
  name: string;
  keys: ZoneKey[];
}

const RANK: Readonly<Record<DnssecProblem, number>> = {
  malformed: 0,
  root_key_mismatch: 0,
  missing_rrset: 0,
  missing_signature: 0,
  ds_mismatch: 0,
  no_matching_key: 1,
  unsupported_algorithm: 2,
  label_count: 3,
  signature_not_yet_valid: 4,
  signature_expired: 4,
  bad_signature: 5,
};

function checkSignature(
  sig: ChainRecord,
  set: ChainRecord[],
  zone: Zone,
  now: number,
  link: string,
): DnssecError | null {
  const s = sig.data as packet.RrsigData;
  const fail = (problem: DnssecProblem, message: string) =>
    new DnssecError(problem, link, `${link}: ${message}`, fqdn(zone.name));
  if (!DNSSEC_ALGORITHMS[s.algorithm]) {
    return fail(
      'unsupported_algorithm',
      `its RRSIG uses algorithm ${s.algorithm}; supported are 8, 13 and 15`,
    );
  }
  const owner = set[0]?.owner ?? '.';
  if (s.labels !== labelCount(owner)) {
    return fail(
      'label_count',
      `its RRSIG has label count ${s.labels} but the owner has ${labelCount(owner)} labels (wildcard answers are not supported)`,
    );
  }
  const keys = zone.keys.filter((k) => k.tag === s.keyTag && k.algorithm === s.algorithm);
  if (keys.length === 0) {
    return fail(
      'no_matching_key',
      `its RRSIG names key tag ${s.keyTag} (algorithm ${s.algorithm}), which is not a verified key of ${fqdn(zone.name)}`,
    );
  }
  const inception = serialTime(s.inception, now);
  const expiration = serialTime(s.expiration, now);
  if (now > expiration) {
    return fail('signature_expired', `its RRSIG expired at ${new Date(expiration * 1000).toISOString()}`);
  }
  if (now < inception) {
    return fail(
      'signature_not_yet_valid',
      `its RRSIG is valid only from ${new Date(inception * 1000).toISOString()}`,
    );
  }
  const data = signedData(sig, set);
  for (const k of keys) {
    const key = publicKey(k.algorithm, k.key);
    if (!key)
      return fail(
        'unsupported_algorithm',
        `DNSKEY ${k.tag} is not a usable ${DNSSEC_ALGORITHMS[k.algorithm]} key`,
      );
    if (signatureValid(k.algorithm, key, data, s.signature)) return null;
  }
  return fail('bad_signature', `its RRSIG by key ${s.keyTag} does not verify over the records as sent`);
}

/** Verifies one RRSIG over `set` with the zone's DNSKEY records; throws DnssecError when it does not hold. */
export function verifyRRsig(
  set: ChainRecord[],
  sig: ChainRecord,
  dnskeys: ChainRecord[],
  zone: string,
  now: number,
): void {
  const owner = set[0]?.owner ?? '.';
  const signer = (sig.data as packet.RrsigData).signersName.toLowerCase();
  if (signer !== zone) {
    throw new DnssecError(
      'missing_signature',
      `${fqdn(owner)} ${set[0]?.type}`,
      `the RRSIG is by ${signer}, not by ${fqdn(zone)}`,
    );
  }
  const failure = checkSignature(
    sig,
    set,
    { name: zone, keys: zoneKeys(dnskeys) },
    now,
    `${fqdn(owner)} ${set[0]?.type}`,
  );
  if (failure) throw failure;
}

class ChainIndex {
  private readonly sets = new Map<string, ChainRecord[]>();
  private readonly sigs = new Map<string, ChainRecord[]>();

  constructor(records: ChainRecord[]) {
    for (const r of records) {
      const covered = r.type === 'RRSIG' ? (r.data as packet.RrsigData).typeCovered : null;
      const map = covered ? this.sigs : this.sets;
      const key = `${r.owner} ${covered ?? r.type}`;
      map.set(key, [...(map.get(key) ?? []), r]);
    }
  }

  set(owner: string, type: string): ChainRecord[] {
    return this.sets.get(`${owner} ${type}`) ?? [];
  }

  signedBy(owner: string, type: string, signer: string): ChainRecord[] {
    return (this.sigs.get(`${owner} ${type}`) ?? []).filter(
      (s) => (s.data as packet.RrsigData).signersName.toLowerCase() === signer,
    );
  }

  /** DS owners strictly below `zone`, at or above `target`, nearest `zone` first. */
  delegationsToward(zone: string, target: string): string[] {
    return [...this.sets.keys()]
      .filter((k) => k.endsWith(' DS'))
      .map((k) => k.slice(0, -3))
      .filter((owner) => owner !== zone && isAtOrBelow(owner, zone) && isAtOrBelow(target, owner))
      .sort((a, b) => labelCount(a) - labelCount(b));
  }

  /** Verifies the RRset with one of the zone's keys, or throws the most telling failure. */
  verify(owner: string, type: string, zone: Zone, now: number): ChainRecord[] {
    const link = `${fqdn(owner)} ${type}`;
    const set = this.set(owner, type);
    if (set.length === 0) {
      throw new DnssecError('missing_rrset', link, `the chain has no ${link} RRset`, fqdn(zone.name));
    }
    const sigs = this.signedBy(owner, type, zone.name);
    if (sigs.length === 0) {
      throw new DnssecError(
        'missing_signature',
        link,
        `the chain has no RRSIG over ${link} by the zone ${fqdn(zone.name)}`,
        fqdn(zone.name),
      );
    }
    let worst: DnssecError | null = null;
    for (const sig of sigs) {
      const failure = checkSignature(sig, set, zone, now, link);
      if (!failure) return set;
      if (!worst || RANK[failure.problem] > RANK[worst.problem]) worst = failure;
    }
    throw worst as DnssecError;
  }
}

export interface VerifyChainOptions {
  /** SHA-256 DS digest of the root key-signing key (32 bytes). */
  anchorDigest: Uint8Array;
  /** The owner name of the TXT RRset to prove (lowercased, no trailing dot). */
  target: string;
  /** Seconds since the epoch; RRSIG validity windows are checked against it. */
  now: number;
}

export interface VerifiedTxt {
  /** Each TXT record's character-strings joined, in canonical order. */
  values: string[];
  /** The zones walked from the root to the target, e.g. [".", "org.", "example.org."]. */
  zones: string[];
  /** Key tag of the root key that matched the anchor. */
  anchorKeyTag: number;
}

/** Walks the chain from the anchor to the target TXT RRset; throws DnssecError naming the link that failed. */
export function verifyTxtChain(chain: Uint8Array, opts: VerifyChainOptions): VerifiedTxt {
  const index = new ChainIndex(parseChain(chain));
  const target = opts.target.toLowerCase();
  const anchor = Buffer.from(opts.anchorDigest);
  const rootSet = index.set('.', 'DNSKEY');
  if (rootSet.length === 0)
    throw new DnssecError('missing_rrset', '. DNSKEY', 'the chain has no root DNSKEY RRset', '.');
  const anchors = zoneKeys(rootSet).filter((k) => dsDigest('.', k.rdata).equals(anchor));
  if (anchors.length === 0) {
    throw new DnssecError(
      'root_key_mismatch',
      '. DNSKEY',
      `no root DNSKEY in the chain has the SHA-256 DS digest ${anchor.toString('hex')} (the Postoffice's root_ksk)`,
      '.',
    );
  }
  index.verify('.', 'DNSKEY', { name: '.', keys: anchors }, opts.now);
  let zone: Zone = { name: '.', keys: zoneKeys(rootSet) };
  const zones = ['.'];
  for (;;) {
    // A delegation toward the target is followed; without one the target is in this zone.
    const child = index.delegationsToward(zone.name, target)[0];
    if (child === undefined) {
      const set = index.verify(target, 'TXT', zone, opts.now);
      const values = canonicalRdata(set).map(txtValue);
      return { values, zones, anchorKeyTag: (anchors[0] as ZoneKey).tag };
    }
    const ds = index.verify(child, 'DS', zone, opts.now);
    const childSet = index.set(child, 'DNSKEY');
    const link = `${fqdn(child)} DNSKEY`;
    if (childSet.length === 0) {
      throw new DnssecError('missing_rrset', link, `the chain has no ${link} RRset`, fqdn(child));
    }
    const linked = zoneKeys(childSet).filter((k) =>
      ds.some((r) => {
        const d = r.data as packet.DsData;
        return (
          d.keyTag === k.tag &&
          d.algorithm === k.algorithm &&
          DIGESTS[d.digestType] !== undefined &&
          dsDigest(child, k.rdata, d.digestType).equals(d.digest)
        );
      }),
    );
    if (linked.length === 0) {
      throw new DnssecError(
        'ds_mismatch',
        `${fqdn(child)} DS`,
        `no ${link} record matches a ${fqdn(child)} DS record (key tag, algorithm and SHA-256/SHA-384 digest)`,
        fqdn(zone.name),
      );
    }
    index.verify(child, 'DNSKEY', { name: child, keys: linked }, opts.now);
    zone = { name: child, keys: zoneKeys(childSet) };
    zones.push(fqdn(child));
  }
}

/** A TXT record's character-strings, joined. */
function txtValue(rdata: Buffer): string {
  const parts: Buffer[] = [];
  let i = 0;
  while (i < rdata.length) {
    const len = rdata[i] as number;
    parts.push(rdata.subarray(i + 1, i + 1 + len));
    i += 1 + len;
  }
  return Buffer.concat(parts).toString('utf8');
}
