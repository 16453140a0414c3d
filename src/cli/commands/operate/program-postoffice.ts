// The postoffice admin's commands under `sealpost program` (docs/protocol.md
// "The postoffice's admin", tags 50-53): `postoffice` shows it, `fees`
// changes the fees, the delegate or the root KSK digest (UpdatePostoffice),
// `withdraw-fees` moves collected fees to a wallet (WithdrawFees),
// `propose-admin` and `accept-admin` hand the admin role over in two steps.
// Each reads the postoffice first, so the usual mistakes (not the admin,
// more than is withdrawable, not the proposed key) are one line with nothing
// sent; then it sends through mailbox-tx.ts's runTx: the cost on stderr
// before sending, --dry-run (the transaction, a simulation, the cost) and
// --json.
import { type Connection, type Keypair, PublicKey, type TransactionInstruction } from '@solana/web3.js';
import type { Command } from 'commander';
import {
  acceptAdminInstruction,
  proposeAdminInstruction,
  toHex,
  updatePostofficeInstruction,
  withdrawFeesInstruction,
  ZERO_KEY,
} from '../../../../chain/client/index.ts';
import { DeployError } from '../../../../chain/program/deploy/onchain.ts';
import {
  describePostoffice,
  isNone,
  type PostofficeState,
  pendingText,
  postofficeJson,
  readPostoffice,
} from '../../../../chain/program/deploy/postoffice.ts';
import { CliError, EXIT_USAGE } from '../../common.ts';
import { addPriorityFeeOptions, priorityPolicyOf, usePriorityFee } from '../../priority-fee.ts';
import { type CostItem, runTx, type TxPlan } from '../holder/mailbox-tx.ts';
import {
  addressOption,
  cliRun,
  connect,
  hex32Option,
  lamportsOption,
  loadKeypair,
  mustBeProgram,
  RPC_FLAGS,
  RPC_MONIKER_HELP,
  rpcOption,
} from './program-common.ts';

const out = (line: string) => process.stdout.write(`${line}\n`);

/** What the mail program's refusals of these instructions mean. */
export const PROGRAM_HINTS: Record<string, string> = {
  Unauthorized: 'the signer is not the postoffice admin (or, for AcceptAdmin, not the pending admin)',
  NotUpgradeAuthority: "InitPostoffice must be co-signed by the program's upgrade authority",
  AlreadyExists: 'the postoffice exists already',
  InsufficientFunds: 'more than the withdrawable fees, or the receiver would not stay rent-exempt',
  InvalidArgument: 'a zero delegate, a zero amount, or the admin proposing itself',
};

interface AdminOptions {
  rpc: string;
  programId: string;
  keypair: string;
  dryRun?: boolean;
  json?: boolean;
  priorityFee?: string;
  maxPriorityFee?: bigint;
}

function addAdminOptions(cmd: Command, keypairHelp: string): Command {
  return addPriorityFeeOptions(cmd)
    .requiredOption(RPC_FLAGS, `cluster JSON-RPC URL${RPC_MONIKER_HELP}`, rpcOption)
    .requiredOption('--program-id <base58>', 'the mail program', addressOption('program id'))
    .requiredOption('-k, --keypair <file>', keypairHelp)
    .option('--dry-run', 'print the transaction, the simulation and its cost; send nothing')
    .option('--json', 'print the result as JSON on stdout');
}

/** The program and its postoffice, or one line saying why there is none. */
async function postofficeOf(conn: Connection, programId: PublicKey): Promise<PostofficeState> {
  await mustBeProgram(conn, programId);
  const state = await readPostoffice(conn, programId);
  if (!state) {
    throw new DeployError(
      `program ${programId.toBase58()} has no postoffice yet: \`sealpost program deploy\` initializes it (or \`sealpost program init-postoffice\`)`,
    );
  }
  return state;
}

function mustBeAdmin(state: PostofficeState, key: PublicKey): void {
  if (!state.postoffice.admin.equals(key)) {
    throw new DeployError(
      `${key.toBase58()} is not the admin of the postoffice ${state.address.toBase58()}: its admin is ${state.postoffice.admin.toBase58()}; nothing was sent`,
    );
  }
}

