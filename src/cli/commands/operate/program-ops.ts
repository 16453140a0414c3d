// `sealpost program show|buffers|close-buffer`: what `solana program show`,
// `solana program show --buffers` and `solana program close` tell an
// operator. `show` reads the program account, its ProgramData (upgrade
// authority, data length, last deploy slot) and the postoffice; `buffers`
// lists the BPF Upgradeable Loader's buffer accounts of one authority (what
// an interrupted or failed `program deploy` leaves behind: its buffer's
// authority is the upgrade authority); `close-buffer` closes one (the
// loader's Close), its lamports going to a recipient.
import { type Connection, type Keypair, PublicKey } from '@solana/web3.js';
import bs58 from 'bs58';
import type { Command } from 'commander';
import {
  BUFFER_METADATA_SIZE,
  close,
  decodeLoaderState,
  LOADER_ID,
  PROGRAMDATA_METADATA_SIZE,
} from '../../../../chain/client/loader.ts';
import { DeployError, readAccount, sha256Hex } from '../../../../chain/program/deploy/onchain.ts';
import { sol } from '../../../../chain/program/deploy/plan.ts';
import {
  describePostoffice,
  postofficeJson,
  readPostoffice,
} from '../../../../chain/program/deploy/postoffice.ts';
import { sendAll } from '../../../../chain/program/deploy/sender.ts';
import { CliError, EXIT_USAGE } from '../../common.ts';
import { addPriorityFeeOptions, type PriorityFeeOptions, priorityPolicyOf } from '../../priority-fee.ts';
import {
  addressOption,
  cliRun,
  connect,
  loadKeypair,
  mustBeProgram,
  RPC_FLAGS,
  RPC_MONIKER_HELP,
  rpcOption,
} from './program-common.ts';

const out = (line: string) => process.stdout.write(`${line}\n`);
const json = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
};

interface ShowOptions {
  rpc: string;
  programId: string;
  json?: boolean;
}

async function show(opts: ShowOptions): Promise<void> {
  const conn = await connect(opts.rpc);
  const programId = new PublicKey(opts.programId);
  await cliRun(async () => {
    const program = await mustBeProgram(conn, programId);
    const [programAccount, postoffice] = await Promise.all([
      readAccount(conn, programId),
      readPostoffice(conn, programId),
    ]);
    const dataLength = program.capacity + PROGRAMDATA_METADATA_SIZE;
    const result = {
      program_id: programId.toBase58(),
      owner: LOADER_ID.toBase58(),
      program_data: program.programData.toBase58(),
      program_data_length: dataLength,
      capacity: program.capacity,
      upgrade_authority: program.authority?.toBase58() ?? null,
      last_deploy_slot: Number(program.slot),
      elf_size: program.elf?.length ?? null,
      sha256: program.elf ? sha256Hex(program.elf) : null,
      balance_lamports: (programAccount?.lamports ?? 0) + program.programDataLamports,
      postoffice: postoffice ? postofficeJson(postoffice) : null,
    };
    if (opts.json) return json(result);
    out(`program            ${result.program_id}`);
    out('owner              BPF Upgradeable Loader');
    out(`program data       ${result.program_data}`);
    out(
      `data length        ${dataLength} bytes (${PROGRAMDATA_METADATA_SIZE} of metadata, room for a ${program.capacity}-byte program)`,
    );
    out(`upgrade authority  ${result.upgrade_authority ?? 'none (immutable)'}`);
    out(`last deploy slot   ${result.last_deploy_slot}`);
    out(
      `program            ${program.elf ? `${program.elf.length} bytes, sha256 ${result.sha256}` : 'not an ELF image'}`,
    );
    out(`balance            ${sol(result.balance_lamports)} SOL (program and program data)`);
    if (!postoffice) {
      out(
        'postoffice         none: `sealpost program deploy` (or `sealpost program init-postoffice`) initializes it',
      );
      return;
    }
    out(`postoffice         ${postoffice.address.toBase58()}`);
    for (const line of describePostoffice(postoffice.postoffice)) out(line);
  });
}

