// The real mail program against the timelock rules (docs/protocol.md
// "Timelocks"): closing a mailbox, deactivating a domain and reclaiming a
// domain, each through its window on the runtime's clock, and every refusal
// leaving balances and accounts as they were.
import type { PublicKey } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import {
  decodePendingDeactivation,
  decodePendingMailboxClose,
  decodePendingReclaim,
  MAILBOX_SIZE,
  PENDING_DEACTIVATION_SIZE,
  PENDING_MAILBOX_CLOSE_SIZE,
  PENDING_RECLAIM_SIZE,
} from '../../chain/client/accounts/index.ts';
import { fromHash } from '../../chain/client/hash.ts';
import {
  cancelDeactivationInstruction,
  cancelMailboxCloseInstruction,
  cancelReclaimInstruction,
  closeMailboxInstruction,
  createDomainInstruction,
  createMailboxInstruction,
  DEACTIVATION_WINDOW_SECS,
  MAILBOX_CLOSE_WINDOW_SECS,
  RECLAIM_WINDOW_SECS,
  requestDeactivationInstruction,
  requestMailboxCloseInstruction,
  requestReclaimInstruction,
  sendMailInstruction,
  settleDomainTimelockInstruction,
} from '../../chain/client/instructions.ts';
import {
  mailboxAddress,
  pendingCloseAddress,
  pendingDeactivationAddress,
  pendingReclaimAddress,
} from '../../chain/client/pda.ts';
import { DOMAIN, expectOk, refused, rent, swap, World, without } from '../support/program-world.ts';

const CID = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy';

function directSend(w: World, sender: PublicKey, recipient: PublicKey) {
  return sendMailInstruction({
    programId: w.programId,
    sender,
    recipient,
    index: w.mailbox(recipient).mailCount,
    fromHash: fromHash(sender.toBase58()),
    cid: CID,
  });
}

function relayedSend(w: World, authority: PublicKey, recipient: PublicKey) {
  return sendMailInstruction({
    programId: w.programId,
    sender: authority,
    recipient,
    index: w.mailbox(recipient).mailCount,
    fromHash: fromHash('alice@ext.example'),
    cid: CID,
    domain: DOMAIN,
  });
}

