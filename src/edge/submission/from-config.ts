// Builds a submission listener's options from the resolved config and the
// pieces `sealpost serve` already holds (chain view, flow producer, blobs,
// Redis, store), so serve.ts needs only one call per listener. With a store,
// queued mail of an account also gets its Sent copy there.

import bs58 from 'bs58';
import type { FlowProducer } from 'bullmq';
import type { Redis } from 'ioredis';
import { replicationOf } from '../../../delivery/intake/replication.ts';
import type { BlobStore } from '../../core/blobs/blob-store.ts';
import type { Config, SmtpListener } from '../../core/config/index.ts';
import { CredentialSealer } from '../../core/crypto/credential-seal.ts';
import type { CostGuard } from '../../core/limits/cost-guard.ts';
import type { Logger } from '../../core/log.ts';
import type { SpamMetrics } from '../../core/metrics/types.ts';
import { AccountsRepo, type Store } from '../../core/store/index.ts';
import { OutboundLedger } from '../../core/store/outbound-ledger.ts';
import type { ChainView } from '../../mail/chain-view.ts';
import { createDkimSigner } from '../../mail/dkim-sign.ts';
import { readerPublicKeys } from '../../mail/reader-keys/index.ts';
import { walletEncryptionPublicKey } from '../../mail/seal/index.ts';
import { spamFilterFromConfig } from '../../mail/spam/from-config.ts';
import { type ErrorLimitMetrics, errorLimitsFromConfig } from '../mx/error-limit.ts';
import { SendRate } from './send-rate.ts';
import { storeSentCopy } from './sent-copy.ts';
import { SubmissionConfigError, type SubmissionOptions } from './server.ts';
import type { SubmitDeps } from './submit.ts';

export interface ServeParts {
  chain: ChainView;
  flow: FlowProducer;
  blobs: BlobStore;
  /** The edge connection (fails fast, no offline queue). */
  redis: Redis;
  store: Store;
  credentialKey: Uint8Array;
  logger: Logger;
  /** The MX's cost guard; local recipients of submitted mail are charged to it. */
  costGuard?: CostGuard;
  /** Counts the listener's session errors for /metrics. */
  metrics?: ErrorLimitMetrics;
  /** Counts the outbound spam scans ([spam] scan_submission). */
  spamMetrics?: SpamMetrics;
}

/** The hand-off's dependencies from config; also what an HTTP route needs to call submitMessage. */
export function submitDepsFromConfig(
  config: Config,
  // credentialKey is accepted (a whole ServeParts) but only the listener's AUTH needs it; store keeps Sent copies.
  parts: Pick<ServeParts, 'chain' | 'flow' | 'blobs' | 'redis' | 'logger'> & Partial<ServeParts>,
): SubmitDeps {
  return {
    policy: { localDomains: config.smtp.local_domains, postmasterWallet: config.smtp.postmaster_wallet },
    chain: parts.chain,
    accept: {
      blobs: parts.blobs,
      flow: parts.flow,
      attempts: 8,
      backoffMs: 2000,
      replication: replicationOf(config.redis, parts.logger),
    },
    dkim: createDkimSigner(config.spooler.dkim),
    sendRate: new SendRate(parts.redis, config.redis.prefix, {
      perHour: config.smtp.submission_max_per_hour,
      perDay: config.smtp.submission_max_per_day,
    }),
    costGuard: parts.costGuard,
    maxMessageBytes: config.smtp.max_message_bytes,
    maxRecipients: config.smtp.max_recipients,
    hostname: config.smtp.hostname,
    sentCopy: parts.store ? sentCopyFrom(parts.store, parts.blobs, parts.chain) : undefined,
    ledger: parts.store ? new OutboundLedger(parts.store.db) : undefined,
    // [spam] scan_submission: every submission is scored as outbound, with its User, before it is queued.
    spam:
      config.spam.enabled && config.spam.scan_submission
        ? spamFilterFromConfig(config.spam, parts.logger, parts.spamMetrics)
        : undefined,
    logger: parts.logger.child({ component: 'submit' }),
  };
}

/** The Sent copy in the operator's store, sealed like delivered mail (MailboxKey, else the wallet key). */
function sentCopyFrom(store: Store, blobs: BlobStore, chain: ChainView): SubmitDeps['sentCopy'] {
  const deps = {
    db: store.db,
    blobs,
    sealKeyOf: async (wallet: string) => {
      const published = await chain.mailboxKey(wallet);
      return published ? published.pubKey.toBytes() : walletEncryptionPublicKey(bs58.decode(wallet));
    },
    readerKeys: readerPublicKeys(store.db),
  };
  return (copy) => storeSentCopy(deps, copy);
}

export function submissionOptionsFromConfig(
  config: Config,
  listener: SmtpListener,
  bind: { host: string; port: number },
  parts: ServeParts,
): SubmissionOptions {
  if (listener.mode === 'mx') throw new SubmissionConfigError(`listener ${listener.name} is an MX listener`);
  if (listener.tls === 'none') {
    throw new SubmissionConfigError(
      `smtp.listeners "${listener.name}": a submission listener needs TLS (AUTH is only offered under TLS); ` +
        'set tls = "starttls" or use mode = "submissions"',
    );
  }
  return {
    mode: listener.mode,
    host: bind.host,
    port: bind.port,
    hostname: config.smtp.hostname,
    tls: { certFile: config.smtp.tls_cert_file, keyFile: config.smtp.tls_key_file },
    peerCaFile: config.smtp.peer_ca_file,
    maxConnectionsPerIp: config.smtp.max_connections_per_ip,
    maxConnections: config.smtp.max_connections,
    maxSessionMs: config.smtp.max_session_secs * 1000,
    socketTimeoutMs: config.smtp.timeouts.socket_timeout_secs * 1000,
    errorLimits: errorLimitsFromConfig(config.smtp),
    metrics: parts.metrics,
    submit: submitDepsFromConfig(config, parts),
    auth: {
      password: {
        accounts: new AccountsRepo(parts.store.db),
        sealer: new CredentialSealer(parts.credentialKey),
      },
      redis: parts.redis,
      prefix: config.redis.prefix,
    },
    logger: parts.logger,
  };
}
