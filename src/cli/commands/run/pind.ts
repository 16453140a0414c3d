// `sealpost pind`: the pin daemon (pin surface + /ipfs/{cid} gateway), and
// the local admin commands that are the only way pins are ever removed
// (`pind rm`, `pind gc`) or listed (`pind ls`).
import type { Command } from 'commander';
import { acquireLock, DataDirLockedError } from '../../../../pinning/pind/lock.ts';
import {
  chainIndexPath,
  FileIndexState,
  readChainRetention,
  releaseUnretained,
} from '../../../../pinning/pind/retention.ts';
import { PindConfigError, startPind } from '../../../../pinning/pind/server.ts';
import { PindStore } from '../../../../pinning/pind/store.ts';
import { createLogger } from '../../../core/log.ts';
import { InvalidCidError, normalizeCid } from '../../../mail/cid.ts';
import { addServerOptions, CliError, EXIT_USAGE, type Listen, loadCliConfig } from '../../common.ts';
import { waitForStop } from '../../wait-for-stop.ts';
import {
  addressOption,
  connect,
  intOption,
  RPC_FLAGS,
  RPC_MONIKER_HELP,
  rpcOption,
} from '../operate/program-common.ts';

interface DaemonOpts {
  config?: string;
  dataDir?: string;
  listen: Listen[];
}

function pindDataDir(opts: { config?: string; dataDir?: string }): string {
  return loadCliConfig(opts).config.pind.data_dir;
}

async function runDaemon(opts: DaemonOpts): Promise<void> {
  if (opts.listen.length > 2) {
    throw new CliError('pind takes at most two --listen: the pin surface, then the gateway', EXIT_USAGE);
  }
  const { config } = loadCliConfig(opts);
  const cfg = config.pind;
  const [first, second] = opts.listen;
  const pin = first ?? { host: cfg.host, port: cfg.port };
  // One --listen: both roles there. None: the two addresses of [pind].
  const gateway = first ? second : { host: cfg.gateway_host, port: cfg.gateway_port };
  const logger = createLogger({ name: 'pind', level: config.log.level, format: config.log.format });
  let pind: Awaited<ReturnType<typeof startPind>>;
  try {
    pind = await startPind({
      dataDir: cfg.data_dir,
      pin,
      gateway,
      authToken: cfg.auth_token,
      maxPinBytes: cfg.max_pin_bytes,
      logger,
    });
  } catch (err) {
    if (err instanceof PindConfigError) throw new CliError(err.message, EXIT_USAGE);
    if (err instanceof DataDirLockedError) throw new CliError(err.message);
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EADDRINUSE' || e.code === 'EACCES' || e.code === 'EADDRNOTAVAIL') {
      throw new CliError(`cannot listen: ${e.message}`);
    }
    throw err;
  }
  // The stop handlers first: a SIGTERM right after the banner (what a supervisor waits for) is a clean stop.
  const stopped = waitForStop();
  process.stdout.write(
    `pind\n  pin surface  ${pind.pinUrl}\n  gateway      ${pind.gatewayUrl}\n  data dir     ${cfg.data_dir}\n`,
  );
  await stopped;
  logger.info('shutting down');
  await pind.close();
}

function parseCids(texts: string[]): string[] {
  return texts.map((t) => {
    try {
      return normalizeCid(t);
    } catch (err) {
      if (err instanceof InvalidCidError) throw new CliError(err.message, EXIT_USAGE);
      throw err;
    }
  });
}

/**
 * Runs a block sweep holding the daemon's lock, so no daemon writes blocks
 * meanwhile; null when a daemon is running (the sweep must wait).
 */
async function sweep(
  store: PindStore,
  dataDir: string,
  before?: () => Promise<void>,
): Promise<Awaited<ReturnType<PindStore['gc']>> | null> {
  let release: () => void;
  try {
    release = acquireLock(dataDir);
  } catch (err) {
    if (err instanceof DataDirLockedError) return null;
    throw err;
  }
  try {
    await before?.();
    return await store.gc();
  } finally {
    release();
  }
}

interface GcOpts {
  config?: string;
  dataDir?: string;
  chain?: boolean;
  rpc?: string;
  programId?: string;
  operator?: string;
  grace: number;
}

