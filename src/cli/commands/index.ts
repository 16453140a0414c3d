// Every subcommand module, in the order `sealpost --help` lists them, loaded
// on demand: a command's module pulls in its whole stack (web3.js, the AWS
// SDK, fastify, …), so `sealpost mailbox sign-text` must not pay for
// `sealpost serve`. To add a command: create ./<name>.ts exporting
// register(program), and add its loader and the command names it registers.
import type { Command } from 'commander';

export interface CommandModule {
  register(program: Command): void;
}

interface CommandEntry {
  /** The top-level command names the module registers. */
  names: string[];
  load(): Promise<CommandModule>;
}

export const commandEntries: CommandEntry[] = [
  { names: ['dev'], load: () => import('./dev.ts') },
  { names: ['serve', 'worker'], load: () => import('./serve.ts') },
  { names: ['devnet'], load: () => import('./devnet.ts') },
  { names: ['pind'], load: () => import('./pind.ts') },
  { names: ['domaind'], load: () => import('./domaind.ts') },
  { names: ['dns-records'], load: () => import('./dns-records.ts') },
  { names: ['keygen'], load: () => import('./keygen.ts') },
  { names: ['mailbox'], load: () => import('./mailbox.ts') },
  { names: ['account'], load: () => import('./account.ts') },
  { names: ['admin'], load: () => import('./admin.ts') },
  { names: ['queue'], load: () => import('./queue.ts') },
  { names: ['spooler'], load: () => import('./spooler.ts') },
  { names: ['config'], load: () => import('./config.ts') },
  { names: ['program'], load: () => import('./program.ts') },
];

/**
 * The modules needed to run `argv`: only the named command's when the first
 * argument names one, every module otherwise (help, version, typos — so
 * commander can list them all or suggest the right one).
 */
export async function loadCommandModules(argv: readonly string[]): Promise<CommandModule[]> {
  const first = argv[2];
  const hit = first === undefined ? undefined : commandEntries.find((e) => e.names.includes(first));
  return Promise.all((hit ? [hit] : commandEntries).map((e) => e.load()));
}
