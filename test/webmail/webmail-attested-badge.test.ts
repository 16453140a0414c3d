// The webmail's attested-sender badge: which envelope senders it looks up
// (walletSender), and the chain reader it uses (attestedSender) against the
// real program over devnet JSON-RPC — counting only while the domain's
// current authority is the attesting key and the domain is active.
import { describe, expect, it } from 'vitest';
import { attestedSender } from '../../chain/client/attest-client.ts';
import { attestSenderInstruction, createDomainInstruction } from '../../chain/client/instructions.ts';
import { walletSender } from '../../webmail/src/chain/sender-wallet.ts';
import { startTestChain } from '../support/devnet.ts';
import { prepareMailChain } from '../support/mail-chain.ts';

const W = '8SFqwqnq4whPhs8icwHA2hQg3hUoN1qrCLK1SBx3WKwe';

describe('attested-sender badge', () => {
  it('looks up only <wallet>@<domain> envelope senders', () => {
    expect(walletSender(`${W}@Mail.Example.`)).toEqual({ wallet: W, domain: 'mail.example' });
    expect(walletSender('alice@mail.example')).toBeNull();
    expect(walletSender(W)).toBeNull();
    expect(walletSender('')).toBeNull();
    expect(walletSender(`${W}@bad_domain`)).toBeNull();
  });

  it('reads the attestation from chain, for the attested wallet of that domain only', async () => {
    const chain = await startTestChain();
    const mail = await prepareMailChain(chain, 'badge.example');
    const p = chain.programId;
    const attested = (await chain.funded(1)).publicKey;
    const other = (await chain.funded(1)).publicKey;
    expect(await attestedSender(chain.connection, p, 'badge.example', attested)).toBeNull();
    await chain.send(
      [
        attestSenderInstruction({
          programId: p,
          authority: mail.authority.publicKey,
          domain: 'badge.example',
          wallet: attested,
        }),
      ],
      [mail.authority],
    );
    const hit = await attestedSender(chain.connection, p, 'Badge.Example', attested);
    expect(hit?.attestation.wallet.equals(attested)).toBe(true);
    expect(hit?.domain.domain).toBe('badge.example');
    expect(await attestedSender(chain.connection, p, 'badge.example', other)).toBeNull();
    // Another domain on the same chain does not inherit it.
    await chain.send(
      [
        createDomainInstruction({
          programId: p,
          delegate: mail.delegate.publicKey,
          domain: 'else.example',
          authority: mail.authority.publicKey,
        }),
      ],
      [mail.delegate],
    );
    expect(await attestedSender(chain.connection, p, 'else.example', attested)).toBeNull();
  }, 60_000);
});
