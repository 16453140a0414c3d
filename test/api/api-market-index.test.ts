// The market index and /v1/timelocks without getProgramAccounts: a real
// account API over a real devnet behind a JSON-RPC proxy that refuses
// getProgramAccounts (as many providers do) and counts every call. Listings,
// a bid, an escrow and timelocks made by another client directly on chain
// appear; the program index is kept in the store (SQLite and PostgreSQL),
// survives a restart, and a later rebuild costs only the new signatures.
import { Connection, type Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import { afterEach, describe, expect, it } from 'vitest';
import {
  bidAliasInstruction,
  cancelListingInstruction,
  createAliasInstruction,
  listAliasInstruction,
  offerAliasInstruction,
  requestDeactivationInstruction,
  requestReclaimInstruction,
} from '../../chain/client/instructions.ts';
import { openStore, type Store } from '../../src/core/store/index.ts';
import { marketRoutes } from '../../src/edge/api/routes/market.ts';
import { type ApiRig, DIALECTS, type Dialect, startRig } from '../support/api-rig.ts';
import { startTestChain } from '../support/devnet.ts';
import { type RpcLog, startGpaRefusingProxy } from '../support/gpa-refusing-proxy.ts';
import { prepareMailChain } from '../support/mail-chain.ts';
import { dropSchema, TEST_PG_URL, uniqueSchemaName } from '../support/postgres.ts';
import { tempDir } from '../support/temp-dir.ts';

const SOL = BigInt(LAMPORTS_PER_SOL);
const TEST_MS = 180_000;
const cleanup: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

const asRigWallet = (kp: Keypair) => ({
  secretKey: kp.secretKey,
  publicKey: kp.publicKey.toBytes(),
  address: kp.publicKey.toBase58(),
});

/** A store of its own for the index (a temp SQLite file, or a throwaway PostgreSQL schema). */
async function indexStore(dialect: Dialect): Promise<Store> {
  if (dialect === 'sqlite') {
    const store = await openStore({ url: 'sqlite:index.sqlite', dataDir: tempDir('sealpost-index-') });
    cleanup.push(() => store.close());
    return store;
  }
  const schema = uniqueSchemaName('sealpost_index');
  const store = await openStore({
    url: `${TEST_PG_URL}?schema=${schema}`,
    dataDir: tempDir('sealpost-index-'),
  });
  cleanup.push(async () => {
    await store.close();
    await dropSchema(schema);
  });
  return store;
}

describe.each(DIALECTS)('market index and /v1/timelocks with getProgramAccounts refused (%s)', (dialect) => {
  it(
    "shows another client's listings and timelocks, persists the index, and catches up incrementally",
    async () => {
      const chain = await startTestChain();
      const { programId } = chain;
      const proxy: RpcLog = await startGpaRefusingProxy(chain.devnet.rpcUrl);
      cleanup.push(() => proxy.close());
      const connection = new Connection(proxy.url, 'confirmed');
      const store = await indexStore(dialect);

      // Another client (not this server) writes everything below directly on chain.
      const mail = await prepareMailChain(chain, 'mail.test');
      const alice = await mail.mailbox({ alias: 'shop' });
      await chain.send([createAliasInstruction({ programId, owner: alice.publicKey, name: 'auc' })], [alice]);
      await chain.send(
        [createAliasInstruction({ programId, owner: alice.publicKey, name: 'gift' })],
        [alice],
      );
      const [bob, carol] = [await chain.funded(), await chain.funded()];
      const now = Math.floor(Date.now() / 1000);
      await chain.send(
        [
          listAliasInstruction({
            programId,
            holder: alice.publicKey,
            alias: 'shop',
            priceLamports: 2n * SOL,
          }),
          listAliasInstruction({
            programId,
            holder: alice.publicKey,
            alias: 'auc',
            auction: { reserveLamports: SOL, endsAt: BigInt(now + 3600), antisnipeSecs: 600n },
          }),
          offerAliasInstruction({
            programId,
            holder: alice.publicKey,
            alias: 'gift',
            recipient: bob.publicKey,
            feeLamports: SOL / 10n,
            expiresAt: BigInt(now + 86_400),
          }),
        ],
        [alice],
      );
      await chain.send(
        [
          bidAliasInstruction({
            programId,
            bidder: carol.publicKey,
            alias: 'auc',
            amountLamports: SOL,
            highBidder: null,
          }),
        ],
        [carol],
      );
      await chain.send(
        [
          requestDeactivationInstruction({
            programId,
            authority: mail.authority.publicKey,
            domain: 'mail.test',
          }),
        ],
        [mail.authority],
      );
      await chain.send(
        [
          requestReclaimInstruction({
            programId,
            delegate: mail.delegate.publicKey,
            newAuthority: bob.publicKey,
            domain: 'mail.test',
          }),
        ],
        [mail.delegate, bob],
      );

      const start = async (): Promise<ApiRig> => {
        const rig = await startRig(dialect, {
          plugins: [marketRoutes({ connection, programId, db: store.db, ttlMs: 600_000, minRefreshMs: 0 })],
        });
        cleanup.push(() => rig.close());
        return rig;
      };
      let rig = await start();
      const names = async () =>
        ((await rig.request('GET', '/v1/market/listings?fresh=true')).body.listings as { name: string }[])
          .map((l) => l.name)
          .sort();

      // The first build reads the program's whole history: no getProgramAccounts.
      proxy.reset();
      const first = await rig.request('GET', '/v1/market/listings?fresh=true');
      expect(first.status).toBe(200);
      expect(proxy.count('getProgramAccounts')).toBe(0);
      expect(proxy.count('getSignaturesForAddress')).toBeGreaterThan(0);
      const byName = Object.fromEntries(
        (first.body.listings as { name: string }[]).map((l) => [l.name, l]),
      ) as Record<string, Record<string, unknown>>;
      expect(Object.keys(byName).sort()).toEqual(['auc', 'shop']);
      expect(byName.shop).toMatchObject({ kind: 'alias', mode: 'fixed', price_lamports: '2000000000' });
      expect(byName.auc).toMatchObject({
        mode: 'auction',
        high_bid_lamports: SOL.toString(),
        high_bidder: carol.publicKey.toBase58(),
      });
      const bobToken = await rig.login(asRigWallet(bob));
      const offers = await rig.request('GET', '/v1/market/offers?fresh=true', { token: bobToken });
      expect(offers.body.received).toEqual([
        expect.objectContaining({ name: 'gift', fee_lamports: '100000000' }),
      ]);
      const carolToken = await rig.login(asRigWallet(carol));
      const bids = await rig.request('GET', '/v1/market/bids?fresh=true', { token: carolToken });
      expect(bids.body.bids).toEqual([expect.objectContaining({ amount_lamports: SOL.toString() })]);

      // /v1/timelocks: the authority's deactivation and reclaim, and the reclaim that would make Bob authority.
      const authToken = await rig.login(asRigWallet(mail.authority));
      proxy.reset();
      const dom = await rig.request('GET', '/v1/timelocks', { token: authToken });
      expect(dom.status).toBe(200);
      expect(
        (dom.body.timelocks as { kind: string; role: string; domain: string }[])
          .map((t) => `${t.kind}/${t.role}/${t.domain}`)
          .sort(),
      ).toEqual(['domain_deactivation/authority/mail.test', 'domain_reclaim/authority/mail.test']);
      const incoming = await rig.request('GET', '/v1/timelocks', { token: bobToken });
      expect(incoming.body.timelocks).toEqual([
        expect.objectContaining({
          kind: 'domain_reclaim',
          role: 'new_authority',
          domain: 'mail.test',
          new_authority: bob.publicKey.toBase58(),
        }),
      ]);
      expect(proxy.count('getProgramAccounts')).toBe(0);

      // Nothing new: a rebuild costs one getSignaturesForAddress and reads no transaction.
      proxy.reset();
      expect(await names()).toEqual(['auc', 'shop']);
      expect(proxy.count('getSignaturesForAddress')).toBe(1);
      expect(proxy.count('getTransaction')).toBe(0);
      expect(proxy.count('getMultipleAccounts')).toBe(0);

      // One new transaction by another client: one getTransaction, one getMultipleAccounts.
      await chain.send(
        [cancelListingInstruction({ programId, holder: alice.publicKey, alias: 'shop' })],
        [alice],
      );
      proxy.reset();
      expect(await names()).toEqual(['auc']);
      expect(proxy.count('getTransaction')).toBe(1);
      expect(proxy.count('getMultipleAccounts')).toBe(1);
      expect(proxy.count('getProgramAccounts')).toBe(0);

      // A restart (a new API and index over the same store) reads no program history again:
      // one getSignaturesForAddress of the program; the alias names (kept in memory) are
      // looked up again, one oldest transaction per listed or offered alias (auc, gift).
      await rig.close();
      cleanup.splice(cleanup.length - 1, 1);
      rig = await start();
      proxy.reset();
      expect(await names()).toEqual(['auc']);
      expect(proxy.count('getSignaturesForAddress', programId)).toBe(1);
      expect(proxy.count('getTransaction')).toBe(2);
      expect(proxy.count('getMultipleAccounts')).toBe(0);
      proxy.reset();
      const token2 = await rig.login(asRigWallet(mail.authority));
      expect(
        ((await rig.request('GET', '/v1/timelocks', { token: token2 })).body.timelocks as unknown[]).length,
      ).toBe(2);
      expect(proxy.count('getTransaction')).toBe(0);
      const rows = await store.db.selectFrom('program_index_state').selectAll().execute();
      expect(rows).toEqual([expect.objectContaining({ index_id: `market:${programId}` })]);

      // A listing made after the restart shows up from the persisted cursor on.
      await chain.send(
        [listAliasInstruction({ programId, holder: alice.publicKey, alias: 'shop', priceLamports: SOL })],
        [alice],
      );
      proxy.reset();
      expect(await names()).toEqual(['auc', 'shop']);
      // The ListAlias, and shop's name (not yet learnt since the restart).
      expect(proxy.count('getTransaction')).toBe(2);
      expect(proxy.count('getSignaturesForAddress', programId)).toBe(1);
      expect(proxy.count('getProgramAccounts')).toBe(0);
    },
    TEST_MS,
  );
});
