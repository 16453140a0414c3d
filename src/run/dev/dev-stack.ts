// `sealpost dev`: every component that exists, on loopback, with generated
// keys and a chain that is ready for mail. Keys and config are generated once
// under the data directory and reused on later runs.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join, resolve } from 'node:path';
import { formatFidelitySpec, parseFidelitySpec } from '../../../chain/devnet/fidelity.ts';
import { type FidelityOptions, faucetKeypairPath, startDevnet } from '../../../chain/devnet/server.ts';
import { startPind } from '../../../pinning/pind/server.ts';
import { createConnection } from '../../core/chain-rpc.ts';
import { formatListen } from '../../core/config/config-file.ts';
import { type Config, DEFAULT_REDIS_URL, deriveWsUrl } from '../../core/config/index.ts';
import { createCredentialKeyFile, loadCredentialKey } from '../../core/crypto/credential-seal.ts';
import {
  generateKeypair,
  type Keypair,
  readKeypairFile,
  writeKeypairFile,
  writeSecretFile,
} from '../../core/keys/keypair-file.ts';
import type { Logger } from '../../core/log.ts';
import { openStore } from '../../core/store/index.ts';
import { ensureSelfSignedFiles } from '../../core/tls/self-signed.ts';
import { startDomaind } from '../../edge/domaind/server.ts';
import { startServe } from '../serve/serve.ts';
import { bootstrapChain } from './bootstrap-chain.ts';
import { type DevChild, startDevChild } from './child-process.ts';
import { applyAddresses, DEV_DOMAIN, ensureDevConfig, writeDevConfig, zeroPorts } from './dev-config.ts';
import { ensureRedis } from './redis.ts';
import { type DevRspamd, findRspamd, startRspamd } from './rspamd.ts';

export { DEV_DOMAIN, DEV_HOSTNAME } from './dev-config.ts';
/** Lamports per stamp the postage test wallet asks of first-contact senders (0.0001 SOL). */
export const DEV_POSTAGE_LAMPORTS = 100_000n;

export interface DevStackOptions {
  dataDir: string;
  /** Devnet RPC listen address; the WebSocket endpoint is the next port. */
  rpcHost?: string;
  rpcPort?: number;
  redisUrl?: string;
  slotMs?: number;
  /**
   * Fidelity mode for dev's devnet (`--fidelity`): options, or a spec as
   * `sealpost devnet --fidelity` takes it. Not with `rpcUrl`.
   */
  fidelity?: FidelityOptions | string;
  /**
   * Run against this chain instead of a devnet of dev's own (`--rpc`): no
   * devnet is started, and the chain is only checked (postoffice, domain,
   * balances, mailboxes), never airdropped to or initialized: what is
   * missing is logged with its remedy, and a missing essential (postoffice,
   * domain, funded authority and delegate keys) stops start-up.
   */
  rpcUrl?: string;
  /** PubSub URL of `rpcUrl`; default derived as web3.js does. */
  wsUrl?: string;
  /**
   * Every component on an OS-chosen loopback port (tests, several stacks
   * side by side); the ports got are written into the generated config.
   */
  randomPorts?: boolean;
  /** Adjusts the loaded config before the servers start (benchmarks, tests). */
  configPatch?: (config: Config) => void;
  /** Deliveries the pipeline workers run at once (default: serve's). */
  workerConcurrency?: number;
  /** The devnet's clock (Unix seconds; default the system clock): tests move it past timelock windows. */
  clock?: () => number;
  /**
   * devnet, pind and domaind as `sealpost devnet|pind|domaind` child
   * processes (what `sealpost dev` does), instead of in this process.
   */
  childProcesses?: boolean;
  /**
   * Start a private rspamd (src/run/dev/rspamd.ts) and scan MX mail with it
   * when the binary is installed and the config has no `[spam]` of its own
   * (default true); false: never.
   */
  rspamd?: boolean;
  /** A logger, or how to make one from the loaded config (so `[log] level` applies). */
  logger: Logger | ((config: Config) => Logger);
}

