// The shape the pin-down and rpc-down drills share: mail flows to the drill
// stack's MX; once a quarter of it is acknowledged a component is stopped
// for a while and started again; then the run waits for the pipeline to
// drain and accounts for every acknowledged message on chain.
import { setTimeout as sleep } from 'node:timers/promises';
import { type Accounting, account, type LoadResult, readInboxes, sendLoad, waitForInboxes } from './mail.ts';
import type { DrillStack } from './rig.ts';

export interface OutageOptions {
  messages: number;
  outageMs: number;
  /** Tag of the load's messages. */
  tag: string;
  /** What is stopped, for the log ("operator pin (pind)"). */
  what: string;
  stop(): Promise<unknown>;
  start(): Promise<unknown>;
}

export async function outageDuringLoad(
  stack: DrillStack,
  log: (line: string) => void,
  opts: OutageOptions,
): Promise<{ load: LoadResult; accounting: Accounting }> {
  let quarter: () => void = () => {};
  const started = new Promise<void>((r) => {
    quarter = r;
  });
  const sending = sendLoad({
    mxPort: stack.mxPort,
    to: stack.addresses(),
    count: opts.messages,
    connections: 4,
    paceMs: 250,
    onAck: (n) => n >= opts.messages / 4 && quarter(),
    deadlineMs: 5 * 60_000,
    tag: opts.tag,
  });
  await Promise.race([started, sending]);
  await opts.stop();
  log(`${opts.what} stopped`);
  await sleep(opts.outageMs);
  await opts.start();
  log(`${opts.what} started again`);
  const load = await sending;
  const n = await waitForInboxes(
    stack.connection,
    stack.programId,
    stack.wallets,
    load.acked.length,
    6 * 60_000,
  );
  log(`drained: ${n} Email accounts`);
  await sleep(3000);
  const accounting = account(
    load.acked,
    await readInboxes(stack.connection, stack.programId, stack.gatewayUrl, stack.wallets),
  );
  return { load, accounting };
}
