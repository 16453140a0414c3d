// A devnet on random loopback ports with a temporary ledger directory, a
// web3.js Connection wired to its WebSocket, and raw JSON-RPC helpers for the
// node's own tests (test/devnet-*.test.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection, type Keypair, LAMPORTS_PER_SOL, type SignatureStatus } from '@solana/web3.js';
import { type Devnet, type DevnetOptions, startDevnet } from '../../chain/devnet/server.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON-RPC results field by field
type Json = any;

export interface RpcResponse {
  jsonrpc: '2.0';
  id: unknown;
  result?: Json;
  error?: { code: number; message: string; data?: Json };
}

export interface TestDevnet {
  devnet: Devnet;
  conn: Connection;
  dir: string;
  /** One JSON-RPC call; resolves to the whole response object. */
  rpc(method: string, params?: unknown[]): Promise<RpcResponse>;
  /** POSTs a raw body; resolves to status, headers and the parsed body ('' when empty). */
  post(
    body: string,
    headers?: Record<string, string>,
  ): Promise<{ status: number; headers: Headers; body: unknown }>;
  fund(who: Keypair, sol?: number): Promise<void>;
  /** Closes the devnet; `keepDir` leaves the ledger for a restart. */
  close(opts?: { keepDir?: boolean }): Promise<void>;
}

/** Polls getSignatureStatuses until the signature reaches `commitment`. */
export async function waitForStatus(
  conn: Connection,
  signature: string,
  commitment: 'confirmed' | 'finalized' = 'confirmed',
  timeoutMs = 10_000,
): Promise<SignatureStatus> {
  const rank = { processed: 0, confirmed: 1, finalized: 2 };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { value } = await conn.getSignatureStatus(signature, { searchTransactionHistory: true });
    if (value?.confirmationStatus && rank[value.confirmationStatus] >= rank[commitment]) return value;
    if (Date.now() > deadline) throw new Error(`${signature} did not reach ${commitment}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function startTestDevnet(opts: Partial<DevnetOptions> = {}): Promise<TestDevnet> {
  const dir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'sealpost-devnet-'));
  const devnet = await startDevnet({ port: 0, slotMs: 50, finalizeDepth: 4, ...opts, dataDir: dir });
  const conn = new Connection(devnet.rpcUrl, {
    commitment: 'confirmed',
    wsEndpoint: devnet.wsUrl,
    disableRetryOnRateLimit: true,
  });
  let nextId = 1;
  const post = async (body: string, headers: Record<string, string> = {}) => {
    const res = await fetch(devnet.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text === '' ? '' : JSON.parse(text) };
  };
  return {
    devnet,
    conn,
    dir,
    post,
    rpc: async (method, params) =>
      (await post(JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }))).body as RpcResponse,
    fund: async (who, sol = 10) => {
      const signature = await conn.requestAirdrop(who.publicKey, sol * LAMPORTS_PER_SOL);
      const latest = await conn.getLatestBlockhash();
      const { value } = await conn.confirmTransaction({ signature, ...latest });
      if (value.err) throw new Error(`airdrop failed: ${JSON.stringify(value.err)}`);
    },
    close: async ({ keepDir = false } = {}) => {
      await devnet.close();
      if (!keepDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
