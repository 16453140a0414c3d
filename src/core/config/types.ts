// The validated, fully resolved configuration every process receives. Keys
// keep their TOML spelling (snake_case) so docs/config.md, error messages and
// code use one name. All defaults are filled; file paths are absolute.

export type ListenerMode = 'mx' | 'submission' | 'submissions';
export type ListenerTls = 'none' | 'starttls' | 'implicit';
export type ClientTls = 'implicit' | 'starttls';
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';

export interface SmtpListener {
  /** Unique per config; defaults to the mode (`mx`, `mx-2`, … when repeated). */
  name: string;
  mode: ListenerMode;
  host: string;
  port: number;
  tls: ListenerTls;
}

export interface SmtpConfig {
  hostname: string;
  local_domains: string[];
  listeners: SmtpListener[];
  tls_cert_file: string;
  tls_key_file: string;
  max_message_bytes: number;
  max_recipients: number;
  postmaster_wallet?: string;
  sender_auth: 'spf' | 'dmarc-lite' | 'none';
  max_connections_per_ip: number;
  /** Connections at once per SMTP listener across all addresses (421 beyond); 0: no cap. */
  max_connections: number;
  /** Total seconds one SMTP session may last (421 4.4.2 at the end); 0: unlimited. */
  max_session_secs: number;
  /** New MX connections one client IP may open per minute (token bucket in Redis); 0: no limit. */
  connections_per_ip_per_minute: number;
  /** CA whose client certificates identify peer Sealpost servers (SASL EXTERNAL on submission). */
  peer_ca_file?: string;
  /** Messages an account may submit per hour / per day; 0 turns that window off. */
  submission_max_per_hour: number;
  submission_max_per_day: number;
  /** Errors in a session after which every reply waits `error_sleep_ms`; 0: never. */
  soft_error_limit: number;
  /** Errors in a session after which it is closed with 421 4.7.0; 0: never. */
  hard_error_limit: number;
  error_sleep_ms: number;
  /** How long the MX reuses a chain answer that lets mail through (an existing mailbox, a stamp). */
  chain_cache_secs: number;
  /** How long it reuses any other chain answer (no account, a refusing record, an alias's wallet). */
  chain_refusal_cache_secs: number;
  /** Chain answers kept at most. */
  chain_cache_entries: number;
  timeouts: { socket_timeout_secs: number; shutdown_drain_secs: number };
}

export interface DkimKeyConfig {
  domain: string;
  selector: string;
  key_file: string;
}

export interface SpoolerRelayConfig {
  host: string;
  /** Derived: 465 for `implicit`, else 25. */
  port: number;
  tls: 'starttls' | 'implicit' | 'opportunistic';
  username?: string;
  password_file?: string;
}

export interface SpoolerConfig {
  hostname: string;
  mta_sts: boolean;
  dane: boolean;
  max_attempts: number;
  retry_schedule_secs: number[];
  dkim: DkimKeyConfig[];
  tlsrpt: { enabled: boolean; org_name: string; contact: string };
  /** Give up (failure DSN) once a message is this old. */
  lifetime_secs: number;
  /** Send one delayed-delivery DSN once a message has waited this long; 0: never. */
  delay_dsn_after_secs: number;
  /** Delivery sessions run at once by one spooler process. */
  concurrency: number;
  /** Delivery sessions to one destination domain at once, across all processes. */
  per_domain_concurrency: number;
  connect_timeout_secs: number;
  command_timeout_secs: number;
  /** Port of the remote MX hosts (25; tests point it elsewhere). */
  smtp_port: number;
  /** `host:port` resolvers whose AD bit is trusted besides loopback ones. */
  trusted_resolvers: string[];
  /** Name the DNSSEC self-test asks every resolver (`.`: the root zone). */
  dane_probe_name: string;
  dane_probe_type: 'DNSKEY' | 'NS' | 'A' | 'AAAA' | 'MX' | 'TXT';
  /** One deadline for the whole MTA-STS policy fetch. */
  mta_sts_timeout_secs: number;
  relay?: SpoolerRelayConfig;
  /** The retention keys apply whether or not ingestion is enabled. */
  dmarc_rua_ingest: {
    enabled: boolean;
    dmarc_retention_days: number;
    report_retention_days: number;
    /** The rua mailbox reports arrive at (lowercased); derived: postmaster@<first local domain>. */
    address: string;
    /** Cap on a report's decompressed size. */
    max_report_bytes: number;
  };
}

export interface MailHostsConfig {
  imap_enabled: boolean;
  imap_host: string;
  imap_port: number;
  imap_tls: ClientTls;
  pop3_enabled: boolean;
  pop3_host: string;
  pop3_port: number;
  pop3_tls: ClientTls;
  submission_enabled: boolean;
  smtp_host: string;
  submission_port: number;
  submission_tls: ClientTls;
}

