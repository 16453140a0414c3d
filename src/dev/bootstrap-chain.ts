// Prepares a chain for mail the way `sealpost dev` promises: postoffice
// initialized (co-signed by the program's upgrade authority, which on devnet
// is its faucet: <devnet data dir>/faucet-keypair.json), the dev domain
// authorized under the authority key, and the test wallets funded with
// mailboxes. Every step first reads the chain, so running it again against
// the same ledger changes nothing.
import {
  type Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  sendAndConfirmTransaction,
  Transaction,
  type TransactionInstruction,
} from '@solana/web3.js';
import {
  createDomainInstruction,
  createMailboxInstruction,
  DecodeError,
  getDomain,
  getMailbox,
  getPostoffice,
  initPostofficeInstruction,
} from '../../chain/index.ts';
import { type Keypair as KeyFile, readKeypairFile } from '../keys/keypair-file.ts';

export interface DevWallet {
  name: string;
  key: KeyFile;
  /** Lamports per stamp first-contact senders pay; 0 = open mailbox. */
  defaultPostage: bigint;
}

export interface BootstrapChainOptions {
  connection: Connection;
  programId: string;
  domain: string;
  authority: KeyFile;
  delegate: KeyFile;
  /**
   * The mail program's upgrade authority keypair file, which InitPostoffice
   * needs as co-signer: devnet's faucet, `faucet-keypair.json` in the devnet's
   * data directory. Read only when the postoffice is not initialized yet.
   */
  upgradeAuthorityFile: string;
  wallets: DevWallet[];
  /** Protocol fee per stamp recorded in the postoffice. */
  stampFeeLamports?: bigint;
  settlementSurchargeLamports?: bigint;
  /** Minimum balance each dev key is topped up to. */
  fundLamports?: number;
  log?: (line: string) => void;
}

export interface BootstrapResult {
  /** Steps that changed the chain this time (empty when it was ready already). */
  performed: string[];
}

export async function bootstrapChain(opts: BootstrapChainOptions): Promise<BootstrapResult> {
  const { connection, programId } = opts;
  const log = opts.log ?? (() => {});
  const performed: string[] = [];
  const fund = opts.fundLamports ?? 100 * LAMPORTS_PER_SOL;
  const signer = (k: KeyFile) => Keypair.fromSecretKey(k.secretKey);
  const send = async (label: string, ixs: TransactionInstruction[], signers: Keypair[]) => {
    await sendAndConfirmTransaction(connection, new Transaction().add(...ixs), signers, {
      commitment: 'confirmed',
    });
    performed.push(label);
    log(label);
  };

  for (const key of [opts.authority, opts.delegate, ...opts.wallets.map((w) => w.key)]) {
    const balance = await connection.getBalance(signer(key).publicKey, 'confirmed');
    if (balance < fund / 2) {
      const sig = await connection.requestAirdrop(signer(key).publicKey, fund - balance);
      const { blockhash, lastValidBlockHeight } = await connection.getLatestBlockhash('confirmed');
      await connection.confirmTransaction({ signature: sig, blockhash, lastValidBlockHeight }, 'confirmed');
      performed.push(`funded ${key.address}`);
    }
  }

  // A dev chain made by an earlier build may hold accounts in an older layout
  // (the program is upgraded in place, its accounts are not migrated).
  const postoffice = await getPostoffice(connection, programId).catch((err: unknown) => {
    if (!(err instanceof DecodeError)) throw err;
    throw new Error(
      `the dev chain holds a postoffice in an older layout than this build's program (${err.message}); ` +
        'start a fresh chain: stop sealpost dev, delete the devnet directory of the data dir (.data/devnet), run it again',
    );
  });
  if (!postoffice) {
    let upgradeAuthority: KeyFile;
    try {
      upgradeAuthority = readKeypairFile(opts.upgradeAuthorityFile);
    } catch (err) {
      throw new Error(
        `the postoffice is not initialized and InitPostoffice needs the program's upgrade authority: ${(err as Error).message}`,
      );
    }
    await send(
      'initialized the postoffice',
      [
        initPostofficeInstruction({
          programId,
          admin: opts.delegate.address,
          upgradeAuthority: upgradeAuthority.address,
          delegateAddress: opts.delegate.address,
          stampFeeLamports: opts.stampFeeLamports ?? 1_000n,
          settlementSurchargeLamports: opts.settlementSurchargeLamports ?? 5_000n,
        }),
      ],
      [signer(opts.delegate), signer(upgradeAuthority)],
    );
  }

  const existing = await getDomain(connection, programId, opts.domain);
  if (!existing) {
    await send(
      `authorized ${opts.domain} under ${opts.authority.address}`,
      [
        createDomainInstruction({
          programId,
          delegate: opts.delegate.address,
          domain: opts.domain,
          authority: opts.authority.address,
        }),
      ],
      [signer(opts.delegate)],
    );
  } else if (existing.authority.toBase58() !== opts.authority.address) {
    throw new Error(
      `${opts.domain} is already authorized on this chain to ${existing.authority.toBase58()}, not to the dev authority key ${opts.authority.address}`,
    );
  }

  for (const wallet of opts.wallets) {
    if (await getMailbox(connection, programId, wallet.key.address)) continue;
    await send(
      `created the mailbox of ${wallet.name} (${wallet.key.address})`,
      [
        createMailboxInstruction({
          programId,
          owner: wallet.key.address,
          defaultPostage: wallet.defaultPostage,
          domain: opts.domain,
        }),
      ],
      [signer(wallet.key)],
    );
  }
  return { performed };
}
