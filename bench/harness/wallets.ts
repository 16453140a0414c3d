// Many recipient wallets with open mailboxes, fast: the authority pays each
// CreateMailbox (the wallet only signs as owner), the transactions go out
// many at a time, and the mailboxes are then awaited together, instead of
// bootstrapChain's one confirmed transaction per step.
import { type Connection, Keypair, LAMPORTS_PER_SOL, Transaction } from '@solana/web3.js';
import { createMailboxInstruction, mailboxAddress } from '../../chain/client/index.ts';
import type { Keypair as KeyFile } from '../../src/core/keys/keypair-file.ts';

export async function createOpenMailboxes(opts: {
  connection: Connection;
  programId: string;
  domain: string;
  /** Pays rent and fees (topped up from the devnet faucet first). */
  payer: KeyFile;
  count: number;
}): Promise<string[]> {
  const { connection, programId } = opts;
  const payer = Keypair.fromSecretKey(opts.payer.secretKey);
  // Rent for the mailboxes and for every Email account the load will create.
  const topUp = await connection.requestAirdrop(payer.publicKey, 500 * LAMPORTS_PER_SOL);
  const owners = Array.from({ length: opts.count }, () => Keypair.generate());
  const latest = await connection.getLatestBlockhash('confirmed');
  await connection.confirmTransaction({ signature: topUp, ...latest }, 'confirmed');
  const PARALLEL = 50;
  for (let i = 0; i < owners.length; i += PARALLEL) {
    const { blockhash, lastValidBlockHeight } = await connection.getLatestBlockhash('confirmed');
    await Promise.all(
      owners.slice(i, i + PARALLEL).map((owner) => {
        const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight }).add(
          createMailboxInstruction({
            programId,
            owner: owner.publicKey,
            payer: payer.publicKey,
            defaultPostage: 0n,
            domain: opts.domain,
          }),
        );
        tx.sign(payer, owner);
        return connection.sendRawTransaction(tx.serialize());
      }),
    );
  }
  const addresses = owners.map((o) => mailboxAddress(programId, o.publicKey)[0]);
  const deadline = Date.now() + 120_000;
  for (let i = 0; i < addresses.length; ) {
    const infos = await connection.getMultipleAccountsInfo(addresses.slice(i, i + 100), 'confirmed');
    const missing = infos.indexOf(null);
    if (missing === -1) i += 100;
    else if (Date.now() > deadline) throw new Error(`mailbox ${i + missing} was not created`);
    else await new Promise((r) => setTimeout(r, 100));
  }
  return owners.map((o) => o.publicKey.toBase58());
}
