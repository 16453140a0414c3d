// Forks while mail flows: under commitment-true reads, every few seconds the
// slots newer than the confirmed one (the open slot and the one closed
// before it) are rolled back (devnet rollbackSlots): their transactions
// leave the history and their account writes are undone. A SendMail seen
// only as processed is watched to `confirmed`, so a dropped one shows as
// missing and is resent (its blockhash stays valid) or, once expired, goes
// through the proof of absence; a send pipelined on it fails on chain and is
// rebuilt. Nothing may be lost or doubled. (A rollback of a *confirmed*
// slot is a documented limit, docs/inbound.md "What a fork does"; not
// drilled.)
import { setTimeout as sleep } from 'node:timers/promises';
import type { Drill } from '../drill.ts';
import { chainDrill, LIMIT_SUMMARY } from './chain-load.ts';

const MESSAGES = 250;
/** Rollbacks that dropped at least one transaction, at least. */
const ROLLBACKS = 8;

export const chainRollback: Drill = {
  name: 'chain-rollback',
  summary: `${MESSAGES} messages while the slots above the confirmed one are rolled back at least ${ROLLBACKS} times (commitment-true); ${LIMIT_SUMMARY}`,
  budgetMs: 8 * 60_000,
  async run(log) {
    let attempts = 0;
    let effective = 0;
    let droppedTxs = 0;
    let unsafe = 0;
    return chainDrill(
      {
        label: 'chain-rollback',
        tag: 'fork',
        messages: MESSAGES,
        // Paced over about 40 s, so the forks hit mail in flight rather than a drained queue.
        paceMs: 600,
        fidelity: { commitmentTrue: true },
        during: async (stack, done) => {
          const bank = stack.devnet.bank;
          await sleep(3000);
          // While the load is sent, and then (while the backlog drains) until ROLLBACKS have dropped something.
          let afterDone = 0;
          while (!done() || (effective < ROLLBACKS && afterDone++ < 40)) {
            await sleep(700 + Math.random() * 1500);
            // Only the slots above `confirmed`: the open one and the one closed before.
            const confirmed = bank.slotAt('confirmed');
            const n = bank.slot - confirmed;
            if (n < 1) continue;
            attempts++;
            const r = stack.devnet.rollbackSlots(n);
            if (r.fromSlot <= confirmed) unsafe++;
            if (r.signatures.length > 0) {
              effective++;
              droppedTxs += r.signatures.length;
              log(
                `rolled back slots ${r.fromSlot}..${r.toSlot}: ${r.signatures.length} transactions dropped`,
              );
            }
          }
        },
        extra: () => ({
          detail: `${effective} rollbacks dropped ${droppedTxs} transactions (${attempts} rollbacks in all, each of the slots above the confirmed one${unsafe ? `; ${unsafe} reached a confirmed slot` : ''})`,
          pass: effective >= ROLLBACKS && unsafe === 0,
        }),
      },
      log,
    );
  },
};
