// Listening and draining for every smtp-server listener (MX, submission):
// listen resolves with the bound port (0 picks a free one) or rejects with
// the bind error; close stops accepting and waits for sessions up to a limit.
import type { AddressInfo } from 'node:net';
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