/** Opens the chain and the signer, runs the checks, then sends (or dry-runs) what `build` returns. */
async function adminTx(
  opts: AdminOptions,
  build: (
    state: PostofficeState,
    signer: Keypair,
    conn: Connection,
  ) => Promise<TxPlan | null> | TxPlan | null,
): Promise<void> {
  const signer = loadKeypair('--keypair', opts.keypair);
  const conn = usePriorityFee(await connect(opts.rpc), priorityPolicyOf(opts));
  const programId = new PublicKey(opts.programId);
  await cliRun(async () => {
    const state = await postofficeOf(conn, programId);
    const plan = await build(state, signer, conn);
    if (!plan) return;
    await runTx(
      {
        rpc: opts.rpc,
        programId: opts.programId,
        conn,
        wallet: signer.publicKey,
        keypair: signer,
        opts: { json: opts.json, dryRun: opts.dryRun, waitSecs: 60 },
      },
      { ...plan, announce: true },
      PROGRAM_HINTS,
    );
  });
}

// --- postoffice --------------------------------------------------------------

async function show(opts: { rpc: string; programId: string; json?: boolean }): Promise<void> {
  const conn = await connect(opts.rpc);
  const programId = new PublicKey(opts.programId);
  const state = await cliRun(() => postofficeOf(conn, programId));
  if (opts.json) {
    out(JSON.stringify({ program_id: opts.programId, ...postofficeJson(state) }, null, 2));
    return;
  }
  out(`postoffice ${state.address.toBase58()} of program ${opts.programId}`);
  for (const line of describePostoffice(state.postoffice)) out(line);
  out(`  balance               ${state.lamports} lamports (rent-exempt minimum ${state.rent})`);
  out(`  withdrawable          ${state.withdrawable} lamports (min(fees collected, balance - rent))`);
}

// --- fees --------------------------------------------------------------------

interface FeesOptions extends AdminOptions {
  stampFee?: bigint;
  surcharge?: bigint;
  delegate?: string;
  rootKsk?: Uint8Array;
}

function fees(opts: FeesOptions): Promise<void> {
  if (
    opts.stampFee === undefined &&
    opts.surcharge === undefined &&
    opts.delegate === undefined &&
    opts.rootKsk === undefined
  ) {
    throw new CliError('say what to change: --stamp-fee, --surcharge, --delegate or --root-ksk', EXIT_USAGE);
  }
  if (opts.delegate !== undefined && new PublicKey(opts.delegate).equals(ZERO_KEY)) {
    throw new CliError('--delegate: the zero key cannot be the delegate', EXIT_USAGE);
  }
  return adminTx(opts, (state, signer) => {
    mustBeAdmin(state, signer.publicKey);
    const p = state.postoffice;
    const changes: Record<string, string> = {};
    const change = (name: string, before: string, after: string | undefined) => {
      if (after !== undefined && after !== before) changes[name] = `${before} -> ${after}`;
    };
    change('stamp_fee_lamports', p.stampFeeLamports.toString(), opts.stampFee?.toString());
    change(
      'settlement_surcharge_lamports',
      p.settlementSurchargeLamports.toString(),
      opts.surcharge?.toString(),
    );
    change('delegate', p.delegateAddress.toBase58(), opts.delegate);
    change('root_ksk', toHex(p.rootKsk), opts.rootKsk ? toHex(opts.rootKsk) : undefined);
    if (Object.keys(changes).length === 0) {
      if (opts.json) out(JSON.stringify({ changed: false, postoffice: state.address.toBase58() }, null, 2));
      else out(`the postoffice ${state.address.toBase58()} has these values already; nothing was sent`);
      return null;
    }
    const ix = updatePostofficeInstruction({
      programId: opts.programId,
      admin: signer.publicKey,
      ...(opts.stampFee !== undefined ? { stampFeeLamports: opts.stampFee } : {}),
      ...(opts.surcharge !== undefined ? { settlementSurchargeLamports: opts.surcharge } : {}),
      ...(opts.delegate !== undefined ? { delegateAddress: opts.delegate } : {}),
      ...(opts.rootKsk !== undefined ? { rootKsk: opts.rootKsk } : {}),
    });
    return {
      title: `update the postoffice ${state.address.toBase58()}: ${Object.entries(changes)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}`,
      instructions: [ix],
      items: [],
      receipt: { postoffice: state.address.toBase58(), ...changes },
    };
  });
}

// --- withdraw-fees -----------------------------------------------------------

interface WithdrawOptions extends AdminOptions {
  to: string;
  amount?: bigint;
  all?: boolean;
}

