// A minimal stub-resolver query over UDP (TCP when the answer is truncated)
// with dns-packet, for what node:dns cannot do: TLSA records and the AD bit
// of a validating resolver. The query sets RD, AD and the EDNS DO bit, so a
// validating resolver reports whether it validated the answer (RFC 6840 §5.7).
import { randomInt } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import * as packet from 'dns-packet';
import { DnsLookupError, type DnsServer } from './lookup-error.ts';

export type WireRecordType =
  | 'A'
  | 'AAAA'
  | 'MX'
  | 'TXT'
  | 'TLSA'
  | 'CNAME'
  | 'SRV'
  | 'PTR'
  | 'NS'
  | 'DNSKEY'
  | 'DS';

export interface WireAnswer {
  name: string;
  type: string;
  ttl: number;
  data: unknown;
}

export interface WireResult {
  rcode: string;
  /** The resolver says it validated the answer with DNSSEC. */
  authenticated: boolean;
  answers: WireAnswer[];
  /** The authority section (a negative answer's SOA, whose TTL bounds how long "no such name" may be kept). */
  authorities: WireAnswer[];
}

export interface WireQueryOptions {
  timeoutMs?: number;
}

/** Sends one query to `server`; resolves with the rcode and answers (never throws on NXDOMAIN). */
export async function wireQuery(
  server: DnsServer,
  name: string,
  type: WireRecordType,
  opts: WireQueryOptions = {},
): Promise<WireResult> {
  const timeoutMs = opts.timeoutMs ?? 5000;
  const id = randomInt(0, 0x10000);
  const query = packet.encode({
    type: 'query',
    id,
    flags: packet.RECURSION_DESIRED | packet.AUTHENTIC_DATA,
    questions: [{ type, name, class: 'IN' }],
    additionals: [
      {
        type: 'OPT',
        name: '.',
        udpPayloadSize: 1232,
        extendedRcode: 0,
        ednsVersion: 0,
        flags: packet.DNSSEC_OK,
        flag_do: true,
        options: [],
      },
    ],
  });
  let response = await udpExchange(server, query, id, timeoutMs, name);
  if (response.flag_tc) response = await tcpExchange(server, query, id, timeoutMs, name);
  return {
    rcode: String((response as { rcode?: string }).rcode ?? 'NOERROR'),
    authenticated: response.flag_ad,
    answers: (response.answers ?? []).map(wireAnswer),
    authorities: (response.authorities ?? []).map(wireAnswer),
  };
}

function wireAnswer(a: packet.Answer): WireAnswer {
  return {
    name: a.name,
    type: a.type,
    ttl: 'ttl' in a ? (a.ttl ?? 0) : 0,
    data: 'data' in a ? a.data : undefined,
  };
}

function udpExchange(
  server: DnsServer,
  query: Buffer,
  id: number,
  timeoutMs: number,
  name: string,
): Promise<packet.DecodedPacket> {
  return new Promise((resolve, reject) => {
    const socket = createSocket(server.host.includes(':') ? 'udp6' : 'udp4');
    const timer = setTimeout(() => {
      socket.close();
      reject(new DnsLookupError(name, 'timeout', `no answer from ${server.host}:${server.port}`));
    }, timeoutMs);
    socket.on('message', (msg) => {
      let decoded: packet.DecodedPacket;
      try {
        decoded = packet.decode(msg);
      } catch {
        return; // not a DNS answer: keep waiting for ours
      }
      if (decoded.id !== id) return;
      clearTimeout(timer);
      socket.close();
      resolve(decoded);
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      socket.close();
      reject(new DnsLookupError(name, 'refused', err.message));
    });
    socket.send(query, server.port, server.host);
  });
}

function tcpExchange(
  server: DnsServer,
  query: Buffer,
  id: number,
  timeoutMs: number,
  name: string,
): Promise<packet.DecodedPacket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: server.host, port: server.port });
    let buffered = Buffer.alloc(0);
    const fail = (err: Error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(err);
    };
    const timer = setTimeout(
      () => fail(new DnsLookupError(name, 'timeout', `no TCP answer from ${server.host}:${server.port}`)),
      timeoutMs,
    );
    socket.on('connect', () => {
      const len = Buffer.alloc(2);
      len.writeUInt16BE(query.length);
      socket.write(Buffer.concat([len, query]));
    });
    socket.on('data', (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (buffered.length < 2) return;
      const size = buffered.readUInt16BE(0);
      if (buffered.length < 2 + size) return;
      clearTimeout(timer);
      socket.destroy();
      try {
        const decoded = packet.decode(buffered.subarray(2, 2 + size));
        if (decoded.id !== id) throw new Error('answer id does not match the query');
        resolve(decoded);
      } catch (err) {
        reject(new DnsLookupError(name, 'other', (err as Error).message));
      }
    });
    socket.on('error', (err) => fail(new DnsLookupError(name, 'refused', err.message)));
  });
}
