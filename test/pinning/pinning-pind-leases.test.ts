// `sealpost pind gc --chain`: pind's retention honours the chain. Real pind
// over HTTP, a real devnet (the committed mail program) over JSON-RPC, and
// the real CLI: a pin named by an Email and a pin with a live PinLease paid
// to the operator stay; an expired lease, a lease paid to another operator
// and no lease at all do not.
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { fromHash } from '../../chain/client/hash.ts';
import { createPinLeaseInstruction, sendMailInstruction } from '../../chain/client/instructions.ts';
import { startPind } from '../../pinning/pind/server.ts';
import { startTestChain, waitForChainTime } from '../support/devnet.ts';
import { prepareMailChain } from '../support/mail-chain.ts';
import { sealpost } from '../support/program-cli.ts';
import { tempDir } from '../support/temp-dir.ts';

const CLI_TEST_MS = 180_000;
const running: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const p of running.splice(0)) await p.close();
});

describe('sealpost pind gc --chain', () => {
  it(
    'keeps referenced and leased CIDs, releases the rest, and reads the chain before touching anything',
    async () => {
      const cwd = tempDir('sealpost-pind-leases-');
      // `--data-dir D` puts pind's store in D/pind, as [pind] data_dir defaults.
      const dataDir = join(cwd, 'pind');
      // Seconds the chain's clock runs ahead of the wall clock: moved to end the short lease.
      let skew = 0;
      const chain = await startTestChain({ clock: () => Date.now() / 1000 + skew });
      const programId = chain.programId;
      const pind = await startPind({
        dataDir,
        pin: { host: '127.0.0.1', port: 0 },
        maxPinBytes: 1024 * 1024,
        logger: pino({ level: 'silent' }),
      });
      running.push(pind);
      const pin = async (text: string): Promise<string> => {
        const res = await fetch(`${pind.pinUrl}/pins`, {
          method: 'POST',
          body: new TextEncoder().encode(text),
        });
        expect(res.status).toBe(201);
        return ((await res.json()) as { cid: string }).cid;
      };
      const [mailCid, leasedCid, expiredCid, elsewhereCid, unleasedCid] = await Promise.all(
        [
          'a mail body',
          'a leased blob',
          'a blob whose lease ran out',
          'leased at another operator',
          'nobody paid',
        ].map(pin),
      );

      const mail = await prepareMailChain(chain, 'leases.test');
      const recipient = await mail.mailbox();
      await chain.send(
        [
          sendMailInstruction({
            programId,
            sender: mail.authority.publicKey,
            recipient: recipient.publicKey,
            index: 0n,
            fromHash: fromHash('alice@ext.example'),
            cid: mailCid as string,
            domain: mail.domain,
          }),
        ],
        [mail.authority],
      );
      const holder = await chain.funded();
      const operator = await chain.funded(1);
      const other = await chain.funded(1);
      const now = BigInt(Math.floor(Date.now() / 1000));
      const lease = (cid: string, op = operator.publicKey, expiresAt = now + 30n * 86_400n) =>
        createPinLeaseInstruction({
          programId,
          holder: holder.publicKey,
          operator: op,
          cid,
          expiresAt,
          feeLamports: 50_000n,
        });
      await chain.send(
        [lease(leasedCid as string), lease(elsewhereCid as string, other.publicKey)],
        [holder],
      );
      // A lease that runs out five minutes of chain time from now (so a loaded
      // machine never sends it already over); the chain's clock moves past it below.
      const slot = await chain.connection.getSlot('confirmed');
      const chainNow = BigInt((await chain.connection.getBlockTime(slot)) ?? Number(now));
      await chain.send([lease(expiredCid as string, operator.publicKey, chainNow + 300n)], [holder]);
      await pind.close();
      running.splice(0);

      const base = ['pind', 'gc', '--data-dir', cwd, '--chain', '--grace', '0', '--program-id', programId];
      // Usage errors and an RPC that does not answer change nothing.
      const noOperator = await sealpost([...base, '--rpc', chain.devnet.rpcUrl], cwd);
      expect(noOperator.code).toBe(2);
      expect(noOperator.stderr).toMatch(/--operator/);
      const dead = await sealpost(
        [...base, '--rpc', 'http://127.0.0.1:9', '--operator', operator.publicKey.toBase58()],
        cwd,
      );
      expect(dead.code).toBe(1);
      expect(dead.stderr).toMatch(/does not answer/);
      const ls = await sealpost(['pind', 'ls', '--data-dir', cwd], cwd);
      expect(ls.stdout.trim().split('\n')).toHaveLength(5);

      // Chain time moves past the short lease's end.
      skew += 301;
      await waitForChainTime(chain.connection, Number(chainNow) + 301);
      const gc = await sealpost(
        [...base, '--rpc', chain.devnet.rpcUrl, '--operator', operator.publicKey.toBase58()],
        cwd,
      );
      expect({ code: gc.code, stderr: gc.stderr }).toEqual({ code: 0, stderr: '' });
      expect(gc.stdout).toContain(`kept ${mailCid} (referenced)`);
      expect(gc.stdout).toContain(`kept ${leasedCid} (leased)`);
      for (const cid of [expiredCid, elsewhereCid, unleasedCid])
        expect(gc.stdout).toContain(`released ${cid}`);
      expect(gc.stdout).toMatch(/deleted 3 block\(s\)/);
      const after = await sealpost(['pind', 'ls', '--data-dir', cwd], cwd);
      expect(
        after.stdout
          .trim()
          .split('\n')
          .map((l) => l.split(' ')[0])
          .sort(),
      ).toEqual([mailCid, leasedCid].sort());

      // The pins that stayed are still served.
      const again = await startPind({
        dataDir,
        pin: { host: '127.0.0.1', port: 0 },
        maxPinBytes: 1024 * 1024,
        logger: pino({ level: 'silent' }),
      });
      running.push(again);
      const res = await fetch(`${again.gatewayUrl ?? again.pinUrl}/ipfs/${leasedCid}`);
      expect(await res.text()).toBe('a leased blob');
    },
    CLI_TEST_MS,
  );
});