export interface LoaderBuffer {
  address: PublicKey;
  authority: PublicKey;
  lamports: number;
}

/**
 * The loader's buffer accounts whose authority is `authority`: one
 * getProgramAccounts with a memcmp on the buffer tag and the authority (the
 * query `solana program show --buffers` makes), the bytes left out.
 */
export async function buffersOf(conn: Connection, authority: PublicKey): Promise<LoaderBuffer[]> {
  const prefix = new Uint8Array(BUFFER_METADATA_SIZE);
  prefix.set([1, 0, 0, 0, 1]); // state Buffer (u32 1), authority Some
  prefix.set(authority.toBytes(), 5);
  let accounts: Awaited<ReturnType<Connection['getProgramAccounts']>>;
  try {
    accounts = await conn.getProgramAccounts(LOADER_ID, {
      commitment: 'confirmed',
      filters: [{ memcmp: { offset: 0, bytes: bs58.encode(prefix) } }],
      dataSlice: { offset: 0, length: BUFFER_METADATA_SIZE },
    });
  } catch (err) {
    throw new DeployError(
      `could not list the loader's buffers at ${conn.rpcEndpoint} (getProgramAccounts): ${(err as Error).message}`,
    );
  }
  return accounts
    .map((a) => ({ address: a.pubkey, authority, lamports: a.account.lamports }))
    .sort((a, b) => a.address.toBase58().localeCompare(b.address.toBase58()));
}

interface BuffersOptions {
  rpc: string;
  authority?: string;
  keypair?: string;
  json?: boolean;
}

async function listBuffers(opts: BuffersOptions): Promise<void> {
  if ((opts.authority === undefined) === (opts.keypair === undefined)) {
    throw new CliError(
      'name the buffer authority: --authority <address> or -k, --keypair <file> (one of them)',
      EXIT_USAGE,
    );
  }
  const authority = opts.authority
    ? new PublicKey(opts.authority)
    : loadKeypair('--keypair', opts.keypair as string).publicKey;
  const conn = await connect(opts.rpc);
  const buffers = await cliRun(() => buffersOf(conn, authority));
  const total = buffers.reduce((sum, b) => sum + b.lamports, 0);
  if (opts.json) {
    return json({
      rpc_url: opts.rpc,
      authority: authority.toBase58(),
      buffers: buffers.map((b) => ({ address: b.address.toBase58(), lamports: b.lamports })),
      total_lamports: total,
    });
  }
  if (buffers.length === 0) {
    out(`no buffers of authority ${authority.toBase58()} at ${opts.rpc}`);
    return;
  }
  out(`buffers of authority ${authority.toBase58()} at ${opts.rpc}:`);
  for (const b of buffers) out(`  ${b.address.toBase58().padEnd(44)}  ${sol(b.lamports)} SOL`);
  out(
    `${buffers.length} buffer${buffers.length === 1 ? '' : 's'}, ${sol(total)} SOL; \`sealpost program close-buffer <address>\` returns it`,
  );
}

interface CloseOptions extends PriorityFeeOptions {
  rpc: string;
  keypair: string;
  authority?: string;
  recipient?: string;
  dryRun?: boolean;
  json?: boolean;
}