describe('mailbox close', () => {
  it('request, refusals inside the window, then CloseMailbox returns both rents to the owner', () => {
    const w = new World();
    const owner = w.user();
    const programId = w.programId;
    const mb = mailboxAddress(programId, owner)[0];
    const pc = pendingCloseAddress(programId, owner)[0];
    const watch = [owner, mb, pc];

    refused(w, closeMailboxInstruction({ programId, owner }), 'NotFound', watch);
    refused(w, cancelMailboxCloseInstruction({ programId, owner }), 'NotFound', watch);

    const before = w.balance(owner);
    const r = w.run(requestMailboxCloseInstruction({ programId, owner }));
    expectOk(r);
    expect(r.logs).toContain('Program log: Instruction: RequestMailboxClose');
    const requestedAt = w.now;
    expect(w.balance(owner)).toBe(before - rent(PENDING_MAILBOX_CLOSE_SIZE));
    const record = decodePendingMailboxClose(w.data(pc) as Uint8Array);
    expect(record.requestedAt).toBe(requestedAt);
    expect(record.wallet.equals(owner)).toBe(true);
    expect(record.bump).toBe(pendingCloseAddress(programId, owner)[1]);

    refused(w, requestMailboxCloseInstruction({ programId, owner }), 'AlreadyExists', watch);
    refused(w, closeMailboxInstruction({ programId, owner }), 'TimelockNotElapsed', watch);
    w.advance(MAILBOX_CLOSE_WINDOW_SECS - 1n);
    refused(w, closeMailboxInstruction({ programId, owner }), 'TimelockNotElapsed', watch);

    // Mail keeps landing on chain until the close completes.
    const sender = w.wallet();
    expectOk(w.run(directSend(w, sender, owner)));
    expect(w.mailbox(owner).mailCount).toBe(1n);

    // Strangers can neither cancel nor complete it, even naming its address.
    const stranger = w.user();
    const strangerWatch = [...watch, stranger, mailboxAddress(programId, stranger)[0]];
    refused(
      w,
      swap(cancelMailboxCloseInstruction({ programId, owner: stranger }), 1, pc),
      'Unauthorized',
      strangerWatch,
    );
    refused(
      w,
      swap(closeMailboxInstruction({ programId, owner: stranger }), 2, pc),
      'Unauthorized',
      strangerWatch,
    );
    // The owner's record with a stranger's mailbox.
    refused(
      w,
      swap(closeMailboxInstruction({ programId, owner }), 1, mailboxAddress(programId, stranger)[0]),
      'InvalidPda',
      strangerWatch,
    );
    refused(w, without(closeMailboxInstruction({ programId, owner }), 0, 'isSigner'), 'MissingSigner', watch);
    refused(w, without(closeMailboxInstruction({ programId, owner }), 1, 'isWritable'), 'NotWritable', watch);

    w.advance(1n);
    const atClose = w.balance(owner);
    const mailboxLamports = w.balance(mb);
    expect(mailboxLamports).toBe(rent(MAILBOX_SIZE));
    const closed = w.run(closeMailboxInstruction({ programId, owner }));
    expectOk(closed);
    expect(closed.logs).toContain('Program log: Instruction: CloseMailbox');
    expect(w.exists(mb)).toBe(false);
    expect(w.exists(pc)).toBe(false);
    expect(w.balance(owner)).toBe(atClose + rent(MAILBOX_SIZE) + rent(PENDING_MAILBOX_CLOSE_SIZE));
    // The mail sent meanwhile stays (DeleteMail needs no Mailbox).
    expect(w.email(owner, 0n).sender.equals(sender)).toBe(true);

    refused(w, closeMailboxInstruction({ programId, owner }), 'NotFound', watch);
    refused(w, requestMailboxCloseInstruction({ programId, owner }), 'NotFound', watch);
    // The wallet may open a mailbox again.
    expectOk(w.run(createMailboxInstruction({ programId, owner, defaultPostage: 0n, domain: DOMAIN })));
  });

  it('the owner cancels; the mailbox stays and a new request starts a new window', () => {
    const w = new World();
    const owner = w.user();
    const programId = w.programId;
    const mb = mailboxAddress(programId, owner)[0];
    const pc = pendingCloseAddress(programId, owner)[0];
    const before = w.balance(owner);
    expectOk(w.run(requestMailboxCloseInstruction({ programId, owner })));
    w.advance(MAILBOX_CLOSE_WINDOW_SECS + 10n);
    // Cancelling is possible until the close is completed, even after the window.
    expectOk(w.run(cancelMailboxCloseInstruction({ programId, owner })));
    expect(w.exists(pc)).toBe(false);
    expect(w.balance(owner)).toBe(before);
    expect(w.mailbox(owner).owner.equals(owner)).toBe(true);
    refused(w, closeMailboxInstruction({ programId, owner }), 'NotFound', [owner, mb, pc]);

    expectOk(w.run(requestMailboxCloseInstruction({ programId, owner })));
    expect(decodePendingMailboxClose(w.data(pc) as Uint8Array).requestedAt).toBe(w.now);
    refused(w, closeMailboxInstruction({ programId, owner }), 'TimelockNotElapsed', [owner, mb, pc]);
  });

  it('refuses a request without a mailbox, for another wallet, or with bad accounts', () => {
    const w = new World();
    const programId = w.programId;
    const nobody = w.wallet();
    const owner = w.user();
    const pc = pendingCloseAddress(programId, owner)[0];
    const nobodyPc = pendingCloseAddress(programId, nobody)[0];
    refused(w, requestMailboxCloseInstruction({ programId, owner: nobody }), 'NotFound', [nobody, nobodyPc]);
    // A record under the owner's address, requested by someone else.
    refused(w, swap(requestMailboxCloseInstruction({ programId, owner: nobody }), 2, pc), 'NotFound', [
      nobody,
      pc,
    ]);
    const stranger = w.user();
    refused(w, swap(requestMailboxCloseInstruction({ programId, owner: stranger }), 2, pc), 'InvalidPda', [
      stranger,
      pc,
    ]);
    refused(
      w,
      without(requestMailboxCloseInstruction({ programId, owner }), 0, 'isSigner'),
      'MissingSigner',
      [owner, pc],
    );
    refused(
      w,
      without(requestMailboxCloseInstruction({ programId, owner }), 2, 'isWritable'),
      'NotWritable',
      [owner, pc],
    );
    const trailing = requestMailboxCloseInstruction({ programId, owner });
    trailing.data = Buffer.of(20, 0);
    refused(w, trailing, 'InvalidInstruction', [owner, pc]);
    const poor = w.user({ lamports: rent(0) + rent(MAILBOX_SIZE) });
    refused(w, requestMailboxCloseInstruction({ programId, owner: poor }), 'InsufficientFunds', [
      poor,
      pendingCloseAddress(programId, poor)[0],
    ]);
  });
});

