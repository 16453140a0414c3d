// A signed test DNS hierarchy for reclaim proofs: a root zone (RSASHA256 KSK
// and ZSK), the "org" TLD (ECDSAP256SHA256 KSK and ZSK) and a domain zone
// (one ED25519 key), with node:crypto keys, DS records linking each zone to
// its parent and the `_solana.authority.<domain>` TXT naming a wallet. Every
// RRset is signed here, independently of the verifier: canonical records are
// whole records encoded by dns-packet and sorted by their RDATA. Options
// break one link at a time so tests can see each refusal.
import { createHash, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import * as packet from 'dns-packet';
import { keyTag } from '../../src/core/dns/dnssec-chain.ts';
import type { DnsDouble, DnsDoubleType, DnsRecordData } from './doubles/dns-server.ts';

type Algorithm = 8 | 13 | 15;

export interface TestKey {
  zone: string;
  flags: number;
  algorithm: Algorithm;
  publicKey: Buffer;
  privateKey: KeyObject;
  tag: number;
}

export interface TestRecord {
  name: string;
  type: 'DNSKEY' | 'DS' | 'TXT' | 'RRSIG' | 'A' | 'MX';
  ttl: number;
  data: packet.DnskeyData | packet.DsData | packet.RrsigData | Buffer[] | packet.MxData | string;
}

/** dns-packet's record-level encoders, which its type declarations do not list. */
interface Encoders {
  answer: { encode(a: object): Buffer };
  name: { encode(n: string): Buffer; encodingLength(n: string): number };
  dnskey: { encode(d: packet.DnskeyData): Buffer };
  rrsig: { encode(d: packet.RrsigData): Buffer };
}
const codecs = packet as unknown as Encoders;

const jwkBytes = (s: unknown) => Buffer.from(s as string, 'base64url');

export function makeKey(zone: string, algorithm: Algorithm, flags = 257): TestKey {
  let publicKey: Buffer;
  let privateKey: KeyObject;
  if (algorithm === 8) {
    const pair = generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent: 65537 });
    const jwk = pair.publicKey.export({ format: 'jwk' });
    const e = jwkBytes(jwk.e);
    publicKey = Buffer.concat([Buffer.from([e.length]), e, jwkBytes(jwk.n)]);
    privateKey = pair.privateKey;
  } else if (algorithm === 13) {
    const pair = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const jwk = pair.publicKey.export({ format: 'jwk' });
    publicKey = Buffer.concat([jwkBytes(jwk.x), jwkBytes(jwk.y)]);
    privateKey = pair.privateKey;
  } else {
    const pair = generateKeyPairSync('ed25519');
    publicKey = jwkBytes(pair.publicKey.export({ format: 'jwk' }).x);
    privateKey = pair.privateKey;
  }
  const rdata = codecs.dnskey.encode({ flags, algorithm, key: publicKey }).subarray(2);
  return { zone, flags, algorithm, publicKey, privateKey, tag: keyTag(rdata) };
}

export function dnskeyRecord(key: TestKey, ttl = 3600): TestRecord {
  return {
    name: key.zone,
    type: 'DNSKEY',
    ttl,
    data: { flags: key.flags, algorithm: key.algorithm, key: key.publicKey },
  };
}

function ownerWire(name: string): Buffer {
  return codecs.name.encode(name);
}

/** SHA-256 over the owner's wire form and the DNSKEY RDATA: a DS digest, and what root_ksk holds. */
export function keyDigest(key: TestKey): Buffer {
  const rdata = codecs.dnskey
    .encode({ flags: key.flags, algorithm: key.algorithm, key: key.publicKey })
    .subarray(2);
  return createHash('sha256').update(ownerWire(key.zone)).update(rdata).digest();
}

export function dsRecord(key: TestKey, ttl = 3600): TestRecord {
  return {
    name: key.zone,
    type: 'DS',
    ttl,
    data: { keyTag: key.tag, algorithm: key.algorithm, digestType: 2, digest: keyDigest(key) },
  };
}

export function encodeRecord(r: TestRecord): Buffer {
  return codecs.answer.encode({ name: r.name, type: r.type, class: 'IN', ttl: r.ttl, data: r.data });
}

export interface SignOptions {
  inception: number;
  expiration: number;
  /** Signer name; default the key's zone. */
  signer?: string;
}

/** An RRSIG over `set` (all one owner and type) by `key`. */
export function signSet(set: TestRecord[], key: TestKey, opts: SignOptions): TestRecord {
  const first = set[0] as TestRecord;
  const owner = first.name.toLowerCase();
  const labels = owner === '.' ? 0 : owner.split('.').length;
  const rrsig: packet.RrsigData = {
    typeCovered: first.type,
    algorithm: key.algorithm,
    labels,
    originalTTL: first.ttl,
    expiration: opts.expiration >>> 0,
    inception: opts.inception >>> 0,
    keyTag: key.tag,
    signersName: (opts.signer ?? key.zone).toLowerCase(),
    signature: Buffer.alloc(0),
  };
  const head = codecs.rrsig.encode(rrsig).subarray(2);
  const nameLength = codecs.name.encodingLength(owner);
  const canonical = set
    .map((r) => encodeRecord({ ...r, name: owner, ttl: first.ttl }))
    .sort((a, b) => Buffer.compare(a.subarray(nameLength + 10), b.subarray(nameLength + 10)));
  const data = Buffer.concat([head, ...canonical]);
  const signature =
    key.algorithm === 8
      ? sign('sha256', data, key.privateKey)
      : key.algorithm === 13
        ? sign('sha256', data, { key: key.privateKey, dsaEncoding: 'ieee-p1363' })
        : sign(null, data, key.privateKey);
  return { name: first.name, type: 'RRSIG', ttl: first.ttl, data: { ...rrsig, signature } };
}