function withdrawFees(opts: WithdrawOptions): Promise<void> {
  if ((opts.amount === undefined) === !opts.all) {
    throw new CliError('give --amount LAMPORTS or --all, one of them', EXIT_USAGE);
  }
  if (opts.amount === 0n) throw new CliError('--amount: withdraw at least 1 lamport', EXIT_USAGE);
  return adminTx(opts, async (state, signer, conn) => {
    mustBeAdmin(state, signer.publicKey);
    const to = new PublicKey(opts.to);
    const address = state.address.toBase58();
    if (to.equals(state.address)) {
      throw new DeployError(
        `--to ${opts.to} is the postoffice itself; name the wallet that receives the fees`,
      );
    }
    const p = state.postoffice;
    const why = `fees collected ${p.feesCollected} lamports, balance ${state.lamports} lamports of which ${state.rent} stay as rent`;
    if (state.withdrawable === 0n) {
      throw new DeployError(`nothing to withdraw from the postoffice ${address}: ${why}; nothing was sent`);
    }
    const amount = opts.all ? state.withdrawable : (opts.amount as bigint);
    if (amount > state.withdrawable) {
      throw new DeployError(
        `${amount} lamports is more than the postoffice ${address} can pay out: ${state.withdrawable} lamports are withdrawable (${why}); nothing was sent`,
      );
    }
    const receiver = await conn.getAccountInfo(to, 'confirmed');
    const minimum = BigInt(
      await conn.getMinimumBalanceForRentExemption(receiver?.data.length ?? 0, 'confirmed'),
    );
    const after = BigInt(receiver?.lamports ?? 0) + amount;
    if (after < minimum) {
      throw new DeployError(
        `${opts.to} would hold ${after} lamports after the withdrawal, below its rent-exempt minimum of ${minimum}: withdraw at least ${minimum - BigInt(receiver?.lamports ?? 0)} lamports to it; nothing was sent`,
      );
    }
    const items: CostItem[] = to.equals(signer.publicKey)
      ? [
          {
            kind: 'refund',
            what: `collected fees withdrawn from the postoffice ${address}`,
            lamports: amount,
          },
        ]
      : [];
    const ixs: TransactionInstruction[] = [
      withdrawFeesInstruction({
        programId: opts.programId,
        admin: signer.publicKey,
        to,
        amountLamports: amount,
      }),
    ];
    return {
      title: `withdraw ${amount} lamports of collected fees from the postoffice ${address} to ${opts.to}`,
      instructions: ixs,
      items,
      receipt: {
        postoffice: address,
        to: opts.to,
        amount_lamports: amount.toString(),
        fees_collected_after_lamports: (p.feesCollected - amount).toString(),
      },
    };
  });
}

// --- propose-admin / accept-admin --------------------------------------------

interface ProposeOptions extends AdminOptions {
  newAdmin?: string;
  withdraw?: boolean;
}

function proposeAdmin(opts: ProposeOptions): Promise<void> {
  if (Boolean(opts.newAdmin) === Boolean(opts.withdraw)) {
    throw new CliError('give --new-admin ADDRESS or --withdraw, one of them', EXIT_USAGE);
  }
  const next = opts.newAdmin ? new PublicKey(opts.newAdmin) : null;
  if (next?.equals(ZERO_KEY)) {
    throw new CliError(
      '--new-admin: the zero key is not an admin; --withdraw takes a proposal back',
      EXIT_USAGE,
    );
  }
  return adminTx(opts, (state, signer) => {
    mustBeAdmin(state, signer.publicKey);
    const p = state.postoffice;
    const address = state.address.toBase58();
    if (next?.equals(p.admin)) {
      throw new DeployError(
        `${next.toBase58()} is the admin of the postoffice ${address} already; nothing was sent`,
      );
    }
    if (!next && isNone(p.pendingAdmin)) {
      throw new DeployError(`the postoffice ${address} has no pending admin to withdraw; nothing was sent`);
    }
    if (next?.equals(p.pendingAdmin)) {
      throw new DeployError(
        `${next.toBase58()} is the pending admin of the postoffice ${address} already: it can accept with \`sealpost program accept-admin\`; nothing was sent`,
      );
    }
    return {
      title: next
        ? `propose ${next.toBase58()} as the admin of the postoffice ${address}${isNone(p.pendingAdmin) ? '' : ` (replaces the proposal of ${p.pendingAdmin.toBase58()})`}`
        : `withdraw the proposal of ${p.pendingAdmin.toBase58()} as the admin of the postoffice ${address}`,
      instructions: [
        proposeAdminInstruction({ programId: opts.programId, admin: signer.publicKey, newAdmin: next }),
      ],
      items: [],
      receipt: {
        postoffice: address,
        admin: p.admin.toBase58(),
        pending_admin: next?.toBase58() ?? null,
        previous_pending_admin: isNone(p.pendingAdmin) ? null : p.pendingAdmin.toBase58(),
      },
    };
  });
}