/** [imap]: the IMAP listeners (docs/imap-pop3.md). */
export interface ImapConfig {
  host: string;
  /** Implicit TLS (993 in production; dev default 1993). */
  port: number;
  /** A plain listener offering STARTTLS (143); absent: none. */
  starttls_port?: number;
  max_connections_per_ip: number;
  /** How often IDLE looks for new mail while push is off or its subscription is down. */
  idle_poll_ms: number;
  /** Wake IDLE sessions at once on a store change, through Redis pub/sub (src/edge/imap/push.ts). */
  idle_push: boolean;
  /** How often IDLE still looks while push is live (a lost notification's bound). */
  idle_push_poll_ms: number;
  autologout_secs: number;
}

/** [pop3]: the POP3 listeners (docs/imap-pop3.md). */
export interface Pop3Config {
  host: string;
  /** Implicit TLS (995 in production; dev default 1995). */
  port: number;
  /** A plain listener offering STLS (110); absent: none. */
  starttls_port?: number;
  max_connections_per_ip: number;
  autologout_secs: number;
}

export interface ChainConfig {
  rpc_url: string;
  ws_url: string;
  program_id: string;
  authority_key_file?: string;
  delegate_key_file?: string;
  commitment: 'processed' | 'confirmed' | 'finalized';
  /** Below this authority balance the MX defers new mail with 4xx; 0 turns the guard off. */
  /** A floor in lamports, or "auto" (an hour of peak spend; src/core/limits/balance-guard.ts). */
  min_authority_lamports: number | 'auto';
  /** The next SendMail to a recipient may go once the previous one is processed (not yet confirmed). */
  pipeline_sendmail: boolean;
  /** SendMail instructions per transaction at most (1: one per transaction). */
  sendmail_batch_max: number;
  /** How long a send waits for others to share its transaction. */
  sendmail_batch_wait_ms: number;
  /** µlamports per compute unit, or `auto` (a percentile of getRecentPrioritizationFees). */
  priority_fee: 'auto' | number;
  /** `auto`: the percentile of recent prioritization fees, 1-100. */
  priority_fee_percentile: number;
  /** The most one transaction pays in priority fee, in lamports. */
  max_priority_fee_lamports: number;
  /** JSON-RPC calls per second to rpc_url from each process; 0 = no limit (resolved: unset is 0 on this host, else 10). */
  max_rps: number;
  /** How long one RPC call waits out 429s and provider errors before failing as retryable. */
  rpc_max_wait_secs: number;
  /** Shortest time between two signature-status polls of a worker process (resolved: unset is 10 on this host, else 400). */
  status_poll_ms: number;
  /** Rent recovery: close the Email accounts we published of stored mail older than this many days; 0 = off. */
  rent_recovery_days: number;
  /** Email accounts one rent-recovery sweep queues DeleteMail for at most. */
  rent_recovery_batch: number;
  /** Seconds between two rent-recovery sweeps. */
  rent_recovery_interval_secs: number;
}

export interface IpfsConfig {
  operator: 'pind' | 'kubo';
  pind_url: string;
  pind_auth_token?: string;
  kubo_rpc_url: string;
  gateway_url: string;
  max_pin_bytes: number;
  recipient_pin_timeout_secs: number;
}

export interface ApiConfig {
  host: string;
  port: number;
  public_url: string;
  open_registration: boolean;
  admin_token_file: string;
  credential_key_file: string;
  /** Absent: the JWT key is derived from the credential key (see docs/config.md). */
  jwt_secret_file?: string;
  /** Largest request body; bigger ones answer 413. */
  max_body_bytes: number;
  /** Requests per minute per client IP; 0 turns the limit off. */
  rate_limit_ip_per_min: number;
  /** Requests per minute per logged-in wallet; 0 turns the limit off. */
  rate_limit_wallet_per_min: number;
  /** Proxies whose X-Forwarded-For names the client (addresses or CIDR networks); empty: none. */
  trusted_proxies: string[];
  /** Built webmail served at `/`; absent: the package's webmail/dist. */
  webmail_dir?: string;
}

export interface DomaindConfig {
  host: string;
  port: number;
  /** `host:port` of the resolver used for `_solana.authority` TXT lookups. */
  resolver: string;
  mta_sts_mode: 'testing' | 'enforce' | 'none';
  mta_sts_max_age_secs: number;
  mta_sts_mx: string[];
  /** Host name serving this service (CNAME target of mta-sts/autoconfig/autodiscover); derived: [smtp] hostname. */
  public_host: string;
  dmarc_policy: 'none' | 'quarantine' | 'reject';
  /** Both set: serve HTTPS with this pair. */
  tls_cert_file?: string;
  tls_key_file?: string;
}

export interface PindConfig {
  host: string;
  port: number;
  gateway_host: string;
  gateway_port: number;
  auth_token?: string;
  max_pin_bytes: number;
  data_dir: string;
}

/** [serve]: how `sealpost serve` spreads over processes. */
export interface ServeConfig {
  /** Serving processes `sealpost serve` runs (node:cluster); 0: one per core. */
  workers: number;
  /** Deaths before readiness, in a row, after which the supervisor exits 1 (default 5). */
  start_attempts: number;
}

