// Congestion: the node drops any transaction whose compute-unit price is
// under 10,000 µlamports/CU, and getRecentPrioritizationFees answers fees
// around that level. With the stack's default `[chain] priority_fee =
// "auto"` (docs/inbound.md "Fees and compute limits") every message must
// land, each with a priority fee; the figure is what that fee costs.
import type { Drill } from '../drill.ts';
import { chainDrill, LIMIT_SUMMARY } from './chain-load.ts';

const MESSAGES = 250;
const MIN_FEE = 10_000;

export const chainCongestion: Drill = {
  name: 'chain-congestion',
  summary: `${MESSAGES} messages while transactions under ${MIN_FEE.toLocaleString('en-US')} µlamports/CU are dropped ([chain] priority_fee = "auto"); ${LIMIT_SUMMARY}`,
  budgetMs: 8 * 60_000,
  run: (log) =>
    chainDrill(
      {
        label: 'chain-congestion',
        tag: 'cong',
        messages: MESSAGES,
        fidelity: { minPriorityFeeMicroLamports: MIN_FEE },
        extra: (p) => {
          const delivered = Math.max(1, p.accounting?.delivered ?? 0);
          const perTx = p.txs ? Math.round(Number(p.priorityFees) / p.txs) : 0;
          return {
            detail: `priority fee ${Math.round(Number(p.priorityFees) / delivered).toLocaleString('en-US')} lamports/msg (${perTx.toLocaleString('en-US')} a transaction); ${p.txsWithoutPriorityFee} landed without one; ${p.stats.droppedLowFee} sends dropped for a fee under the minimum`,
            pass: p.txsWithoutPriorityFee === 0 && p.priorityFees > 0n,
          };
        },
      },
      log,
    ),
};
