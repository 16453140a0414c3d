// Two additions to smtp-server's AUTH handling, active only on servers that
// register for them (the MX and any other smtp-server in the process are
// left exactly as the library made them):
//   - AUTH before TLS answers `538 5.7.11` (RFC 4954 §6) before any
//     mechanism runs, so no client is ever prompted for a password in clear;
//   - SASL EXTERNAL (RFC 4422 appendix A), which the library lacks: the
//     identity comes from the TLS client certificate, judged by the server's
//     handler; the optional authorization identity is passed along.
// Both hook into the library's own tables (the connection's command
// handlers and the SASL mechanism map that AUTH looks mechanisms up in).

import type { SMTPServer, SMTPServerSession } from 'smtp-server';
import SASL from 'smtp-server/lib/sasl.js';
import { SMTPConnection } from 'smtp-server/lib/smtp-connection.js';
import { SmtpReply } from '../../mail/smtp-error.ts';

/** Decides an EXTERNAL attempt: the session user on success, else the reply to send. */
export type ExternalAuthHandler = (session: SMTPServerSession, authzid: string) => Promise<unknown>;

const tlsRequired = new WeakSet<SMTPServer>();
const externalHandlers = new WeakMap<SMTPServer, ExternalAuthHandler>();
let installed = false;

type Done = () => void;

function install(): void {
  if (installed) return;
  installed = true;
  const proto = SMTPConnection.prototype;
  const handlerAuth = proto.handler_AUTH;
  proto.handler_AUTH = function (this: SMTPConnection, command: Buffer, callback: Done): void {
    if (tlsRequired.has(this._server) && !this.secure) {
      this.send(538, '5.7.11 Encryption required for requested authentication mechanism');
      callback();
    } else {
      handlerAuth.call(this, command, callback);
    }
  };
  (SASL as unknown as Record<string, unknown>).SASL_EXTERNAL = saslExternal;
}

function saslExternal(this: SMTPConnection, args: string[], callback: Done): void {
  const handler = externalHandlers.get(this._server);
  if (!handler) {
    this.send(504, '5.5.4 Unrecognized authentication type');
    callback();
  } else if (args.length > 1) {
    this.send(501, '5.5.4 Syntax: AUTH EXTERNAL [initial-response]');
    callback();
  } else if (args.length === 1) {
    finishExternal(this, handler, args[0] as string, callback);
  } else {
    // No initial response: ask for one (the library clears _nextHandler when it runs it).
    this._nextHandler = (line: Buffer, next: Done) => finishExternal(this, handler, line.toString(), next);
    this.send(334);
    callback();
  }
}

function finishExternal(
  conn: SMTPConnection,
  handler: ExternalAuthHandler,
  response: string,
  done: Done,
): void {
  const token = response.trim();
  // RFC 4954: "=" is an empty initial response; on a continuation line, empty is empty.
  const authzid = token === '=' || token === '' ? '' : Buffer.from(token, 'base64').toString('utf8');
  if (token === '*') {
    conn.send(501, '5.0.0 Authentication aborted');
    done();
  } else if (SASL.CONTROL_CHARS.test(authzid)) {
    conn.send(501, '5.5.2 Invalid authorization identity');
    done();
  } else {
    handler(conn.session, authzid)
      .then((user) => {
        conn.session.user = user as SMTPServerSession['user'];
        conn.session.transmissionType = conn._transmissionType();
        conn.send(235, 'Authentication successful');
      })
      .catch((err: unknown) => {
        const reply =
          err instanceof SmtpReply ? err : new SmtpReply(454, '4.7.0', 'Temporary authentication failure');
        conn.send(reply.responseCode, reply.message);
      })
      .finally(done);
  }
}

/** AUTH on this server is refused with 538 until the connection is under TLS. */
export function requireTlsForAuth(server: SMTPServer): void {
  install();
  tlsRequired.add(server);
}

/** Offers SASL EXTERNAL on this server (list `EXTERNAL` in its authMethods too). */
export function enableExternalAuth(server: SMTPServer, handler: ExternalAuthHandler): void {
  install();
  externalHandlers.set(server, handler);
}
