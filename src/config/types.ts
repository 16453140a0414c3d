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
  timeouts: { socket_timeout_secs: number; shutdown_drain_secs: number };
}

export interface DkimKeyConfig {
  domain: string;
  selector: string;
  key_file: string;
}

export interface SpoolerConfig {
  hostname: string;
  mta_sts: boolean;
  dane: boolean;
  max_attempts: number;
  retry_schedule_secs: number[];
  dkim: DkimKeyConfig[];
  tlsrpt: { enabled: boolean; org_name: string; contact: string };
  /** The retention keys apply whether or not ingestion is enabled. */
  dmarc_rua_ingest: { enabled: boolean; dmarc_retention_days: number; report_retention_days: number };
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

export interface ChainConfig {
  rpc_url: string;
  ws_url: string;
  program_id: string;
  authority_key_file?: string;
  delegate_key_file?: string;
  commitment: 'processed' | 'confirmed' | 'finalized';
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
}

export interface DomaindConfig {
  host: string;
  port: number;
  /** `host:port` of the resolver used for `_solana.authority` TXT lookups. */
  resolver: string;
  mta_sts_mode: 'testing' | 'enforce' | 'none';
  mta_sts_max_age_secs: number;
  mta_sts_mx: string[];
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

export interface StoreConfig {
  /** `sqlite:/absolute/path` or a `postgres://` URL. */
  url: string;
  data_dir: string;
}

export interface RedisConfig {
  url: string;
  prefix: string;
}

export interface LogConfig {
  level: LogLevel;
  format: 'json' | 'pretty';
}

export interface DnsConfig {
  /** `host:port` entries; empty means the system resolvers (/etc/resolv.conf). */
  resolvers: string[];
}

export interface Config {
  smtp: SmtpConfig;
  spooler: SpoolerConfig;
  mail_hosts: MailHostsConfig;
  chain: ChainConfig;
  ipfs: IpfsConfig;
  api: ApiConfig;
  domaind: DomaindConfig;
  pind: PindConfig;
  store: StoreConfig;
  redis: RedisConfig;
  log: LogConfig;
  dns: DnsConfig;
}
