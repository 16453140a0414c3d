import { Keypair, PublicKey, SystemProgram, type TransactionInstruction } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import {
  cancelDeactivationInstruction,
  cancelMailboxCloseInstruction,
  cancelReclaimInstruction,
  closeMailboxInstruction,
  DEACTIVATION_WINDOW_SECS,
  decodeInstruction,
  MAILBOX_CLOSE_WINDOW_SECS,
  RECLAIM_WINDOW_SECS,
  requestDeactivationInstruction,
  requestMailboxCloseInstruction,
  requestReclaimInstruction,
  settleDomainTimelockInstruction,
  timelockEndsAt,
} from './instructions.ts';
import {
  domainAddress,
  mailboxAddress,
  pendingCloseAddress,
  pendingDeactivationAddress,
  pendingReclaimAddress,
  postofficeAddress,
} from './pda.ts';
import { DEFAULT_PROGRAM_ID } from './program-id.ts';

const programId = new PublicKey(DEFAULT_PROGRAM_ID);
const SYSTEM = SystemProgram.programId;
const a = Keypair.generate().publicKey;
const b = Keypair.generate().publicKey;

function shape(ix: TransactionInstruction): [string, string][] {
  return ix.keys.map((k) => [k.pubkey.toBase58(), `${k.isSigner ? 's' : ''}${k.isWritable ? 'w' : ''}`]);
}
const s = (k: PublicKey) => k.toBase58();

describe('timelock instruction builders', () => {
  it('mailbox close: request, cancel, close', () => {
    const mb = mailboxAddress(programId, a)[0];
    const pc = pendingCloseAddress(programId, a)[0];
    const request = requestMailboxCloseInstruction({ programId, owner: a });
    expect(shape(request)).toEqual([
      [s(a), 'sw'],
      [s(mb), ''],
      [s(pc), 'w'],
      [s(SYSTEM), ''],
    ]);
    expect(Array.from(request.data)).toEqual([20]);
    expect(shape(cancelMailboxCloseInstruction({ programId, owner: a }))).toEqual([
      [s(a), 'sw'],
      [s(pc), 'w'],
    ]);
    const close = closeMailboxInstruction({ programId, owner: a });
    expect(shape(close)).toEqual([
      [s(a), 'sw'],
      [s(mb), 'w'],
      [s(pc), 'w'],
    ]);
    expect(decodeInstruction(close.data)).toEqual({ kind: 'CloseMailbox' });
  });

  it('domain deactivation and reclaim, by name or by account', () => {
    const md = domainAddress(programId, 'mail.example')[0];
    const pd = pendingDeactivationAddress(programId, md)[0];
    const pr = pendingReclaimAddress(programId, md)[0];
    // The name is normalized (lowercased) before it is hashed.
    expect(
      shape(requestDeactivationInstruction({ programId, authority: a, domain: 'Mail.Example' })),
    ).toEqual([
      [s(a), 'sw'],
      [s(md), ''],
      [s(pd), 'w'],
      [s(SYSTEM), ''],
    ]);
    expect(shape(cancelDeactivationInstruction({ programId, authority: a, mailDomain: md }))).toEqual([
      [s(a), 'sw'],
      [s(md), ''],
      [s(pd), 'w'],
    ]);
    const request = requestReclaimInstruction({
      programId,
      delegate: a,
      newAuthority: b,
      domain: 'mail.example',
    });
    expect(shape(request)).toEqual([
      [s(a), 'sw'],
      [s(b), 's'],
      [s(postofficeAddress(programId)[0]), ''],
      [s(md), ''],
      [s(pr), 'w'],
      [s(SYSTEM), ''],
    ]);
    expect(decodeInstruction(request.data)).toEqual({ kind: 'RequestReclaim' });
    expect(shape(cancelReclaimInstruction({ programId, signer: b, payer: a, mailDomain: md }))).toEqual([
      [s(b), 's'],
      [s(md), ''],
      [s(pr), 'w'],
      [s(a), 'w'],
    ]);
    const settle = settleDomainTimelockInstruction({
      programId,
      domain: 'mail.example',
      record: 'reclaim',
      rentTo: a,
    });
    expect(shape(settle)).toEqual([
      [s(md), 'w'],
      [s(pr), 'w'],
      [s(a), 'w'],
    ]);
    expect(Array.from(settle.data)).toEqual([27]);
    expect(
      shape(
        settleDomainTimelockInstruction({ programId, mailDomain: md, record: 'deactivation', rentTo: b }),
      )[1],
    ).toEqual([s(pd), 'w']);
  });

  it('window ends', () => {
    expect(MAILBOX_CLOSE_WINDOW_SECS).toBe(604_800n);
    expect(DEACTIVATION_WINDOW_SECS).toBe(2_592_000n);
    expect(RECLAIM_WINDOW_SECS).toBe(1_209_600n);
    expect(timelockEndsAt({ kind: 'PendingMailboxClose', requestedAt: 100n })).toBe(604_900n);
    expect(timelockEndsAt({ kind: 'PendingReclaim', requestedAt: 0n })).toBe(1_209_600n);
  });
});
