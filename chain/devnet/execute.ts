// One transaction through the runtime, with what an RPC node reports beside
// the runtime's own result: balances before and after, and (for a landed
// transaction) the accounts it changed, which the bank copies into its store,
// its ledger and its notifications.
import type { AccountState, Address } from './account-store.ts';
import type { ExecutionResult } from './bank-types.ts';
import type { Svm } from './svm.ts';
import { type DecodedTransaction, isWritableIndex } from './transaction.ts';

function sameState(a: AccountState | null, b: AccountState | null): boolean {
  if (a === null || b === null) return a === b;
  return (
    a.lamports === b.lamports &&
    a.owner === b.owner &&
    a.executable === b.executable &&
    Buffer.from(a.data.buffer, a.data.byteOffset, a.data.byteLength).equals(b.data)
  );
}

/** Runs without committing; `writes` holds every account the transaction loaded, as it would be. */
export function simulateTransaction(svm: Svm, tx: DecodedTransaction, verify: boolean): ExecutionResult {
  const { postAccounts, ...result } = svm.simulate(tx, verify);
  const preBalances = tx.accountKeyBytes.map((key) => svm.balance(key));
  const postBalances = tx.accountKeys.map((address, i) =>
    postAccounts.has(address) ? (postAccounts.get(address)?.lamports ?? 0n) : (preBalances[i] as bigint),
  );
  return { ...result, preBalances, postBalances, writes: postAccounts };
}

/**
 * Runs and lets the runtime commit. `landed` is false when the runtime
 * refused the transaction before charging its fee (nothing changed).
 */
export function sendTransaction(
  svm: Svm,
  tx: DecodedTransaction,
  verify: boolean,
): { execution: ExecutionResult; landed: boolean } {
  const writable: [Address, Uint8Array, AccountState | null][] = [];
  tx.accountKeys.forEach((address, i) => {
    const key = tx.accountKeyBytes[i] as Uint8Array;
    if (isWritableIndex(tx, i)) writable.push([address, key, svm.getAccount(key)]);
  });
  const preBalances = tx.accountKeyBytes.map((key) => svm.balance(key));
  const result = svm.send(tx, verify);
  const postBalances = tx.accountKeyBytes.map((key) => svm.balance(key));
  // A failed transaction lands when it paid its fee; the fee payer is the first key.
  const landed = result.err === null || postBalances[0] !== preBalances[0];
  const writes = new Map<Address, AccountState | null>();
  if (landed) {
    for (const [address, key, before] of writable) {
      const after = svm.getAccount(key);
      if (!sameState(before, after)) writes.set(address, after);
    }
  }
  return { execution: { ...result, preBalances, postBalances, writes }, landed };
}
