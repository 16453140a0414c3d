// startDevnet: the bank (Solana's runtime with the mail program deployed),
// JSON-RPC over HTTP on one port and PubSub over WebSocket on the next. The
// faucet's keypair (the mail program's payer and upgrade authority) is
// written to <dataDir>/faucet-keypair.json, as solana-test-validator writes
// its faucet key into its ledger, so tools can sign as the upgrade authority.
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Keypair } from '@solana/web3.js';
import bs58 from 'bs58';
import { type Logger, pino } from 'pino';
import { WebSocketServer } from 'ws';
import { DEFAULT_PROGRAM_ID } from '../client/program-id.ts';
import { Bank, type ProgramImage } from './bank.ts';
import { emptyFidelityStats, Fidelity, type FidelityOptions, type FidelityStats } from './fidelity.ts';
import { createRpcListener, DEFAULT_MAX_BODY_BYTES } from './rpc.ts';
import type { RpcContext } from './rpc-context.ts';
import { startPubsub } from './ws.ts';

const SILENT = pino({ level: 'silent' });

export type { FidelityOptions, FidelityStats, ProgramAccountsMode } from './fidelity.ts';
export { MAINNET_FIDELITY, parseFidelitySpec } from './fidelity.ts';

export interface DevnetOptions {
  /** Directory of the ledger files (ledger.snapshot, ledger.log); created when missing. */
  dataDir: string;
  /** Default 127.0.0.1. */
  host?: string;
  /** JSON-RPC port; default 8899; 0 = a random free port P with P+1 free for the WebSocket. */
  port?: number;
  /** WebSocket port; default RPC port + 1; 0 = random. */
  wsPort?: number;
  /** The mail program's id; default DEFAULT_PROGRAM_ID. */
  programId?: string;
  /** Slot time; default 400 ms. */
  slotMs?: number;
  logger?: Logger;
  /** Unix seconds; default the system clock. */
  clock?: () => number;
  /** Confirmed slots before finalized; default 32. */
  finalizeDepth?: number;
  /** Landed transactions kept in history; default 100 000. */
  historyLimit?: number;
  maxBodyBytes?: number;
  /** false: no mail program, only what the runtime has built in (System, ComputeBudget, SPL programs). */
  mailProgram?: boolean;
  /** The mail program's SBF binary; default MAIL_PROGRAM_PATH. */
  programPath?: string;
  /**
   * Fidelity mode (docs/devnet.md): answer like a mainnet provider. Every
   * switch is off unless set; given at all (even `{}`), devnet also keeps the
   * journal commitment-true reads and `rollbackSlots` need.
   */
  fidelity?: FidelityOptions;
}

/** Where `npm run build:program` writes the mail program. */
export const MAIL_PROGRAM_PATH = fileURLToPath(new URL('../program/mail_program.so', import.meta.url));

/** The faucet's keypair file in a devnet's data directory. */
export const FAUCET_KEYPAIR_FILE = 'faucet-keypair.json';

/** Where a devnet started on `dataDir` keeps its faucet keypair (for `sealpost devnet`: `<data-dir>/devnet/faucet-keypair.json`). */
export function faucetKeypairPath(dataDir: string): string {
  return join(dataDir, FAUCET_KEYPAIR_FILE);
}

export interface Devnet {
  rpcUrl: string;
  wsUrl: string;
  rpcPort: number;
  wsPort: number;
  programId: string;
  bank: Bank;
  /** The faucet: pays airdrops, and is the mail program's payer and upgrade authority (it signs InitPostoffice). */
  faucetKeypair: Keypair;
  /** The faucet's keypair in Solana CLI format (mode 0600): `<dataDir>/faucet-keypair.json`. */
  faucetKeypairFile: string;
  /**
   * Changes fidelity switches at run time (the others keep their values; a
   * devnet started without `fidelity` starts its journal now).
   */
  setFidelity(partial: FidelityOptions): void;
  /** The switches in force ({} when fidelity mode was never used). */
  fidelity(): Readonly<FidelityOptions>;
  /** Fidelity counters (all 0 when fidelity mode was never used). */
  fidelityStats(): FidelityStats;
  /** Zeroes the fidelity counters. */
  resetFidelityStats(): void;
  /**
   * A fork that drops the transactions of the last `n` slots, the open one
   * included (none of them finalized): Bank.rollbackSlots. Needs fidelity
   * mode from before those slots.
   */
  rollbackSlots(n: number): { fromSlot: number; toSlot: number; signatures: string[] };
  /** Stops listening, persists the open slot and a snapshot, releases the ledger. Idempotent. */
  close(): Promise<void>;
}

function loadMailProgram(programId: string, path: string): ProgramImage {
  if (!existsSync(path)) {
    throw new Error(
      `devnet: the mail program binary ${path} is missing; build it with \`npm run build:program\``,
    );
  }
  return { programId, elf: new Uint8Array(readFileSync(path)) };
}

