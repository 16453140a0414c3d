// The IMAP listener (docs/imap-pop3.md): implicit TLS (993; dev 1993) or a
// plain port that offers STARTTLS (143, only when configured). Each
// connection is an ImapConnection; at most `maxConnectionsPerIp` at once
// from one address.
import {
  type ListenerSetup,
  type SessionListener,
  startSessionListener,
} from '../../core/net/session-listener.ts';
import { ImapConnection, type ImapConnectionOptions } from './connection.ts';

export interface ImapServerOptions extends Omit<ImapConnectionOptions, 'startTls'>, ListenerSetup {}

export interface ImapServer {
  port: number;
  /** A reload's certificate for new handshakes (src/core/net/session-listener.ts). */
  setCertificate: SessionListener['setCertificate'];
  setMaxConnectionsPerIp: SessionListener['setMaxConnectionsPerIp'];
  /** Stops accepting, says BYE to every session, and waits up to `drainMs` for them to go. */
  close(drainMs?: number): Promise<void>;
}

export function startImapServer(opts: ImapServerOptions): Promise<ImapServer> {
  return startSessionListener({
    ...opts,
    component: 'imap',
    refusal: (reason) =>
      reason === 'closing'
        ? '* BYE Server shutting down\r\n'
        : '* BYE Too many connections from your address\r\n',
    create: (socket, secure, startTls) => new ImapConnection(socket, { ...opts, startTls }, secure),
  });
}
