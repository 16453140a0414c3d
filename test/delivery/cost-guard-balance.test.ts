// The authority balance guard on a real devnet: the authority is drained
// below `[chain] min_authority_lamports` (default "auto": at least 0.05 SOL) with a System
// transfer, the MX defers new mail with 451 4.3.2 and says so in the log and
// the metrics; after a refund it accepts and delivers again.
import { type Keypair, SystemProgram } from '@solana/web3.js';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { openSealed, walletEncryptionKeypair } from '../../src/mail/seal/index.ts';
import { sendOne, until, waitForInbox } from '../support/cost-guard-helpers.ts';
import { RIG_DOMAIN, type ServeRig, startServeRig } from '../support/serve-rig.ts';

async function subjects(rig: ServeRig, owner: Keypair, count: number): Promise<string[]> {
  const inbox = await waitForInbox(rig.chain.connection, rig.chain.programId, owner.publicKey, count);
  const reader = walletEncryptionKeypair(owner.secretKey);
  const out: string[] = [];
  for (const entry of inbox) {
    const res = await fetch(`${rig.gatewayUrl}/ipfs/${entry.email.cid}`);
    const opened = await openSealed(new Uint8Array(await res.arrayBuffer()), reader);
    out.push(/Subject: (\S+)/.exec(Buffer.from(opened.raw).toString('utf8'))?.[1] ?? '?');
  }
  return out.sort();
}

describe('authority balance guard', () => {
  it('defers new mail while the authority is below the floor and recovers after a top-up', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (s: string) => void lines.push(s) });
    const rig = await startServeRig({
      serve: { logger },
      extraToml: '[limits]\nbalance_check_secs = 1\n',
    });
    expect(rig.config.chain.min_authority_lamports).toBe('auto');
    const metrics = rig.serving.metrics;
    const gauge = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(metrics.render())?.[1]);
    const bob = await rig.mail.mailbox();
    const to = `${bob.publicKey.toBase58()}@${RIG_DOMAIN}`;
    const authority = rig.mail.authority;
    const sink = await rig.chain.funded(1);

    expect(gauge('sealpost_authority_balance_low')).toBe(0);
    expect((await sendOne(rig.mxPort, 'alice@remote.example', to, 'before')).code).toBe(250);
    // Wait for that delivery, so nothing is spending while the balance is drained.
    await waitForInbox(rig.chain.connection, rig.chain.programId, bob.publicKey, 1);

    const balance = await rig.chain.balance(authority.publicKey);
    await rig.chain.send(
      [
        SystemProgram.transfer({
          fromPubkey: authority.publicKey,
          toPubkey: sink.publicKey,
          lamports: balance - 4_000_000,
        }),
      ],
      [authority],
    );
    await until(() => gauge('sealpost_authority_balance_low') === 1);
    expect(gauge('sealpost_authority_balance_lamports')).toBeLessThan(50_000_000);
    // One message in the peak hour: the floor is the auto minimum plus one message's cost.
    expect(gauge('sealpost_publications_peak_hour')).toBe(1);
    expect(gauge('sealpost_authority_floor_lamports')).toBeGreaterThan(50_000_000);
    const deferred = await sendOne(rig.mxPort, 'alice@remote.example', to, 'during');
    expect(deferred).toEqual({ code: 451, text: '4.3.2 Not accepting new mail now, try again later' });
    expect(metrics.render()).toContain('sealpost_mx_deferred_total{reason="balance"} 1');
    const alert = lines.map((l) => JSON.parse(l)).find((l) => l.alert === 'authority_balance_low');
    expect(alert).toMatchObject({ level: 50, min_authority_lamports: 50_000_000, peak_hour_messages: 1 });
    expect(alert.lamports).toBeLessThan(50_000_000);
    expect(alert.msg).toMatch(/^ALERT: authority balance is below \[chain\] min_authority_lamports/);

    await rig.chain.send(
      [SystemProgram.transfer({ fromPubkey: sink.publicKey, toPubkey: authority.publicKey, lamports: 5e9 })],
      [sink],
    );
    await until(() => gauge('sealpost_authority_balance_low') === 0);
    expect(lines.some((l) => l.includes('"alert":"authority_balance_recovered"'))).toBe(true);
    expect((await sendOne(rig.mxPort, 'alice@remote.example', to, 'after')).code).toBe(250);
    expect(await subjects(rig, bob, 2)).toEqual(['after', 'before']);
  }, 120_000);
});
