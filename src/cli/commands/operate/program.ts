// `sealpost program deploy|verify`: put the mail program on a Solana cluster
// through the BPF Upgradeable Loader, initialize its postoffice in the same
// run (signed by the upgrade authority), and check what a cluster runs
// against the local build. `init-postoffice` and `set-authority` live in
// ./program-admin.ts, the postoffice admin's commands in
// ./program-postoffice.ts. The work is in chain/program/deploy/.
import { basename } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { type Keypair, PublicKey } from '@solana/web3.js';
import type { Command } from 'commander';
import {
  type DeployDryRun,
  type DeployResult,
  deployProgram,
  deriveBufferKeypair,
  type PostofficeOutcome,
} from '../../../../chain/program/deploy/deploy.ts';
import { sol } from '../../../../chain/program/deploy/plan.ts';
import { DEFAULT_STAMP_FEE, DEFAULT_SURCHARGE } from '../../../../chain/program/deploy/postoffice.ts';
import { verifyProgram } from '../../../../chain/program/deploy/verify.ts';
import { generateKeypair, writeKeypairFile } from '../../../core/keys/keypair-file.ts';
import { CliError, EXIT_USAGE } from '../../common.ts';
import { addPriorityFeeOptions, type PriorityFeeOptions, priorityPolicyOf } from '../../priority-fee.ts';
import { registerProgramAdmin } from './program-admin.ts';
import {
  addressOption,
  cliRun,
  connect,
  hex32Option,
  intOption,
  lamportsOption,
  loadKeypair,
  MAIL_PROGRAM_SO,
  RPC_FLAGS,
  RPC_MONIKER_HELP,
  readSo,
  rpcOption,
} from './program-common.ts';
import { registerProgramOps } from './program-ops.ts';
import { registerProgramPostoffice } from './program-postoffice.ts';

const err = (line: string) => process.stderr.write(`${line}\n`);