describe('domain deactivation', () => {
  it('notice window, then anyone settles it: the domain is inactive and the rent goes to its authority', () => {
    const w = new World();
    const programId = w.programId;
    const authority = w.authority;
    const md = w.domainAddress();
    const pd = pendingDeactivationAddress(programId, md)[0];
    const watch = [authority, md, pd];
    const settle = () =>
      settleDomainTimelockInstruction({
        programId,
        domain: DOMAIN,
        record: 'deactivation',
        rentTo: authority,
      });
    const recipient = w.user();

    refused(w, settle(), 'NotFound', watch);
    refused(w, cancelDeactivationInstruction({ programId, authority, domain: DOMAIN }), 'NotFound', watch);
    const stranger = w.wallet();
    refused(
      w,
      requestDeactivationInstruction({ programId, authority: stranger, domain: DOMAIN }),
      'Unauthorized',
      [...watch, stranger],
    );

    const before = w.balance(authority);
    expectOk(w.run(requestDeactivationInstruction({ programId, authority, domain: DOMAIN })));
    expect(w.balance(authority)).toBe(before - rent(PENDING_DEACTIVATION_SIZE));
    const record = decodePendingDeactivation(w.data(pd) as Uint8Array);
    expect(record.requestedAt).toBe(w.now);
    expect(record.domain.equals(md)).toBe(true);

    refused(
      w,
      requestDeactivationInstruction({ programId, authority, domain: DOMAIN }),
      'AlreadyExists',
      watch,
    );
    refused(w, settle(), 'TimelockNotElapsed', watch);
    refused(
      w,
      cancelDeactivationInstruction({ programId, authority: stranger, domain: DOMAIN }),
      'Unauthorized',
      [...watch, stranger],
    );
    w.advance(DEACTIVATION_WINDOW_SECS - 1n);
    refused(w, settle(), 'TimelockNotElapsed', watch);
    // During the notice the domain still works: relayed mail, new mailboxes.
    expectOk(w.run(relayedSend(w, authority, recipient)));
    w.user();

    w.advance(1n);
    refused(
      w,
      settleDomainTimelockInstruction({
        programId,
        domain: DOMAIN,
        record: 'deactivation',
        rentTo: stranger,
      }),
      'InvalidAccount',
      [...watch, stranger],
    );
    refused(w, without(settle(), 0, 'isWritable'), 'NotWritable', watch);
    const atSettle = w.balance(authority);
    const r = w.run(settle());
    expectOk(r);
    expect(r.logs).toContain('Program log: Instruction: SettleDomainTimelock');
    expect(w.domain().isActive).toBe(false);
    expect(w.domain().authority.equals(authority)).toBe(true);
    expect(w.exists(pd)).toBe(false);
    expect(w.balance(authority)).toBe(atSettle + rent(PENDING_DEACTIVATION_SIZE));

    // An inactive domain: no relayed mail, no new mailboxes, no new requests.
    const recipientMb = mailboxAddress(programId, recipient)[0];
    refused(w, relayedSend(w, authority, recipient), 'DomainInactive', [authority, recipientMb]);
    const late = w.wallet();
    refused(
      w,
      createMailboxInstruction({ programId, owner: late, defaultPostage: 0n, domain: DOMAIN }),
      'DomainInactive',
      [late, mailboxAddress(programId, late)[0]],
    );
    refused(
      w,
      requestDeactivationInstruction({ programId, authority, domain: DOMAIN }),
      'DomainInactive',
      watch,
    );
    refused(w, settle(), 'NotFound', watch);
    // Mailboxes of the domain still take direct mail.
    expectOk(w.run(directSend(w, w.wallet(), recipient)));
  });

  it('the authority cancels; a record of another domain is refused', () => {
    const w = new World();
    const programId = w.programId;
    const authority = w.authority;
    const md = w.domainAddress();
    const pd = pendingDeactivationAddress(programId, md)[0];
    expectOk(w.run(requestDeactivationInstruction({ programId, authority, domain: DOMAIN })));

    // A second domain of the same authority, with its own pending record.
    const other = 'other.test';
    expectOk(w.run(createDomainInstruction({ programId, delegate: w.delegate, domain: other, authority })));
    const otherMd = w.domainAddress(other);
    const otherPd = pendingDeactivationAddress(programId, otherMd)[0];
    refused(
      w,
      swap(cancelDeactivationInstruction({ programId, authority, domain: other }), 2, pd),
      'InvalidAccount',
      [authority, pd, otherMd],
    );
    w.advance(DEACTIVATION_WINDOW_SECS);
    refused(
      w,
      swap(
        settleDomainTimelockInstruction({
          programId,
          domain: other,
          record: 'deactivation',
          rentTo: authority,
        }),
        1,
        pd,
      ),
      'InvalidAccount',
      [authority, pd, otherMd, otherPd],
    );
    // Not a pending record at all.
    refused(
      w,
      swap(
        settleDomainTimelockInstruction({
          programId,
          domain: DOMAIN,
          record: 'deactivation',
          rentTo: authority,
        }),
        1,
        w.postofficeAddress(),
      ),
      'InvalidAccount',
      [authority, md, w.postofficeAddress()],
    );

    const before = w.balance(authority);
    expectOk(w.run(cancelDeactivationInstruction({ programId, authority, domain: DOMAIN })));
    expect(w.exists(pd)).toBe(false);
    expect(w.balance(authority)).toBe(before + rent(PENDING_DEACTIVATION_SIZE));
    expect(w.domain().isActive).toBe(true);
    refused(
      w,
      settleDomainTimelockInstruction({
        programId,
        domain: DOMAIN,
        record: 'deactivation',
        rentTo: authority,
      }),
      'NotFound',
      [authority, md, pd],
    );
  });
});

