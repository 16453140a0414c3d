// End to end on the in-process stack with its pipeline workers and pind as
// the operator pin: `clients` SMTP sessions (reused) send `messages` 10 KB
// messages round robin to `recipients` wallets; each message's latency runs
// from its 250 to its delivery job finishing (Email account confirmed on
// devnet and the copy stored), read from the job's own finishedOn, so no
// completion event can be missed. The measuring is bench/harness/pipeline-load.ts's.
import { type LoadResult, measurePipelineLoad } from './pipeline-load.ts';

export type EndToEndResult = LoadResult;

export function measureEndToEnd(opts: {
  messages: number;
  clients: number;
  bytes: number;
  recipients: number;
}): Promise<EndToEndResult> {
  return measurePipelineLoad(
    { wallets: opts.recipients },
    { messages: opts.messages, clients: opts.clients, bytes: opts.bytes },
  );
}
