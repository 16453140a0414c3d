// A real DNS server on a random loopback port (UDP, and TCP on the same port
// for answers too big for UDP) serving a zone configured in code. It stands
// in for the public and validating resolvers the code talks to, at the wire
// protocol, and is as strict as one:
//  - NXDOMAIN when a name does not exist, NOERROR with no answers (NODATA)
//    when it exists without the asked type; a name exists when it or any name
//    below it has records (RFC 8020 empty non-terminals).
//  - CNAMEs are followed inside the zone (the chain plus the target's records).
//  - The AD bit is set only where configured ("validated") and only when the
//    query asked for it with AD or the EDNS DO bit (RFC 6840 §5.7, as Unbound
//    and the public resolvers do).
//  - UDP answers larger than 512 bytes (or the query's EDNS payload size) are
//    sent truncated (TC, no records) so the client retries over TCP.
//  - Per name or zone: answer SERVFAIL, or never answer (a timeout).
//  - A name `*.zone` is a wildcard (RFC 4592, simplified): its records answer
//    for any name below `zone` that has no records of its own, under the
//    asked name.
// Names are case-insensitive; the zone is mutable while the server runs.
import { createSocket, type Socket } from 'node:dgram';
import { type AddressInfo, createServer, type Server, type Socket as TcpSocket } from 'node:net';
import * as packet from 'dns-packet';
import type { WireRecordType } from '../../../src/core/dns/wire-query.ts';

/** What the double serves: what wireQuery asks for (but NS), plus RRSIG. */
export type DnsDoubleType = Exclude<WireRecordType, 'NS'> | 'RRSIG';

export interface MxData {
  preference: number;
  exchange: string;
}
export interface SrvData {
  priority: number;
  weight: number;
  port: number;
  target: string;
}
export interface TlsaData {
  usage: number;
  selector: number;
  matchingType: number;
  /** Hex string or bytes of the association data. */
  certificate: string | Uint8Array;
}

/**
 * Record data by type: A/AAAA/CNAME/PTR a string; MX/SRV/TLSA objects; TXT a
 * string (one character-string, split into 255-byte pieces when longer) or an
 * array of strings (one record made of several character-strings);
 * DNSKEY/DS/RRSIG dns-packet's data objects, served as given (an RRSIG goes
 * with the answer for the type it covers when the query sets the DO bit).
 */
export type DnsRecordData =
  | string
  | string[]
  | MxData
  | SrvData
  | TlsaData
  | packet.DnskeyData
  | packet.DsData
  | packet.RrsigData;

/** `{ 'example.org': { MX: [...], TXT: [...] } }` */
export type DnsZone = Record<string, Partial<Record<DnsDoubleType, DnsRecordData[]>>>;

export type DnsFault = 'servfail' | 'timeout';

export interface DnsQueryLog {
  name: string;
  type: string;
  transport: 'udp' | 'tcp';
  ad: boolean;
}

export interface DnsDouble {
  host: string;
  port: number;
  /** `host:port`, ready for `[dns] resolvers` or `[domaind] resolver`. */
  address: string;
  /** Replaces the records of one type at a name (an empty list leaves the name existing with no such records). */
  set(name: string, type: DnsDoubleType, records: DnsRecordData[]): void;
  /** Removes one type at a name, or the whole name when no type is given. */
  remove(name: string, type?: DnsDoubleType): void;
  /** Answers for this name and every name below it carry AD (when the query asks for it). */
  setAd(nameOrZone: string, validated: boolean): void;
  /** SERVFAIL or silence for this name and every name below it; null clears. */
  setFault(nameOrZone: string, fault: DnsFault | null): void;
  /** Every question received, in order. */
  readonly queries: readonly DnsQueryLog[];
  close(): Promise<void>;
}

const TTL = 300;
const RCODE_SERVFAIL = 2;
const RCODE_NXDOMAIN = 3;
const RCODE_FORMERR = 1;
const MAX_CNAME_CHAIN = 8;

const norm = (name: string) => name.toLowerCase().replace(/\.$/, '');

function isAtOrBelow(name: string, zone: string): boolean {
  return name === zone || name.endsWith(`.${zone}`);
}

/** The most specific setting for `name` among zone-keyed settings. */
function mostSpecific<T>(settings: Map<string, T>, name: string): T | undefined {
  let best: { zone: string; value: T } | undefined;
  for (const [zone, value] of settings) {
    if (isAtOrBelow(name, zone) && (!best || zone.length > best.zone.length)) best = { zone, value };
  }
  return best?.value;
}

