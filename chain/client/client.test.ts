// The read helpers against accounts the real program wrote (the SBF binary in
// litesvm, test/support/program-world.ts), served through the two Connection methods
// they use.

import { Buffer } from 'node:buffer';
import type { AccountInfo, Connection, PublicKey } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { expectOk, FEE, SURCHARGE, World } from '../../test/support/program-world.ts';
import {
  fetchStampQuote,
  getDomain,
  getEmail,
  getFrombox,
  getMailbox,
  getMailboxKey,
  getPostoffice,
  listInbox,
  resolveAlias,
} from './client.ts';
import { fromHash } from './hash.ts';
import {
  buyStampsInstruction,
  createAliasInstruction,
  deleteMailInstruction,
  publishKeyInstruction,
  sendMailInstruction,
} from './instructions.ts';

function connectionOver(w: World): Connection {
  const info = (address: PublicKey): AccountInfo<Buffer> | null => {
    const s = w.rt.account(address);
    if (!s) return null;
    return {
      data: Buffer.from(s.data),
      executable: s.executable,
      lamports: Number(s.lamports),
      owner: s.owner,
      rentEpoch: 0,
    };
  };
  const conn = {
    getAccountInfo: async (address: PublicKey) => info(address),
    getMultipleAccountsInfo: async (addresses: PublicKey[]) => {
      if (addresses.length > 100) throw new Error('too many accounts');
      return addresses.map(info);
    },
  };
  return conn as unknown as Connection;
}

function sendN(w: World, recipient: PublicKey, n: number): PublicKey {
  const sender = w.wallet();
  for (let i = 0; i < n; i++) {
    const index = w.mailbox(recipient).mailCount;
    const cid = `bafy-${index}`;
    expectOk(
      w.run(
        sendMailInstruction({
          programId: w.programId,
          sender,
          recipient,
          index,
          fromHash: fromHash(sender),
          cid,
        }),
      ),
    );
  }
  return sender;
}

describe('chain client', () => {
  it('lists the inbox newest first, skipping deleted mail, with paging', async () => {
    const w = new World();
    const conn = connectionOver(w);
    const owner = w.user();
    const sender = sendN(w, owner, 130);
    for (const index of [129n, 5n, 6n]) {
      expectOk(
        w.run(
          deleteMailInstruction({
            programId: w.programId,
            signer: owner,
            recipient: owner,
            index,
            rentPayer: sender,
          }),
        ),
      );
    }
    const first = await listInbox(conn, w.programId, owner, { limit: 3 });
    expect(first.map((e) => e.email.index)).toEqual([128n, 127n, 126n]);
    expect(first[0]?.address.equals(w.emailAddress(owner, 128n))).toBe(true);
    expect(first[0]?.email.cid).toBe('bafy-128');
    const all = await listInbox(conn, w.programId, owner, { limit: 500 });
    expect(all).toHaveLength(127);
    expect(all.at(-1)?.email.index).toBe(0n);
    const page = await listInbox(conn, w.programId, owner, { limit: 4, before: 8n });
    expect(page.map((e) => e.email.index)).toEqual([7n, 4n, 3n, 2n]);
    expect(await listInbox(conn, w.programId, w.wallet())).toEqual([]);
  });

  it('reads single accounts and resolves aliases', async () => {
    const w = new World();
    const conn = connectionOver(w);
    const owner = w.user();
    sendN(w, owner, 1);
    expectOk(w.run(createAliasInstruction({ programId: w.programId, owner, name: 'dora' })));
    expectOk(w.run(publishKeyInstruction({ programId: w.programId, owner, pubKey: w.admin })));
    expect((await getMailbox(conn, w.programId, owner))?.mailCount).toBe(1n);
    expect((await getMailboxKey(conn, w.programId, owner))?.pubKey.equals(w.admin)).toBe(true);
    expect((await getEmail(conn, w.programId, owner, 0n))?.cid).toBe('bafy-0');
    expect(await getEmail(conn, w.programId, owner, 1n)).toBeNull();
    expect((await resolveAlias(conn, w.programId, 'Dora@mail.test'))?.equals(owner)).toBe(true);
    expect(await resolveAlias(conn, w.programId, 'nobody')).toBeNull();
    expect((await getDomain(conn, w.programId, 'MAIL.test'))?.authority.equals(w.authority)).toBe(true);
    expect((await getPostoffice(conn, w.programId))?.stampFeeLamports).toBe(FEE);
    expect(await getFrombox(conn, w.programId, fromHash('x@y.z'), owner)).toBeNull();
  });

  it('quotes what BuyStamps and TopUpStamps charge', async () => {
    const w = new World();
    const conn = connectionOver(w);
    const recipient = w.user({ defaultPostage: 900n });
    const buyer = w.wallet();
    const first = await fetchStampQuote(conn, w.programId, { buyer, recipient, stamps: 2n });
    expect(first).toMatchObject({
      createsFrombox: true,
      postage: 900n,
      surcharge: SURCHARGE,
      fee: FEE,
      stamps: 2n,
    });
    const before = w.balance(buyer);
    expectOk(w.run(buyStampsInstruction({ programId: w.programId, buyer, recipient, stamps: 2n })));
    expect(before - w.balance(buyer)).toBe(first.total);
    const again = await fetchStampQuote(conn, w.programId, { buyer, recipient, stamps: 1n });
    expect(again).toMatchObject({ createsFrombox: false, rent: 0n, total: 900n + SURCHARGE + FEE });
    const own = await fetchStampQuote(conn, w.programId, { buyer: recipient, recipient, stamps: 1n });
    expect(own.fee).toBe(0n);
    await expect(fetchStampQuote(conn, w.programId, { buyer, recipient: buyer, stamps: 1n })).rejects.toThrow(
      /no mailbox/,
    );
  });
});