async function ask(question: string): Promise<boolean> {
  if (!process.stdin.isTTY) {
    throw new CliError(
      'not asking on a non-interactive input: pass --yes to send without a prompt',
      EXIT_USAGE,
    );
  }
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

interface DeployOptions extends PriorityFeeOptions {
  rpc: string;
  keypair: string;
  programKeypair?: string;
  upgradeAuthority?: string;
  programId?: string;
  buffer?: string;
  so: string;
  maxLen?: number;
  window: number;
  yes?: boolean;
  json?: boolean;
  dryRun?: boolean;
  /** false: --no-init. */
  init: boolean;
  admin?: string;
  delegate?: string;
  stampFee?: bigint;
  surcharge?: bigint;
  rootKsk?: Uint8Array;
  commitmentRoot?: Uint8Array;
}

/** The program keypair: the named file, or the default file next to the build's name in the working directory (made when absent). */
function programKeypairOf(opts: DeployOptions): Keypair {
  if (opts.programKeypair) return loadKeypair('--program-keypair', opts.programKeypair);
  const file = `${basename(opts.so).replace(/\.so$/, '')}-keypair.json`;
  try {
    return loadKeypair('program keypair', file);
  } catch (e) {
    if (!/file not found/.test((e as Error).message)) throw e;
  }
  writeKeypairFile(file, generateKeypair());
  const kp = loadKeypair('program keypair', file);
  err(`new program keypair written to ${file}: program id ${kp.publicKey.toBase58()} (keep the file)`);
  return kp;
}

function bufferKeypairOf(opts: DeployOptions, authority: Keypair, programId: PublicKey): Keypair {
  if (!opts.buffer) return deriveBufferKeypair(authority, programId);
  try {
    return loadKeypair('--buffer', opts.buffer);
  } catch (e) {
    if (!/file not found/.test((e as Error).message)) throw e;
  }
  writeKeypairFile(opts.buffer, generateKeypair());
  return loadKeypair('--buffer', opts.buffer);
}

function progressPrinter(): (done: number, total: number) => void {
  let last = -1;
  return (done, total) => {
    if (done === last) return;
    last = done;
    if (process.stderr.isTTY) {
      process.stderr.write(`\rchunks written ${done}/${total}${done === total ? '\n' : ''}`);
    } else if (total <= 200 || done === total || done % Math.ceil(total / 100) === 0) {
      err(`chunks written ${done}/${total}`);
    }
  };
}

function postofficeLine(p: PostofficeOutcome | null): string | null {
  if (!p) return null;
  if (p.action === 'exists')
    return `  postoffice         ${p.address}: exists already, admin ${p.admin} (left as it is)`;
  if (p.action === 'planned')
    return `  postoffice         ${p.address}: InitPostoffice, admin ${p.admin}, rent ${sol(p.rentLamports)} SOL + fee ${sol(p.feeLamports)} SOL`;
  return `  postoffice         ${p.address}: initialized, admin ${p.admin}, delegate ${p.delegate} (${p.signature})`;
}

function printDeployed(r: DeployResult): void {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const postoffice = postofficeLine(r.postoffice);
  if (r.action === 'unchanged') {
    out(`program ${r.programId} already runs this build (sha256 ${r.sha256})`);
    if (postoffice) out(postoffice);
    if (r.transactions > 0) out(`  spent              ${sol(r.lamportsSpent)} SOL`);
    return;
  }
  out(`${r.action} program ${r.programId}`);
  out(`  program data       ${r.programData}`);
  out(`  upgrade authority  ${r.upgradeAuthority}`);
  out(`  size               ${r.size} bytes, sha256 ${r.sha256}`);
  out(
    `  chunks             ${r.chunksTotal} (${r.chunksWritten} written now, ${r.chunksHeld} already in the buffer), ${r.transactions} transactions, ${r.seconds.toFixed(1)} s`,
  );
  out(`  spent              ${sol(r.lamportsSpent)} SOL`);
  out(`  signature          ${r.signature} (slot ${r.slot})`);
  if (postoffice) out(postoffice);
  out(`set [chain] program_id = "${r.programId}" in sealpost.toml to use it`);
}

function printDryRun(r: DeployDryRun): void {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const what =
    r.action === 'unchanged'
      ? `program ${r.programId} already runs this build`
      : `would ${r.action} program ${r.programId}`;
  out(`dry run: ${what}; nothing was sent`);
  out(`  transactions       ${r.transactions}`);
  out(`  cost               ${sol(r.costLamports)} SOL (needs ${sol(r.neededLamports)} SOL at the peak)`);
  out(`  payer              ${r.payer}, balance ${sol(r.balanceLamports)} SOL`);
  const postoffice = postofficeLine(r.postoffice);
  if (postoffice) out(postoffice);
}

/** --no-init or the InitPostoffice arguments, checked before anything is read. */
function initOf(opts: DeployOptions, authority: Keypair): Parameters<typeof deployProgram>[0]['init'] {
  const given = [
    ['--admin', opts.admin],
    ['--delegate', opts.delegate],
    ['--stamp-fee', opts.stampFee],
    ['--surcharge', opts.surcharge],
    ['--root-ksk', opts.rootKsk],
    ['--commitment-root', opts.commitmentRoot],
  ].filter(([, v]) => v !== undefined);
  if (!opts.init) {
    if (given.length > 0) {
      throw new CliError(
        `--no-init leaves the postoffice alone: drop ${given.map(([n]) => n).join(', ')}`,
        EXIT_USAGE,
      );
    }
    return null;
  }
  if (!opts.delegate) {
    throw new CliError(
      "give --delegate <address> (the postoffice's delegate: domaind signs CreateDomain with it) to initialize the postoffice in the same run, or --no-init to leave it alone",
      EXIT_USAGE,
    );
  }
  return {
    admin: opts.admin ? loadKeypair('--admin', opts.admin) : authority,
    args: {
      delegate: new PublicKey(opts.delegate),
      stampFeeLamports: opts.stampFee ?? DEFAULT_STAMP_FEE,
      settlementSurchargeLamports: opts.surcharge ?? DEFAULT_SURCHARGE,
      ...(opts.rootKsk ? { rootKsk: opts.rootKsk } : {}),
      ...(opts.commitmentRoot ? { commitmentRoot: opts.commitmentRoot } : {}),
    },
  };
}

async function deploy(opts: DeployOptions): Promise<void> {
  if (opts.programId && opts.programKeypair) {
    throw new CliError(
      'give --program-id (upgrade) or --program-keypair (new or own program), not both',
      EXIT_USAGE,
    );
  }
  const payer = loadKeypair('--keypair', opts.keypair);
  const authority = opts.upgradeAuthority ? loadKeypair('--upgrade-authority', opts.upgradeAuthority) : payer;
  const init = initOf(opts, authority);
  const so = readSo(opts.so);
  const conn = await connect(opts.rpc);
  const programKeypair = opts.programId ? null : programKeypairOf(opts);
  const programId = opts.programId ? new PublicKey(opts.programId) : (programKeypair as Keypair).publicKey;
  const buffer = bufferKeypairOf(opts, authority, programId);
  const result = await cliRun(() =>
    deployProgram({
      connection: conn,
      so,
      payer,
      authority,
      programId,
      programKeypair,
      buffer,
      upgradeOnly: Boolean(opts.programId),
      ...(opts.maxLen ? { maxDataLen: opts.maxLen } : {}),
      window: opts.window,
      priorityFee: priorityPolicyOf(opts),
      init,
      dryRun: opts.dryRun === true,
      say: err,
      progress: progressPrinter(),
      confirm: async () => opts.yes === true || (await ask('send these transactions? [y/N] ')),
    }),
  );
  if (opts.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  else if ('dryRun' in result) printDryRun(result);
  else printDeployed(result);
  if ('dryRun' in result && !result.enough) {
    throw new CliError(
      `the payer ${result.payer} needs ${sol(result.neededLamports)} SOL, has ${sol(result.balanceLamports)} SOL ` +
        `(short by ${sol(result.neededLamports - result.balanceLamports)} SOL); nothing was sent`,
    );
  }
}

interface VerifyOptions {
  rpc: string;
  programId: string;
  so: string;
  json?: boolean;
}

async function verify(opts: VerifyOptions): Promise<void> {
  const so = readSo(opts.so);
  const conn = await connect(opts.rpc);
  const r = await cliRun(() => verifyProgram(conn, new PublicKey(opts.programId), so));
  if (opts.json) {
    process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
    if (!r.match) process.exitCode = 1;
    return;
  }
  const out = (line: string) => process.stdout.write(`${line}\n`);
  out(`program            ${r.programId}`);
  out(`program data       ${r.programData} (room for ${r.capacity} bytes)`);
  out(`upgrade authority  ${r.upgradeAuthority ?? 'none (immutable)'}`);
  out(`deploy slot        ${r.deploySlot}`);
  out(
    `on-chain           ${r.onChain ? `${r.onChain.size} bytes, sha256 ${r.onChain.sha256}` : 'not an ELF image'}`,
  );
  out(`local              ${r.local.size} bytes, sha256 ${r.local.sha256} (${opts.so})`);
  if (!r.match) {
    throw new CliError(
      `MISMATCH: the program at ${r.programId} is not the local build (first difference at byte ${r.firstDifference})`,
    );
  }
  out('match: the on-chain program is the local build, byte for byte');
}

const DEPLOY_HELP = `
Sends, as \`solana program deploy\` does: a buffer account (InitializeBuffer),
Write chunks, then DeployWithMaxDataLen (new program) or Upgrade (a program
whose upgrade authority is ours; ExtendProgram first when the build grew).
Then InitPostoffice, signed by the upgrade authority (the only key the
program lets initialize it): the admin is the upgrade authority unless
--admin FILE names another key; --delegate is required unless --no-init. A
postoffice that exists already is left alone when its admin is ours, and
stops the run before anything is sent when it is another key's. Prints the
SOL needed (the postoffice's rent and fee included) and the payer's balance
before sending anything; --dry-run stops there. The buffer's address is
derived from the upgrade authority and the program id (or --buffer FILE),
so an interrupted run resumes where it stopped.

Examples:
  $ sealpost program deploy --rpc https://api.devnet.solana.com --keypair payer.json --delegate <ADDRESS>
  $ sealpost program deploy --rpc URL --keypair payer.json --delegate <ADDRESS> --dry-run
  $ sealpost program deploy --rpc URL --keypair payer.json --program-keypair mail_program-keypair.json --delegate <ADDRESS> --yes
  $ sealpost program deploy --rpc URL --keypair payer.json --program-id <ID> --upgrade-authority auth.json --no-init
`;

export function register(program: Command): void {
  const cmd = program
    .command('program')
    .description('the mail program on a Solana cluster: deploy, verify, set up, run its postoffice');
  const deployCmd = cmd
    .command('deploy')
    .description('deploy or upgrade the mail program through the BPF Upgradeable Loader')
    .requiredOption(RPC_FLAGS, `cluster JSON-RPC URL${RPC_MONIKER_HELP}`, rpcOption)
    .requiredOption('-k, --keypair <file>', 'fee payer keypair file')
    .option(
      '--program-keypair <file>',
      'program id keypair (default <so name>-keypair.json here, made when absent)',
    )
    .option('--upgrade-authority <file>', 'upgrade authority keypair file (default the payer)')
    .option('--program-id <base58>', 'upgrade this existing program', addressOption('program id'))
    .option('--buffer <file>', 'buffer keypair file (made when absent; default derived)')
    .option('--so <file>', 'program binary', MAIL_PROGRAM_SO)
    .option(
      '--max-len <bytes>',
      'ProgramData capacity of a new program (default twice the size)',
      intOption(1, 10 * 1024 * 1024),
    )
    .option('--window <n>', 'Write transactions in flight at once', intOption(1, 256), 8)
    .option(
      '--delegate <base58>',
      "the postoffice's delegate (domaind signs CreateDomain with it); required unless --no-init",
      addressOption('address'),
    )
    .option(
      '--admin <file>',
      "the postoffice's admin keypair (signs InitPostoffice; default the upgrade authority)",
    )
    .option('--stamp-fee <lamports>', `protocol fee per stamp (default ${DEFAULT_STAMP_FEE})`, lamportsOption)
    .option(
      '--surcharge <lamports>',
      `settlement surcharge per spent stamp (default ${DEFAULT_SURCHARGE})`,
      lamportsOption,
    )
    .option(
      '--root-ksk <hex>',
      'SHA-256 DS digest of the DNSSEC root KSK (32 bytes hex; default zeros)',
      hex32Option,
    )
    .option('--commitment-root <hex>', 'postmaster key commitment (32 bytes hex; default zeros)', hex32Option)
    .option('--no-init', 'deploy or upgrade only: do not initialize the postoffice')
    .option('--dry-run', 'print the plan and its cost; send nothing')
    .option('-y, --yes', 'send without asking')
    .option('--json', 'print the result as JSON on stdout');
  addPriorityFeeOptions(deployCmd)
    .addHelpText('after', DEPLOY_HELP)
    .action((opts: DeployOptions) => deploy(opts));
  cmd
    .command('verify')
    .description(
      'compare the deployed program with the local build byte for byte (also shows its authority and slot)',
    )
    .requiredOption(RPC_FLAGS, `cluster JSON-RPC URL${RPC_MONIKER_HELP}`, rpcOption)
    .requiredOption('--program-id <base58>', 'the program', addressOption('program id'))
    .option('--so <file>', 'program binary', MAIL_PROGRAM_SO)
    .option('--json', 'print the result as JSON on stdout (exit 1 on mismatch)')
    .action((opts: VerifyOptions) => verify(opts));
  registerProgramOps(cmd);
  registerProgramAdmin(cmd);
  registerProgramPostoffice(cmd);
}
