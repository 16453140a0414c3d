// The prepay card's purchase: a fresh chain read at click time decides
// BuyStamps (creates the frombox) or TopUpStamps, and the purchase carries
// the quoted per-stamp price (postage + surcharge + fee, the card's "Per
// stamp") as its max_price_lamports ceiling, so a recipient who repriced,
// or a postoffice fee that rose, in between cannot charge more than was shown.
import type { Connection, PublicKey } from '@solana/web3.js';
import { fetchStampQuote, type StampQuote } from '../../../chain/client/client.ts';
import { buyStampsInstruction, topUpStampsInstruction } from '../../../chain/client/instructions.ts';
import type { Wallet } from '../wallet/wallet.ts';
import { formatSol } from './compose.ts';
import { type SendOptions, sendInstructions, TxFailedError } from './tx.ts';

export class RepricedError extends Error {
  constructor(
    readonly quoted: bigint,
    readonly live: bigint,
  ) {
    super(
      `The price changed to ${formatSol(live)} SOL per stamp (you agreed to ${formatSol(quoted)} SOL: postage, surcharge and fee). Nothing was bought; your draft is kept. Review the new quote to continue.`,
    );
    this.name = 'RepricedError';
  }
}

export type PurchaseOutcome =
  | { status: 'confirmed'; signature: string; createdFrombox: boolean }
  | { status: 'pending'; signature: string; createdFrombox: boolean };

export async function buyPostage(
  conn: Connection,
  programId: string,
  wallet: Wallet,
  recipient: PublicKey,
  stamps: bigint,
  quoted: StampQuote,
  poll?: SendOptions,
): Promise<PurchaseOutcome> {
  if (stamps < 1n) throw new Error('Buy at least one stamp.');
  const fresh = await fetchStampQuote(conn, programId, { buyer: wallet.publicKey, recipient, stamps });
  if (fresh.perStamp > quoted.perStamp) throw new RepricedError(quoted.perStamp, fresh.perStamp);
  const params = {
    programId,
    buyer: wallet.publicKey,
    recipient,
    stamps,
    maxPriceLamports: quoted.perStamp,
  };
  const ix = fresh.createsFrombox ? buyStampsInstruction(params) : topUpStampsInstruction(params);
  try {
    const out = await sendInstructions(conn, wallet, [ix], poll);
    return { ...out, createdFrombox: fresh.createsFrombox };
  } catch (err) {
    if (err instanceof TxFailedError && err.mailError?.name === 'PriceAboveCeiling') {
      const live = await fetchStampQuote(conn, programId, { buyer: wallet.publicKey, recipient, stamps });
      throw new RepricedError(quoted.perStamp, live.perStamp);
    }
    throw err;
  }
}
