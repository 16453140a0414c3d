// A peer Sealpost server is recognized by a TLS client certificate that
// chains to `[smtp] peer_ca_file`. The certificate's DNS names (subjectAltName,
// else the subject CN) are the mail domains that peer may send from: the
// operator of the CA decides who speaks for which domain when issuing it.
import type { TLSSocket } from 'node:tls';
import type { Submitter } from './sender.ts';

export interface PeerCertificate {
  /** Whether the certificate chains to the configured peer CA. */
  trusted: boolean;
  /** Why it does not, when it does not (OpenSSL's code, e.g. UNABLE_TO_VERIFY_LEAF_SIGNATURE). */
  error?: string;
  /** Lowercased DNS names of the certificate; empty when none was presented. */
  names: string[];
}

export function peerCertificateOf(socket: TLSSocket): PeerCertificate | null {
  const cert = socket.getPeerCertificate();
  if (!cert || Object.keys(cert).length === 0) return null;
  const names = new Set<string>();
  for (const part of (cert.subjectaltname ?? '').split(',')) {
    const m = /^\s*DNS:(.+?)\s*$/.exec(part);
    if (m?.[1]) names.add(m[1].toLowerCase().replace(/\.$/, ''));
  }
  const cn = cert.subject?.CN;
  if (names.size === 0 && typeof cn === 'string' && cn) names.add(cn.toLowerCase().replace(/\.$/, ''));
  const error = socket.authorizationError ? String(socket.authorizationError) : undefined;
  return { trusted: socket.authorized === true, error, names: [...names] };
}

/** The peer submitter an EXTERNAL attempt stands for, or why it does not stand for one. */
export function peerSubmitter(
  peer: PeerCertificate | null,
  authzid: string,
): Extract<Submitter, { kind: 'peer' }> | string {
  if (!peer) return 'no client certificate';
  if (!peer.trusted) return `client certificate not trusted (${peer.error ?? 'unknown issuer'})`;
  const [first] = peer.names;
  if (first === undefined) return 'client certificate names no domain';
  if (authzid && !peer.names.includes(authzid.toLowerCase()))
    return 'authorization identity not in certificate';
  return { kind: 'peer', name: first, domains: peer.names };
}