function acceptAdmin(opts: AdminOptions): Promise<void> {
  return adminTx(opts, (state, signer) => {
    const p = state.postoffice;
    const address = state.address.toBase58();
    if (isNone(p.pendingAdmin) || !p.pendingAdmin.equals(signer.publicKey)) {
      throw new DeployError(
        `${signer.publicKey.toBase58()} is not the pending admin of the postoffice ${address} (pending admin: ${pendingText(p)}): ` +
          `its admin ${p.admin.toBase58()} proposes a key first with \`sealpost program propose-admin --new-admin ADDRESS\`; nothing was sent`,
      );
    }
    return {
      title: `accept the admin role of the postoffice ${address} (from ${p.admin.toBase58()})`,
      instructions: [acceptAdminInstruction({ programId: opts.programId, newAdmin: signer.publicKey })],
      items: [],
      receipt: {
        postoffice: address,
        admin: signer.publicKey.toBase58(),
        previous_admin: p.admin.toBase58(),
      },
    };
  });
}

const POSTOFFICE_HELP = `
The postoffice admin's commands. Each reads the postoffice first and refuses
the usual mistakes in one line with nothing sent; before sending it prints
what it sends and the cost (the fee) on stderr; --dry-run prints the
transaction, a simulation and the cost and sends nothing; --json prints the
result (or, with --dry-run, the plan) as JSON.

Examples:
  $ sealpost program postoffice --rpc URL --program-id <ID>
  $ sealpost program fees --rpc URL --program-id <ID> --keypair admin.json --stamp-fee 2000
  $ sealpost program withdraw-fees --rpc URL --program-id <ID> --keypair admin.json --to <WALLET> --all
  $ sealpost program propose-admin --rpc URL --program-id <ID> --keypair admin.json --new-admin <ADDRESS>
  $ sealpost program accept-admin --rpc URL --program-id <ID> --keypair new-admin.json
`;

export function registerProgramPostoffice(cmd: Command): void {
  cmd
    .command('postoffice')
    .description(
      'show the postoffice: admin, pending admin, delegate, fees, fees collected and what is withdrawable',
    )
    .requiredOption(RPC_FLAGS, `cluster JSON-RPC URL${RPC_MONIKER_HELP}`, rpcOption)
    .requiredOption('--program-id <base58>', 'the mail program', addressOption('program id'))
    .option('--json', 'print the postoffice as JSON on stdout')
    .addHelpText('after', POSTOFFICE_HELP)
    .action((opts: { rpc: string; programId: string; json?: boolean }) => show(opts));
  addAdminOptions(
    cmd
      .command('fees')
      .description(
        "change the postoffice's fees, delegate or root KSK digest (UpdatePostoffice; the admin signs)",
      )
      .option('--stamp-fee <lamports>', 'protocol fee per stamp', lamportsOption)
      .option('--surcharge <lamports>', 'settlement surcharge per spent stamp', lamportsOption)
      .option(
        '--delegate <base58>',
        "the domain service's key (signs CreateDomain)",
        addressOption('address'),
      )
      .option('--root-ksk <hex>', 'SHA-256 DS digest of the DNSSEC root KSK (32 bytes hex)', hex32Option),
    'the admin keypair file: signs and pays the fee',
  )
    .addHelpText('after', POSTOFFICE_HELP)
    .action((opts: FeesOptions) => fees(opts));
  addAdminOptions(
    cmd
      .command('withdraw-fees')
      .description('move collected fees from the postoffice to a wallet (WithdrawFees; the admin signs)')
      .requiredOption('--to <base58>', 'the wallet that receives them', addressOption('address'))
      .option('--amount <lamports>', 'how much', lamportsOption)
      .option('--all', 'everything withdrawable: min(fees collected, balance - rent)'),
    'the admin keypair file: signs and pays the fee',
  )
    .addHelpText('after', POSTOFFICE_HELP)
    .action((opts: WithdrawOptions) => withdrawFees(opts));
  addAdminOptions(
    cmd
      .command('propose-admin')
      .description('name the key that may take the admin role (ProposeAdmin), or --withdraw the proposal')
      .option(
        '--new-admin <base58>',
        'the proposed admin (it accepts with accept-admin)',
        addressOption('address'),
      )
      .option('--withdraw', 'take the pending proposal back'),
    'the admin keypair file: signs and pays the fee',
  )
    .addHelpText('after', POSTOFFICE_HELP)
    .action((opts: ProposeOptions) => proposeAdmin(opts));
  addAdminOptions(
    cmd.command('accept-admin').description('take the admin role proposed to this key (AcceptAdmin)'),
    'the proposed admin keypair file: signs, pays the fee, becomes the admin',
  )
    .addHelpText('after', POSTOFFICE_HELP)
    .action((opts: AdminOptions) => acceptAdmin(opts));
}
