// Collects the DNSSEC chain for one TXT RRset from a DNSSEC-aware resolver
// (queries with the DO bit, so answers carry their RRSIGs), in the form
// dnssec-chain.ts verifies: the root DNSKEY RRset, then for each zone cut
// between the root and the zone signing the TXT its DS and DNSKEY RRsets,
// then the TXT RRset, each with its RRSIGs, as uncompressed wire records.
// Nothing is verified here: the domain service does that against root_ksk.
import * as packet from 'dns-packet';
import type { DnsServer } from './lookup-error.ts';
import { type WireAnswer, type WireRecordType, wireQuery } from './wire-query.ts';

export class ProofCollectionError extends Error {
  override name = 'ProofCollectionError';
}

interface AnswerEncoder {
  answer: { encode(a: object): Buffer };
}
const encoder = packet as unknown as AnswerEncoder;

const norm = (name: string) => name.toLowerCase().replace(/\.$/, '') || '.';

export interface CollectOptions {
  timeoutMs?: number;
}

/** The chain for the TXT RRset at `target` (e.g. `_solana.authority.example.org`). */
export async function collectTxtChain(
  server: DnsServer,
  target: string,
  opts: CollectOptions = {},
): Promise<Buffer> {
  const name = norm(target);
  const rrset = async (owner: string, type: WireRecordType) => {
    const res = await wireQuery(server, owner, type, { timeoutMs: opts.timeoutMs ?? 5000 });
    const at = res.answers.filter((a) => norm(a.name) === owner);
    return {
      rcode: res.rcode,
      set: at.filter((a) => a.type === type),
      sigs: at.filter((a) => a.type === 'RRSIG' && (a.data as packet.RrsigData).typeCovered === type),
    };
  };
  const txt = await rrset(name, 'TXT');
  if (txt.set.length === 0) {
    throw new ProofCollectionError(`no TXT record at ${name} (${txt.rcode}); publish it first`);
  }
  const first = txt.sigs[0];
  if (!first) {
    throw new ProofCollectionError(
      `the TXT record at ${name} came without an RRSIG: the zone is not signed, or the resolver does not return DNSSEC records`,
    );
  }
  const signer = norm((first.data as packet.RrsigData).signersName);
  const out: WireAnswer[] = [];
  const root = await rrset('.', 'DNSKEY');
  if (root.set.length === 0 || root.sigs.length === 0) {
    throw new ProofCollectionError('the resolver returned no signed root DNSKEY RRset');
  }
  out.push(...root.set, ...root.sigs);
  // Every name from the TLD down to the signing zone; those with a DS RRset are zone cuts.
  const labels = signer === '.' ? [] : signer.split('.');
  for (let i = labels.length - 1; i >= 0; i--) {
    const zone = labels.slice(i).join('.');
    const ds = await rrset(zone, 'DS');
    if (ds.set.length === 0) continue;
    const keys = await rrset(zone, 'DNSKEY');
    if (keys.set.length === 0) throw new ProofCollectionError(`${zone} has a DS RRset but no DNSKEY RRset`);
    out.push(...ds.set, ...ds.sigs, ...keys.set, ...keys.sigs);
  }
  out.push(...txt.set, ...txt.sigs);
  return Buffer.concat(
    out.map((a) =>
      encoder.answer.encode({ name: a.name, type: a.type, class: 'IN', ttl: a.ttl, data: a.data }),
    ),
  );
}
