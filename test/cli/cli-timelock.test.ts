// `sealpost timelock` as a black box: the real CLI against a real devnet (the
// committed mail program) over JSON-RPC, the devnet's clock moved forward to
// pass the windows.
import { describe, expect, it } from 'vitest';
import { getDomain, getMailbox } from '../../chain/client/client.ts';
import { MAILBOX_CLOSE_WINDOW_SECS, RECLAIM_WINDOW_SECS } from '../../chain/client/instructions.ts';
import { startTestChain, waitForChainTime } from '../support/devnet.ts';
import { prepareMailChain } from '../support/mail-chain.ts';
import { keyFile, sealpost } from '../support/program-cli.ts';
import { tempDir } from '../support/temp-dir.ts';

const CLI_TEST_MS = 240_000;
const DOMAIN = 'mail.test';

describe('sealpost timelock', () => {
  it(
    'mailbox close: request prints the window end, complete is refused until it, cancel and complete work',
    async () => {
      let skew = 0;
      const cwd = tempDir('sealpost-timelock-');
      const chain = await startTestChain({ clock: () => Date.now() / 1000 + skew });
      const at = ['--rpc', chain.devnet.rpcUrl, '--program-id', chain.programId];
      const mail = await prepareMailChain(chain, DOMAIN);
      const owner = keyFile(cwd, 'owner.json', await mail.mailbox());
      const wallet = owner.kp.publicKey.toBase58();

      const req = await sealpost(
        ['timelock', 'mailbox-close', 'request', '--key', owner.path, '--json', ...at],
        cwd,
      );
      expect({ code: req.code, stderr: req.stderr }).toEqual({ code: 0, stderr: '' });
      const out = JSON.parse(req.stdout) as {
        wallet: string;
        pending: { requested_at: string; window_ends_at_unix: number; window_secs: number };
      };
      expect(out.wallet).toBe(wallet);
      expect(out.pending.window_secs).toBe(Number(MAILBOX_CLOSE_WINDOW_SECS));
      expect(out.pending.window_ends_at_unix).toBe(
        Date.parse(out.pending.requested_at) / 1000 + Number(MAILBOX_CLOSE_WINDOW_SECS),
      );

      const again = await sealpost(['timelock', 'mailbox-close', 'request', '--key', owner.path, ...at], cwd);
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/RequestMailboxClose refused by the mail program: AlreadyExists/);

      const early = await sealpost(
        ['timelock', 'mailbox-close', 'complete', '--key', owner.path, ...at],
        cwd,
      );
      expect(early.code).toBe(1);
      expect(early.stderr.trim().split('\n')).toHaveLength(1);
      expect(early.stderr).toMatch(
        new RegExp(
          `TimelockNotElapsed \\(the window ends at ${new Date(out.pending.window_ends_at_unix * 1000).toISOString()}\\)`,
        ),
      );
      expect(await getMailbox(chain.connection, chain.programId, wallet)).not.toBeNull();

      const status = await sealpost(['timelock', 'mailbox-close', 'status', '--wallet', wallet, ...at], cwd);
      expect(status.stdout).toMatch(new RegExp(`^${wallet}: closing; requested .* the window ends at `));

      const cancel = await sealpost(['timelock', 'mailbox-close', 'cancel', '--key', owner.path, ...at], cwd);
      expect(cancel.code).toBe(0);
      expect(cancel.stdout).toMatch(/^cancelled the close of the mailbox of /);
      const none = await sealpost(['timelock', 'mailbox-close', 'complete', '--key', owner.path, ...at], cwd);
      expect(none.code).toBe(1);
      expect(none.stderr).toMatch(/has no pending mailbox close: request one first/);

      expect(
        (await sealpost(['timelock', 'mailbox-close', 'request', '--key', owner.path, ...at], cwd)).code,
      ).toBe(0);
      skew += Number(MAILBOX_CLOSE_WINDOW_SECS) + 1;
      await waitForChainTime(chain.connection, Math.floor(Date.now() / 1000 + skew));
      const done = await sealpost(
        ['timelock', 'mailbox-close', 'complete', '--key', owner.path, '--json', ...at],
        cwd,
      );
      expect({ code: done.code, stderr: done.stderr }).toEqual({ code: 0, stderr: '' });
      expect(JSON.parse(done.stdout)).toMatchObject({ wallet, closed: true });
      expect(await getMailbox(chain.connection, chain.programId, wallet)).toBeNull();

      const noKey = await sealpost(['timelock', 'mailbox-close', 'request', ...at], cwd);
      expect(noKey.code).toBe(2);
      expect(noKey.stderr).toMatch(/--key <file> is required/);
    },
    CLI_TEST_MS,
  );

  it(
    'domain deactivation and reclaim: only the authority or the delegate may start them, anyone completes them',
    async () => {
      let skew = 0;
      const cwd = tempDir('sealpost-timelock-');
      const chain = await startTestChain({ clock: () => Date.now() / 1000 + skew });
      const at = ['--rpc', chain.devnet.rpcUrl, '--program-id', chain.programId];
      const mail = await prepareMailChain(chain, DOMAIN);
      const authority = keyFile(cwd, 'authority.json', mail.authority);
      const delegate = keyFile(cwd, 'delegate.json', mail.delegate);
      const next = keyFile(cwd, 'next.json', await chain.funded(1));
      const anyone = keyFile(cwd, 'anyone.json', await chain.funded(1));
      const dom = ['--domain', DOMAIN];

      const wrong = await sealpost(
        ['timelock', 'domain', 'deactivate', ...dom, '--key', anyone.path, ...at],
        cwd,
      );
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toMatch(
        /RequestDeactivation refused by the mail program: Unauthorized \(--key is not the authority of mail\.test/,
      );

      const deact = await sealpost(
        ['timelock', 'domain', 'deactivate', ...dom, '--key', authority.path, ...at],
        cwd,
      );
      expect(deact.code).toBe(0);
      expect(deact.stdout).toMatch(
        /^deactivation of mail\.test requested \(\w+\); the notice window ends at \d{4}-/,
      );
      const early = await sealpost(
        ['timelock', 'domain', 'complete', ...dom, '--key', anyone.path, ...at],
        cwd,
      );
      expect(early.code).toBe(1);
      expect(early.stderr).toMatch(/SettleDomainTimelock refused by the mail program: TimelockNotElapsed/);
      const cancel = await sealpost(
        ['timelock', 'domain', 'cancel', ...dom, '--key', authority.path, ...at],
        cwd,
      );
      expect(cancel.code).toBe(0);

      const notDelegate = await sealpost(
        [
          'timelock',
          'domain',
          'reclaim',
          'request',
          ...dom,
          '--key',
          anyone.path,
          '--new-authority-key',
          next.path,
          ...at,
        ],
        cwd,
      );
      expect(notDelegate.code).toBe(1);
      expect(notDelegate.stderr).toMatch(/RequestReclaim refused by the mail program: Unauthorized/);
      const req = await sealpost(
        [
          'timelock',
          'domain',
          'reclaim',
          'request',
          ...dom,
          '--key',
          delegate.path,
          '--new-authority-key',
          next.path,
          '--json',
          ...at,
        ],
        cwd,
      );
      expect({ code: req.code, stderr: req.stderr }).toEqual({ code: 0, stderr: '' });
      const pending = (JSON.parse(req.stdout) as { pending: { new_authority: string; window_secs: number } })
        .pending;
      expect(pending).toMatchObject({
        new_authority: next.kp.publicKey.toBase58(),
        window_secs: Number(RECLAIM_WINDOW_SECS),
      });
      const status = await sealpost(
        ['timelock', 'domain', 'reclaim', 'status', ...dom, '--json', ...at],
        cwd,
      );
      expect(JSON.parse(status.stdout)).toMatchObject({
        domain: DOMAIN,
        active: true,
        authority: mail.authority.publicKey.toBase58(),
        pending: { record: 'PendingReclaim', payer: mail.delegate.publicKey.toBase58() },
      });

      skew += Number(RECLAIM_WINDOW_SECS) + 1;
      await waitForChainTime(chain.connection, Math.floor(Date.now() / 1000 + skew));
      const settle = await sealpost(
        ['timelock', 'domain', 'reclaim', 'settle', ...dom, '--key', anyone.path, ...at],
        cwd,
      );
      expect({ code: settle.code, stderr: settle.stderr }).toEqual({ code: 0, stderr: '' });
      expect(settle.stdout).toMatch(
        new RegExp(`^mail\\.test now belongs to ${next.kp.publicKey.toBase58()}`),
      );
      expect(
        (await getDomain(chain.connection, chain.programId, DOMAIN))?.authority.equals(next.kp.publicKey),
      ).toBe(true);

      const missing = await sealpost(['timelock', 'domain', 'status', ...at], cwd);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toMatch(/--domain <name> is required/);
    },
    CLI_TEST_MS,
  );
});
