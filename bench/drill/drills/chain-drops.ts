// 60 % of sendTransaction calls accepted and never processed (a send lost
// between the provider and the leader). The same signed bytes are sent again
// about every 2 s until confirmed (docs/inbound.md "Rebroadcast"); a message
// whose blockhash expires first goes through the proof of absence before it
// is signed again. Nothing may be lost or published twice.
//
// Under the provider's request limit (chain-load.ts NODE_RPS) with SendMail
// pipelining on (the default): a dropped send leaves the ones built on its
// unconfirmed mail_count to fail on chain, and each such job's retry first
// looks at its own checkpointed send; those looks join the shared status
// poll (SignatureWatch.check), one request between them.
import type { Drill } from '../drill.ts';
import { chainDrill, LIMIT_SUMMARY } from './chain-load.ts';

const MESSAGES = 250;

export const chainDrops: Drill = {
  name: 'chain-drops',
  summary: `${MESSAGES} messages while 60 % of sendTransaction calls are dropped; ${LIMIT_SUMMARY}`,
  budgetMs: 8 * 60_000,
  run: (log) =>
    chainDrill(
      {
        label: 'chain-drops',
        tag: 'drops',
        messages: MESSAGES,
        fidelity: { dropRate: 0.6 },
        extra: (p) => ({
          detail: `${p.stats.dropped} sendTransaction calls dropped`,
          pass: p.stats.dropped > 0,
        }),
      },
      log,
    ),
};
