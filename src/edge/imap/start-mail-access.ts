// Starts the IMAP and POP3 listeners for `sealpost serve`: implicit TLS on
// [imap] port / [pop3] port, plus the STARTTLS ones when starttls_port is
// set, all with the mail host's certificate ([smtp] tls_cert_file and
// tls_key_file). Logins go through the mail password with back-off in
// Redis; deletions release pins and close Email accounts through the same
// queues the admin sweep uses.
import { readFileSync } from 'node:fs';
import type { Connection } from '@solana/web3.js';
import type { Kysely } from 'kysely';
import type { BlobStore } from '../../core/blobs/blob-store.ts';
import type { Config } from '../../core/config/index.ts';
import { CredentialSealer } from '../../core/crypto/credential-seal.ts';
import { acquireWalletLease } from '../../core/limits/lease.ts';
import type { Logger } from '../../core/log.ts';
import type { IdleWakeCause } from '../../core/metrics/types.ts';
import { createRedis } from '../../core/redis/client.ts';
import { AccountsRepo } from '../../core/store/index.ts';
import type { Database } from '../../core/store/types.ts';
import { ChainView, chainCacheOptions } from '../../mail/chain-view.ts';
import { type LoginBackoff, MailLogin } from '../../mail/reader-keys/index.ts';
import { recipientSealKey } from '../../mail/seal/index.ts';
import { spamLearnerFromConfig } from '../../mail/spam/from-config.ts';
import { type Pop3Server, pop3ServerFor } from '../pop3/index.ts';
import { walletOfLogin } from '../submission/password-auth.ts';
import type { MailAccessDeps } from './mail/mail-access.ts';
import { createCopyReleaser } from './mail/release.ts';
import type { MailPush } from './push.ts';
import { type ImapServer, startImapServer } from './server.ts';

const MAILDROP_LOCK_MS = 30_000;

export interface MailAccessListener {
  name: 'imaps' | 'imap' | 'pop3s' | 'pop3';
  host: string;
  port: number;
}

export interface StartMailAccessOptions {
  config: Config;
  db: Kysely<Database>;
  blobs: BlobStore;
  credentialKey: Uint8Array;
  connection: Connection;
  logger: Logger;
  imap: boolean;
  pop3: boolean;
  /** Replace the implicit-TLS listener addresses (tests, --imap-listen / --pop3-listen). */
  overrides?: { imap?: { host: string; port: number }; pop3?: { host: string; port: number } };
  backoff?: LoginBackoff;
  /** Counts spam learning outcomes (`sealpost_spam_learned_total`) and IDLE wake-ups. */
  metrics?: {
    spamLearned(kind: 'spam' | 'ham', outcome: string): void;
    idleWakeup(cause: IdleWakeCause, result: 'changed' | 'unchanged'): void;
  };
  /** IDLE push (`[imap] idle_push`): its subscription opens with the IMAP listeners; absent: IDLE only polls. */
  push?: MailPush;
}

export interface MailAccessServers {
  listeners: MailAccessListener[];
  /** A reload: new handshakes on every IMAP and POP3 listener use this pair; open sessions keep theirs. */
  setCertificate(pem: { cert: Buffer; key: Buffer }): void;
  /** A reload: `[imap]` / `[pop3]` max_connections_per_ip. */
  setLimits(limits: { imapMaxConnectionsPerIp: number; pop3MaxConnectionsPerIp: number }): void;
  close(drainMs?: number): Promise<void>;
}

export class MailAccessConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MailAccessConfigError';
  }
}

function readPem(file: string, key: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new MailAccessConfigError(
      `[smtp] ${key} ${file} is not readable (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): ` +
        'IMAP and POP3 serve TLS with the mail host certificate',
    );
  }
}