export interface DevSummary {
  data_dir: string;
  config_file: string;
  program_id: string;
  domain: string;
  chain: { rpc_url: string; ws_url: string };
  /** prefix: the key prefix of this stack's queues (each data directory has its own). */
  redis: { url: string; started_here: boolean; prefix: string };
  /** The content filter: the private rspamd dev started, the config's own, or none (`enabled: false`). */
  spam: { enabled: boolean; rspamd_url?: string; started_here: boolean };
  store: { url: string };
  keys: { authority: string; delegate: string; credential_key: string; admin_token: string };
  authority: string;
  delegate: string;
  wallets: {
    name: string;
    address: string;
    key_file: string;
    default_postage_lamports: string;
    address_form: string;
  }[];
  components: { name: string; url: string }[];
  /** The child processes (with childProcesses): dev stops them when it stops. */
  processes: { name: string; pid: number }[];
}

export interface DevStack {
  summary: DevSummary;
  logger: Logger;
  close(): Promise<void>;
}

function ensureKeypair(path: string): Keypair {
  if (existsSync(path)) return readKeypairFile(path);
  const key = generateKeypair();
  writeKeypairFile(path, key);
  return key;
}

function ensureSecretFile(path: string, make: () => void): void {
  if (!existsSync(path)) make();
}

