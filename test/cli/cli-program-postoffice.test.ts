// The postoffice's set-up and its admin, as child processes against devnet:
// `sealpost program deploy` initializing the postoffice in the same run
// (and refusing one that another admin holds), `init-postoffice` only with
// the program's upgrade authority (devnet's faucet, whose keypair devnet
// writes into its data directory), and the admin commands `postoffice`,
// `fees`, `withdraw-fees`, `propose-admin`, `accept-admin`: each success,
// each usual mistake refused in one line with nothing sent (balances and the
// postoffice's bytes unchanged), --dry-run sending nothing, --json.
import { readFileSync, statSync } from 'node:fs';
import { Keypair, PublicKey } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import {
  buyStampsInstruction,
  createMailboxInstruction,
  getPostoffice,
  initPostofficeInstruction,
  POSTOFFICE_SIZE,
  postofficeAddress,
} from '../../chain/client/index.ts';
import { PROGRAM_ACCOUNT_SIZE, PROGRAMDATA_METADATA_SIZE } from '../../chain/client/loader.ts';
import { startTestChain, type TestChain } from '../support/devnet.ts';
import { keyFile, MAIL_CHUNKS, MAIL_SO_BYTES, type Run, sealpost } from '../support/program-cli.ts';
import { tempDir } from '../support/temp-dir.ts';

const POSTOFFICE_RENT = (128 + 186) * 6960;
/** The priority fee each transaction pays on a devnet without recent fees: the auto floor, 1 µlamport/CU × under 1M CU. */
const PRIORITY = 1;
// Each CLI run starts Node and loads the CLI; a deploy writes ~100 chunks.
const SLOW = 180_000;

function json<T = Record<string, unknown>>(run: Run): T {
  try {
    return JSON.parse(run.stdout) as T;
  } catch {
    throw new Error(`not JSON (exit ${run.code}):\n${run.stdout}\n${run.stderr}`);
  }
}

/** Balances of `keys` and the postoffice's lamports and bytes: what a refusal must leave as it was. */
async function snapshot(chain: TestChain, programId: string, keys: PublicKey[]) {
  const po = await chain.connection.getAccountInfo(postofficeAddress(programId)[0], 'confirmed');
  const balances = await Promise.all(keys.map((k) => chain.balance(k)));
  return { balances, postoffice: po ? { lamports: po.lamports, data: po.data.toString('hex') } : null };
}

/** Runs `run` and checks that it changed nothing on chain (balances of `keys`, the postoffice). */
async function sendsNothing(
  chain: TestChain,
  programId: string,
  keys: PublicKey[],
  run: () => Promise<Run>,
): Promise<Run> {
  const before = await snapshot(chain, programId, keys);
  const r = await run();
  expect(r.stderr).not.toContain('submitted');
  await new Promise((done) => setTimeout(done, 200)); // a few slots: anything sent would have landed
  expect(await snapshot(chain, programId, keys)).toEqual(before);
  return r;
}

/** Runs `run` expecting exit `code` with one error line containing `message`, and nothing changed on chain. */
async function refusedUnchanged(
  chain: TestChain,
  programId: string,
  keys: PublicKey[],
  run: () => Promise<Run>,
  message: string | RegExp,
  code = 1,
): Promise<Run> {
  const r = await sendsNothing(chain, programId, keys, run);
  expect(r.code, r.stdout + r.stderr).toBe(code);
  const errors = r.stderr.split('\n').filter((l) => l.startsWith('error: '));
  expect(errors.length, r.stderr).toBe(1);
  if (typeof message === 'string') expect(errors[0]).toContain(message);
  else expect(errors[0]).toMatch(message);
  return r;
}

