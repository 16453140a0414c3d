// The holder CLI's compute budget against a devnet in fidelity mode with
// congestion (a transaction priced under the minimum is accepted and
// dropped; getRecentPrioritizationFees answers fees around the minimum):
// the cost shown before sending names the priority fee, a send with the
// default `auto` price lands and pays it, and one with --priority-fee 0 never
// lands. The CLI is run as a child process (the real binary).
import { describe, expect, it } from 'vitest';
import { getBeacon, getMailbox } from '../../chain/client/client.ts';
import { computeUnitLimit } from '../../chain/client/compute-budget.ts';
import { createMailboxInstruction } from '../../chain/client/instructions.ts';
import { startTestChain } from '../support/devnet.ts';
import { prepareMailChain } from '../support/mail-chain.ts';
import { keyFile, sealpost } from '../support/program-cli.ts';
import { tempDir } from '../support/temp-dir.ts';

const MIN_FEE = 20_000;
const CID = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy';

describe('CLI transactions under congestion', () => {
  it('show the priority fee before sending, land with an auto price, and not without one', async () => {
    const cwd = tempDir('sealpost-budget-');
    const chain = await startTestChain();
    await prepareMailChain(chain, 'budget.test');
    const at = ['--rpc', chain.devnet.rpcUrl, '--program-id', chain.programId];
    const alice = keyFile(cwd, 'alice.json', await chain.funded(1));
    const bob = keyFile(cwd, 'bob.json', await chain.funded(1));
    chain.devnet.setFidelity({ minPriorityFeeMicroLamports: MIN_FEE });

    // The cost before sending: fee + priority fee, and the budget itself.
    const dry = await sealpost(['mailbox', 'create', '--key', alice.path, '--dry-run', ...at], cwd);
    expect(dry.code, dry.stderr).toBe(0);
    const limit = computeUnitLimit([
      createMailboxInstruction({ programId: chain.programId, owner: alice.kp.publicKey }),
    ]);
    const budget =
      /compute budget: (\d+) compute units at (\d+) µlamports each \(priority fee ([\d.]+) SOL\)/.exec(
        dry.stdout,
      );
    expect(budget, dry.stdout).not.toBeNull();
    const [, units, price] = budget as unknown as [string, string, string, string];
    expect(Number(units)).toBe(limit + 300);
    expect(Number(price)).toBeGreaterThanOrEqual(MIN_FEE);
    expect(dry.stdout).toMatch(
      /cost: [\d.]+ SOL \(fee 0\.000005 \+ priority fee 0\.[\d]+ \+ rent [\d.]+ \+ transfers 0\)/,
    );
    const json = await sealpost(
      ['mailbox', 'create', '--key', alice.path, '--dry-run', '--json', ...at],
      cwd,
    );
    const cost = JSON.parse(json.stdout).cost as Record<string, string | number>;
    expect(Number(cost.priority_fee_lamports)).toBeGreaterThan(0);
    expect(BigInt(cost.total_lamports as string)).toBe(
      BigInt(cost.fee_lamports as string) +
        BigInt(cost.priority_fee_lamports as string) +
        BigInt(cost.rent_lamports as string),
    );
    // --priority-fee / --max-priority-fee: a fixed price, and a cap that lowers it.
    const fixed = await sealpost(
      ['mailbox', 'create', '--key', alice.path, '--dry-run', '--priority-fee', '50000', ...at],
      cwd,
    );
    expect(fixed.stdout).toContain(`compute budget: ${limit + 300} compute units at 50000 µlamports each`);
    const capped = await sealpost(
      [
        'mailbox',
        'create',
        '--key',
        alice.path,
        '--dry-run',
        '--priority-fee',
        '50000',
        '--max-priority-fee',
        '1',
        ...at,
      ],
      cwd,
    );
    const cappedPrice = Math.floor(1_000_000 / (limit + 300));
    expect(capped.stdout).toContain(`at ${cappedPrice} µlamports each (priority fee 0.000000001 SOL)`);
    const bad = await sealpost(
      ['mailbox', 'create', '--key', alice.path, '--priority-fee', 'fast', ...at],
      cwd,
    );
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/--priority-fee.*expected "auto" or an integer/);

    // runTx (mailbox create): lands with the auto price; the wallet paid fee + priority fee + rent.
    const before = await chain.balance(alice.kp.publicKey);
    const created = await sealpost(['mailbox', 'create', '--key', alice.path, '--json', ...at], cwd);
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout).status).toBe('confirmed');
    expect(await getMailbox(chain.connection, chain.programId, alice.kp.publicKey)).not.toBeNull();
    const spent = BigInt(before - (await chain.balance(alice.kp.publicKey)));
    expect(spent).toBeGreaterThan(5_000n + BigInt(cost.rent_lamports as string));
    expect(spent).toBeLessThanOrEqual(5_000n + BigInt(cost.rent_lamports as string) + 100_000n);

    // chain-cli (beacon publish): lands with the auto price.
    const published = await sealpost(
      ['beacon', 'publish', '--key', alice.path, '--tags', '1', '--cid', CID, ...at],
      cwd,
    );
    expect(published.code, published.stderr).toBe(0);
    expect(await getBeacon(chain.connection, chain.programId, alice.kp.publicKey)).not.toBeNull();

    // Without a priority fee the congested cluster drops it: never confirmed, nothing created.
    const dropsBefore = chain.devnet.fidelityStats().droppedLowFee;
    const unpaid = await sealpost(
      ['mailbox', 'create', '--key', bob.path, '--priority-fee', '0', '--wait-secs', '3', ...at],
      cwd,
    );
    expect(unpaid.code).not.toBe(0);
    expect(unpaid.stderr).toMatch(/not confirmed/);
    expect(chain.devnet.fidelityStats().droppedLowFee).toBeGreaterThan(dropsBefore);
    expect(await getMailbox(chain.connection, chain.programId, bob.kp.publicKey)).toBeNull();
  }, 180_000);
});
