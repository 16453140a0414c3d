// A lagging provider node under commitment-true reads: half the signatures
// that landed in the last 8 slots are "not found" in getSignatureStatuses,
// getTransaction and getSignaturesForAddress (and the statuses' context slot
// trails by 8), while `confirmed` is two slots behind `processed`. The
// exactly-once rule (docs/inbound.md "Exactly once") must neither re-sign a
// landed SendMail it cannot see (a double) nor give one up (a loss).
import type { Drill } from '../drill.ts';
import { chainDrill, LIMIT_SUMMARY } from './chain-load.ts';

const MESSAGES = 250;

export const chainLag: Drill = {
  name: 'chain-lag',
  summary: `${MESSAGES} messages against a node whose status reads lag 8 slots for half the signatures, commitment-true; ${LIMIT_SUMMARY}`,
  budgetMs: 8 * 60_000,
  run: (log) =>
    chainDrill(
      {
        label: 'chain-lag',
        tag: 'lag',
        messages: MESSAGES,
        fidelity: { statusLagSlots: 8, statusLagProbability: 0.5, commitmentTrue: true },
        extra: (p) => ({
          detail: `${p.stats.hiddenStatuses} statuses answered "not found" by the lag`,
          pass: p.stats.hiddenStatuses > 0,
        }),
      },
      log,
    ),
};