export type ChainLink = 'root-dnskey' | 'org-ds' | 'org-dnskey' | 'domain-ds' | 'domain-dnskey' | 'txt';

export interface HierarchyKeys {
  rootKsk: TestKey;
  rootZsk: TestKey;
  orgKsk: TestKey;
  orgZsk: TestKey;
  domainKey: TestKey;
}

/** The zones' keys; pass them to several chains to share one root (one root_ksk). */
export function makeHierarchyKeys(domain: string): HierarchyKeys {
  return {
    rootKsk: makeKey('.', 8, 257),
    rootZsk: makeKey('.', 8, 256),
    orgKsk: makeKey('org', 13, 257),
    orgZsk: makeKey('org', 13, 256),
    domainKey: makeKey(domain.toLowerCase(), 15, 257),
  };
}

export interface ReclaimChainOptions {
  /** The domain, directly under "org" (e.g. "example.org"). */
  domain: string;
  /** The TXT values at `_solana.authority.<domain>` (one base58 key, normally). */
  txt: string[];
  /** Seconds since the epoch the signatures are valid around (± one day). */
  now: number;
  /** Per link [inception, expiration] overriding the default window. */
  windows?: Partial<Record<ChainLink, [number, number]>>;
  /** The org zone publishes a DS for a key the domain does not have (the DS link is broken). */
  strayDomainDs?: boolean;
  /** Reuse these keys (default: new ones). */
  keys?: HierarchyKeys;
}

export interface ReclaimChain {
  keys: HierarchyKeys;
  /** The records in chain order; change them and call proof() again to tamper. */
  records: TestRecord[];
  rootKsk: TestKey;
  /** SHA-256 DS digest of the root KSK: the Postoffice's root_ksk for this hierarchy. */
  anchor: Buffer;
  proof(records?: TestRecord[]): Buffer;
}

export function buildReclaimChain(opts: ReclaimChainOptions): ReclaimChain {
  const domain = opts.domain.toLowerCase();
  const window = (link: ChainLink): SignOptions => {
    const [inception, expiration] = opts.windows?.[link] ?? [opts.now - 86_400, opts.now + 86_400];
    return { inception, expiration };
  };
  const keys = opts.keys ?? makeHierarchyKeys(domain);
  const { rootKsk, rootZsk, orgKsk, orgZsk, domainKey } = keys;

  const rootKeys = [dnskeyRecord(rootKsk), dnskeyRecord(rootZsk)];
  const orgDs = [dsRecord(orgKsk)];
  const orgKeys = [dnskeyRecord(orgKsk), dnskeyRecord(orgZsk)];
  const domainDs = [dsRecord(opts.strayDomainDs ? makeKey(domain, 15, 257) : domainKey)];
  const domainKeys = [dnskeyRecord(domainKey)];
  const txt: TestRecord[] = opts.txt.map((value) => ({
    name: `_solana.authority.${domain}`,
    type: 'TXT',
    ttl: 300,
    data: [Buffer.from(value)],
  }));
  // Each RRset followed by its RRSIG, from the root down.
  const links: [TestRecord[], TestKey, ChainLink][] = [
    [rootKeys, rootKsk, 'root-dnskey'],
    [orgDs, rootZsk, 'org-ds'],
    [orgKeys, orgKsk, 'org-dnskey'],
    [domainDs, orgZsk, 'domain-ds'],
    [domainKeys, domainKey, 'domain-dnskey'],
    [txt, domainKey, 'txt'],
  ];
  const records = links.flatMap(([set, key, link]) => [...set, signSet(set, key, window(link))]);
  return {
    keys,
    records,
    rootKsk,
    anchor: keyDigest(rootKsk),
    proof: (list = records) => Buffer.concat(list.map(encodeRecord)),
  };
}

/** Publishes the chain's records in the DNS double, RRSIGs included (served to queries with the DO bit). */
export function serveChain(dns: DnsDouble, records: TestRecord[]): void {
  const grouped = new Map<string, DnsRecordData[]>();
  for (const r of records) {
    const data = r.type === 'TXT' ? (r.data as Buffer[]).map((b) => b.toString('utf8')) : r.data;
    const key = `${r.name}\t${r.type}`;
    grouped.set(key, [...(grouped.get(key) ?? []), data as DnsRecordData]);
  }
  for (const [key, list] of grouped) {
    const [name, type] = key.split('\t') as [string, DnsDoubleType];
    dns.set(name, type, list);
  }
}
