// The POP3 listener (docs/imap-pop3.md): implicit TLS (995; dev 1995) or a
// plain port that offers STLS (110, only when configured).
import {
  type ListenerSetup,
  type SessionListener,
  startSessionListener,
} from '../../core/net/session-listener.ts';
import { Pop3Session, type Pop3SessionOptions } from './session.ts';

export interface Pop3ServerOptions extends Omit<Pop3SessionOptions, 'startTls'>, ListenerSetup {}

export interface Pop3Server {
  port: number;
  /** A reload's certificate for new handshakes (src/core/net/session-listener.ts). */
  setCertificate: SessionListener['setCertificate'];
  setMaxConnectionsPerIp: SessionListener['setMaxConnectionsPerIp'];
  close(drainMs?: number): Promise<void>;
}

export function startPop3Server(opts: Pop3ServerOptions): Promise<Pop3Server> {
  return startSessionListener({
    ...opts,
    component: 'pop3',
    refusal: (reason) =>
      reason === 'closing'
        ? '-ERR [SYS/TEMP] Server shutting down\r\n'
        : '-ERR [IN-USE] Too many connections from your address\r\n',
    create: (socket, secure, startTls) => new Pop3Session(socket, { ...opts, startTls }, secure),
  });
}
