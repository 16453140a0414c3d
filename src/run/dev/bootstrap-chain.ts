// Prepares a chain for mail the way `sealpost dev` promises: postoffice
// initialized (co-signed by the program's upgrade authority, which on devnet
// is its faucet: <devnet data dir>/faucet-keypair.json), the dev domain
// authorized under the authority key, and the test wallets funded with
// mailboxes. Every step first reads the chain, so running it again against
// the same ledger changes nothing. Against a chain that is not dev's own
// devnet (`sealpost dev --rpc`) it only checks (checkOnly): nothing can be
// airdropped there and the program's upgrade authority is not the faucet,
// so it lists what is missing, each with its remedy.
import {
  type Connection,
  Keypair,
  LAMPORTS_PER_SOL,
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
} from '../../../chain/client/index.ts';
import { confirmSignature, sendAndConfirmPolled } from '../../core/chain-rpc.ts';
import { type Keypair as KeyFile, readKeypairFile } from '../../core/keys/keypair-file.ts';

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
  /**
   * Only read the chain and report what is missing (no airdrop, no
   * transaction): for a chain that is not dev's own devnet.
   */
  checkOnly?: boolean;
  /** checkOnly: the balance the authority and delegate keys need at least (default 0.1 SOL). */
  minOperatorLamports?: number;
  /** checkOnly: the balance each test wallet needs at least (default 0.01 SOL). */
  minWalletLamports?: number;
}

export interface MissingStep {
  /** What is missing, and how to make it so. */
  what: string;
  /** The mail server cannot deliver without it (the test wallets' steps are not essential). */
  essential: boolean;
}

export interface BootstrapResult {
  /** Steps that changed the chain this time (empty when it was ready already, always with checkOnly). */
  performed: string[];
  /** checkOnly: what the chain lacks (empty when it is ready). */
  missing: MissingStep[];
}

const sol = (lamports: number) => `${(lamports / LAMPORTS_PER_SOL).toFixed(4)} SOL`;

export async function bootstrapChain(opts: BootstrapChainOptions): Promise<BootstrapResult> {
  const { connection, programId } = opts;
  const log = opts.log ?? (() => {});
  const performed: string[] = [];
  const missing: MissingStep[] = [];
  const fund = opts.fundLamports ?? 100 * LAMPORTS_PER_SOL;
  const check = opts.checkOnly === true;
  const signer = (k: KeyFile) => Keypair.fromSecretKey(k.secretKey);
  const send = async (label: string, ixs: TransactionInstruction[], signers: Keypair[]) => {
    await sendAndConfirmPolled(connection, new Transaction().add(...ixs), signers, {
      commitment: 'confirmed',
    });
    performed.push(label);
    log(label);
  };

  const keys = [
    { name: 'the domain authority key', key: opts.authority, essential: true },
    { name: 'the postoffice delegate key', key: opts.delegate, essential: true },
    ...opts.wallets.map((w) => ({ name: `the ${w.name} test wallet`, key: w.key, essential: false })),
  ];
  for (const { name, key, essential } of keys) {
    const balance = await connection.getBalance(signer(key).publicKey, 'confirmed');
    if (check) {
      const min = essential
        ? (opts.minOperatorLamports ?? LAMPORTS_PER_SOL / 10)
        : (opts.minWalletLamports ?? LAMPORTS_PER_SOL / 100);
      if (balance < min) {
        missing.push({
          what: `${name} ${key.address} holds ${sol(balance)}; send it at least ${sol(min - balance)} (this chain has no dev faucet)`,
          essential,
        });
      }
      continue;
    }
    if (balance < fund / 2) {
      const sig = await connection.requestAirdrop(signer(key).publicKey, fund - balance);
      const { blockhash, lastValidBlockHeight } = await connection.getLatestBlockhash('confirmed');
      await confirmSignature(connection, { signature: sig, blockhash, lastValidBlockHeight }, 'confirmed');
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
  if (!postoffice && check) {
    missing.push({
      what:
        `the postoffice of program ${programId} is not initialized: its upgrade authority initializes it, ` +
        `\`sealpost program init-postoffice --rpc <url> --program-id ${programId} --keypair <payer> --upgrade-authority <its keypair> --delegate ${opts.delegate.address}\``,
      essential: true,
    });
  } else if (!postoffice) {
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
  if (!existing && check) {
    missing.push({
      what: `${opts.domain} is not authorized: the postoffice's delegate authorizes it to the dev authority ${opts.authority.address} (CreateDomain, as domaind's authorize does)`,
      essential: true,
    });
  } else if (!existing) {
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
    if (check) {
      missing.push({
        what: `the ${wallet.name} test wallet ${wallet.key.address} has no mailbox: \`sealpost mailbox create --key <data-dir>/keys/wallet-${wallet.name}.json${wallet.defaultPostage > 0n ? ` --postage ${wallet.defaultPostage}` : ''}\``,
        essential: false,
      });
      continue;
    }
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
  return { performed, missing };
}