describe('sealpost program deploy initializes the postoffice', () => {
  it(
    'in the same run, after showing its cost; a rerun leaves it; another admin stops the deploy with nothing sent',
    async () => {
      const chain = await startTestChain();
      const dir = tempDir('sealpost-po-deploy-');
      const payer = keyFile(dir, 'payer.json', await chain.funded(10));
      const prog = keyFile(dir, 'prog.json');
      const other = keyFile(dir, 'other-admin.json');
      const rpc = chain.devnet.rpcUrl;
      const conn = chain.connection;
      const programId = prog.kp.publicKey.toBase58();
      const delegate = Keypair.generate().publicKey.toBase58();
      const deploy = [
        'program',
        'deploy',
        '--rpc',
        rpc,
        '--keypair',
        payer.path,
        '--program-keypair',
        prog.path,
        '--delegate',
        delegate,
        '--stamp-fee',
        '1500',
        '--yes',
      ];

      // Neither --delegate nor --no-init: a usage error before anything is read.
      const bare = await sealpost(['program', 'deploy', '--rpc', rpc, '--keypair', payer.path, '--yes'], dir);
      expect(bare.code).toBe(2);
      expect(bare.stderr).toContain('give --delegate <address>');
      const both = await sealpost([...deploy, '--no-init'], dir);
      expect(both.code).toBe(2);
      expect(both.stderr).toContain('--no-init leaves the postoffice alone: drop --delegate, --stamp-fee');

      // --dry-run: the plan (InitPostoffice's rent and fee in it) and nothing sent.
      const before = await chain.balance(payer.kp.publicKey);
      const dry = await sealpost([...deploy, '--dry-run', '--json'], dir);
      expect(dry.code, dry.stderr).toBe(0);
      const plan = json(dry);
      expect(plan).toMatchObject({
        dryRun: true,
        action: 'deploy',
        programId,
        chunksTotal: MAIL_CHUNKS,
        chunksToWrite: MAIL_CHUNKS,
        transactions: MAIL_CHUNKS + 3,
        enough: true,
        postoffice: {
          action: 'planned',
          address: postofficeAddress(programId)[0].toBase58(),
          admin: payer.kp.publicKey.toBase58(),
          delegate,
          stampFeeLamports: '1500',
          rentLamports: POSTOFFICE_RENT,
          feeLamports: 5000 + PRIORITY,
        },
      });
      expect(dry.stderr).toContain('postoffice rent:        0.00218544 SOL (186 bytes)');
      expect(dry.stderr).toContain('InitPostoffice fee:     0.000005001 SOL');
      await new Promise((done) => setTimeout(done, 200));
      expect(await chain.balance(payer.kp.publicKey)).toBe(before);
      expect(await conn.getAccountInfo(prog.kp.publicKey)).toBeNull();

      // The deploy: program, then InitPostoffice signed by the upgrade authority (the payer here).
      const run = await sealpost([...deploy, '--json'], dir);
      expect(run.code, run.stderr).toBe(0);
      const r = json<{ action: string; lamportsSpent: number; postoffice: Record<string, unknown> }>(run);
      expect(r.action).toBe('deployed');
      expect(r.postoffice).toMatchObject({
        action: 'initialized',
        admin: payer.kp.publicKey.toBase58(),
        delegate,
      });
      expect(run.stderr.indexOf('postoffice rent:')).toBeLessThan(run.stderr.indexOf('chunks written 1/'));
      expect(run.stderr).toContain(
        `initialized the postoffice ${postofficeAddress(programId)[0].toBase58()}`,
      );
      const rent = (n: number) => conn.getMinimumBalanceForRentExemption(n);
      const cost =
        (await rent(PROGRAMDATA_METADATA_SIZE + 2 * MAIL_SO_BYTES.length)) +
        (await rent(PROGRAM_ACCOUNT_SIZE)) +
        POSTOFFICE_RENT +
        5000 * (2 + MAIL_CHUNKS + 2 + 1) +
        PRIORITY * (MAIL_CHUNKS + 3);
      expect(r.lamportsSpent).toBe(cost);
      expect(before - (await chain.balance(payer.kp.publicKey))).toBe(cost);
      expect(plan.costLamports).toBe(cost);
      const po = await getPostoffice(conn, programId);
      expect(po?.admin.equals(payer.kp.publicKey)).toBe(true);
      expect(po?.stampFeeLamports).toBe(1500n);
      expect(po?.delegateAddress.toBase58()).toBe(delegate);

      // The same command again: the program runs this build and the postoffice is ours.
      const again = await sealpost([...deploy, '--json'], dir);
      expect(again.code, again.stderr).toBe(0);
      expect(json(again)).toMatchObject({
        action: 'unchanged',
        postoffice: { action: 'exists' },
        lamportsSpent: 0,
      });

      // With another admin: stops before anything is sent, naming the admin found.
      const upgrade = [...deploy.slice(0, 6), '--program-id', programId, '--delegate', delegate, '--yes'];
      await refusedUnchanged(
        chain,
        programId,
        [payer.kp.publicKey, other.kp.publicKey],
        () => sealpost([...upgrade, '--admin', other.path], dir),
        `already exists with admin ${payer.kp.publicKey.toBase58()} (pending admin none), not ${other.kp.publicKey.toBase58()}: nothing was sent`,
      );
      // init-postoffice on it: refused, with the admin and pending admin found.
      const init = await sealpost(
        ['program', 'init-postoffice', '--rpc', rpc, '--keypair', payer.path, '--program-id', programId],
        dir,
      );
      expect(init.code).toBe(2); // --delegate is required
      const exists = await refusedUnchanged(
        chain,
        programId,
        [payer.kp.publicKey],
        () =>
          sealpost(
            [
              'program',
              'init-postoffice',
              '--rpc',
              rpc,
              '--keypair',
              payer.path,
              '--program-id',
              programId,
              '--delegate',
              delegate,
            ],
            dir,
          ),
        `already exists with admin ${payer.kp.publicKey.toBase58()} (pending admin none)`,
      );
      expect(exists.stderr).toMatch(/pending admin +none/);
    },
    SLOW,
  );

  it(
    'deployed with --no-init, then initialized by the same command: a separate upgrade authority and admin need no SOL',
    async () => {
      const chain = await startTestChain();
      const dir = tempDir('sealpost-po-deploy-');
      const payer = keyFile(dir, 'payer.json', await chain.funded(10));
      const prog = keyFile(dir, 'prog.json');
      const authority = keyFile(dir, 'authority.json');
      const admin = keyFile(dir, 'admin.json');
      const deploy = [
        'program',
        'deploy',
        '--rpc',
        chain.devnet.rpcUrl,
        '--keypair',
        payer.path,
        '--program-keypair',
        prog.path,
        '--upgrade-authority',
        authority.path,
        '--yes',
        '--json',
      ];
      const first = await sealpost([...deploy, '--no-init'], dir);
      expect(first.code, first.stderr).toBe(0);
      expect(json(first)).toMatchObject({ action: 'deployed', postoffice: null });
      expect(await getPostoffice(chain.connection, prog.kp.publicKey)).toBeNull();

      // The program runs this build: only InitPostoffice is sent (payer, upgrade authority
      // and admin sign; the payer moves the rent to the admin in the same transaction).
      const before = await chain.balance(payer.kp.publicKey);
      const delegate = Keypair.generate().publicKey.toBase58();
      const run = await sealpost([...deploy, '--admin', admin.path, '--delegate', delegate], dir);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toContain('already runs this build (sha256');
      expect(run.stderr).toContain('postoffice rent:        0.00218544 SOL (186 bytes)');
      expect(json(run)).toMatchObject({
        action: 'unchanged',
        upgradeAuthority: authority.kp.publicKey.toBase58(),
        transactions: 1,
        lamportsSpent: POSTOFFICE_RENT + 15_000 + PRIORITY,
        postoffice: {
          action: 'initialized',
          admin: admin.kp.publicKey.toBase58(),
          delegate,
          feeLamports: 15_000 + PRIORITY,
        },
      });
      expect(before - (await chain.balance(payer.kp.publicKey))).toBe(POSTOFFICE_RENT + 15_000 + PRIORITY);
      const po = await getPostoffice(chain.connection, prog.kp.publicKey);
      expect(po?.admin.equals(admin.kp.publicKey)).toBe(true);
      expect(await chain.balance(authority.kp.publicKey)).toBe(0);
      expect(await chain.balance(admin.kp.publicKey)).toBe(0);
    },
    SLOW,
  );
});

