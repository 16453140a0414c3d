// A devnet prepared for mail the way an operator's chain would be: the
// postoffice, one domain under an authority key, and wallets with mailboxes.
import type { Keypair } from '@solana/web3.js';
import {
  createAliasInstruction,
  createDomainInstruction,
  createMailboxInstruction,
  initPostofficeInstruction,
} from '../../chain/client/index.ts';
import type { TestChain } from './devnet.ts';

export interface MailChain {
  authority: Keypair;
  delegate: Keypair;
  domain: string;
  /** A wallet with a Mailbox (postage 0 unless given) and optional alias. */
  mailbox(opts?: { postage?: bigint; alias?: string }): Promise<Keypair>;
}

export async function prepareMailChain(chain: TestChain, domain: string): Promise<MailChain> {
  const delegate = await chain.funded();
  const authority = await chain.funded(100);
  const p = chain.programId;
  await chain.send(
    [
      initPostofficeInstruction({
        programId: p,
        admin: delegate.publicKey,
        upgradeAuthority: chain.upgradeAuthority.publicKey,
        delegateAddress: delegate.publicKey,
        stampFeeLamports: 0n,
        settlementSurchargeLamports: 0n,
      }),
      createDomainInstruction({
        programId: p,
        delegate: delegate.publicKey,
        domain,
        authority: authority.publicKey,
      }),
    ],
    [delegate, chain.upgradeAuthority],
  );
  return {
    authority,
    delegate,
    domain,
    async mailbox(opts = {}) {
      const owner = await chain.funded();
      await chain.send(
        [
          createMailboxInstruction({
            programId: p,
            owner: owner.publicKey,
            domain,
            defaultPostage: opts.postage ?? 0n,
          }),
        ],
        [owner],
      );
      if (opts.alias) {
        await chain.send(
          [createAliasInstruction({ programId: p, owner: owner.publicKey, name: opts.alias })],
          [owner],
        );
      }
      return owner;
    },
  };
}