export async function startMailAccess(opts: StartMailAccessOptions): Promise<MailAccessServers> {
  const { config } = opts;
  const listeners: MailAccessListener[] = [];
  const closers: ((drainMs?: number) => Promise<void>)[] = [];
  const close = async (drainMs?: number) => {
    for (const fn of closers.splice(0).reverse()) await fn(drainMs).catch(() => {});
  };
  const imapServers: ImapServer[] = [];
  const pop3Servers: Pop3Server[] = [];
  const servers: MailAccessServers = {
    listeners,
    close,
    // Each listener builds its context before swapping, so one that throws keeps its pair.
    setCertificate(pem) {
      for (const server of [...imapServers, ...pop3Servers]) server.setCertificate(pem);
    },
    setLimits(limits) {
      for (const server of imapServers) server.setMaxConnectionsPerIp(limits.imapMaxConnectionsPerIp);
      for (const server of pop3Servers) server.setMaxConnectionsPerIp(limits.pop3MaxConnectionsPerIp);
    },
  };
  if (!opts.imap && !opts.pop3) return servers;
  // [mail_hosts] may name another host, so a mismatch is worth a warning, not a refusal.
  for (const proto of ['imap', 'pop3'] as const) {
    if (
      opts[proto] &&
      config.mail_hosts[`${proto}_tls`] === 'starttls' &&
      config[proto].starttls_port === undefined
    ) {
      opts.logger.warn(
        { key: `mail_hosts.${proto}_tls` },
        `clients are told to use ${proto.toUpperCase()} with STARTTLS, but [${proto}] starttls_port is not set here`,
      );
    }
  }
  const cert = readPem(config.smtp.tls_cert_file, 'tls_cert_file');
  const key = readPem(config.smtp.tls_key_file, 'tls_key_file');
  const redis = createRedis(config.redis, {
    maxRetriesPerRequest: 1,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  });
  redis.on('error', (err) => opts.logger.warn({ err: err.message }, 'redis (imap/pop3) connection error'));
  closers.push(async () => {
    await redis.quit().catch(() => redis.disconnect());
  });
  const releaser = createCopyReleaser(redis, config.redis.prefix);
  closers.push(() => releaser.close());
  const sealer = new CredentialSealer(opts.credentialKey);
  const chain = new ChainView({
    connection: opts.connection,
    programId: config.chain.program_id,
    ...chainCacheOptions(config.smtp),
  });
  const policy = { localDomains: config.smtp.local_domains, postmasterWallet: config.smtp.postmaster_wallet };
  const login = new MailLogin({
    db: opts.db,
    accounts: new AccountsRepo(opts.db),
    sealer,
    redis,
    prefix: config.redis.prefix,
    walletOf: (name) => walletOfLogin(name, policy, chain),
    backoff: opts.backoff,
  });
  const mail: MailAccessDeps = {
    db: opts.db,
    blobs: opts.blobs,
    sealKeyOf: async (wallet) =>
      (await recipientSealKey(opts.connection, config.chain.program_id, wallet)).publicKey,
    releaseCopies: (rows) => releaser.release(rows),
    // Moves into and out of Junk train rspamd ([spam] learn_from_junk).
    learner: spamLearnerFromConfig(config.spam, opts.logger, opts.metrics),
  };
  try {
    if (opts.imap) {
      opts.push?.startSubscriber();
      const common = {
        login,
        mail,
        cert,
        key,
        maxAppendBytes: config.smtp.max_message_bytes,
        idlePollMs: config.imap.idle_poll_ms,
        push: opts.push,
        metrics: opts.metrics,
        idleTimeoutMs: config.imap.autologout_secs * 1000,
        preAuthTimeoutMs: 60_000,
        maxConnectionsPerIp: config.imap.max_connections_per_ip,
        logger: opts.logger,
      };
      const at = opts.overrides?.imap ?? { host: config.imap.host, port: config.imap.port };
      const implicit = await startImapServer({ ...common, ...at, tls: 'implicit' });
      closers.push((ms) => implicit.close(ms));
      imapServers.push(implicit);
      listeners.push({ name: 'imaps', host: at.host, port: implicit.port });
      if (config.imap.starttls_port !== undefined) {
        const plain = await startImapServer({
          ...common,
          host: config.imap.host,
          port: config.imap.starttls_port,
          tls: 'starttls',
        });
        closers.push((ms) => plain.close(ms));
        imapServers.push(plain);
        listeners.push({ name: 'imap', host: config.imap.host, port: plain.port });
      }
    }
    if (opts.pop3) {
      const pop3 = await pop3ServerFor({
        config,
        login,
        mail,
        // RFC 1939's exclusive maildrop lock, as a wallet lease: renewed while
        // the session lives, gone within MAILDROP_LOCK_MS if the process dies.
        lockMaildrop: (wallet) =>
          acquireWalletLease(redis, config.redis.prefix, wallet, 'pop3-maildrop', {
            ttlMs: MAILDROP_LOCK_MS,
          }),
        cert,
        key,
        logger: opts.logger,
        override: opts.overrides?.pop3,
      });
      closers.push((ms) => pop3.close(ms));
      listeners.push(...pop3.listeners);
      pop3Servers.push(...pop3.servers);
    }
  } catch (err) {
    await close();
    throw err;
  }
  return servers;
}