describe('sealpost program init-postoffice', () => {
  it(
    "needs the program's upgrade authority: devnet's faucet keypair file is it",
    async () => {
      const chain = await startTestChain();
      const dir = tempDir('sealpost-po-init-');
      const admin = keyFile(dir, 'admin.json', await chain.funded(2));
      const rpc = chain.devnet.rpcUrl;
      const programId = chain.programId;
      const faucet = chain.devnet.faucetKeypairFile;
      // Devnet wrote its faucet as a Solana CLI keypair file, mode 0600.
      expect(faucet).toBe(`${chain.dataDir}/faucet-keypair.json`);
      expect(statSync(faucet).mode & 0o777).toBe(0o600);
      const bytes = Uint8Array.from(JSON.parse(readFileSync(faucet, 'utf8')) as number[]);
      expect(Keypair.fromSecretKey(bytes).publicKey.equals(chain.upgradeAuthority.publicKey)).toBe(true);

      const delegate = Keypair.generate().publicKey.toBase58();
      const init = [
        'program',
        'init-postoffice',
        '--rpc',
        rpc,
        '--keypair',
        admin.path,
        '--program-id',
        programId,
      ];
      await refusedUnchanged(
        chain,
        programId,
        [admin.kp.publicKey, chain.upgradeAuthority.publicKey],
        () => sealpost([...init, '--delegate', delegate], dir),
        `${admin.kp.publicKey.toBase58()} is not the upgrade authority of program ${programId}: its upgrade authority is ${chain.upgradeAuthority.publicKey.toBase58()}`,
      );
      // The program refuses it too, when the check is skipped.
      const stranger = initPostofficeInstruction({
        programId,
        admin: admin.kp.publicKey,
        delegateAddress: delegate,
        stampFeeLamports: 0n,
        settlementSurchargeLamports: 0n,
      });
      expect(await chain.refusal([stranger], [admin.kp])).toBe('NotUpgradeAuthority');

      // --dry-run with the upgrade authority: the transaction, a simulation that passes, the cost; nothing sent.
      const withAuthority = [...init, '--delegate', delegate, '--upgrade-authority', faucet];
      const before = await snapshot(chain, programId, [admin.kp.publicKey]);
      const dry = await sealpost([...withAuthority, '--dry-run', '--json'], dir);
      expect(dry.code, dry.stderr).toBe(0);
      const plan = json<{
        instructions: { kind: string; accounts: { address: string; signer: boolean }[] }[];
      }>(dry);
      expect(plan).toMatchObject({
        dry_run: true,
        simulation: { ok: true },
        cost: { fee_lamports: '10000', rent_lamports: String(POSTOFFICE_RENT) },
      });
      expect(plan.instructions[0]?.kind).toBe('InitPostoffice');
      expect(plan.instructions[0]?.accounts[4]).toMatchObject({
        address: chain.upgradeAuthority.publicKey.toBase58(),
        signer: true,
      });
      expect(await snapshot(chain, programId, [admin.kp.publicKey])).toEqual(before);

      const ok = await sealpost(withAuthority, dir);
      expect(ok.code, ok.stderr).toBe(0);
      expect(ok.stderr).toMatch(
        /cost: 0\.002195441 SOL \(fee 0\.00001 \+ priority fee 0\.000000001 \+ rent 0\.00218544/,
      );
      expect(ok.stdout).toContain(`initialized the postoffice ${postofficeAddress(programId)[0].toBase58()}`);
      expect((await getPostoffice(chain.connection, programId))?.admin.equals(admin.kp.publicKey)).toBe(true);
      expect((before.balances[0] ?? 0) - (await chain.balance(admin.kp.publicKey))).toBe(
        POSTOFFICE_RENT + 10_000 + PRIORITY,
      );
    },
    SLOW,
  );

  it(
    'is refused for an immutable program',
    async () => {
      const chain = await startTestChain();
      const dir = tempDir('sealpost-po-init-');
      const payer = keyFile(dir, 'payer.json', await chain.funded(2));
      const rpc = chain.devnet.rpcUrl;
      const programId = chain.programId;
      const final = await sealpost(
        [
          'program',
          'set-authority',
          '--rpc',
          rpc,
          '--keypair',
          payer.path,
          '--program-id',
          programId,
          '--upgrade-authority',
          chain.devnet.faucetKeypairFile,
          '--final',
          '--yes',
        ],
        dir,
      );
      expect(final.code, final.stderr).toBe(0);
      await refusedUnchanged(
        chain,
        programId,
        [payer.kp.publicKey],
        () =>
          sealpost(
            [
              'program',
              'init-postoffice',
              '--rpc',
              rpc,
              '--keypair',
              payer.path,
              '--program-id',
              programId,
              '--upgrade-authority',
              chain.devnet.faucetKeypairFile,
              '--delegate',
              payer.kp.publicKey.toBase58(),
            ],
            dir,
          ),
        `program ${programId} is immutable (its upgrade authority was revoked): nobody can initialize its postoffice`,
      );
    },
    SLOW,
  );
});

describe('the postoffice admin commands', () => {
  it(
    'postoffice, fees, withdraw-fees, propose-admin, accept-admin: success, refusals with nothing sent, --dry-run, --json',
    async () => {
      const chain = await startTestChain();
      const dir = tempDir('sealpost-po-admin-');
      const programId = chain.programId;
      const address = postofficeAddress(programId)[0].toBase58();
      const admin = keyFile(dir, 'admin.json', await chain.funded(2));
      const stranger = keyFile(dir, 'stranger.json', await chain.funded(2));
      const next = keyFile(dir, 'next.json', await chain.funded(2));
      const A = admin.kp.publicKey.toBase58();
      const N = next.kp.publicKey.toBase58();
      const S = stranger.kp.publicKey.toBase58();
      const delegate = Keypair.generate().publicKey.toBase58();
      await chain.send(
        [
          initPostofficeInstruction({
            programId,
            admin: admin.kp.publicKey,
            upgradeAuthority: chain.upgradeAuthority.publicKey,
            delegateAddress: delegate,
            stampFeeLamports: 1_000_000n,
            settlementSurchargeLamports: 5000n,
          }),
        ],
        [admin.kp, chain.upgradeAuthority],
      );
      const where = ['--rpc', chain.devnet.rpcUrl, '--program-id', programId];
      const cli = (cmd: string, key: { path: string }, ...extra: string[]) =>
        sealpost(['program', cmd, ...where, '--keypair', key.path, ...extra], dir);
      const everyone = [admin.kp.publicKey, stranger.kp.publicKey, next.kp.publicKey];
      const refused = (run: () => Promise<Run>, message: string | RegExp, code = 1) =>
        refusedUnchanged(chain, programId, everyone, run, message, code);

      // postoffice: what is there, and what may be withdrawn.
      const shown = await sealpost(['program', 'postoffice', ...where, '--json'], dir);
      expect(shown.code, shown.stderr).toBe(0);
      expect(json(shown)).toEqual({
        program_id: programId,
        address,
        admin: A,
        pending_admin: null,
        delegate,
        stamp_fee_lamports: '1000000',
        settlement_surcharge_lamports: '5000',
        fees_collected_lamports: '0',
        balance_lamports: String(POSTOFFICE_RENT),
        rent_lamports: String(POSTOFFICE_RENT),
        withdrawable_lamports: '0',
        root_ksk: '0'.repeat(64),
        commitment_root: '0'.repeat(64),
      });

      // fees
      await refused(() => cli('fees', admin), 'say what to change', 2);
      await refused(
        () => cli('fees', stranger, '--stamp-fee', '7'),
        `${S} is not the admin of the postoffice ${address}: its admin is ${A}; nothing was sent`,
      );
      const dryFees = await sendsNothing(chain, programId, everyone, () =>
        cli('fees', admin, '--stamp-fee', '2000000', '--dry-run', '--json'),
      );
      expect(dryFees.code, dryFees.stderr).toBe(0);
      expect(json(dryFees)).toMatchObject({
        dry_run: true,
        title: `update the postoffice ${address}: stamp_fee_lamports 1000000 -> 2000000`,
        fee_payer: A,
        simulation: { ok: true, error: null },
        cost: { fee_lamports: '5000', priority_fee_lamports: '1', total_lamports: '5001' },
        instructions: [{ program: programId, kind: 'UpdatePostoffice' }],
      });
      const newDelegate = Keypair.generate().publicKey.toBase58();
      const fees = await cli(
        'fees',
        admin,
        '--stamp-fee',
        '2000000',
        '--surcharge',
        '6000',
        '--delegate',
        newDelegate,
      );
      expect(fees.code, fees.stderr).toBe(0);
      expect(fees.stderr).toContain('cost: 0.000005001 SOL');
      expect(fees.stdout).toContain('status: confirmed');
      expect(fees.stdout).toContain('stamp fee lamports: 1000000 -> 2000000');
      let po = await getPostoffice(chain.connection, programId);
      expect(po?.stampFeeLamports).toBe(2_000_000n);
      expect(po?.settlementSurchargeLamports).toBe(6000n);
      expect(po?.delegateAddress.toBase58()).toBe(newDelegate);
      const same = await cli('fees', admin, '--stamp-fee', '2000000');
      expect(same.code).toBe(0);
      expect(same.stdout).toContain('has these values already; nothing was sent');

      // Fees collected: a stranger buys 3 stamps toward a mailbox it does not own (2,000,000 lamports each).
      const owner = await chain.funded(1);
      await chain.send([createMailboxInstruction({ programId, owner: owner.publicKey })], [owner]);
      const buyer = await chain.funded(1);
      await chain.send(
        [buyStampsInstruction({ programId, buyer: buyer.publicKey, recipient: owner.publicKey, stamps: 3n })],
        [buyer],
      );
      po = await getPostoffice(chain.connection, programId);
      expect(po?.feesCollected).toBe(6_000_000n);

      // withdraw-fees
      const fresh = Keypair.generate().publicKey;
      await refused(
        () => cli('withdraw-fees', admin, '--to', fresh.toBase58()),
        'give --amount LAMPORTS or --all',
        2,
      );
      await refused(
        () => cli('withdraw-fees', stranger, '--to', S, '--all'),
        `${S} is not the admin of the postoffice ${address}: its admin is ${A}`,
      );
      await refused(
        () => cli('withdraw-fees', admin, '--to', A, '--amount', '6000001'),
        `6000001 lamports is more than the postoffice ${address} can pay out: 6000000 lamports are withdrawable`,
      );
      await refused(
        () => cli('withdraw-fees', admin, '--to', fresh.toBase58(), '--amount', '100'),
        `${fresh.toBase58()} would hold 100 lamports after the withdrawal, below its rent-exempt minimum`,
      );
      await refused(() => cli('withdraw-fees', admin, '--to', address, '--all'), 'is the postoffice itself');
      const dryWithdraw = await sendsNothing(chain, programId, [...everyone, fresh], () =>
        cli('withdraw-fees', admin, '--to', fresh.toBase58(), '--all', '--dry-run'),
      );
      expect(dryWithdraw.code, dryWithdraw.stderr).toBe(0);
      expect(dryWithdraw.stdout).toContain('dry run: withdraw 6000000 lamports');
      expect(dryWithdraw.stdout).toContain('simulation: ok');
      const some = await cli('withdraw-fees', admin, '--to', fresh.toBase58(), '--amount', '2000000');
      expect(some.code, some.stderr).toBe(0);
      expect(await chain.balance(fresh)).toBe(2_000_000);
      const adminBefore = await chain.balance(admin.kp.publicKey);
      const rest = await cli('withdraw-fees', admin, '--to', A, '--all', '--json');
      expect(rest.code, rest.stderr).toBe(0);
      expect(json(rest)).toMatchObject({
        status: 'confirmed',
        postoffice: address,
        to: A,
        amount_lamports: '4000000',
        fees_collected_after_lamports: '0',
        cost_lamports: '5001',
      });
      expect(await chain.balance(admin.kp.publicKey)).toBe(adminBefore + 4_000_000 - 5000 - PRIORITY);
      po = await getPostoffice(chain.connection, programId);
      expect(po?.feesCollected).toBe(0n);
      expect((await chain.connection.getAccountInfo(new PublicKey(address)))?.lamports).toBe(POSTOFFICE_RENT);
      await refused(
        () => cli('withdraw-fees', admin, '--to', A, '--all'),
        'nothing to withdraw from the postoffice',
      );

      // propose-admin / accept-admin
      await refused(
        () => cli('propose-admin', stranger, '--new-admin', N),
        `${S} is not the admin of the postoffice ${address}: its admin is ${A}`,
      );
      await refused(
        () => cli('accept-admin', next),
        `${N} is not the pending admin of the postoffice ${address} (pending admin: none)`,
      );
      await refused(() => cli('propose-admin', admin, '--withdraw'), 'has no pending admin to withdraw');
      await refused(
        () => cli('propose-admin', admin, '--new-admin', A),
        `${A} is the admin of the postoffice`,
      );
      const dryPropose = await sendsNothing(chain, programId, everyone, () =>
        cli('propose-admin', admin, '--new-admin', N, '--dry-run', '--json'),
      );
      expect(dryPropose.code, dryPropose.stderr).toBe(0);
      expect(json(dryPropose)).toMatchObject({ dry_run: true, instructions: [{ kind: 'ProposeAdmin' }] });
      const proposed = await cli('propose-admin', admin, '--new-admin', N, '--json');
      expect(proposed.code, proposed.stderr).toBe(0);
      expect(json(proposed)).toMatchObject({ status: 'confirmed', admin: A, pending_admin: N });
      const pending = await sealpost(['program', 'postoffice', ...where], dir);
      expect(pending.stdout).toMatch(new RegExp(`pending admin +${N}`));
      await refused(
        () => cli('accept-admin', stranger),
        `${S} is not the pending admin of the postoffice ${address} (pending admin: ${N})`,
      );
      const accepted = await cli('accept-admin', next, '--json');
      expect(accepted.code, accepted.stderr).toBe(0);
      expect(json(accepted)).toMatchObject({ status: 'confirmed', admin: N, previous_admin: A });
      po = await getPostoffice(chain.connection, programId);
      expect(po?.admin.equals(next.kp.publicKey)).toBe(true);
      expect(po?.pendingAdmin.equals(PublicKey.default)).toBe(true);
      // The old admin is no admin any more.
      await refused(
        () => cli('fees', admin, '--surcharge', '1'),
        `${A} is not the admin of the postoffice ${address}: its admin is ${N}`,
      );
      // A proposal taken back.
      expect((await cli('propose-admin', next, '--new-admin', S)).code).toBe(0);
      const withdrawn = await cli('propose-admin', next, '--withdraw');
      expect(withdrawn.code, withdrawn.stderr).toBe(0);
      expect((await getPostoffice(chain.connection, programId))?.pendingAdmin.equals(PublicKey.default)).toBe(
        true,
      );
      expect(POSTOFFICE_SIZE).toBe(186);
    },
    SLOW,
  );
});
