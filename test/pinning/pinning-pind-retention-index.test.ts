// pind's chain retention without getProgramAccounts: a real pind store, a
// real devnet behind a JSON-RPC proxy that refuses getProgramAccounts and
// counts calls. The Email naming a pin and a live lease paid to the operator
// keep their pins; an expired lease, another operator's lease and no lease do
// not; the index file makes the next run cost only the new signatures.
import { join } from 'node:path';
import { Connection } from '@solana/web3.js';
import { afterEach, describe, expect, it } from 'vitest';
import { fromHash } from '../../chain/client/hash.ts';
import { createPinLeaseInstruction, sendMailInstruction } from '../../chain/client/instructions.ts';
import {
  chainIndexPath,
  FileIndexState,
  readChainRetention,
  releaseUnretained,
} from '../../pinning/pind/retention.ts';
import { PindStore } from '../../pinning/pind/store.ts';
import { startTestChain } from '../support/devnet.ts';
import { type RpcLog, startGpaRefusingProxy } from '../support/gpa-refusing-proxy.ts';
import { prepareMailChain } from '../support/mail-chain.ts';
import { tempDir } from '../support/temp-dir.ts';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

describe('pind retention with getProgramAccounts refused', () => {
  it('keeps exactly the referenced and leased pins and reads only new signatures next time', async () => {
    const chain = await startTestChain();
    const { programId } = chain;
    const proxy: RpcLog = await startGpaRefusingProxy(chain.devnet.rpcUrl);
    cleanup.push(() => proxy.close());
    const conn = new Connection(proxy.url, 'confirmed');
    const dataDir = join(tempDir('sealpost-pind-index-'), 'pind');
    const store = await PindStore.open(dataDir);
    const pin = async (text: string) => (await store.pin([new TextEncoder().encode(text)])).record.cid;
    const [mailCid, leasedCid, expiredCid, elsewhereCid, unleasedCid, laterCid] = await Promise.all(
      ['a mail body', 'a leased blob', 'ran out', 'leased elsewhere', 'nobody paid', 'mailed later'].map(pin),
    );

    const mail = await prepareMailChain(chain, 'leases.test');
    const recipient = await mail.mailbox();
    const send = (index: bigint, cid: string) =>
      chain.send(
        [
          sendMailInstruction({
            programId,
            sender: mail.authority.publicKey,
            recipient: recipient.publicKey,
            index,
            fromHash: fromHash('alice@ext.example'),
            cid,
            domain: mail.domain,
          }),
        ],
        [mail.authority],
      );
    await send(0n, mailCid as string);
    const [holder, operator, other] = [await chain.funded(), await chain.funded(1), await chain.funded(1)];
    const slot = await chain.connection.getSlot('confirmed');
    const chainNow = BigInt((await chain.connection.getBlockTime(slot)) ?? Math.floor(Date.now() / 1000));
    const lease = (cid: string, op = operator.publicKey, expiresAt = chainNow + 30n * 86_400n) =>
      createPinLeaseInstruction({
        programId,
        holder: holder.publicKey,
        operator: op,
        cid,
        expiresAt,
        feeLamports: 50_000n,
      });
    await chain.send(
      [
        lease(leasedCid as string),
        lease(elsewhereCid as string, other.publicKey),
        lease(expiredCid as string, operator.publicKey, chainNow + 300n),
      ],
      [holder],
    );

    const pinnedNow = async () => {
      const out: string[] = [];
      for await (const r of store.listPins()) out.push(r.cid);
      return out;
    };
    const state = () => new FileIndexState(chainIndexPath(dataDir, programId));
    // "now" past the short lease's end.
    const at = chainNow + 301n;
    proxy.reset();
    const first = await readChainRetention(conn, programId, operator.publicKey, at, {
      pinned: await pinnedNow(),
      state: state(),
    });
    expect(proxy.count('getProgramAccounts')).toBe(0);
    expect([...first.referenced]).toEqual([mailCid]);
    const outcome = await releaseUnretained(store, first, { nowMs: Date.now(), graceSecs: 0 });
    expect(outcome.kept.sort((a, b) => a.cid.localeCompare(b.cid))).toEqual(
      [
        { cid: mailCid, reason: 'referenced' },
        { cid: leasedCid, reason: 'leased' },
      ].sort((a, b) => (a.cid as string).localeCompare(b.cid as string)),
    );
    expect(outcome.released.sort()).toEqual([expiredCid, elsewhereCid, unleasedCid, laterCid].sort());

    // Nothing new on chain: one getSignaturesForAddress, no transaction, the same answer.
    proxy.reset();
    const again = await readChainRetention(conn, programId, operator.publicKey, at, {
      pinned: await pinnedNow(),
      state: state(),
    });
    expect([...again.referenced]).toEqual([mailCid]);
    expect([...again.leased]).toHaveLength(1);
    expect(proxy.calls.filter((m) => m !== 'getProgramAccounts').sort()).toEqual(['getSignaturesForAddress']);

    // A new pin mailed after the last run: one new transaction read, one account read.
    const fresh = (await pin('mailed after the first gc')) as string;
    await send(1n, fresh);
    proxy.reset();
    const third = await readChainRetention(conn, programId, operator.publicKey, at, {
      pinned: await pinnedNow(),
      state: state(),
    });
    expect([...third.referenced].sort()).toEqual([mailCid, fresh].sort());
    expect(proxy.count('getTransaction')).toBe(1);
    expect(proxy.count('getMultipleAccounts')).toBe(1);
    expect(proxy.count('getProgramAccounts')).toBe(0);
  }, 120_000);
});