export async function startDevStack(opts: DevStackOptions): Promise<DevStack> {
  const dataDir = resolve(opts.dataDir);
  const keysDir = join(dataDir, 'keys');
  mkdirSync(keysDir, { recursive: true, mode: 0o700 });

  // The config first: it says how much to log.
  const { config: fileConfig, file: configFile, rederived } = ensureDevConfig(dataDir, keysDir);
  const log = typeof opts.logger === 'function' ? opts.logger(fileConfig) : opts.logger;
  if (rederived.length > 0) {
    log.info(
      { keys: rederived },
      `re-derived keys that still named localhost from ${fileConfig.smtp.hostname}`,
    );
  }
  // What the servers run with: the file's config, adjusted by the caller, every port 0 with --random-ports.
  const config = structuredClone(fileConfig);
  opts.configPatch?.(config);
  if (opts.randomPorts) zeroPorts(config);

  const authority = ensureKeypair(join(keysDir, 'authority.json'));
  const delegate = ensureKeypair(join(keysDir, 'delegate.json'));
  const openWallet = ensureKeypair(join(keysDir, 'wallet-open.json'));
  const postageWallet = ensureKeypair(join(keysDir, 'wallet-postage.json'));
  const credentialKey = join(keysDir, 'credential.key');
  ensureSecretFile(credentialKey, () => createCredentialKeyFile(credentialKey));
  // A key file of the wrong size (hand-edited, truncated) stops start-up with a clear error.
  loadCredentialKey(credentialKey);
  const adminToken = join(keysDir, 'admin.token');
  ensureSecretFile(adminToken, () => writeSecretFile(adminToken, `${randomBytes(32).toString('hex')}\n`));

  const closers: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const fn of closers.reverse()) await fn().catch((err) => log.warn({ err }, 'shutdown step failed'));
  };
  try {
    const redis = await ensureRedis({
      url: opts.redisUrl ?? config.redis.url ?? DEFAULT_REDIS_URL,
      dataDir,
      randomPort: opts.randomPorts,
    });
    closers.push(redis.close);
    if (redis.started) log.info({ url: redis.url }, 'started a private redis-server');

    // A private rspamd when installed (as Redis above), unless [spam] is the config's own.
    let rspamd: DevRspamd | undefined;
    if (!config.spam.enabled && opts.rspamd !== false) {
      const binary = findRspamd();
      if (binary) {
        rspamd = await startRspamd({ dir: join(dataDir, 'rspamd'), binary });
        closers.push(rspamd.close);
        config.spam = {
          ...config.spam,
          enabled: true,
          rspamd_url: rspamd.url,
          controller_url: rspamd.controllerUrl,
          password_file: rspamd.passwordFile,
        };
        log.info({ url: rspamd.url, pid: rspamd.pid }, 'started a private rspamd: MX mail is scanned');
      } else {
        log.info('rspamd is not installed: MX mail is not scanned for spam (Debian: apt-get install rspamd)');
      }
    }

    // The accounts store: created and migrated now, so every later component finds it ready.
    const store = await openStore({ url: config.store.url, dataDir });
    closers.push(() => store.close());

    const children: DevChild[] = [];
    const child = async (name: string, args: string[], ready: RegExp) => {
      const c = await startDevChild({ name, args: [...args, '--config', configFile], ready, logger: log });
      children.push(c);
      closers.push(() => c.stop());
      return c;
    };
    const fidelity = typeof opts.fidelity === 'string' ? parseFidelitySpec(opts.fidelity) : opts.fidelity;
    const external = opts.rpcUrl !== undefined;
    let devnet: { rpcUrl: string; wsUrl: string; programId: string };
    if (external) {
      if (fidelity) throw new Error('--fidelity is for dev’s own devnet; it cannot apply to --rpc');
      if (opts.clock) throw new Error('a devnet clock needs dev’s own devnet, not --rpc');
      const rpcUrl = opts.rpcUrl as string;
      devnet = { rpcUrl, wsUrl: opts.wsUrl ?? deriveWsUrl(rpcUrl), programId: config.chain.program_id };
      log.info({ rpcUrl, wsUrl: devnet.wsUrl }, 'running against an external chain (no devnet of its own)');
    } else {
      devnet = await startOwnDevnet({
        config,
        dataDir,
        opts,
        fidelity,
        log,
        closers,
        child,
      });
    }

    const connection = createConnection(devnet.rpcUrl, { wsUrl: devnet.wsUrl });
    const wallets = [
      { name: 'open', key: openWallet, defaultPostage: 0n, file: join(keysDir, 'wallet-open.json') },
      {
        name: 'postage',
        key: postageWallet,
        defaultPostage: DEV_POSTAGE_LAMPORTS,
        file: join(keysDir, 'wallet-postage.json'),
      },
    ];
    const { performed, missing } = await bootstrapChain({
      connection,
      programId: devnet.programId,
      domain: DEV_DOMAIN,
      authority,
      delegate,
      // Both ways devnet runs here keep its ledger in <data dir>/devnet.
      upgradeAuthorityFile: faucetKeypairPath(join(dataDir, 'devnet')),
      wallets,
      log: (line) => log.info(line),
      checkOnly: external,
    });
    for (const m of missing) log.warn({ essential: m.essential }, `chain not ready: ${m.what}`);
    const blocking = missing.filter((m) => m.essential);
    if (blocking.length > 0) {
      throw new Error(
        `the chain at ${devnet.rpcUrl} is not ready for mail and sealpost dev does not change a chain it does not run:\n` +
          blocking.map((m) => `  - ${m.what}`).join('\n'),
      );
    }
    if (performed.length === 0 && missing.length === 0) log.info('chain already prepared');

    // The operator pin and gateway (pind), then the mail server itself.
    const pinListen = { host: config.pind.host, port: config.pind.port };
    const gatewayListen = { host: config.pind.gateway_host, port: config.pind.gateway_port };
    let pind: { pinUrl: string; gatewayUrl: string };
    if (opts.childProcesses) {
      const c = await child(
        'pind',
        ['pind', '--listen', formatListen(pinListen), '--listen', formatListen(gatewayListen)],
        /pin surface\s+(\S+)\n\s+gateway\s+(\S+)\n/,
      );
      pind = { pinUrl: c.match[1] as string, gatewayUrl: c.match[2] as string };
    } else {
      const inProcess = await startPind({
        dataDir: config.pind.data_dir,
        pin: pinListen,
        gateway: gatewayListen,
        authToken: config.pind.auth_token,
        maxPinBytes: config.pind.max_pin_bytes,
        logger: log.child({ service: 'pind' }),
      });
      closers.push(inProcess.close);
      pind = inProcess;
    }
    if (
      await ensureSelfSignedFiles(config.smtp.tls_cert_file, config.smtp.tls_key_file, [
        config.smtp.hostname,
        'localhost',
        '127.0.0.1',
      ])
    ) {
      log.info(
        { cert: config.smtp.tls_cert_file },
        'made a self-signed certificate for STARTTLS and TLS listeners',
      );
    }
    config.chain.rpc_url = devnet.rpcUrl;
    config.chain.ws_url = devnet.wsUrl;
    // The dev stack's own Redis (or REDIS_URL), never [redis] sentinels.
    config.redis = { url: redis.url, prefix: config.redis.prefix };
    config.ipfs.pind_url = pind.pinUrl;
    config.ipfs.gateway_url = pind.gatewayUrl;
    const serving = await startServe({
      config,
      logger: log.child({ service: 'serve' }),
      workerConcurrency: opts.workerConcurrency,
    });
    closers.push(serving.close);

    // Every address is known now: into the config (domaind advertises the
    // client ports from it) and into the generated file.
    const addresses = {
      rpcUrl: devnet.rpcUrl,
      wsUrl: devnet.wsUrl,
      redisUrl: redis.url,
      pinUrl: pind.pinUrl,
      gatewayUrl: pind.gatewayUrl,
      smtpPorts: serving.listeners.map((l) => l.port),
      apiUrl: serving.apiUrl,
      mailAccess: serving.mailAccessListeners ?? [],
    };
    let domaind: { url: string; port: number };
    if (opts.childProcesses) {
      // The child reads the generated config: the addresses go into the file first.
      applyAddresses(config, addresses);
      writeDevConfig(configFile, applyAddresses(fileConfig, addresses));
      const c = await child(
        'domaind',
        ['domaind', '--listen', formatListen({ host: config.domaind.host, port: config.domaind.port })],
        /URL\s+(\S+)\n/,
      );
      const url = c.match[1] as string;
      domaind = { url, port: Number(new URL(url).port) };
    } else {
      const inProcess = await startDomaind({
        config: applyAddresses(config, addresses),
        logger: log.child({ service: 'domaind' }),
      });
      closers.push(inProcess.close);
      domaind = inProcess;
    }
    applyAddresses(fileConfig, { ...addresses, domaindUrl: domaind.url });
    config.domaind.port = domaind.port;
    config.api.public_url = fileConfig.api.public_url;
    if (writeDevConfig(configFile, fileConfig))
      log.info({ file: configFile }, 'wrote the addresses into the config');

    const apiUrl = serving.apiUrl;
    const summary: DevSummary = {
      data_dir: dataDir,
      config_file: configFile,
      program_id: devnet.programId,
      domain: DEV_DOMAIN,
      chain: { rpc_url: devnet.rpcUrl, ws_url: devnet.wsUrl },
      redis: { url: redis.url, started_here: redis.started, prefix: config.redis.prefix },
      spam: {
        enabled: config.spam.enabled,
        ...(config.spam.enabled ? { rspamd_url: config.spam.rspamd_url } : {}),
        started_here: Boolean(rspamd),
      },
      store: { url: config.store.url },
      keys: {
        authority: join(keysDir, 'authority.json'),
        delegate: join(keysDir, 'delegate.json'),
        credential_key: credentialKey,
        admin_token: adminToken,
      },
      authority: authority.address,
      delegate: delegate.address,
      wallets: wallets.map((w) => ({
        name: w.name,
        address: w.key.address,
        key_file: w.file,
        default_postage_lamports: w.defaultPostage.toString(),
        address_form: `${w.key.address}@${DEV_DOMAIN}`,
      })),
      components: [
        {
          name: external ? 'chain JSON-RPC (external)' : 'devnet (chain JSON-RPC)',
          url: devnet.rpcUrl,
        },
        { name: external ? 'chain WebSocket (external)' : 'devnet (WebSocket)', url: devnet.wsUrl },
        { name: 'redis', url: redis.url },
        ...(config.spam.enabled ? [{ name: 'rspamd (spam filter)', url: config.spam.rspamd_url }] : []),
        { name: 'pind (pin surface)', url: pind.pinUrl },
        { name: 'pind (IPFS gateway)', url: pind.gatewayUrl },
        ...(apiUrl
          ? [
              { name: 'account API', url: apiUrl },
              { name: 'webmail', url: `${apiUrl}/` },
              { name: 'metrics (admin token)', url: `${apiUrl}/metrics` },
            ]
          : []),
        { name: 'domaind', url: domaind.url },
        ...serving.listeners.map((l) => ({
          name: `smtp ${l.mode} (${l.name})`,
          url: `${l.tls === 'implicit' ? 'smtps' : 'smtp'}://${l.host}:${l.port}`,
        })),
        ...(serving.mailAccessListeners ?? []).map((l) => ({
          name: l.name.startsWith('imap') ? `imap (${l.name})` : `pop3 (${l.name})`,
          url: `${l.name}://${l.host}:${l.port}`,
        })),
      ],
      processes: children.map((c) => ({ name: c.name, pid: c.pid })),
    };
    const devJson = join(dataDir, 'dev.json');
    writeFileSync(`${devJson}.tmp`, `${JSON.stringify(summary, null, 2)}\n`);
    renameSync(`${devJson}.tmp`, devJson);
    return { summary, logger: log, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * A configured RPC URL that cannot be where dev's devnet listens: https, or
 * a host name other than localhost (an IP literal is an address to bind).
 */
function namesRemoteChain(url: URL): boolean {
  if (url.protocol === 'https:') return true;
  const host = url.hostname;
  return !(host === 'localhost' || isIP(host.replace(/^\[|\]$/g, '')) !== 0);
}

/** dev's own devnet: as a `sealpost devnet` child or in this process, on the config's loopback address. */
async function startOwnDevnet(a: {
  config: Config;
  dataDir: string;
  opts: DevStackOptions;
  fidelity: FidelityOptions | undefined;
  log: Logger;
  closers: (() => Promise<void>)[];
  child: (name: string, args: string[], ready: RegExp) => Promise<DevChild>;
}): Promise<{ rpcUrl: string; wsUrl: string; programId: string }> {
  const { config, dataDir, opts, fidelity, log } = a;
  const rpc = new URL(config.chain.rpc_url);
  // A config left naming a remote chain (an earlier --rpc run) does not say where to listen.
  const remote = namesRemoteChain(rpc);
  if (remote && opts.rpcHost === undefined) {
    log.info(
      { configured: config.chain.rpc_url },
      'the config names a remote chain; dev’s devnet listens on 127.0.0.1',
    );
  }
  const rpcListen = {
    host: opts.rpcHost ?? (remote ? '127.0.0.1' : rpc.hostname),
    port: opts.rpcPort ?? (opts.randomPorts ? 0 : remote ? 8899 : Number(rpc.port || 8899)),
  };
  if (opts.childProcesses) {
    if (opts.clock) throw new Error('a devnet clock needs the devnet in this process');
    const spec = fidelity ? formatFidelitySpec(fidelity) : '';
    const c = await a.child(
      'devnet',
      [
        'devnet',
        '--data-dir',
        dataDir,
        '--listen',
        formatListen(rpcListen),
        ...(opts.slotMs ? ['--slot-ms', String(opts.slotMs)] : []),
        ...(spec ? ['--fidelity', spec] : []),
      ],
      /JSON-RPC\s+(\S+)\n\s+WebSocket\s+(\S+)\n\s+program id\s+(\S+)\n/,
    );
    return { rpcUrl: c.match[1] as string, wsUrl: c.match[2] as string, programId: c.match[3] as string };
  }
  const inProcess = await startDevnet({
    dataDir: join(dataDir, 'devnet'),
    ...rpcListen,
    programId: config.chain.program_id,
    slotMs: opts.slotMs,
    clock: opts.clock,
    logger: log.child({ service: 'devnet' }),
    fidelity,
  });
  a.closers.push(inProcess.close);
  return inProcess;
}

export function formatSummary(s: DevSummary): string {
  const width = Math.max(26, ...s.components.map((c) => c.name.length));
  const lines = [
    'Sealpost dev stack is up.',
    '',
    ...s.components.map((c) => `  ${c.name.padEnd(width)} ${c.url}`),
    '',
    `  program id                 ${s.program_id}`,
    `  mail domain                ${s.domain} (authority ${s.authority})`,
    `  accounts store             ${s.store.url}`,
    ...s.wallets.map(
      (w) =>
        `  test wallet (${w.name})`.padEnd(29) +
        `${w.address}  postage ${w.default_postage_lamports} lamports  key ${w.key_file}`,
    ),
    `  config                     ${s.config_file}`,
    `  admin token                ${s.keys.admin_token}`,
    `  summary (JSON)             ${join(s.data_dir, 'dev.json')}`,
    ...(s.processes.length
      ? [`  child processes            ${s.processes.map((p) => `${p.name} (pid ${p.pid})`).join(', ')}`]
      : []),
    '',
    'Press Ctrl-C to stop.',
  ];
  return `${lines.join('\n')}\n`;
}

export function readDevSummary(dataDir: string): DevSummary {
  return JSON.parse(readFileSync(join(dataDir, 'dev.json'), 'utf8')) as DevSummary;
}