/** `--chain`: reads the chain first (nothing is touched when it does not answer). */
async function chainRetention(opts: GcOpts, config: ReturnType<typeof loadCliConfig>['config']) {
  const dataDir = config.pind.data_dir;
  if (!opts.operator)
    throw new CliError('pind gc --chain needs --operator <base58>: the fee wallet leases pay', EXIT_USAGE);
  const rpc = opts.rpc ?? config.chain.rpc_url;
  const programId = opts.programId ?? config.chain.program_id;
  const conn = await connect(rpc);
  let now: bigint;
  try {
    const time = await conn.getBlockTime(await conn.getSlot('confirmed'));
    now = BigInt(time ?? Math.floor(Date.now() / 1000));
    // The pins as they are now (only their Emails and leases are indexed); the
    // index file keeps what earlier runs read, so this run reads the
    // program's transactions since the last one (no getProgramAccounts).
    const store = await PindStore.open(dataDir);
    const pinned: string[] = [];
    for await (const record of store.listPins()) pinned.push(record.cid);
    return await readChainRetention(conn, programId, opts.operator, now, {
      pinned,
      state: new FileIndexState(chainIndexPath(dataDir, programId)),
    });
  } catch (err) {
    throw new CliError(`cannot read leases from ${rpc}: ${(err as Error).message}`);
  }
}

const RUNNING =
  'pind is running on this data directory: blocks stay on disk until `sealpost pind gc` runs with the daemon stopped';

export function register(program: Command): void {
  const cmd = program
    .command('pind')
    .description('run the pin daemon: pin surface (POST /pins) and gateway (GET /ipfs/{cid})');
  addServerOptions(cmd, {
    listen: 'address; once: both roles there; twice: pin surface, then gateway (default [pind])',
  }).action((opts: DaemonOpts) => runDaemon(opts));

  addServerOptions(
    cmd
      .command('rm <cid...>')
      .description('remove pins (the only way pins are released); unreferenced blocks are deleted too'),
    { listen: false },
  ).action(async (cids: string[], _opts: unknown, sub: Command) => {
    const dataDir = pindDataDir(sub.optsWithGlobals());
    const wanted = parseCids(cids);
    const store = await PindStore.open(dataDir);
    let missing = 0;
    for (const cid of wanted) {
      if (await store.removePin(cid)) process.stdout.write(`removed ${cid}\n`);
      else {
        missing++;
        process.stderr.write(`not pinned: ${cid}\n`);
      }
    }
    const swept = await sweep(store, dataDir);
    if (swept) process.stderr.write(`deleted ${swept.removedBlocks} unreferenced block(s)\n`);
    else process.stderr.write(`${RUNNING}\n`);
    if (missing > 0) throw new CliError(`${missing} of ${wanted.length} CID(s) were not pinned`);
  });

  addServerOptions(
    cmd
      .command('gc')
      .description('delete blocks no pin references and leftovers of interrupted uploads (daemon stopped)')
      .option(
        '--chain',
        'first release pins the chain no longer retains: no Email names them, no live PinLease',
      )
      .option(
        '--operator <base58>',
        'with --chain: the fee wallet whose leases count',
        addressOption('wallet'),
      )
      .option(RPC_FLAGS, `with --chain: JSON-RPC URL (default [chain] rpc_url)${RPC_MONIKER_HELP}`, rpcOption)
      .option(
        '--program-id <base58>',
        'with --chain: mail program (default [chain] program_id)',
        addressOption('program id'),
      )
      .option(
        '--grace <secs>',
        'with --chain: keep pins younger than this',
        intOption(0, 10 * 365 * 86_400),
        86_400,
      ),
    { listen: false },
  ).action(async (_opts: unknown, sub: Command) => {
    const opts = sub.optsWithGlobals<GcOpts>();
    const { config } = loadCliConfig(opts);
    const dataDir = config.pind.data_dir;
    if (!opts.chain && (opts.operator || opts.rpc || opts.programId))
      throw new CliError('--operator, --rpc and --program-id go with --chain', EXIT_USAGE);
    const retention = opts.chain ? await chainRetention(opts, config) : null;
    const store = await PindStore.open(dataDir);
    const swept = await sweep(store, dataDir, async () => {
      if (!retention) return;
      const outcome = await releaseUnretained(store, retention, { nowMs: Date.now(), graceSecs: opts.grace });
      for (const { cid, reason } of outcome.kept) process.stdout.write(`kept ${cid} (${reason})\n`);
      for (const cid of outcome.released) process.stdout.write(`released ${cid}\n`);
    });
    if (!swept) throw new CliError(`pind is running on ${dataDir}; stop it before \`pind gc\``);
    process.stdout.write(
      `deleted ${swept.removedBlocks} block(s) and ${swept.removedTemp} temp file(s); kept ${swept.keptBlocks} block(s)\n`,
    );
  });

  addServerOptions(cmd.command('ls').description('list pins: CID, size in bytes, pin time'), {
    listen: false,
  }).action(async (_opts: unknown, sub: Command) => {
    const store = await PindStore.open(pindDataDir(sub.optsWithGlobals()));
    for await (const record of store.listPins()) {
      process.stdout.write(`${record.cid} ${record.size} ${record.pinned_at}\n`);
    }
  });
}
