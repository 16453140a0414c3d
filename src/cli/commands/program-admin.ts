// `sealpost program init-postoffice` (the mail program's one-time setup,
// InitPostoffice of docs/protocol.md) and `sealpost program set-authority`
// (hand the upgrade authority to another key, or revoke it for good).
import { type Connection, type Keypair, PublicKey } from '@solana/web3.js';
import { type Command, InvalidArgumentError } from 'commander';
import {
  getPostoffice,
  initPostofficeInstruction,
  POSTOFFICE_SIZE,
  type Postoffice,
  postofficeAddress,
  toHex,
} from '../../../chain/index.ts';
import { setAuthority } from '../../../chain/program/loader.ts';
import { DeployError, readProgram } from '../../program-deploy/onchain.ts';
import { sol } from '../../program-deploy/plan.ts';
import { sendAll, type TxSpec } from '../../program-deploy/sender.ts';
import { CliError, EXIT_USAGE } from '../common.ts';
import { addressOption, cliRun, connect, loadKeypair, urlOption } from './program-common.ts';

const out = (line: string) => process.stdout.write(`${line}\n`);

function lamportsOption(value: string): bigint {
  if (!/^\d{1,20}$/.test(value) || BigInt(value) >= 2n ** 64n) {
    throw new InvalidArgumentError(`expected lamports (an integer 0..2^64-1), got "${value}"`);
  }
  return BigInt(value);
}

function hex32Option(value: string): Uint8Array {
  if (!/^[0-9a-fA-F]{64}$/.test(value))
    throw new InvalidArgumentError(`expected 64 hex digits (32 bytes), got "${value}"`);
  return new Uint8Array(Buffer.from(value, 'hex'));
}

/** The program must be a deployed upgradeable program before anything is sent to it. */
async function mustBeProgram(conn: Connection, programId: PublicKey) {
  const program = await readProgram(conn, programId);
  if (!program)
    throw new DeployError(`no program at ${programId.toBase58()} on this cluster; deploy it first`);
  return program;
}

async function mustAfford(conn: Connection, payer: Keypair, needed: number): Promise<void> {
  const balance = await conn.getBalance(payer.publicKey, 'confirmed');
  if (balance < needed) {
    throw new DeployError(
      `the payer ${payer.publicKey.toBase58()} needs ${sol(needed)} SOL, has ${sol(balance)} SOL; nothing was sent`,
    );
  }
}

function describePostoffice(p: Postoffice): string[] {
  return [
    `  admin                 ${p.admin.toBase58()}`,
    `  delegate              ${p.delegateAddress.toBase58()}`,
    `  stamp fee             ${p.stampFeeLamports} lamports`,
    `  settlement surcharge  ${p.settlementSurchargeLamports} lamports`,
    `  fees collected        ${p.feesCollected} lamports`,
    `  root ksk              ${toHex(p.rootKsk)}`,
    `  commitment root       ${toHex(p.commitmentRoot)}`,
  ];
}

interface InitOptions {
  rpc: string;
  keypair: string;
  programId: string;
  delegate: string;
  stampFee: bigint;
  surcharge: bigint;
  rootKsk?: Uint8Array;
  commitmentRoot?: Uint8Array;
}

async function initPostoffice(opts: InitOptions): Promise<void> {
  const admin = loadKeypair('--keypair', opts.keypair);
  const conn = await connect(opts.rpc);
  const programId = new PublicKey(opts.programId);
  const address = postofficeAddress(programId)[0].toBase58();
  await cliRun(async () => {
    await mustBeProgram(conn, programId);
    const existing = await getPostoffice(conn, programId);
    if (existing) {
      throw new DeployError(
        `the postoffice ${address} of program ${opts.programId} already exists (InitPostoffice runs once):\n${describePostoffice(existing).join('\n')}`,
      );
    }
    const ix = initPostofficeInstruction({
      programId,
      admin: admin.publicKey,
      delegateAddress: opts.delegate,
      stampFeeLamports: opts.stampFee,
      settlementSurchargeLamports: opts.surcharge,
      ...(opts.rootKsk ? { rootKsk: opts.rootKsk } : {}),
      ...(opts.commitmentRoot ? { commitmentRoot: opts.commitmentRoot } : {}),
    });
    const rent = await conn.getMinimumBalanceForRentExemption(POSTOFFICE_SIZE, 'confirmed');
    const reserve = await conn.getMinimumBalanceForRentExemption(0, 'confirmed');
    await mustAfford(conn, admin, rent + 5000 + reserve);
    const [signature] = await sendAll([{ label: 'InitPostoffice', ixs: [ix], signers: [] }], {
      connection: conn,
      payer: admin,
    });
    const created = await getPostoffice(conn, programId);
    if (!created)
      throw new DeployError(`InitPostoffice was confirmed (${signature}) but ${address} holds no postoffice`);
    out(`initialized the postoffice ${address} of program ${opts.programId} (${signature})`);
    for (const line of describePostoffice(created)) out(line);
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
  const conn = await connect(opts.rpc);
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
    const [signature] = await sendAll([spec], { connection: conn, payer });
    const after = await readProgram(conn, programId);
    const now = after?.authority?.toBase58() ?? null;
    if (now !== (next?.toBase58() ?? null))
      throw new DeployError(`SetAuthority was confirmed (${signature}) but the authority is ${now}`);
    out(`program ${opts.programId}: upgrade authority ${now ?? 'none (immutable)'} (${signature})`);
  });
}

export function registerProgramAdmin(cmd: Command): void {
  cmd
    .command('init-postoffice')
    .description("the mail program's one-time setup (InitPostoffice); refused when it exists")
    .requiredOption('--rpc <url>', 'cluster JSON-RPC URL', urlOption)
    .requiredOption('-k, --keypair <file>', 'admin keypair file: signs, pays the rent, becomes admin')
    .requiredOption('--program-id <base58>', 'the mail program', addressOption('program id'))
    .requiredOption(
      '--delegate <base58>',
      "the domain service's key (signs CreateDomain)",
      addressOption('address'),
    )
    .option('--stamp-fee <lamports>', 'protocol fee per stamp', lamportsOption, 1000n)
    .option('--surcharge <lamports>', 'settlement surcharge per spent stamp', lamportsOption, 5000n)
    .option(
      '--root-ksk <hex>',
      'SHA-256 DS digest of the DNSSEC root KSK (32 bytes hex): the anchor of reclaim proofs (default zeros: no reclaims by proof)',
      hex32Option,
    )
    .option('--commitment-root <hex>', 'postmaster key commitment (32 bytes hex; default zeros)', hex32Option)
    .action((opts: InitOptions) => initPostoffice(opts));
  cmd
    .command('set-authority')
    .description("change a program's upgrade authority, or revoke it (--final)")
    .requiredOption('--rpc <url>', 'cluster JSON-RPC URL', urlOption)
    .requiredOption('-k, --keypair <file>', 'fee payer keypair file')
    .requiredOption('--program-id <base58>', 'the program', addressOption('program id'))
    .option('--upgrade-authority <file>', 'the current upgrade authority keypair (default the payer)')
    .option('--new-authority <base58>', 'the new upgrade authority address', addressOption('address'))
    .option('--final', 'revoke the upgrade authority: the program can never change again')
    .option('-y, --yes', 'confirm --final')
    .action((opts: AuthorityOptions) => setUpgradeAuthority(opts));
}
