// stateOf: a missing status is "expired" only on evidence (docs/inbound.md "Exactly once").
import { describe, expect, it } from 'vitest';
import { stateOf } from './signature-watch.ts';

describe('stateOf', () => {
  const lastValid = 1000;
  it('a missing status within the blockhash lifetime is pending', () => {
    expect(stateOf(null, { height: 1000, heightSlot: 1200, statusSlot: 1300 }, lastValid).kind).toBe(
      'pending',
    );
  });
  it('missing past the lifetime, answered from a bank that saw the height pass it: expired', () => {
    // Height 1001 at slot 1200: it passed lastValid at slot 1200 at the latest.
    expect(stateOf(null, { height: 1001, heightSlot: 1200, statusSlot: 1200 }, lastValid)).toEqual({
      kind: 'expired',
      heightSlot: 1200,
      passedSlot: 1200,
    });
  });
  it('missing from a bank behind the slot where the height passed lastValid: pending', () => {
    expect(stateOf(null, { height: 1001, heightSlot: 1200, statusSlot: 1199 }, lastValid).kind).toBe(
      'pending',
    );
    // 50 heights later the height passed lastValid at slot 1151 at the latest.
    expect(stateOf(null, { height: 1051, heightSlot: 1201, statusSlot: 1150 }, lastValid).kind).toBe(
      'pending',
    );
    expect(stateOf(null, { height: 1051, heightSlot: 1201, statusSlot: 1151 }, lastValid)).toMatchObject({
      kind: 'expired',
      passedSlot: 1151,
    });
  });
  it('a status seen is what it says, whatever the height', () => {
    const seen = { slot: 1, confirmations: null, err: null, confirmationStatus: 'confirmed' as const };
    expect(stateOf(seen, { height: 5000, heightSlot: 6000, statusSlot: 1 }, lastValid).kind).toBe('landed');
    expect(stateOf({ ...seen, confirmationStatus: 'processed' }, undefined, lastValid).kind).toBe(
      'processed',
    );
    expect(stateOf({ ...seen, err: { InstructionError: [2, 'X'] } }, undefined, lastValid).kind).toBe(
      'failed',
    );
  });
  it('no height read: pending', () => {
    expect(stateOf(null, undefined, lastValid).kind).toBe('pending');
  });
});
