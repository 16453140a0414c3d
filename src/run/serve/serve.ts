// `sealpost serve` and `sealpost worker`: the long-running processes. serve
// runs the SMTP listeners, the account API and (unless told otherwise) the
// pipeline workers in one process; worker runs only the workers, so an
// operator can scale them out against the same Redis and store.

import type { Keypair } from '@solana/web3.js';
import { FlowProducer } from 'bullmq';
import type { Redis } from 'ioredis';
import { priorityFeePolicyOf } from '../../../chain/client/compute-budget.ts';
import { DELIVERY_ATTEMPTS } from '../../../delivery/backoff.ts';
import { replicationOf } from '../../../delivery/intake/replication.ts';
import type { PipelineDeps } from '../../../delivery/pipeline.ts';
import { reportingCaps } from '../../../delivery/priority-fee.ts';
import { type ReconcileRunner, reconcileMetrics, startReconcile } from '../../../delivery/reconcile.ts';
import { rentRecoveryMetrics, rentRecoveryPolicyOf } from '../../../delivery/rent-recovery.ts';
import { type InboundWorkers, startInboundWorkers } from '../../../delivery/worker.ts';
import { createOperatorPinner } from '../../../pinning/operator.ts';
import { type LocalDelivery, startSpooler } from '../../../spooler/index.ts';
import type { Pinner } from '../../contracts/pinner.ts';
import type { BlobStore } from '../../core/blobs/blob-store.ts';
import { openBlobStore } from '../../core/blobs/open-blob-store.ts';
import { blobSweepGraceMs } from '../../core/blobs/orphan-sweep.ts';
import { createConnection } from '../../core/chain-rpc.ts';
import type { Config, SmtpListener } from '../../core/config/index.ts';
import { loadCredentialKey } from '../../core/crypto/credential-seal.ts';
import { createDnsResolver } from '../../core/dns/resolver.ts';
import { readAdminTokenFile } from '../../core/keys/admin-token.ts';
import { readKeypairFile } from '../../core/keys/keypair-file.ts';
import { publicationLimitsFromConfig } from '../../core/limits/cost-guard.ts';
import { MetricsRegistry } from '../../core/limits/metrics.ts';
import { WindowLimiter } from '../../core/limits/window.ts';
import type { Logger } from '../../core/log.ts';
import { Readiness } from '../../core/metrics/health.ts';
import {
  chainRpcCheck,
  operatorPinCheck,
  redisCheck,
  spoolReconcileCheck,
  storeCheck,
} from '../../core/metrics/health-checks.ts';
import { metricsRoute, SealpostMetrics } from '../../core/metrics/index.ts';
import type { MetricsSource } from '../../core/metrics/route.ts';
import { httpFetch } from '../../core/net/http-fetch.ts';
import {
  AccountsRepo,
  IntentsRepo,
  MessagesRepo,
  openStore,
  SenderEvaluationsRepo,
  type Store,
} from '../../core/store/index.ts';
import { setMailChangeSink } from '../../core/store/mail-events.ts';
import { OutboundLedger } from '../../core/store/outbound-ledger.ts';
import { readExtraCa } from '../../core/tls/extra-ca.ts';
import { AdminAuth } from '../../edge/api/auth/admin-auth.ts';
import type { ApiRateLimits } from '../../edge/api/context.ts';
import { mailRoutesFromConfig } from '../../edge/api/routes/mail.ts';
import { marketRoutes } from '../../edge/api/routes/market.ts';
import { startApiServer } from '../../edge/api/server.ts';
import { checkLocalDomains, domainCheckWarning } from '../../edge/domaind/domain-check.ts';
import { MailPush } from '../../edge/imap/push.ts';
import { type MailAccessListener, startMailAccess } from '../../edge/imap/start-mail-access.ts';
import { startMetricsServer } from '../../edge/metrics-server.ts';
import { errorLimitsFromConfig } from '../../edge/mx/error-limit.ts';
import { type MxServer, startMx } from '../../edge/mx/mx-server.ts';
import { reverseNameLookup } from '../../edge/mx/reverse-name.ts';
import { SenderAuth, type SenderEvaluation } from '../../edge/mx/sender-auth.ts';
import { type ServeParts, submissionOptionsFromConfig } from '../../edge/submission/from-config.ts';
import { startSubmission } from '../../edge/submission/server.ts';
import { ChainView, chainCacheOptions } from '../../mail/chain-view.ts';
import { dmarcAdminRoutes } from '../../mail/dmarc/admin-route.ts';
import { ingestDmarcMessage, isDmarcReportRecipient } from '../../mail/dmarc/ingest.ts';
import { type LoginBackoff, readerPublicKeys } from '../../mail/reader-keys/index.ts';
import { resolveRecipient } from '../../mail/recipients.ts';
import { dnsblFromConfig } from '../../mail/spam/dnsbl-from-config.ts';
import { spamFilterFromConfig } from '../../mail/spam/from-config.ts';
import { toWeb3Keypair } from './keys.ts';
import { startCostGuard } from './limits-from-config.ts';
import { startMaintenance } from './maintenance.ts';
import { edgeRedis, workerRedis } from './redis-connections.ts';
import { type ReloadReport, ServeReloader } from './reload.ts';

