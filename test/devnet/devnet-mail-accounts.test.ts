// The mail program running inside devnet, seen through the RPC: mailboxes it
// creates are found by getProgramAccounts filters and watched over pubsub.
import { Keypair, PublicKey, sendAndConfirmTransaction, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createMailboxInstruction,
  decodeMailbox,
  MAILBOX_SIZE,
  mailboxAddress,
} from '../../chain/client/index.ts';
import { startTestDevnet, type TestDevnet } from '../support/devnet-node.ts';

let t: TestDevnet;

beforeAll(async () => {
  t = await startTestDevnet();
});

afterAll(async () => {
  await t?.close();
});

describe('devnet with the mail program', () => {
  it('finds mailboxes with memcmp and dataSize filters', async () => {
    const programId = t.devnet.programId;
    const owners = [Keypair.generate(), Keypair.generate(), Keypair.generate()];
    for (const owner of owners) {
      await t.fund(owner, 1);
      const ix = createMailboxInstruction({ programId, owner: owner.publicKey, defaultPostage: 0n });
      await sendAndConfirmTransaction(t.conn, new Transaction().add(ix), [owner]);
    }
    const program = await t.conn.getAccountInfo(new PublicKey(programId));
    expect(program?.executable).toBe(true);

    const all = await t.conn.getProgramAccounts(new PublicKey(programId), {
      filters: [{ dataSize: MAILBOX_SIZE }],
    });
    expect(all).toHaveLength(3);

    const target = owners[1] as Keypair;
    const mine = await t.conn.getProgramAccounts(new PublicKey(programId), {
      filters: [
        { dataSize: MAILBOX_SIZE },
        { memcmp: { offset: 0, bytes: bs58.encode([1]) } },
        { memcmp: { offset: 1, bytes: target.publicKey.toBase58() } },
      ],
    });
    expect(mine).toHaveLength(1);
    expect(mine[0]?.pubkey.toBase58()).toBe(mailboxAddress(programId, target.publicKey)[0].toBase58());
    const mailbox = decodeMailbox(new Uint8Array(mine[0]?.account.data ?? []));
    expect(mailbox.owner.toBase58()).toBe(target.publicKey.toBase58());
    expect(mine[0]?.account.lamports).toBe((128 + MAILBOX_SIZE) * 6960);

    // A second CreateMailbox for the same owner is refused by the program, not the bank.
    const again = createMailboxInstruction({ programId, owner: target.publicKey, defaultPostage: 0n });
    await expect(sendAndConfirmTransaction(t.conn, new Transaction().add(again), [target])).rejects.toThrow(
      /custom program error: 0x4/,
    );
  });
});
