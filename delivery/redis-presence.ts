// Whether Redis still knows a job: the reconcile step's one question, asked
// of both the spool (./reconcile.ts) and the outbound ledger
// (./reconcile-outbound.ts) for a batch of entries at a time.
import type { Redis } from 'ioredis';

/** For each set of Redis keys, whether any of them exists (one pipeline for all). */
export async function anyKeyExists(redis: Redis, keySets: readonly string[][]): Promise<boolean[]> {
  const pipeline = redis.pipeline();
  for (const keys of keySets) for (const k of keys) pipeline.exists(k);
  const answers = (await pipeline.exec()) ?? [];
  let at = 0;
  return keySets.map((keys) => {
    let present = false;
    for (const _ of keys) {
      const [err, value] = answers[at++] ?? [new Error('no answer'), 0];
      if (err) throw err;
      if (Number(value) > 0) present = true;
    }
    return present;
  });
}