describe('domain reclaim', () => {
  it('the delegate requests, the window passes, anyone settles: the new authority holds the domain', () => {
    const w = new World();
    const programId = w.programId;
    const { delegate, authority } = w;
    const next = w.wallet();
    const md = w.domainAddress();
    const pr = pendingReclaimAddress(programId, md)[0];
    const watch = [delegate, authority, next, md, pr];
    const request = (p: { delegate?: PublicKey; newAuthority?: PublicKey } = {}) =>
      requestReclaimInstruction({ programId, delegate, newAuthority: next, domain: DOMAIN, ...p });
    const settle = () =>
      settleDomainTimelockInstruction({ programId, domain: DOMAIN, record: 'reclaim', rentTo: delegate });

    // Only the domain service (the postoffice's delegate) may start a reclaim.
    refused(w, request({ delegate: next, newAuthority: w.wallet() }), 'Unauthorized', watch);
    refused(w, request({ newAuthority: authority }), 'InvalidArgument', watch);
    refused(w, request({ newAuthority: delegate }), 'InvalidArgument', watch);
    refused(w, without(request(), 1, 'isSigner'), 'MissingSigner', watch);
    refused(w, settle(), 'NotFound', watch);
    refused(
      w,
      cancelReclaimInstruction({ programId, signer: authority, payer: delegate, domain: DOMAIN }),
      'NotFound',
      watch,
    );

    const before = w.balance(delegate);
    expectOk(w.run(request()));
    expect(w.balance(delegate)).toBe(before - rent(PENDING_RECLAIM_SIZE));
    const record = decodePendingReclaim(w.data(pr) as Uint8Array);
    expect(record.requestedAt).toBe(w.now);
    expect(record.domain.equals(md) && record.authority.equals(next) && record.payer.equals(delegate)).toBe(
      true,
    );

    refused(w, request(), 'AlreadyExists', watch);
    refused(w, settle(), 'TimelockNotElapsed', watch);
    w.advance(RECLAIM_WINDOW_SECS - 1n);
    refused(w, settle(), 'TimelockNotElapsed', watch);
    // Neither the claimant nor a stranger can cancel; the rent must go to the payer.
    refused(
      w,
      cancelReclaimInstruction({ programId, signer: next, payer: next, domain: DOMAIN }),
      'Unauthorized',
      watch,
    );
    refused(
      w,
      cancelReclaimInstruction({ programId, signer: authority, payer: authority, domain: DOMAIN }),
      'InvalidAccount',
      watch,
    );
    refused(
      w,
      settleDomainTimelockInstruction({ programId, domain: DOMAIN, record: 'reclaim', rentTo: authority }),
      'InvalidAccount',
      watch,
    );

    w.advance(1n);
    const atSettle = w.balance(delegate);
    expectOk(w.run(settle()));
    expect(w.domain().authority.equals(next)).toBe(true);
    expect(w.domain().isActive).toBe(true);
    expect(w.exists(pr)).toBe(false);
    expect(w.balance(delegate)).toBe(atSettle + rent(PENDING_RECLAIM_SIZE));

    // The old authority no longer signs relayed mail; the new one does.
    const recipient = w.user();
    refused(w, relayedSend(w, authority, recipient), 'Unauthorized', [
      authority,
      mailboxAddress(programId, recipient)[0],
    ]);
    expectOk(w.run(relayedSend(w, next, recipient)));
    refused(w, settle(), 'NotFound', watch);
  });

  it('the current authority or the payer cancels; rent goes back to the payer', () => {
    const w = new World();
    const programId = w.programId;
    const { delegate, authority } = w;
    const next = w.wallet();
    const pr = pendingReclaimAddress(programId, w.domainAddress())[0];
    const request = () =>
      requestReclaimInstruction({ programId, delegate, newAuthority: next, domain: DOMAIN });

    const before = w.balance(delegate);
    expectOk(w.run(request()));
    w.advance(RECLAIM_WINDOW_SECS + 5n);
    // Until it is settled, the current authority may still cancel.
    expectOk(
      w.run(cancelReclaimInstruction({ programId, signer: authority, payer: delegate, domain: DOMAIN })),
    );
    expect(w.exists(pr)).toBe(false);
    expect(w.balance(delegate)).toBe(before);
    expect(w.domain().authority.equals(authority)).toBe(true);

    expectOk(w.run(request()));
    expectOk(
      w.run(cancelReclaimInstruction({ programId, signer: delegate, payer: delegate, domain: DOMAIN })),
    );
    expect(w.exists(pr)).toBe(false);
    expect(w.balance(delegate)).toBe(before);
  });

  it('a domain deactivated while a reclaim waits cannot be settled to the claimant', () => {
    const w = new World();
    const programId = w.programId;
    const { delegate, authority } = w;
    const next = w.wallet();
    const md = w.domainAddress();
    const pr = pendingReclaimAddress(programId, md)[0];
    expectOk(w.run(requestDeactivationInstruction({ programId, authority, domain: DOMAIN })));
    w.advance(DEACTIVATION_WINDOW_SECS - RECLAIM_WINDOW_SECS + 1n);
    expectOk(w.run(requestReclaimInstruction({ programId, delegate, newAuthority: next, domain: DOMAIN })));
    w.advance(RECLAIM_WINDOW_SECS);
    expectOk(
      w.run(
        settleDomainTimelockInstruction({
          programId,
          domain: DOMAIN,
          record: 'deactivation',
          rentTo: authority,
        }),
      ),
    );
    refused(
      w,
      settleDomainTimelockInstruction({ programId, domain: DOMAIN, record: 'reclaim', rentTo: delegate }),
      'DomainInactive',
      [delegate, md, pr],
    );
    refused(
      w,
      requestReclaimInstruction({ programId, delegate, newAuthority: w.wallet(), domain: 'other.test' }),
      'NotFound',
      [delegate],
    );
    expectOk(
      w.run(cancelReclaimInstruction({ programId, signer: delegate, payer: delegate, domain: DOMAIN })),
    );
  });

  it('after a reclaim settles, the new authority can cancel a deactivation the old one started', () => {
    const w = new World();
    const programId = w.programId;
    const { delegate, authority } = w;
    const next = w.wallet();
    expectOk(w.run(requestDeactivationInstruction({ programId, authority, domain: DOMAIN })));
    expectOk(w.run(requestReclaimInstruction({ programId, delegate, newAuthority: next, domain: DOMAIN })));
    w.advance(RECLAIM_WINDOW_SECS);
    expectOk(
      w.run(
        settleDomainTimelockInstruction({ programId, domain: DOMAIN, record: 'reclaim', rentTo: delegate }),
      ),
    );
    const pd = pendingDeactivationAddress(programId, w.domainAddress())[0];
    refused(w, cancelDeactivationInstruction({ programId, authority, domain: DOMAIN }), 'Unauthorized', [
      authority,
      pd,
    ]);
    const before = w.balance(next);
    expectOk(w.run(cancelDeactivationInstruction({ programId, authority: next, domain: DOMAIN })));
    expect(w.balance(next)).toBe(before + rent(PENDING_DEACTIVATION_SIZE));
    w.advance(DEACTIVATION_WINDOW_SECS);
    expect(w.domain().isActive).toBe(true);
  });
});