function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => {
      server.off('listening', onListening);
      reject(err);
    };
    const onListening = () => {
      server.off('error', onError);
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : port);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** Binds the RPC and WebSocket servers; with port 0 retries until P and P+1 are both free. */
async function bind(rpc: Server, ws: Server, host: string, port: number, wsPort: number | undefined) {
  for (let attempt = 0; ; attempt++) {
    const rpcPort = await listen(rpc, host, port);
    try {
      const boundWs = await listen(ws, host, wsPort ?? rpcPort + 1);
      return { rpcPort, wsPort: boundWs };
    } catch (err) {
      await closeServer(rpc);
      const code = (err as NodeJS.ErrnoException).code;
      const retry =
        port === 0 && wsPort === undefined && (code === 'EADDRINUSE' || code === 'ERR_SOCKET_BAD_PORT');
      if (!retry || attempt >= 20) throw err;
    }
  }
}

/**
 * Writes the faucet's keypair as a Solana CLI keypair file (a JSON array of
 * the 64 secret-key bytes), mode 0600, replaced atomically: written aside,
 * then renamed over the old one.
 */
function writeFaucetKeypair(path: string, faucet: Keypair): void {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    writeFileSync(tmp, JSON.stringify(Array.from(faucet.secretKey)), { mode: 0o600, flag: 'wx' });
    chmodSync(tmp, 0o600); // whatever the umask
    renameSync(tmp, path);
  } finally {
    rmSync(tmp, { force: true });
  }
}

function isAddress(text: string): boolean {
  try {
    return bs58.decode(text).length === 32;
  } catch {
    return false;
  }
}

function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

export async function startDevnet(opts: DevnetOptions): Promise<Devnet> {
  const host = opts.host ?? '127.0.0.1';
  const programId = opts.programId ?? DEFAULT_PROGRAM_ID;
  if (!isAddress(programId))
    throw new Error(`devnet: program id ${JSON.stringify(programId)} is not a base58 public key`);
  const logger = opts.logger ?? SILENT;
  const programs =
    opts.mailProgram === false ? [] : [loadMailProgram(programId, opts.programPath ?? MAIL_PROGRAM_PATH)];
  const bank = Bank.open({
    ledgerDir: opts.dataDir,
    programs,
    clock: opts.clock,
    finalizeDepth: opts.finalizeDepth,
    historyLimit: opts.historyLimit,
    logger,
  });
  const faucetKeypair = Keypair.fromSeed(bank.faucet.seed);
  const faucetKeypairFile = faucetKeypairPath(opts.dataDir);
  try {
    writeFaucetKeypair(faucetKeypairFile, faucetKeypair);
  } catch (err) {
    bank.close();
    throw err;
  }
  // Clients keep pooled connections idle while they wait for confirmations;
  // Node's 5 s keep-alive default races their reuse ("other side closed").
  const rpcServer = createServer({ keepAliveTimeout: 60_000, headersTimeout: 65_000 });
  const wsServer = createServer((_req, res) => {
    res.writeHead(426, { 'content-type': 'text/plain' });
    res.end('WebSocket (Solana PubSub) only\n');
  });
  let ports: { rpcPort: number; wsPort: number };
  try {
    ports = await bind(rpcServer, wsServer, host, opts.port ?? 8899, opts.wsPort);
  } catch (err) {
    bank.close();
    throw err;
  }
  const rpcAddress = `${urlHost(host)}:${ports.rpcPort}`;
  const ctx: RpcContext = { bank, logger, rpcAddress };
  if (opts.fidelity) ctx.fidelity = new Fidelity(bank, opts.fidelity);
  rpcServer.on('request', createRpcListener(ctx, opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES));
  const wss = new WebSocketServer({ server: wsServer, maxPayload: 1024 * 1024 });
  const pubsub = startPubsub(wss, bank, logger, (signature, slot) =>
    ctx.fidelity ? ctx.fidelity.hides(signature, slot, false) : false,
  );
  bank.start(opts.slotMs ?? 400);

  const rpcUrl = `http://${rpcAddress}`;
  const wsUrl = `ws://${urlHost(host)}:${ports.wsPort}`;
  logger.info(
    {
      rpcUrl,
      wsUrl,
      programId,
      faucet: faucetKeypair.publicKey.toBase58(),
      mailProgram: programs.length > 0,
      slot: bank.slot,
      genesisHash: bank.genesisHash,
      ...(ctx.fidelity ? { fidelity: ctx.fidelity.options } : {}),
    },
    'devnet listening',
  );

  let closing: Promise<void> | null = null;
  return {
    rpcUrl,
    wsUrl,
    rpcPort: ports.rpcPort,
    wsPort: ports.wsPort,
    programId,
    bank,
    faucetKeypair,
    faucetKeypairFile,
    setFidelity(partial) {
      if (ctx.fidelity) ctx.fidelity.set(partial);
      else ctx.fidelity = new Fidelity(bank, partial);
      logger.info({ fidelity: ctx.fidelity.options }, 'devnet fidelity changed');
    },
    fidelity: () => ctx.fidelity?.options ?? {},
    fidelityStats: () => {
      const stats = ctx.fidelity?.stats ?? emptyFidelityStats();
      return { ...stats, methods: { ...stats.methods } };
    },
    resetFidelityStats: () => ctx.fidelity?.resetStats(),
    rollbackSlots: (n) => bank.rollbackSlots(n),
    close: () => {
      closing ??= (async () => {
        await pubsub.close();
        await Promise.all([closeServer(rpcServer), closeServer(wsServer)]);
        bank.close();
        logger.info({ slot: bank.slot }, 'devnet stopped');
      })();
      return closing;
    },
  };
}
