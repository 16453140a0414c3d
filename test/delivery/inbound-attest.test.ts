import type { Keypair } from '@solana/web3.js';
import { simpleParser } from 'mailparser';
import nodemailer from 'nodemailer';
import { describe, expect, it } from 'vitest';
import {
  attestSenderInstruction,
  createDomainInstruction,
  revokeAttestationInstruction,
} from '../../chain/client/index.ts';
import { startDnsDouble } from '../support/doubles/dns-server.ts';
import { deliveredTexts, RIG_DOMAIN, type ServeRig, startServeRig } from '../support/serve-rig.ts';

const HOST = 'mx.mail.test';

/** Our Authentication-Results value of each delivered copy, oldest first. */
async function ourResults(rig: ServeRig, owner: Keypair, count: number): Promise<string[]> {
  const out: string[] = [];
  for (const text of await deliveredTexts(rig, owner, count)) {
    const parsed = await simpleParser(text);
    const all = [parsed.headers.get('authentication-results') ?? []].flat().map(String);
    out.push(all.filter((v) => v.toLowerCase().startsWith(HOST)).join('\n'));
  }
  return out;
}

describe('attested senders in delivered mail', () => {
  it('adds x-sealpost-attest=pass only for an attested wallet of an SPF-passed domain', async () => {
    const dns = await startDnsDouble({
      'remote.example': { TXT: ['v=spf1 ip4:127.0.0.1 -all'] },
    });
    const rig = await startServeRig({ senderAuth: 'spf', resolver: dns.address });
    try {
      const { chain, mail } = rig;
      const p = chain.programId;
      const bob = await mail.mailbox();
      const to = `${bob.publicKey.toBase58()}@${RIG_DOMAIN}`;
      // remote.example and nospf.example are mail domains on this chain, each with its own authority.
      const remoteAuthority = await chain.funded(1);
      const nospfAuthority = await chain.funded(1);
      await chain.send(
        [
          createDomainInstruction({
            programId: p,
            delegate: mail.delegate.publicKey,
            domain: 'remote.example',
            authority: remoteAuthority.publicKey,
          }),
          createDomainInstruction({
            programId: p,
            delegate: mail.delegate.publicKey,
            domain: 'nospf.example',
            authority: nospfAuthority.publicKey,
          }),
        ],
        [mail.delegate],
      );
      const attested = (await chain.funded(1)).publicKey.toBase58();
      const stranger = (await chain.funded(1)).publicKey.toBase58();
      await chain.send(
        [
          attestSenderInstruction({
            programId: p,
            authority: remoteAuthority.publicKey,
            domain: 'remote.example',
            wallet: attested,
          }),
        ],
        [remoteAuthority],
      );
      await chain.send(
        [
          attestSenderInstruction({
            programId: p,
            authority: nospfAuthority.publicKey,
            domain: 'nospf.example',
            wallet: attested,
          }),
        ],
        [nospfAuthority],
      );

      const send = (from: string, extra = '') =>
        nodemailer
          .createTransport({
            host: '127.0.0.1',
            port: rig.mxPort,
            name: 'mail.remote.example',
            ignoreTLS: true,
          })
          .sendMail({
            envelope: { from, to: [to] },
            raw: `From: ${from}\r\nTo: ${to}\r\nSubject: attest\r\n${extra}\r\nhello\r\n`,
          });
      // 1: attested, SPF pass; a forged clause under our authserv-id rides along and is removed.
      await send(
        `${attested}@remote.example`,
        `Authentication-Results: ${HOST}; x-sealpost-attest=pass smtp.mailfrom=${stranger}@remote.example\r\n`,
      );
      // 2: a wallet the authority never attested, SPF pass.
      await send(`${stranger}@remote.example`);
      // 3: attested by nospf.example's authority, but no SPF pass for that domain.
      await send(`${attested}@nospf.example`);
      const [first, second, third] = await ourResults(rig, bob, 3);
      expect(first).toMatch(/spf=pass /);
      expect(first).toContain(
        `x-sealpost-attest=pass (sender attested by the domain authority on chain) smtp.mailfrom=${attested}@remote.example`,
      );
      expect(first).not.toContain(stranger);
      expect(second).toMatch(/spf=pass /);
      expect(second).not.toContain('x-sealpost-attest');
      expect(third).toMatch(/spf=none /);
      expect(third).not.toContain('x-sealpost-attest');

      // 4: after the authority revokes, the same sender is no longer marked.
      await chain.send(
        [
          revokeAttestationInstruction({
            programId: p,
            signer: remoteAuthority.publicKey,
            domain: 'remote.example',
            wallet: attested,
            rentPayer: remoteAuthority.publicKey,
          }),
        ],
        [remoteAuthority],
      );
      await send(`${attested}@remote.example`);
      const fourth = (await ourResults(rig, bob, 4))[3];
      expect(fourth).toMatch(/spf=pass /);
      expect(fourth).not.toContain('x-sealpost-attest');
    } finally {
      await rig.stop();
      await dns.close();
    }
  }, 120_000);
});