export interface ServeOptions {
  config: Config;
  logger: Logger;
  /** What to run; default: everything serve runs. */
  components?: { smtp?: boolean; workers?: boolean; api?: boolean; spooler?: boolean };
  /** Account API address overriding [api] host/port (port 0: OS-chosen). */
  apiListen?: { host: string; port: number };
  /** Listener addresses overriding the config's, in the config's listener order. */
  listenerOverrides?: { host: string; port: number }[];
  /** Replaces the operator pin built from [ipfs] (tests use this to count calls, never to fake results). */
  operatorPin?: Pinner;
  workerConcurrency?: number;
  /**
   * Run the parts a deployment needs once, not once per process (default
   * true): the maintenance queue's worker and schedules, the start-up check
   * of the local domains on chain. `serve --workers N` gives them to one
   * serving process.
   */
  singletons?: boolean;
  /** What GET /metrics renders (default: this process's figures); serve --workers N sums its processes. */
  metricsSource?: (own: SealpostMetrics) => MetricsSource;
  /** A /metrics listener of its own (`sealpost worker --metrics-listen`); serve's API has /metrics anyway. */
  metricsListen?: { host: string; port: number };
  /** IMAP/POP3 (default: with the SMTP listeners, when [mail_hosts] enables them) and listener overrides. */
  mailAccess?: {
    imap?: boolean;
    pop3?: boolean;
    imapListen?: { host: string; port: number };
    pop3Listen?: { host: string; port: number };
    /** Login failure back-off (tests shorten it); default DEFAULT_LOGIN_BACKOFF. */
    loginBackoff?: LoginBackoff;
  };
}

export interface RunningListener {
  name: string;
  mode: SmtpListener['mode'];
  tls: SmtpListener['tls'];
  host: string;
  port: number;
}

export interface Serving {
  listeners: RunningListener[];
  /** The account API's base URL, when it runs in this process. */
  apiUrl?: string;
  workers?: InboundWorkers;
  store: Store;
  /** This process's counters and gauges (cost guard, balance), for a /metrics route. */
  metrics: MetricsRegistry;
  /** Everything GET /metrics exposes (src/metrics; includes `metrics`). */
  prometheus: SealpostMetrics;
  /** With `metricsListen`: the metrics listener's base URL. */
  metricsUrl?: string;
  /** The IMAP and POP3 listeners running in this process. */
  mailAccessListeners?: MailAccessListener[];
  /**
   * Re-reads the certificates, the admin token and the reloadable config
   * keys from the config `read` returns (SIGHUP, `sealpost reload`;
   * src/run/serve/reload.ts). Open sessions stay; when `read` throws or anything
   * does not load, nothing changes and the report says why.
   */
  reload(read: () => Config): ReloadReport;
  close(): Promise<void>;
}

/** `[spooler.dmarc_rua_ingest]`: reports delivered to the report address are also parsed and stored. */
function dmarcIngestHook(
  config: Config,
  store: Store,
  blobs: BlobStore,
  log: Logger,
): PipelineDeps['afterStore'] {
  if (!config.spooler.dmarc_rua_ingest.enabled) return undefined;
  return async (data) => {
    if (!isDmarcReportRecipient(config, data.envelope.to)) return;
    const raw = await blobs.read(data.spoolKey);
    const result = await ingestDmarcMessage(
      {
        db: store.db,
        blobs,
        localDomains: config.smtp.local_domains,
        maxReportBytes: config.spooler.dmarc_rua_ingest.max_report_bytes,
        logger: log,
      },
      new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength),
      { messageId: data.msgid },
    );
    log.info({ msgid: data.msgid, reports: result.reports?.length ?? 0 }, 'DMARC report message ingested');
  };
}