async function closeBuffer(address: string, opts: CloseOptions): Promise<void> {
  const payer = loadKeypair('--keypair', opts.keypair);
  const authority: Keypair = opts.authority ? loadKeypair('--authority', opts.authority) : payer;
  const recipient = opts.recipient ? new PublicKey(opts.recipient) : payer.publicKey;
  const buffer = new PublicKey(address);
  const conn = await connect(opts.rpc);
  await cliRun(async () => {
    const account = await readAccount(conn, buffer);
    if (!account) throw new DeployError(`no account at ${address} on this cluster (closed already?)`);
    const state = account.owner.equals(LOADER_ID) ? decodeLoaderState(new Uint8Array(account.data)) : null;
    if (state?.kind !== 'buffer') {
      const what = state ? `a loader ${state.kind} account` : `an account of ${account.owner.toBase58()}`;
      throw new DeployError(`${address} is ${what}, not a buffer of the BPF Upgradeable Loader`);
    }
    if (!state.authority?.equals(authority.publicKey)) {
      throw new DeployError(
        `buffer ${address} belongs to authority ${state.authority?.toBase58() ?? 'none'}, not ${authority.publicKey.toBase58()}; pass its authority with --authority FILE; nothing was sent`,
      );
    }
    const plan = {
      buffer: address,
      authority: authority.publicKey.toBase58(),
      recipient: recipient.toBase58(),
      lamports: account.lamports,
      size: account.data.length - BUFFER_METADATA_SIZE,
    };
    if (opts.dryRun) {
      if (opts.json) return json({ dry_run: true, ...plan });
      out(
        `dry run: would close buffer ${address} (${plan.size} bytes, authority ${plan.authority}) and send ${sol(plan.lamports)} SOL to ${plan.recipient}; nothing was sent`,
      );
      return;
    }
    const before = await conn.getBalance(recipient, 'confirmed');
    const [signature] = (await sendAll(
      [
        {
          label: `Close of buffer ${address}`,
          ixs: [close({ account: buffer, recipient, authority: authority.publicKey })],
          signers: authority === payer ? [] : [authority],
        },
      ],
      { connection: conn, payer, priorityFee: priorityPolicyOf(opts) },
    )) as [string];
    const [gone, after] = await Promise.all([
      readAccount(conn, buffer),
      conn.getBalance(recipient, 'confirmed'),
    ]);
    if (gone) throw new DeployError(`Close was confirmed (${signature}) but ${address} still exists`);
    const result = { ...plan, signature, recipient_balance_change_lamports: after - before };
    if (opts.json) return json(result);
    out(
      `closed buffer ${address}: ${sol(plan.lamports)} SOL to ${plan.recipient} (balance ${after - before >= 0 ? '+' : ''}${sol(after - before)} SOL after fees) (${signature})`,
    );
  });
}

export function registerProgramOps(cmd: Command): void {
  cmd
    .command('show')
    .description(
      "a program's upgrade authority, ProgramData (address, data length), last deploy slot and postoffice",
    )
    .requiredOption(RPC_FLAGS, `cluster JSON-RPC URL${RPC_MONIKER_HELP}`, rpcOption)
    .requiredOption('--program-id <base58>', 'the program', addressOption('program id'))
    .option('--json', 'print the result as JSON on stdout')
    .action((opts: ShowOptions) => show(opts));
  cmd
    .command('buffers')
    .description(
      "the BPF Upgradeable Loader's buffer accounts of an authority (what an interrupted deploy leaves) and their SOL",
    )
    .requiredOption(RPC_FLAGS, `cluster JSON-RPC URL${RPC_MONIKER_HELP}`, rpcOption)
    .option(
      '--authority <base58>',
      'the buffer authority (a deploy uses its upgrade authority)',
      addressOption('address'),
    )
    .option('-k, --keypair <file>', 'the buffer authority as a keypair file (instead of --authority)')
    .option('--json', 'print the result as JSON on stdout')
    .action((opts: BuffersOptions) => listBuffers(opts));
  const closeCmd = cmd
    .command('close-buffer')
    .description("close a deploy buffer (the loader's Close); its lamports go to the recipient")
    .argument('<address>', 'the buffer account', addressOption('buffer address'))
    .requiredOption(RPC_FLAGS, `cluster JSON-RPC URL${RPC_MONIKER_HELP}`, rpcOption)
    .requiredOption('-k, --keypair <file>', 'fee payer keypair file')
    .option('--authority <file>', "the buffer's authority keypair (default the --keypair)")
    .option(
      '--recipient <base58>',
      'who receives the lamports (default the --keypair)',
      addressOption('address'),
    )
    .option('--dry-run', 'check the buffer and its authority and print what would happen; send nothing')
    .option('--json', 'print the result as JSON on stdout');
  addPriorityFeeOptions(closeCmd).action((address: string, opts: CloseOptions) => closeBuffer(address, opts));
}
