// A dry run whose simulation fails for a reason other than a mail-program
// refusal names the runtime's error and the programs' own error line, never
// "[object Object]" (a System transfer short of funds, simulated on devnet).
import { Keypair, SystemProgram, Transaction, VersionedTransaction } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { simulationFailure } from '../../src/cli/commands/holder/mailbox-tx.ts';
import { startTestChain } from '../support/devnet.ts';

describe('simulationFailure', () => {
  it('words an instruction error with the log line that explains it', async () => {
    const chain = await startTestChain();
    const poor = await chain.funded(0.001);
    const latest = await chain.connection.getLatestBlockhash('confirmed');
    const tx = new Transaction({ feePayer: poor.publicKey, ...latest }).add(
      SystemProgram.transfer({
        fromPubkey: poor.publicKey,
        toPubkey: Keypair.generate().publicKey,
        lamports: 2e9,
      }),
    );
    const sim = await chain.connection.simulateTransaction(new VersionedTransaction(tx.compileMessage()), {
      sigVerify: false,
    });
    expect(sim.value.err).not.toBeNull();
    // Custom error 1 of the System program, not the mail program's error 1.
    const text = simulationFailure(sim.value, {}, chain.programId);
    expect(text).not.toContain('[object Object]');
    expect(text).toMatch(
      /^instruction 0 failed: custom error 1 \(Transfer: insufficient lamports \d+, need 2000000000\)$/,
    );
  });

  it('words a transaction-level error and an unknown shape', () => {
    expect(simulationFailure({ err: 'AccountNotFound', logs: [] })).toBe('AccountNotFound');
    expect(simulationFailure({ err: { InsufficientFundsForRent: { account_index: 1 } } })).toBe(
      '{"InsufficientFundsForRent":{"account_index":1}}',
    );
    expect(simulationFailure({ err: { InstructionError: [2, 'InvalidAccountData'] }, logs: null })).toBe(
      'instruction 2 failed: InvalidAccountData',
    );
  });
});