/** DSNs (and any spooler mail) for our own domains go to the inbound pipeline, resolved as the MX resolves. */
function localDelivery(config: Config, chain: ChainView): LocalDelivery {
  const policy = { localDomains: config.smtp.local_domains, postmasterWallet: config.smtp.postmaster_wallet };
  return {
    domains: config.smtp.local_domains,
    resolve: async (address) => {
      const r = await resolveRecipient(address, policy, chain);
      return r.ok ? r.recipient : null;
    },
    attempts: DELIVERY_ATTEMPTS,
    backoffMs: 2000,
  };
}

export class ServeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ServeError';
  }
}

function loadAuthority(config: Config): Keypair {
  const file = config.chain.authority_key_file;
  if (!file) {
    throw new ServeError(
      '[chain] authority_key_file is not set: the domain authority key signs SendMail for relayed mail. ' +
        'Create one with `sealpost keygen authority FILE` and publish its address at _solana.authority.<domain>.',
    );
  }
  return toWeb3Keypair(readKeypairFile(file));
}

/**
 * What serve reads before it opens anything: the domain authority key and the
 * API credential key. `sealpost serve --workers N` reads them in its
 * supervisor too, before forking, so an unreadable key file is one clear
 * error at once instead of N processes failing at start through the restart
 * back-off.
 */
export function loadServeKeys(config: Config): { authority: Keypair; credentialKey: Uint8Array } {
  return {
    authority: loadAuthority(config),
    credentialKey: loadCredentialKey(config.api.credential_key_file),
  };
}

