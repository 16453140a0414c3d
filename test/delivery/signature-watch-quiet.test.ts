// The status poller settles at slot cadence while nothing changes (a send
// dropped and waiting for its rebroadcast), instead of polling every 50 ms,
// and is fast again for a new signature.
import { describe, expect, it } from 'vitest';
import { QUIET_MAX_MS, quietInterval, SignatureWatch } from '../../delivery/sendmail/signature-watch.ts';
import { signedTransfer, startTestChain } from '../support/devnet.ts';

describe('the status poller', () => {
  it('doubles its interval with each quiet round, up to one slot', () => {
    expect([0, 1, 2, 3, 4, 5, 6].map((q) => quietInterval(10, q))).toEqual([10, 20, 40, 80, 160, 320, 400]);
    expect(quietInterval(50, 0)).toBe(50);
    expect(quietInterval(50, 40)).toBe(QUIET_MAX_MS);
  });

  it('polls a few times a second, not twenty, while a dropped send waits', async () => {
    const chain = await startTestChain({ slotMs: 100, fidelity: {} });
    const payer = await chain.funded(1);
    const watch = new SignatureWatch(chain.connection);
    try {
      chain.devnet.setFidelity({ dropRate: 1 });
      const { wire, latest } = await signedTransfer(chain.connection, payer);
      const signature = await chain.connection.sendRawTransaction(wire, { maxRetries: 0 });
      const before = chain.devnet.fidelityStats().methods?.getSignatureStatuses ?? 0;
      const waited = watch.wait(signature, latest.lastValidBlockHeight, (s) => s.kind === 'landed', {
        fast: false,
        timeoutMs: 3000,
        onTimeout: () => new Error('not landed'),
      });
      await expect(waited).rejects.toThrow('not landed');
      const polls = (chain.devnet.fidelityStats().methods?.getSignatureStatuses ?? 0) - before;
      // 3 s at 50 ms would be 60 polls; backing off to 400 ms it is about a dozen.
      expect(polls).toBeGreaterThan(3);
      expect(polls).toBeLessThan(20);

      // Once sends land again, a new signature is seen within a few fast rounds.
      chain.devnet.setFidelity({ dropRate: 0 });
      const { wire: wire2, latest: again } = await signedTransfer(chain.connection, payer);
      const sig2 = await chain.connection.sendRawTransaction(wire2, { maxRetries: 0 });
      const t0 = Date.now();
      const state = await watch.wait(sig2, again.lastValidBlockHeight, (s) => s.kind === 'landed', {
        fast: false,
        timeoutMs: 10_000,
        onTimeout: () => new Error('not landed'),
      });
      expect(state.kind).toBe('landed');
      expect(Date.now() - t0).toBeLessThan(2000);
    } finally {
      watch.close();
    }
  });
});