function splitTxt(s: string): Buffer[] {
  const bytes = Buffer.from(s, 'utf8');
  if (bytes.length === 0) return [Buffer.alloc(0)];
  const parts: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += 255) parts.push(bytes.subarray(i, i + 255));
  return parts;
}

function toAnswer(name: string, type: DnsDoubleType, data: DnsRecordData): packet.Answer {
  switch (type) {
    case 'A':
    case 'AAAA':
    case 'CNAME':
    case 'PTR':
      return { name, type, ttl: TTL, class: 'IN', data: norm(String(data)) || '.' };
    case 'TXT': {
      const pieces = Array.isArray(data) ? data.flatMap((d) => splitTxt(d)) : splitTxt(String(data));
      return { name, type, ttl: TTL, class: 'IN', data: pieces };
    }
    case 'MX': {
      const mx = data as MxData;
      return {
        name,
        type,
        ttl: TTL,
        class: 'IN',
        data: { preference: mx.preference, exchange: norm(mx.exchange) || '.' },
      };
    }
    case 'SRV': {
      const srv = data as SrvData;
      return {
        name,
        type,
        ttl: TTL,
        class: 'IN',
        data: { priority: srv.priority, weight: srv.weight, port: srv.port, target: norm(srv.target) || '.' },
      };
    }
    case 'TLSA': {
      const t = data as TlsaData;
      const certificate =
        typeof t.certificate === 'string' ? Buffer.from(t.certificate, 'hex') : Buffer.from(t.certificate);
      return {
        name,
        type,
        ttl: TTL,
        class: 'IN',
        data: { usage: t.usage, selector: t.selector, matchingType: t.matchingType, certificate },
      };
    }
    case 'DNSKEY':
      return { name, type, ttl: TTL, class: 'IN', data: data as packet.DnskeyData };
    case 'DS':
      return { name, type, ttl: TTL, class: 'IN', data: data as packet.DsData };
    case 'RRSIG':
      return { name, type, ttl: TTL, class: 'IN', data: data as packet.RrsigData };
  }
}