export async function startServe(opts: ServeOptions): Promise<Serving> {
  const { config } = opts;
  const log = opts.logger;
  const runSmtp = opts.components?.smtp ?? true;
  const runWorkers = opts.components?.workers ?? true;
  const runApi = opts.components?.api ?? runSmtp;
  const singletons = opts.singletons ?? true;
  const closers: (() => Promise<void>)[] = [];
  const metrics = new MetricsRegistry();
  const prometheus = new SealpostMetrics({ extra: [metrics] });
  const reloader = new ServeReloader({ config, logger: log, metrics });
  // Children made without a level of their own follow it (pino children inherit through the prototype).
  reloader.onSettings((next) => {
    log.level = next.log.level;
  });
  const close = async () => {
    for (const fn of closers.splice(0).reverse()) {
      await fn().catch((err: Error) => log.warn({ err: err.message }, 'shutdown step failed'));
    }
  };

  try {
    const { authority, credentialKey } = loadServeKeys(config);
    const store = await openStore({ url: config.store.url, dataDir: config.store.data_dir });
    closers.push(() => store.close());
    // [blobs] backend: the filesystem under the data directory, or the store's PostgreSQL.
    const blobs = openBlobStore(config, store);
    const connection = createConnection(config.chain.rpc_url, {
      commitment: config.chain.commitment,
      wsUrl: config.chain.ws_url,
      maxRps: config.chain.max_rps,
      maxWaitMs: config.chain.rpc_max_wait_secs * 1000,
      log: log.child({ component: 'chain-rpc' }),
    });
    // One view of the chain (and one cache) for the MX and the spooler's local hand-off.
    const chainView = new ChainView({
      connection,
      programId: config.chain.program_id,
      ...chainCacheOptions(config.smtp),
    });
    const prefix = config.redis.prefix;
    // IMAP IDLE push: every commit through this store handle is published to Redis
    // after it lands (src/core/store/mail-events.ts, src/edge/imap/push.ts).
    const mailPush = new MailPush({
      redis: config.redis,
      prefix,
      logger: log.child({ component: 'imap-push' }),
      metrics: prometheus,
      livePollMs: config.imap.idle_push_poll_ms,
      fallbackPollMs: config.imap.idle_poll_ms,
    });
    setMailChangeSink(store.db, mailPush);
    closers.push(async () => {
      setMailChangeSink(store.db, undefined);
      await mailPush.close();
    });
    let metricsRedis: Redis | undefined;
    if (runApi || opts.metricsListen) {
      // Its own fail-fast connection: a scrape during a Redis outage answers without depths instead of hanging.
      metricsRedis = edgeRedis(config.redis, log);
      const r = metricsRedis;
      closers.push(async () => {
        await prometheus.close();
        await r.quit().catch(() => r.disconnect());
      });
      prometheus.watchQueues(r, prefix);
    }
    // GET /ready: what this process uses; the operator pin only where workers pin.
    const readinessChecks = () => [
      ...(metricsRedis ? [redisCheck(metricsRedis), spoolReconcileCheck(metricsRedis, prefix)] : []),
      storeCheck(store.db),
      chainRpcCheck(config.chain.rpc_url, config.chain.max_rps),
      ...(runWorkers ? [operatorPinCheck(config.ipfs)] : []),
    ];
    // The pin client posts every sealed message: the lean fetch (src/core/net/http-fetch.ts) keeps that cheap.
    const operatorPin = opts.operatorPin ?? createOperatorPinner(config.ipfs, { fetch: httpFetch() });

    let workers: InboundWorkers | undefined;
    if (runWorkers) {
      workers = await startInboundWorkers({
        redis: () => workerRedis(config.redis, log),
        prefix,
        connection,
        programId: config.chain.program_id,
        authority,
        blobs,
        operatorPin,
        // SQLite: concurrent deliveries share one store commit (MessagesRepo groupCommit).
        // PostgreSQL runs them in parallel on its pool and shares WAL flushes itself.
        messages: new MessagesRepo(store.db, { groupCommit: store.dialect === 'sqlite' }),
        accounts: new AccountsRepo(store.db),
        credentialKey,
        localDomains: config.smtp.local_domains,
        hostname: config.smtp.hostname,
        logger: log,
        concurrency: opts.workerConcurrency,
        pipelineSendMail: config.chain.pipeline_sendmail,
        statusPollMs: config.chain.status_poll_ms,
        sendMailBatch: {
          max: config.chain.sendmail_batch_max,
          waitMs: config.chain.sendmail_batch_wait_ms,
        },
        // [chain] priority_fee, priority_fee_percentile, max_priority_fee_lamports.
        priorityFee: reportingCaps(priorityFeePolicyOf(config.chain), log, metrics),
        metrics: prometheus,
        recipientPinTimeoutMs: config.ipfs.recipient_pin_timeout_secs * 1000,
        afterStore: dmarcIngestHook(config, store, blobs, log),
        readerKeys: readerPublicKeys(store.db),
        // [chain] rent_recovery_days & co.: the opt-in sweep (delivery/rent-recovery.ts).
        rentRecovery: rentRecoveryPolicyOf(config.chain),
        rentRecoveryMetrics: rentRecoveryMetrics(metrics),
        // SendMail intents: a job that lost its Redis state settles its own send (delivery/pipeline.ts).
        intents: new IntentsRepo(store.db),
        // The outbound ledger: the pipeline's DSNs survive Redis losing its data (src/core/store/outbound-ledger.ts).
        outboundLedger: new OutboundLedger(store.db),
      });
      const w = workers;
      closers.push(() => w.close());
      // The spool reconcile: at start and every few minutes, one run at a time across processes.
      const reconcileRedis = workerRedis(config.redis, log);
      const reconcile: ReconcileRunner = startReconcile({
        redis: reconcileRedis,
        prefix,
        blobs,
        db: store.db,
        policy: { attempts: DELIVERY_ATTEMPTS, backoffMs: 2000 },
        logger: log,
        metrics: reconcileMetrics(metrics),
      });
      closers.push(async () => {
        await reconcile.close();
        await reconcileRedis.quit().catch(() => reconcileRedis.disconnect());
      });
      if (singletons) {
        const maintenance = await startMaintenance({
          redis: () => workerRedis(config.redis, log),
          prefix,
          prune: { db: store.db, blobs, retention: config.spooler.dmarc_rua_ingest, logger: log },
          sweep: {
            db: store.db,
            blobs,
            graceMs: blobSweepGraceMs(config.spooler.lifetime_secs),
            logger: log,
          },
          logger: log,
        });
        closers.push(() => maintenance.close());
      }
      log.info({ prefix }, 'pipeline workers running');
    }
    // The outbound spooler: DSNs from the pipeline and submitted mail leave from here.
    if (opts.components?.spooler ?? runWorkers) {
      const spooler = await startSpooler({
        redis: () => workerRedis(config.redis, log),
        prefix,
        blobs,
        resolver: createDnsResolver({ servers: config.dns.resolvers }),
        config: config.spooler,
        logger: log,
        db: store.db,
        extraCa: config.tls.extra_ca_file ? readExtraCa(config.tls.extra_ca_file) : undefined,
        local: localDelivery(config, chainView),
      });
      closers.push(() => spooler.close());
      log.info({ prefix }, 'outbound spooler running');
    }

    // Warn (never fail) when a local domain is not authorized on chain to our authority key.
    if (singletons)
      checkLocalDomains({
        connection,
        programId: config.chain.program_id,
        domains: config.smtp.local_domains,
        authority: authority.publicKey,
      })
        .then((results) => {
          for (const r of results) {
            const warning = domainCheckWarning(r, authority.publicKey.toBase58());
            if (warning) log.warn({ domain: r.domain, status: r.status }, warning);
          }
        })
        .catch((err: Error) => log.warn({ err: err.message }, 'could not check the local domains on chain'));

    const listeners: RunningListener[] = [];
    // The webmail's compose-through-the-server uses the submission listeners' parts.
    let submitParts: ServeParts | undefined;
    if (runSmtp) {
      const edge: Redis = edgeRedis(config.redis, log);
      closers.push(async () => {
        await edge.quit().catch(() => edge.disconnect());
      });
      const flow = new FlowProducer({ connection: edge, prefix });
      closers.push(() => flow.close());
      const cost = await startCostGuard({
        config,
        redis: edge,
        connection,
        authority: authority.publicKey,
        resolveAlias: (alias) => chainView.alias(alias),
        logger: log,
        metrics,
      });
      closers.push(async () => cost.stop());
      reloader.onSettings((next) => cost.guard.setLimits(publicationLimitsFromConfig(next.limits)));
      const spam = spamFilterFromConfig(config.spam, log, prometheus);
      // DNS block- and allowlists: one checker (and one cache) for every MX listener.
      const dnsbl = dnsblFromConfig(config, log, prometheus);
      if (dnsbl) closers.push(async () => dnsbl.close());
      const senderAuth = new SenderAuth({
        mode: config.smtp.sender_auth,
        mta: config.smtp.hostname,
        resolvers: config.dns.resolvers,
      });
      // The Received field's client name: one short try per query, never past 2 s from connect.
      const reverseName = reverseNameLookup(
        createDnsResolver({ servers: config.dns.resolvers, timeoutMs: 1000, tries: 1 }),
        2000,
        { ttlMs: config.dns.reverse_cache_secs * 1000 },
      );
      const evaluations = new SenderEvaluationsRepo(store.db);
      const onEvaluation = (e: SenderEvaluation) => {
        evaluations
          .add(e)
          .catch((err: Error) => log.warn({ err: err.message }, 'could not record a sender evaluation'));
      };
      const connectionLimiter = new WindowLimiter(edge);
      submitParts = {
        chain: chainView,
        flow,
        blobs,
        redis: edge,
        store,
        credentialKey,
        logger: log,
        costGuard: cost.guard,
        metrics: prometheus,
        spamMetrics: prometheus,
      };
      const mxListeners = config.smtp.listeners.map((l, i) => ({ l, over: opts.listenerOverrides?.[i] }));
      for (const { l, over } of mxListeners) {
        if (l.mode !== 'mx') {
          const bind = { host: over?.host ?? l.host, port: over?.port ?? l.port };
          const sub = await startSubmission(submissionOptionsFromConfig(config, l, bind, submitParts));
          closers.push(() => sub.close(config.smtp.timeouts.shutdown_drain_secs * 1000));
          reloader.addCertificateTarget({
            name: l.name,
            peers: sub.peers,
            setCertificate: (pem) => sub.setCertificate(pem),
          });
          reloader.onSettings((next) =>
            sub.setLimits({ maxConnectionsPerIp: next.smtp.max_connections_per_ip }),
          );
          listeners.push({ name: l.name, mode: l.mode, tls: l.tls, host: bind.host, port: sub.port });
          continue;
        }
        const server: MxServer = await startMx({
          host: over?.host ?? l.host,
          port: over?.port ?? l.port,
          hostname: config.smtp.hostname,
          policy: {
            localDomains: config.smtp.local_domains,
            postmasterWallet: config.smtp.postmaster_wallet,
          },
          maxMessageBytes: config.smtp.max_message_bytes,
          maxRecipients: config.smtp.max_recipients,
          maxConnectionsPerIp: config.smtp.max_connections_per_ip,
          maxConnections: config.smtp.max_connections,
          maxSessionMs: config.smtp.max_session_secs * 1000,
          socketTimeoutMs: config.smtp.timeouts.socket_timeout_secs * 1000,
          tls:
            l.tls === 'starttls'
              ? { certFile: config.smtp.tls_cert_file, keyFile: config.smtp.tls_key_file }
              : undefined,
          chain: chainView,
          senderAuth,
          reverseName,
          onEvaluation,
          costGuard: cost.guard,
          metrics: prometheus,
          errorLimits: errorLimitsFromConfig(config.smtp),
          spam,
          dnsbl,
          connectionRate: {
            limiter: connectionLimiter,
            prefix,
            perMinute: config.smtp.connections_per_ip_per_minute,
          },
          accept: {
            blobs,
            flow,
            attempts: DELIVERY_ATTEMPTS,
            backoffMs: 2000,
            replication: replicationOf(config.redis, log, metrics),
          },
          logger: log,
        });
        closers.push(() => server.close(config.smtp.timeouts.shutdown_drain_secs * 1000));
        if (l.tls === 'starttls')
          reloader.addCertificateTarget({
            name: l.name,
            setCertificate: (pem) => server.setCertificate(pem),
          });
        reloader.onSettings((next) =>
          server.setLimits({
            maxConnectionsPerIp: next.smtp.max_connections_per_ip,
            connectionsPerIpPerMinute: next.smtp.connections_per_ip_per_minute,
          }),
        );
        listeners.push({
          name: l.name,
          mode: l.mode,
          tls: l.tls,
          host: over?.host ?? l.host,
          port: server.port,
        });
      }
    }
    let apiUrl: string | undefined;
    if (runApi) {
      const apiRedis = workerRedis(config.redis, log);
      closers.push(async () => {
        await apiRedis.quit().catch(() => apiRedis.disconnect());
      });
      // Held here so a reload can replace them under the running API.
      const adminAuth = new AdminAuth(readAdminTokenFile(config.api.admin_token_file));
      const rateLimits: ApiRateLimits = {
        ipPerMin: config.api.rate_limit_ip_per_min,
        walletPerMin: config.api.rate_limit_wallet_per_min,
      };
      reloader.setAdminAuth(adminAuth);
      reloader.onSettings((next) => {
        rateLimits.ipPerMin = next.api.rate_limit_ip_per_min;
        rateLimits.walletPerMin = next.api.rate_limit_wallet_per_min;
      });
      const api = await startApiServer({
        config,
        host: opts.apiListen?.host,
        port: opts.apiListen?.port,
        store,
        redis: apiRedis,
        logger: log,
        adminAuth,
        rateLimits,
        readinessChecks: readinessChecks(),
        plugins: [
          dmarcAdminRoutes({ db: store.db, blobs }),
          metricsRoute(opts.metricsSource?.(prometheus) ?? prometheus),
          mailRoutesFromConfig(config, store, blobs, submitParts),
          marketRoutes({ connection, programId: config.chain.program_id, db: store.db }),
        ],
      });
      closers.push(() => api.close());
      apiUrl = api.url;
      log.info({ url: api.url }, 'account API listening');
    }
    const access = await startMailAccess({
      config,
      db: store.db,
      blobs,
      credentialKey,
      connection,
      logger: log,
      imap: (opts.mailAccess?.imap ?? runSmtp) && config.mail_hosts.imap_enabled,
      pop3: (opts.mailAccess?.pop3 ?? runSmtp) && config.mail_hosts.pop3_enabled,
      overrides: { imap: opts.mailAccess?.imapListen, pop3: opts.mailAccess?.pop3Listen },
      backoff: opts.mailAccess?.loginBackoff,
      metrics: prometheus,
      push: config.imap.idle_push ? mailPush : undefined,
    });
    closers.push(() => access.close(config.smtp.timeouts.shutdown_drain_secs * 1000));
    if (access.listeners.length > 0) {
      reloader.addCertificateTarget({
        name: 'imap/pop3',
        setCertificate: (pem) => access.setCertificate(pem),
      });
      reloader.onSettings((next) =>
        access.setLimits({
          imapMaxConnectionsPerIp: next.imap.max_connections_per_ip,
          pop3MaxConnectionsPerIp: next.pop3.max_connections_per_ip,
        }),
      );
    }
    let metricsUrl: string | undefined;
    if (opts.metricsListen) {
      const adminToken = readAdminTokenFile(config.api.admin_token_file);
      const server = await startMetricsServer({
        ...opts.metricsListen,
        metrics: prometheus,
        adminToken,
        readiness: new Readiness(readinessChecks()),
      });
      closers.push(() => server.close());
      metricsUrl = server.url;
    }
    reloader.noteStarted();
    return {
      listeners,
      workers,
      store,
      metrics,
      prometheus,
      metricsUrl,
      apiUrl,
      mailAccessListeners: access.listeners,
      reload(read) {
        let next: Config;
        try {
          next = read();
        } catch (err) {
          return reloader.failed([(err as Error).message]);
        }
        return reloader.reload(next);
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