export interface StoreConfig {
  /** `sqlite:/absolute/path` or a `postgres://` URL. */
  url: string;
  data_dir: string;
}

/** `[blobs]`: where the spool and the content blobs live. */
export interface BlobsConfig {
  /** `fs` (under data_dir/blobs, the default) or `postgres` (the store's database; [store] url must be PostgreSQL). */
  backend: 'fs' | 'postgres';
}

/** `[redis] sentinels` & co.: the deployment's Redis is found through Redis Sentinel. */
export interface RedisSentinelConfig {
  /** `host:port` of each sentinel (port 26379 when omitted). */
  sentinels: string[];
  /** The master group name the sentinels monitor. */
  name: string;
  username?: string;
  /** Absolute path of the Redis nodes' password (read when a client is made). */
  password_file?: string;
  db?: number;
  tls?: boolean;
  sentinel_username?: string;
  sentinel_password_file?: string;
  sentinel_tls?: boolean;
}

/**
 * `[redis]`: either `url` (one Redis) or the Sentinel keys (`sentinels`,
 * `name`, …), never both. Every client is made by src/core/redis/client.ts.
 */
export interface RedisConfig extends Partial<RedisSentinelConfig> {
  /** Set when Redis is one URL (the default form); absent with `sentinels`. */
  url?: string;
  prefix: string;
  /** Replicas the MX's group commit waits for (WAIT) before a 250; unset: 1 with `sentinels`, else 0. */
  wait_replicas?: number;
  /** How long that WAIT may take (ms); past it the 250 goes out and the shortfall is counted. */
  wait_timeout_ms?: number;
}

export interface LogConfig {
  level: LogLevel;
  format: 'json' | 'pretty';
}

/** [tls]: trust for the TLS connections the server makes. */
export interface TlsConfig {
  /** PEM bundle of CA certificates trusted besides Node's default roots (outbound SMTP, relay, MTA-STS, TLS-RPT). */
  extra_ca_file?: string;
}

export interface DnsConfig {
  /** `host:port` entries; empty means the system resolvers (/etc/resolv.conf). */
  resolvers: string[];
  /** How long the MX keeps a client IP's forward-confirmed reverse name (0: asks per connection). */
  reverse_cache_secs: number;
}

/** The cost guard's windows: `<name>_messages` per `<name>_window_secs` (token buckets); 0 messages: off. */
export interface LimitsConfig {
  sender_messages: number;
  sender_window_secs: number;
  recipient_messages: number;
  recipient_window_secs: number;
  overall_messages: number;
  overall_window_secs: number;
  null_sender_messages: number;
  null_sender_window_secs: number;
  /** How often the authority balance is read for the balance guard. */
  balance_check_secs: number;
}

/** `[spam]`: rspamd at the MX (src/mail/spam/, docs/inbound.md "Spam"). */
export interface SpamConfig {
  enabled: boolean;
  rspamd_url: string;
  /** Absolute; the controller password. */
  password_file?: string;
  controller_url: string;
  learn_from_junk: boolean;
  timeout_ms: number;
  on_error: 'accept' | 'defer';
  max_scan_bytes: number;
  publish_junk: boolean;
  scan_submission: boolean;
  dnsbl: DnsblListConfig[];
  dnswl: DnswlListConfig[];
  dnsbl_timeout_ms: number;
  dnsbl_junk_score: number;
  dnsbl_reject_score: number;
  dnsbl_cache_secs: number;
  dnsbl_probe_secs: number;
  /** IP addresses and CIDR networks. */
  dnsbl_skip_networks: string[];
}

/** One `[spam] dnsbl` entry (a bare zone string is one with every other key at its default). */
export interface DnsblListConfig {
  zone: string;
  check: ('ip' | 'sender')[];
  at: 'connect' | 'rcpt';
  action: 'reject' | 'defer' | 'score';
  weight: number;
  /** `127.0.0.2`, `127.0.0.2-127.0.0.11`, `127.0.0.0/24`; empty: any listing code. */
  responses: string[];
  /** Last-octet bit mask; 0: none. */
  mask: number;
  reason?: string;
}

/** One `[spam] dnswl` entry. */
export interface DnswlListConfig {
  zone: string;
  responses: string[];
  mask: number;
}

export interface Config {
  smtp: SmtpConfig;
  spooler: SpoolerConfig;
  mail_hosts: MailHostsConfig;
  imap: ImapConfig;
  pop3: Pop3Config;
  chain: ChainConfig;
  ipfs: IpfsConfig;
  api: ApiConfig;
  domaind: DomaindConfig;
  pind: PindConfig;
  serve: ServeConfig;
  store: StoreConfig;
  /** Absent in hand-made configs: the filesystem. */
  blobs?: BlobsConfig;
  redis: RedisConfig;
  log: LogConfig;
  dns: DnsConfig;
  tls: TlsConfig;
  limits: LimitsConfig;
  spam: SpamConfig;
}
