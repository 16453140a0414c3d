// POP3 for `sealpost serve`: implicit TLS on [pop3] port and, when
// starttls_port is set, a plain listener offering STLS.
import type { Config } from '../../core/config/index.ts';
import type { Logger } from '../../core/log.ts';
import type { MailLogin } from '../../mail/reader-keys/index.ts';
import type { MailAccessDeps } from '../imap/mail/mail-access.ts';
import { type Pop3Server, startPop3Server } from './server.ts';
import type { MaildropLock } from './session.ts';

export { type Pop3Server, type Pop3ServerOptions, startPop3Server } from './server.ts';

export interface Pop3Listeners {
  listeners: { name: 'pop3s' | 'pop3'; host: string; port: number }[];
  /** Every POP3 listener here (implicit and STLS) gets the reload's values. */
  servers: Pop3Server[];
  close(drainMs?: number): Promise<void>;
}

export async function pop3ServerFor(opts: {
  config: Config;
  login: MailLogin;
  mail: MailAccessDeps;
  lockMaildrop: (wallet: string) => Promise<MaildropLock | null>;
  cert: Buffer;
  key: Buffer;
  logger: Logger;
  override?: { host: string; port: number };
}): Promise<Pop3Listeners> {
  const { config } = opts;
  const common = {
    login: opts.login,
    mail: opts.mail,
    lockMaildrop: opts.lockMaildrop,
    cert: opts.cert,
    key: opts.key,
    timeoutMs: config.pop3.autologout_secs * 1000,
    maxConnectionsPerIp: config.pop3.max_connections_per_ip,
    logger: opts.logger,
  };
  const at = opts.override ?? { host: config.pop3.host, port: config.pop3.port };
  const implicit = await startPop3Server({ ...common, ...at, tls: 'implicit' });
  const out: Pop3Listeners = {
    listeners: [{ name: 'pop3s', host: at.host, port: implicit.port }],
    servers: [implicit],
    close: (ms) => implicit.close(ms),
  };
  if (config.pop3.starttls_port !== undefined) {
    try {
      const plain = await startPop3Server({
        ...common,
        host: config.pop3.host,
        port: config.pop3.starttls_port,
        tls: 'starttls',
      });
      out.listeners.push({ name: 'pop3', host: config.pop3.host, port: plain.port });
      out.servers.push(plain);
      out.close = async (ms) => {
        await Promise.all([implicit.close(ms), plain.close(ms)]);
      };
    } catch (err) {
      await implicit.close();
      throw err;
    }
  }
  return out;
}
