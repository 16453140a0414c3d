// `sealpost attest add|revoke|list` and `sealpost reputation show|rule` as a
// black box: the real CLI against a real devnet (the committed mail program)
// over JSON-RPC.
import { describe, expect, it } from 'vitest';
import { getAttestation, getRecipientRule } from '../../chain/client/attest-client.ts';
import { fromHash } from '../../chain/client/hash.ts';
import {
  buyStampsInstruction,
  sendMailInstruction,
  withReputation,
} from '../../chain/client/instructions.ts';
import { startTestChain } from '../support/devnet.ts';
import { prepareMailChain } from '../support/mail-chain.ts';
import { keyFile, sealpost } from '../support/program-cli.ts';
import { tempDir } from '../support/temp-dir.ts';

const CLI_TEST_MS = 180_000;
const CID = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy';
const DOMAIN = 'attest.example';

describe('sealpost attest / reputation', () => {
  it(
    'attests, lists and revokes senders; shows reputation and sets a rule; refuses bad input with one line',
    async () => {
      const cwd = tempDir('sealpost-attest-');
      const chain = await startTestChain();
      const mail = await prepareMailChain(chain, DOMAIN);
      const at = ['--rpc', chain.devnet.rpcUrl, '--program-id', chain.programId];
      const authority = keyFile(cwd, 'authority.json', mail.authority);
      const sender = keyFile(cwd, 'sender.json', await chain.funded(2));
      const stranger = keyFile(cwd, 'stranger.json', await chain.funded(1));
      const w = sender.kp.publicKey.toBase58();

      const add = await sealpost(
        ['attest', 'add', '--domain', 'Attest.Example', '--wallet', w, '--key', authority.path, ...at],
        cwd,
      );
      expect({ code: add.code, stderr: add.stderr }).toEqual({ code: 0, stderr: '' });
      expect(add.stdout).toMatch(new RegExp(`^attested ${w} as a sender of ${DOMAIN} \\(\\w+\\)\\n$`));
      const stored = await getAttestation(chain.connection, chain.programId, DOMAIN, w);
      expect(stored?.authority.equals(mail.authority.publicKey)).toBe(true);

      const list = await sealpost(['attest', 'list', '--domain', DOMAIN, '--json', ...at], cwd);
      expect(list.code).toBe(0);
      const rows = JSON.parse(list.stdout) as { wallet: string; counts: boolean; authority: string }[];
      expect(rows.map((r) => [r.wallet, r.counts, r.authority])).toEqual([
        [w, true, mail.authority.publicKey.toBase58()],
      ]);
      expect((await sealpost(['attest', 'list', '--domain', DOMAIN, ...at], cwd)).stdout).toMatch(
        new RegExp(`^${w} attested \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\n$`),
      );

      // A forged attestation: the stranger signs for the domain. Nothing is written.
      const other = (await chain.funded(1)).publicKey.toBase58();
      const forged = await sealpost(
        ['attest', 'add', '--domain', DOMAIN, '--wallet', other, '--key', stranger.path, ...at],
        cwd,
      );
      expect(forged.code).toBe(1);
      expect(forged.stderr).toMatch(/AttestSender refused by the mail program: NotDomainAuthority \(30\)/);
      expect(await getAttestation(chain.connection, chain.programId, DOMAIN, other)).toBeNull();
      const twice = await sealpost(
        ['attest', 'add', '--domain', DOMAIN, '--wallet', w, '--key', authority.path, ...at],
        cwd,
      );
      expect(twice.stderr).toMatch(/AlreadyExists \(4\)/);
      // Usage errors (exit 2) and an unknown domain (exit 1).
      const badWallet = await sealpost(
        ['attest', 'add', '--domain', DOMAIN, '--wallet', 'nope', '--key', authority.path, ...at],
        cwd,
      );
      expect(badWallet.code).toBe(2);
      expect(badWallet.stderr).toMatch(/base58 wallet address/);
      const badDomain = await sealpost(['attest', 'list', '--domain', 'bad_domain!', ...at], cwd);
      expect(badDomain.code).toBe(2);
      expect(badDomain.stderr).toMatch(/--domain: invalid domain name/);
      const unknown = await sealpost(
        ['attest', 'add', '--domain', 'nowhere.example', '--wallet', w, '--key', authority.path, ...at],
        cwd,
      );
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/nowhere\.example is not a mail domain/);

      // Reputation: a stamped direct send with the reputation account records the postage.
      const recipient = await mail.mailbox({ postage: 40_000n });
      const p = chain.programId;
      await chain.send(
        [
          buyStampsInstruction({
            programId: p,
            buyer: sender.kp.publicKey,
            recipient: recipient.publicKey,
            stamps: 1n,
          }),
        ],
        [sender.kp],
      );
      const none = await sealpost(['reputation', 'show', w, ...at], cwd);
      expect(none.stdout).toBe(`${w} paid 0 lamports of first-contact postage\n`);
      const send = sendMailInstruction({
        programId: p,
        sender: sender.kp.publicKey,
        recipient: recipient.publicKey,
        index: 0n,
        fromHash: fromHash(sender.kp.publicKey),
        cid: CID,
      });
      await chain.send(
        [withReputation(send, { programId: p, sender: sender.kp.publicKey, recipient: recipient.publicKey })],
        [sender.kp],
      );
      const shown = JSON.parse((await sealpost(['reputation', 'show', w, '--json', ...at], cwd)).stdout);
      expect(shown).toMatchObject({ wallet: w, cumulativeSpendLamports: '40000', rule: null });

      // The recipient's rule.
      const rkey = keyFile(cwd, 'recipient.json', recipient);
      const rule = await sealpost(
        ['reputation', 'rule', '--key', rkey.path, '--min', '40000', '--postage', '0', ...at],
        cwd,
      );
      expect(rule.code).toBe(0);
      expect(await getRecipientRule(chain.connection, p, recipient.publicKey)).toMatchObject({
        minReputationLamports: 40_000n,
        postageLamports: 0n,
      });
      const r = recipient.publicKey.toBase58();
      expect((await sealpost(['reputation', 'show', r, ...at], cwd)).stdout).toBe(
        `${r} paid 0 lamports of first-contact postage\n` +
          'rule: senders with at least 40000 pay 0 lamports instead of a stamp\n',
      );
      const zero = await sealpost(['reputation', 'rule', '--key', rkey.path, '--min', '0', ...at], cwd);
      expect(zero.code).toBe(2);
      expect(zero.stderr).toMatch(/--min: must be at least 1/);
      const closed = await sealpost(['reputation', 'rule', '--key', rkey.path, '--close', ...at], cwd);
      expect(closed.code).toBe(0);
      expect(await getRecipientRule(chain.connection, p, recipient.publicKey)).toBeNull();

      // Revocation: a stranger is refused; the attested wallet itself may revoke.
      const denied = await sealpost(
        ['attest', 'revoke', '--domain', DOMAIN, '--wallet', w, '--key', stranger.path, ...at],
        cwd,
      );
      expect(denied.code).toBe(1);
      expect(denied.stderr).toMatch(/RevokeAttestation refused by the mail program: Unauthorized \(6\)/);
      const revoked = await sealpost(
        ['attest', 'revoke', '--domain', DOMAIN, '--wallet', w, '--key', sender.path, ...at],
        cwd,
      );
      expect(revoked.code).toBe(0);
      expect(await getAttestation(chain.connection, chain.programId, DOMAIN, w)).toBeNull();
      expect((await sealpost(['attest', 'list', '--domain', DOMAIN, ...at], cwd)).stdout).toBe('');
      const again = await sealpost(
        ['attest', 'revoke', '--domain', DOMAIN, '--wallet', w, '--key', authority.path, ...at],
        cwd,
      );
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/is not attested for attest\.example/);
    },
    CLI_TEST_MS,
  );
});
