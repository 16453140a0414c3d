// Public surface of the config module.
export { isBase58Pubkey, splitHostPort } from './fields.ts';
export { ConfigError, type ConfigIssue, type ConfigIssueKind, issueLine } from './issues.ts';
export { defaultConfig, loadConfig, type ParseConfigOptions, parseConfig } from './load.ts';
export { type RenderOptions, renderConfigToml } from './render.ts';
export { DEFAULT_REDIS_URL } from './resolve.ts';
export { DEFAULT_RPC_URL, deriveWsUrl } from './sections/chain.ts';
export { CLIENT_PORTS } from './sections/mail-hosts.ts';
export { DEFAULT_LISTENER_PORTS } from './sections/smtp.ts';
export { DEFAULT_RETRY_SCHEDULE_SECS } from './sections/spooler.ts';
export type * from './types.ts';
