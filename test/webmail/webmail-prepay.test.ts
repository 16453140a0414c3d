// The webmail's stamp purchase (webmail/src/chain/prepay.ts) against a real
// devnet. An external wallet (a third-party browser extension, stood in for
// at its provider interface) may sign and report a signature before its
// transaction reaches the chain: the page then reports "pending" after its
// poll budget, not a failure, and the same purchase confirms once the
// transaction lands, with no second purchase made.
import type { Keypair, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { describe, expect, it } from 'vitest';
import { fetchStampQuote, getFrombox } from '../../chain/client/client.ts';
import { fromHash } from '../../chain/client/hash.ts';
import { buyPostage } from '../../webmail/src/chain/prepay.ts';
import { pollSignature } from '../../webmail/src/chain/tx.ts';
import { signDetached } from '../../webmail/src/wallet/secret-key.ts';
import { externalWallet } from '../../webmail/src/wallet/wallet.ts';
import { startTestChain } from '../support/devnet.ts';
import { prepareMailChain } from '../support/mail-chain.ts';

/** An extension that signs at once and broadcasts only when told to. */
function slowExtension(key: Keypair) {
  const held: Buffer[] = [];
  return {
    held,
    provider: {
      name: 'Slow Wallet',
      address: key.publicKey.toBase58(),
      signMessage: async (m: Uint8Array) => signDetached(m, key.secretKey),
      async signAndSendTransaction(tx: Transaction): Promise<string> {
        tx.sign(key);
        held.push(tx.serialize());
        return bs58.encode(tx.signature as Uint8Array);
      },
    },
  };
}

describe('stamp purchase from the webmail', () => {
  it('reports a purchase still pending after the poll budget, and it confirms later as one purchase', async () => {
    const chain = await startTestChain();
    const mail = await prepareMailChain(chain, 'mail.test');
    const gated = await mail.mailbox({ postage: 5000n });
    const buyer = await chain.funded();
    const ext = slowExtension(buyer);
    const wallet = externalWallet(ext.provider);
    const quote = await fetchStampQuote(chain.connection, chain.programId, {
      buyer: buyer.publicKey,
      recipient: gated.publicKey,
      stamps: 2n,
    });
    expect(quote.createsFrombox).toBe(true);

    const outcome = await buyPostage(chain.connection, chain.programId, wallet, gated.publicKey, 2n, quote, {
      budgetMs: 300,
      intervalMs: 50,
    });
    expect(outcome).toEqual({ status: 'pending', signature: expect.any(String), createdFrombox: true });
    expect(
      await getFrombox(chain.connection, chain.programId, fromHash(buyer.publicKey), gated.publicKey),
    ).toBeNull();

    // The extension broadcasts after all: the same signature confirms, two stamps bought once.
    expect(ext.held).toHaveLength(1);
    await chain.connection.sendRawTransaction(ext.held[0] as Buffer, { skipPreflight: true });
    const settled = await pollSignature(chain.connection, outcome.signature, {
      budgetMs: 20_000,
      intervalMs: 50,
    });
    expect(settled).toEqual({ status: 'confirmed', signature: outcome.signature });
    const frombox = await getFrombox(
      chain.connection,
      chain.programId,
      fromHash(buyer.publicKey),
      gated.publicKey,
    );
    expect(frombox?.stamps).toBe(2n);
  });
});
