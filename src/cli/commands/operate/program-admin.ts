// `sealpost program init-postoffice` (the mail program's one-time setup,
// InitPostoffice of docs/protocol.md, co-signed by the program's upgrade
// authority) and `sealpost program set-authority` (hand the upgrade
// authority to another key, or revoke it for good).
import { PublicKey } from '@solana/web3.js';
import { type Command, Option } from 'commander';
import {
  initPostofficeInstruction,
  POSTOFFICE_SIZE,
  postofficeAddress,
} from '../../../../chain/client/index.ts';
import { setAuthority } from '../../../../chain/client/loader.ts';
import { DeployError, readProgram } from '../../../../chain/program/deploy/onchain.ts';
import {
  DEFAULT_STAMP_FEE,
  DEFAULT_SURCHARGE,
  describePostoffice,
  mustBeUpgradeAuthority,
  postofficeExists,
  readPostoffice,
} from '../../../../chain/program/deploy/postoffice.ts';
import { sendAll, type TxSpec } from '../../../../chain/program/deploy/sender.ts';
import { CliError, EXIT_USAGE } from '../../common.ts';
import { addPriorityFeeOptions, priorityPolicyOf, usePriorityFee } from '../../priority-fee.ts';
import { runTx } from '../holder/mailbox-tx.ts';
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
import { PROGRAM_HINTS } from './program-postoffice.ts';

const out = (line: string) => process.stdout.write(`${line}\n`);

interface InitOptions {
  rpc: string;
  keypair: string;
  upgradeAuthority?: string;
  programId: string;
  delegate: string;
  stampFee: bigint;
  surcharge: bigint;
  rootKsk?: Uint8Array;
  commitmentRoot?: Uint8Array;
  dryRun?: boolean;
  json?: boolean;
  priorityFee?: string;
  maxPriorityFee?: bigint;
}

async function initPostoffice(opts: InitOptions): Promise<void> {
  const admin = loadKeypair('--keypair', opts.keypair);
  const authority = opts.upgradeAuthority ? loadKeypair('--upgrade-authority', opts.upgradeAuthority) : admin;
  const conn = usePriorityFee(await connect(opts.rpc), priorityPolicyOf(opts));
  const programId = new PublicKey(opts.programId);
  const address = postofficeAddress(programId)[0].toBase58();
  await cliRun(async () => {
    const program = await mustBeProgram(conn, programId);
    const existing = await readPostoffice(conn, programId);
    if (existing) throw postofficeExists(programId, existing.postoffice);
    mustBeUpgradeAuthority(
      program,
      authority.publicKey,
      opts.upgradeAuthority ? '' : ' (sign with it: --upgrade-authority FILE)',
    );
    const ix = initPostofficeInstruction({
      programId,
      admin: admin.publicKey,
      upgradeAuthority: authority.publicKey,
      delegateAddress: opts.delegate,
      stampFeeLamports: opts.stampFee,
      settlementSurchargeLamports: opts.surcharge,
      ...(opts.rootKsk ? { rootKsk: opts.rootKsk } : {}),
      ...(opts.commitmentRoot ? { commitmentRoot: opts.commitmentRoot } : {}),
    });
    const rent = await conn.getMinimumBalanceForRentExemption(POSTOFFICE_SIZE, 'confirmed');
    await runTx(
      {
        rpc: opts.rpc,
        programId: opts.programId,
        conn,
        wallet: admin.publicKey,
        keypair: admin,
        opts: { json: opts.json, dryRun: opts.dryRun, waitSecs: 60 },
      },
      {
        title: `initialize the postoffice ${address} of program ${opts.programId}`,
        instructions: [ix],
        items: [
          {
            kind: 'rent',
            what: `the postoffice ${address} (${POSTOFFICE_SIZE} bytes)`,
            lamports: BigInt(rent),
          },
        ],
        signers: [authority],
        announce: true,
        receipt: {
          postoffice: address,
          admin: admin.publicKey.toBase58(),
          upgrade_authority: authority.publicKey.toBase58(),
          delegate: opts.delegate,
          stamp_fee_lamports: opts.stampFee.toString(),
          settlement_surcharge_lamports: opts.surcharge.toString(),
        },
      },
      PROGRAM_HINTS,
    );
    if (opts.dryRun) return;
    const created = await readPostoffice(conn, programId);
    if (!created) throw new DeployError(`InitPostoffice was confirmed but ${address} holds no postoffice`);
    if (!opts.json) {
      out(`initialized the postoffice ${address} of program ${opts.programId}`);
      for (const line of describePostoffice(created.postoffice)) out(line);
    }
  });
}

interface AuthorityOptions {
  rpc: string;
  keypair: string;
  programId: string;
  upgradeAuthority?: string;
  newAuthority?: string;
  final?: boolean;
  yes?: boolean;
  priorityFee?: string;
  maxPriorityFee?: bigint;
}

