// Every subcommand module, in the order `sealpost --help` lists them, loaded
// on demand, grouped by audience (run/: the processes; operate/: an operator's
// tools; holder/: a wallet holder's): a command's module pulls in its whole stack (web3.js, the AWS
// SDK, fastify, …), so `sealpost mailbox sign-text` must not pay for
// `sealpost serve`. To add a command: create ./<audience>/<name>.ts exporting
// register(program), and add its loader and the command names it registers.
import type { Command } from 'commander';
import { type HelpLine, helpStubModule } from '../help-table.ts';

export interface CommandModule {
  register(program: Command): void;
}

interface CommandEntry {
  /** The top-level command names the module registers. */
  names: string[];
  load(): Promise<CommandModule>;
}

export const commandEntries: CommandEntry[] = [
  { names: ['dev'], load: () => import('./run/dev.ts') },
  { names: ['serve', 'worker'], load: () => import('./run/serve.ts') },
  { names: ['reload'], load: () => import('./run/reload.ts') },
  { names: ['devnet'], load: () => import('./run/devnet.ts') },
  { names: ['pind'], load: () => import('./run/pind.ts') },
  { names: ['domaind'], load: () => import('./run/domaind.ts') },
  { names: ['dns-records'], load: () => import('./operate/dns-records.ts') },
  { names: ['keygen'], load: () => import('./operate/keygen.ts') },
  { names: ['mailbox'], load: () => import('./holder/mailbox.ts') },
  { names: ['account'], load: () => import('./operate/account.ts') },
  { names: ['admin'], load: () => import('./operate/admin.ts') },
  { names: ['queue'], load: () => import('./operate/queue.ts') },
  { names: ['spooler'], load: () => import('./operate/spooler.ts') },
  { names: ['blobs'], load: () => import('./operate/blobs.ts') },
  { names: ['config'], load: () => import('./operate/config.ts') },
  { names: ['program'], load: () => import('./operate/program.ts') },
  { names: ['beacon'], load: () => import('./holder/beacon.ts') },
  { names: ['market'], load: () => import('./holder/market.ts') },
  { names: ['timelock'], load: () => import('./holder/timelock.ts') },
  { names: ['attest', 'reputation'], load: () => import('./holder/attest.ts') },
];

/**
 * Every top-level command's help line, compiled in by the build
 * (bin/build-dist.js); undefined when the TypeScript sources run as they are.
 */
declare const __SEALPOST_HELP__: HelpLine[] | undefined;
const builtHelp = typeof __SEALPOST_HELP__ === 'undefined' ? undefined : __SEALPOST_HELP__;

/**
 * The modules needed to run `argv`: only the named command's when the first
 * argument names one (or is `help` and the second does). Otherwise (help,
 * version, typos) commander needs every command to list them all or suggest
 * the right one: stand-ins from the build's help lines when no argument
 * names a command, every module when running from source.
 */
export async function loadCommandModules(argv: readonly string[]): Promise<CommandModule[]> {
  const args = argv.slice(2);
  const entry = (name: string | undefined) =>
    name === undefined ? undefined : commandEntries.find((e) => e.names.includes(name));
  const hit = entry(args[0]) ?? (args[0] === 'help' ? entry(args[1]) : undefined);
  if (hit) return [await hit.load()];
  if (builtHelp && !args.some((a) => entry(a))) return [helpStubModule(builtHelp)];
  return Promise.all(commandEntries.map((e) => e.load()));
}
