// Listening and draining for every smtp-server listener (MX, submission):
// listen resolves with the bound port (0 picks a free one) or rejects with
// the bind error; close stops accepting and waits for sessions up to a limit;
// a reload replaces the certificate of a running listener.
import type { AddressInfo } from 'node:net';
import { createSecureContext } from 'node:tls';
import type { SMTPServer } from 'smtp-server';

export async function listenSmtp(server: SMTPServer, host: string, port: number): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(port, host, () => {
      server.server.off('error', reject);
      resolve();
    });
  });
  return (server.server.address() as AddressInfo).port;
}

export function closeSmtp(server: SMTPServer, drainMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, drainMs);
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * A reload's certificate for an smtp-server listener: new STARTTLS and
 * implicit-TLS handshakes use it, open sessions keep theirs. The pair is
 * built into a context first, so one that does not load throws before
 * anything changes; should smtp-server's own rebuild throw anyway, its
 * previous contexts and options are put back.
 */
export function replaceSmtpCertificate(
  server: SMTPServer,
  pem: { cert: Buffer; key: Buffer; ca?: Buffer },
): void {
  createSecureContext(pem);
  const contexts = server.secureContext;
  const options = server.options;
  const before = { cert: options.cert, key: options.key, ca: options.ca };
  try {
    server.updateSecureContext(pem);
  } catch (err) {
    Object.assign(options, before);
    server.secureContext = contexts;
    throw err;
  }
}
