// A devnet on random loopback ports with a temp ledger, plus the little
// client conveniences the chain tests share. Stopped and removed after each test.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  type PublicKey,
  SystemProgram,
  Transaction,
  type TransactionInstruction,
} from '@solana/web3.js';
import { pino } from 'pino';
import { afterEach } from 'vitest';
import { parseMailProgramError } from '../../chain/client/errors.ts';
import { type Devnet, type DevnetOptions, startDevnet } from '../../chain/devnet/server.ts';

const open: { devnet: Devnet; dir: string }[] = [];

afterEach(async () => {
  for (const { devnet, dir } of open.splice(0)) {
    await devnet.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Waits until a confirmed slot's block time reaches `target` (Unix seconds), e.g. after moving a devnet's clock. */
export async function waitForChainTime(conn: Connection, target: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const time = await conn.getBlockTime(await conn.getSlot('confirmed'));
    if (time !== null && time >= target) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the devnet clock did not move');
}

export interface TestChain {
  devnet: Devnet;
  dataDir: string;
  connection: Connection;
  programId: string;
  /** The mail program's upgrade authority (devnet's faucet): InitPostoffice needs its signature. */
  upgradeAuthority: Keypair;
  /** A new keypair funded with `sol` SOL (default 10). */
  funded(sol?: number): Promise<Keypair>;
  airdrop(to: PublicKey, lamports: number): Promise<void>;
  /** Sends and confirms; throws web3.js's error on failure. */
  send(ixs: TransactionInstruction[], signers: Keypair[]): Promise<string>;
  /** Sends expecting the mail program to refuse; resolves to the error's name (e.g. 'PostageRequired'). */
  refusal(ixs: TransactionInstruction[], signers: Keypair[]): Promise<string>;
  balance(key: PublicKey): Promise<number>;
}

export async function startTestChain(opts: Partial<DevnetOptions> = {}): Promise<TestChain> {
  const dir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'sealpost-devnet-'));
  const devnet = await startDevnet({
    host: '127.0.0.1',
    port: 0,
    slotMs: 40,
    logger: pino({ level: 'silent' }),
    ...opts,
    dataDir: dir,
  });
  open.push({ devnet, dir });
  const connection = new Connection(devnet.rpcUrl, { commitment: 'confirmed', wsEndpoint: devnet.wsUrl });
  const airdrop = async (to: PublicKey, lamports: number) => {
    const signature = await connection.requestAirdrop(to, lamports);
    const latest = await connection.getLatestBlockhash('confirmed');
    await connection.confirmTransaction({ signature, ...latest }, 'confirmed');
  };
  // A fresh blockhash for every send: web3.js would reuse one for 30 s, longer
  // than the 150 slots (6 s at 40 ms) a blockhash stays valid here.
  const send = async (ixs: TransactionInstruction[], signers: Keypair[]) => {
    const latest = await connection.getLatestBlockhash('confirmed');
    const tx = new Transaction({ feePayer: signers[0]?.publicKey, ...latest }).add(...ixs);
    tx.sign(...signers);
    const signature = await connection.sendRawTransaction(tx.serialize(), {
      preflightCommitment: 'confirmed',
    });
    const { value } = await connection.confirmTransaction({ signature, ...latest }, 'confirmed');
    if (value.err) throw new Error(`Transaction ${signature} failed (${JSON.stringify(value)})`);
    return signature;
  };
  return {
    devnet,
    dataDir: dir,
    connection,
    programId: devnet.programId,
    upgradeAuthority: devnet.faucetKeypair,
    airdrop,
    async funded(sol = 10) {
      const kp = Keypair.generate();
      await airdrop(kp.publicKey, sol * LAMPORTS_PER_SOL);
      return kp;
    },
    send,
    async refusal(ixs, signers) {
      try {
        await send(ixs, signers);
      } catch (err) {
        const parsed = parseMailProgramError(err);
        if (parsed) return parsed.name;
        throw err;
      }
      throw new Error('transaction succeeded but a refusal was expected');
    },
    balance: (key) => connection.getBalance(key, 'confirmed'),
  };
}

/** A signed 0.001 SOL transfer from `payer` to a new key, on a fresh blockhash: its bytes and that blockhash. */
export async function signedTransfer(
  conn: Connection,
  payer: Keypair,
): Promise<{ wire: Buffer; latest: { blockhash: string; lastValidBlockHeight: number } }> {
  const latest = await conn.getLatestBlockhash('confirmed');
  const tx = new Transaction({ feePayer: payer.publicKey, ...latest }).add(
    SystemProgram.transfer({
      fromPubkey: payer.publicKey,
      toPubkey: Keypair.generate().publicKey,
      lamports: 1e6,
    }),
  );
  tx.sign(payer);
  return { wire: tx.serialize(), latest };
}