async function setUpgradeAuthority(opts: AuthorityOptions): Promise<void> {
  if (Boolean(opts.newAuthority) === Boolean(opts.final)) {
    throw new CliError('give --new-authority ADDRESS or --final (revoke), one of them', EXIT_USAGE);
  }
  if (opts.final && !opts.yes) {
    throw new CliError('--final makes the program immutable for good: pass --yes as well', EXIT_USAGE);
  }
  const payer = loadKeypair('--keypair', opts.keypair);
  const current = opts.upgradeAuthority ? loadKeypair('--upgrade-authority', opts.upgradeAuthority) : payer;
  const conn = usePriorityFee(await connect(opts.rpc), priorityPolicyOf(opts));
  const programId = new PublicKey(opts.programId);
  await cliRun(async () => {
    const program = await mustBeProgram(conn, programId);
    if (!program.authority) throw new DeployError(`program ${opts.programId} is already immutable`);
    if (!program.authority.equals(current.publicKey)) {
      throw new DeployError(
        `program ${opts.programId} has upgrade authority ${program.authority.toBase58()}, not ${current.publicKey.toBase58()}`,
      );
    }
    const next = opts.newAuthority ? new PublicKey(opts.newAuthority) : null;
    const spec: TxSpec = {
      label: 'SetAuthority',
      ixs: [setAuthority(program.programData, current.publicKey, next)],
      signers: [current],
    };
    const [signature] = await sendAll([spec], {
      connection: conn,
      payer,
      priorityFee: priorityPolicyOf(opts),
    });
    const after = await readProgram(conn, programId);
    const now = after?.authority?.toBase58() ?? null;
    if (now !== (next?.toBase58() ?? null))
      throw new DeployError(`SetAuthority was confirmed (${signature}) but the authority is ${now}`);
    out(`program ${opts.programId}: upgrade authority ${now ?? 'none (immutable)'} (${signature})`);
  });
}

export function registerProgramAdmin(cmd: Command): void {
  const init = cmd
    .command('init-postoffice')
    .description(
      "the mail program's one-time setup (InitPostoffice, co-signed by its upgrade authority); refused when it exists",
    )
    .requiredOption(RPC_FLAGS, `cluster JSON-RPC URL${RPC_MONIKER_HELP}`, rpcOption)
    .requiredOption('-k, --keypair <file>', 'admin keypair file: signs, pays the rent, becomes admin')
    .requiredOption('--program-id <base58>', 'the mail program', addressOption('program id'))
    .option(
      '--upgrade-authority <file>',
      "the program's upgrade authority keypair, which must co-sign (default the --keypair)",
    )
    .requiredOption(
      '--delegate <base58>',
      "the domain service's key (signs CreateDomain)",
      addressOption('address'),
    )
    // bigint defaults carry their own text: help would JSON.stringify them otherwise.
    .addOption(
      new Option('--stamp-fee <lamports>', 'protocol fee per stamp')
        .argParser(lamportsOption)
        .default(DEFAULT_STAMP_FEE, String(DEFAULT_STAMP_FEE)),
    )
    .addOption(
      new Option('--surcharge <lamports>', 'settlement surcharge per spent stamp')
        .argParser(lamportsOption)
        .default(DEFAULT_SURCHARGE, String(DEFAULT_SURCHARGE)),
    )
    .option(
      '--root-ksk <hex>',
      'SHA-256 DS digest of the DNSSEC root KSK (32 bytes hex): the anchor of reclaim proofs (default zeros: no reclaims by proof)',
      hex32Option,
    )
    .option('--commitment-root <hex>', 'postmaster key commitment (32 bytes hex; default zeros)', hex32Option)
    .option('--dry-run', 'print the transaction, the simulation and its cost; send nothing')
    .option('--json', 'print the result as JSON on stdout');
  addPriorityFeeOptions(init).action((opts: InitOptions) => initPostoffice(opts));
  const setAuth = cmd
    .command('set-authority')
    .description("change a program's upgrade authority, or revoke it (--final)")
    .requiredOption(RPC_FLAGS, `cluster JSON-RPC URL${RPC_MONIKER_HELP}`, rpcOption)
    .requiredOption('-k, --keypair <file>', 'fee payer keypair file')
    .requiredOption('--program-id <base58>', 'the program', addressOption('program id'))
    .option('--upgrade-authority <file>', 'the current upgrade authority keypair (default the payer)')
    .option('--new-authority <base58>', 'the new upgrade authority address', addressOption('address'))
    .option('--final', 'revoke the upgrade authority: the program can never change again')
    .option('-y, --yes', 'confirm --final');
  addPriorityFeeOptions(setAuth).action((opts: AuthorityOptions) => setUpgradeAuthority(opts));
}