export async function startDnsDouble(zone: DnsZone = {}, opts: { host?: string } = {}): Promise<DnsDouble> {
  const host = opts.host ?? '127.0.0.1';
  const records = new Map<string, Map<DnsDoubleType, DnsRecordData[]>>();
  const adZones = new Map<string, boolean>();
  const faults = new Map<string, DnsFault | null>();
  const queries: DnsQueryLog[] = [];

  const set = (name: string, type: DnsDoubleType, list: DnsRecordData[]) => {
    const n = norm(name);
    const byType = records.get(n) ?? new Map<DnsDoubleType, DnsRecordData[]>();
    byType.set(type, [...list]);
    records.set(n, byType);
  };
  for (const [name, types] of Object.entries(zone)) {
    for (const [type, list] of Object.entries(types)) set(name, type as DnsDoubleType, list ?? []);
  }

  const exists = (name: string) => {
    for (const n of records.keys()) if (isAtOrBelow(n, name)) return true;
    return false;
  };
  /** The records of the nearest `*.<ancestor>` wildcard for a name that does not exist. */
  const wildcard = (name: string) => {
    if (exists(name)) return undefined;
    for (let at = name.indexOf('.'); at >= 0; at = name.indexOf('.', at + 1)) {
      const byType = records.get(`*.${name.slice(at + 1)}`);
      if (byType) return byType;
    }
    return undefined;
  };

  /** Builds the response for one query, or null to stay silent. */
  const answer = (query: packet.DecodedPacket, transport: 'udp' | 'tcp'): Buffer | null => {
    const question = query.questions?.[0];
    const base = {
      type: 'response' as const,
      id: query.id ?? 0,
      questions: query.questions ?? [],
    };
    const flags = packet.RECURSION_AVAILABLE | (query.flag_rd ? packet.RECURSION_DESIRED : 0);
    if (!question || query.questions?.length !== 1) {
      return packet.encode({ ...base, flags: flags | RCODE_FORMERR, answers: [] });
    }
    const qname = norm(question.name);
    const opt = query.additionals?.find((a): a is packet.OptAnswer => a.type === 'OPT');
    const wantsAd = query.flag_ad || opt?.flag_do === true;
    queries.push({ name: qname, type: question.type, transport, ad: wantsAd });

    const fault = mostSpecific(faults, qname);
    if (fault === 'timeout') return null;
    if (fault === 'servfail') return packet.encode({ ...base, flags: flags | RCODE_SERVFAIL, answers: [] });

    const answers: packet.Answer[] = [];
    let current = qname;
    let rcode = 0;
    let validated = mostSpecific(adZones, current) === true;
    for (let hop = 0; ; hop++) {
      const byType = records.get(current) ?? wildcard(current);
      const cname = byType?.get('CNAME')?.[0];
      if (cname !== undefined && question.type !== 'CNAME' && hop < MAX_CNAME_CHAIN) {
        answers.push(toAnswer(current, 'CNAME', cname));
        current = norm(String(cname));
        validated &&= mostSpecific(adZones, current) === true;
        continue;
      }
      const list = byType?.get(question.type as DnsDoubleType) ?? [];
      for (const data of list) answers.push(toAnswer(current, question.type as DnsDoubleType, data));
      if (opt?.flag_do && question.type !== 'RRSIG') {
        for (const sig of byType?.get('RRSIG') ?? []) {
          if ((sig as packet.RrsigData).typeCovered === question.type)
            answers.push(toAnswer(current, 'RRSIG', sig));
        }
      }
      if (!exists(current) && !byType) rcode = RCODE_NXDOMAIN;
      break;
    }
    const adFlag = validated && wantsAd ? packet.AUTHENTIC_DATA : 0;
    const additionals: packet.Answer[] = opt
      ? [
          {
            type: 'OPT',
            name: '.',
            udpPayloadSize: 1232,
            extendedRcode: 0,
            ednsVersion: 0,
            flags: 0,
            flag_do: opt.flag_do,
            options: [],
          },
        ]
      : [];
    const full = packet.encode({ ...base, flags: flags | adFlag | rcode, answers, additionals });
    const limit = opt ? Math.max(512, opt.udpPayloadSize) : 512;
    if (transport === 'udp' && full.length > limit) {
      return packet.encode({
        ...base,
        flags: flags | adFlag | rcode | packet.TRUNCATED_RESPONSE,
        answers: [],
        additionals,
      });
    }
    return full;
  };

  const makeUdp = (): Socket => {
    const sock: Socket = createSocket(host.includes(':') ? 'udp6' : 'udp4');
    sock.on('message', (msg, rinfo) => {
      let query: packet.DecodedPacket;
      try {
        query = packet.decode(msg);
      } catch {
        return; // garbage gets no answer, like a real server
      }
      const out = answer(query, 'udp');
      if (out) sock.send(out, rinfo.port, rinfo.address);
    });
    return sock;
  };

  const sockets = new Set<TcpSocket>();
  const tcp: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2) {
        const size = buffered.readUInt16BE(0);
        if (buffered.length < 2 + size) return;
        const msg = buffered.subarray(2, 2 + size);
        buffered = buffered.subarray(2 + size);
        let query: packet.DecodedPacket;
        try {
          query = packet.decode(msg);
        } catch {
          socket.destroy();
          return;
        }
        const out = answer(query, 'tcp');
        if (!out) continue;
        const len = Buffer.alloc(2);
        len.writeUInt16BE(out.length);
        socket.write(Buffer.concat([len, out]));
      }
    });
  });
  // One port for both transports: TCP picks a free port, UDP takes the same
  // one; when another process holds that UDP port, try another.
  let udp: Socket | undefined;
  let port = 0;
  for (let attempt = 0; udp === undefined; attempt++) {
    await new Promise<void>((resolve, reject) => {
      tcp.once('error', reject);
      tcp.listen(0, host, () => {
        tcp.off('error', reject);
        resolve();
      });
    });
    port = (tcp.address() as AddressInfo).port;
    const candidate = makeUdp();
    try {
      await new Promise<void>((resolve, reject) => {
        candidate.once('error', reject);
        candidate.bind(port, host, () => {
          candidate.off('error', reject);
          resolve();
        });
      });
      udp = candidate;
    } catch (err) {
      candidate.close();
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 20) throw err;
    }
  }
  const udpSocket = udp;

  return {
    host,
    port,
    address: host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`,
    set,
    remove(name, type) {
      const n = norm(name);
      const byType = records.get(n);
      if (type !== undefined) byType?.delete(type);
      // A name left with no record types at all stops existing (NXDOMAIN).
      if (type === undefined || byType?.size === 0) records.delete(n);
    },
    setAd(nameOrZone, validated) {
      adZones.set(norm(nameOrZone), validated);
    },
    setFault(nameOrZone, fault) {
      faults.set(norm(nameOrZone), fault);
    },
    queries,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
      await new Promise<void>((resolve) => udpSocket.close(() => resolve()));
    },
  };
}
