// The real mail program's account and data checks for every instruction:
// a cleared signer or writable flag, a wrong address, a fake System program,
// an account owned by another program, a tampered stored bump, the same
// account twice, short, trailing and unknown data and wrong account counts —
// each a named custom error, never a runtime fault. Then a bounded, seeded
// fuzz of instruction data and account lists: every outcome is success or a
// clean custom program error.
import { Buffer } from 'node:buffer';
import { type AccountMeta, PublicKey, SystemProgram, TransactionInstruction } from '@solana/web3.js';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  aliasEscrowLayout,
  aliasLayout,
  aliasListingLayout,
  domainListingLayout,
  emailLayout,
  fromboxLayout,
  mailboxLayout,
  mailDomainLayout,
  pendingDeactivationLayout,
  pendingMailboxCloseLayout,
  pendingReclaimLayout,
  pinLeaseLayout,
  senderAttestationLayout,
} from '../../chain/client/accounts/index.ts';
import { MAIL_ERRORS, type MailErrorName } from '../../chain/client/errors.ts';
import { fromHash } from '../../chain/client/hash.ts';
import { decodeInstruction } from '../../chain/client/instruction-data.ts';
import {
  acceptAdminInstruction,
  acceptAliasInstruction,
  addStampsInstruction,
  attestSenderInstruction,
  bidAliasInstruction,
  buyAliasInstruction,
  buyDomainInstruction,
  buyStampsInstruction,
  cancelDeactivationInstruction,
  cancelDomainListingInstruction,
  cancelListingInstruction,
  cancelMailboxCloseInstruction,
  cancelReclaimInstruction,
  claimBountyInstruction,
  closeBeaconInstruction,
  closeMailboxInstruction,
  closePinLeaseInstruction,
  closeRecipientRuleInstruction,
  createAliasInstruction,
  createDomainInstruction,
  createFromboxInstruction,
  createMailboxInstruction,
  createPinLeaseInstruction,
  DEACTIVATION_WINDOW_SECS,
  deleteMailInstruction,
  encodeInstructionOf,
  initPostofficeInstruction,
  listAliasInstruction,
  listDomainInstruction,
  offerAliasInstruction,
  proposeAdminInstruction,
  publishBeaconInstruction,
  publishKeyInstruction,
  reclaimAliasInstruction,
  reclaimFromboxStampsInstruction,
  removeKeyInstruction,
  requestDeactivationInstruction,
  requestMailboxCloseInstruction,
  requestReclaimInstruction,
  revokeAttestationInstruction,
  sendMailInstruction,
  setMailboxDomainInstruction,
  setMailboxFlagsInstruction,
  setRecipientRuleInstruction,
  settleAuctionInstruction,
  settleDomainTimelockInstruction,
  topUpStampsInstruction,
  updateFromboxInstruction,
  updatePostofficeInstruction,
  withdrawFeesInstruction,
  withReputation,
} from '../../chain/client/instructions.ts';
import { mailboxKeyAddress } from '../../chain/client/pda.ts';
import type { RunResult } from '../../chain/program/host/runtime.ts';
import { INSTRUCTIONS } from '../../chain/protocol/schema.ts';
import { DOMAIN, expectErr, expectOk, prng, World } from '../support/program-world.ts';

const CID = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy';
const RELAYED_FROM = fromHash('alice@ext.example');
// Where each kind stores its bump (docs/protocol.md "Accounts").
const MAILBOX_BUMP = mailboxLayout.offsets.bump;
const FROMBOX_BUMP = fromboxLayout.offsets.bump;
const DOMAIN_BUMP = mailDomainLayout.offsets.bump;
const EMAIL_BUMP = emailLayout.offsets.bump;
const ALIAS_BUMP = aliasLayout.offsets.bump;
const LISTING_BUMP = aliasListingLayout.offsets.bump;
const ESCROW_BUMP = aliasEscrowLayout.offsets.bump;
const SOL = 1_000_000_000n;
// Domains the timelock cases use besides DOMAIN: one with a deactivation and a
// reclaim waiting, one whose deactivation window is over.
const PENDING_DOMAIN = 'pending.test';
const SETTLE_DOMAIN = 'settle.test';
// The domain marketplace's cases: one domain to list, one listed to buy, one whose listing expired.
const LIST_DOMAIN = 'm-list.test';
const BUY_DOMAIN = 'm-buy.test';
const EXPIRED_DOMAIN = 'm-expired.test';

interface Case {
  name: string;
  make: () => TransactionInstruction;
  /** Accounts that must sign / be writable. */
  signers: number[];
  writables: number[];
  system?: number;
  /** Error when the account at an index is replaced by an unrelated address. */
  replaced: Record<number, MailErrorName>;
  /** Error when the account at an index is owned by another program (same data). */
  foreign: Record<number, MailErrorName>;
  /** Error when the account at an index holds a different stored bump. */
  bump?: Record<number, { offset: number; error: MailErrorName }>;
}

/** A world with every kind of account in it, shared by the checks (failures change nothing). */
function fixture() {
  const w = new World({ seed: 5 });
  const programId = w.programId;
  const alice = w.user();
  const bob = w.user({ defaultPostage: 2_000n });
  const sender = w.wallet();
  const newcomer = w.wallet();
  const payer = w.wallet();
  // Timelocks: one mailbox close to cancel, one to complete, and the domain
  // records; the clock then passes every window (before anything else in the
  // fixture reads the time).
  const closer = w.user();
  const closing = w.user();
  for (const owner of [closer, closing])
    expectOk(w.run(requestMailboxCloseInstruction({ programId, owner })));
  const { delegate, authority } = w;
  for (const domain of [PENDING_DOMAIN, SETTLE_DOMAIN]) {
    expectOk(w.run(createDomainInstruction({ programId, delegate, domain, authority })));
    expectOk(w.run(requestDeactivationInstruction({ programId, authority, domain })));
  }
  expectOk(
    w.run(requestReclaimInstruction({ programId, delegate, newAuthority: newcomer, domain: PENDING_DOMAIN })),
  );
  w.advance(DEACTIVATION_WINDOW_SECS);
  expectOk(w.run(publishKeyInstruction({ programId, owner: alice, pubKey: w.address() })));
  expectOk(w.run(buyStampsInstruction({ programId, buyer: sender, recipient: bob, stamps: 3n })));
  expectOk(
    w.run(createFromboxInstruction({ programId, owner: bob, fromHash: RELAYED_FROM, requiredPostage: 500n })),
  );
  expectOk(
    w.run(addStampsInstruction({ programId, payer, recipient: bob, fromHash: RELAYED_FROM, stamps: 2n })),
  );
  const bounty = { bountyLamports: 10_000n, expiresAt: w.now + 3600n };
  expectOk(
    w.run(
      sendMailInstruction({
        programId,
        sender,
        recipient: alice,
        index: 0n,
        fromHash: fromHash(sender),
        cid: CID,
        ...bounty,
      }),
    ),
  );
  expectOk(
    w.run(
      createPinLeaseInstruction({
        programId,
        holder: alice,
        operator: payer,
        cid: CID,
        expiresAt: w.now + 86_400n,
        feeLamports: 10_000n,
      }),
    ),
  );
  expectOk(w.run(publishBeaconInstruction({ programId, owner: alice, tags: 2n, detailCid: CID })));
  expectOk(
    w.run(
      attestSenderInstruction({ programId, authority: w.authority, payer, domain: DOMAIN, wallet: alice }),
    ),
  );
  expectOk(
    w.run(
      setRecipientRuleInstruction({
        programId,
        owner: alice,
        minReputationLamports: 1n,
        postageLamports: 0n,
      }),
    ),
  );
  marketFixture(w, alice, bob, sender);
  return { w, programId, alice, bob, sender, newcomer, payer, closer, closing };
}

/*
 * Alice's aliases, one per marketplace case so that each valid form can run
 * once in the final pass: unlisted ones to list and offer, two fixed-price
 * listings (bought, cancelled), two auctions bid on by `sender` (one still
 * open, one ended), and two offers to `bob` (one open, one expired).
 */
function marketFixture(w: World, alice: PublicKey, bob: PublicKey, sender: PublicKey): void {
  const programId = w.programId;
  for (const name of ['m-list', 'm-offer', 'm-buy', 'm-cancel', 'm-bid', 'm-settle', 'm-accept', 'm-reclaim'])
    expectOk(w.run(createAliasInstruction({ programId, owner: alice, name })));
  for (const alias of ['m-buy', 'm-cancel'])
    expectOk(w.run(listAliasInstruction({ programId, holder: alice, alias, priceLamports: SOL })));
  for (const [alias, ends] of [
    ['m-bid', w.now + 30n * 86_400n],
    ['m-settle', w.now + 10n],
  ] as const) {
    const auction = { reserveLamports: SOL, endsAt: ends, antisnipeSecs: 0n };
    expectOk(w.run(listAliasInstruction({ programId, holder: alice, alias, auction })));
    expectOk(
      w.run(bidAliasInstruction({ programId, bidder: sender, alias, amountLamports: SOL, highBidder: null })),
    );
  }
  for (const [alias, expiresAt] of [
    ['m-accept', w.now + 30n * 86_400n],
    ['m-reclaim', w.now + 10n],
  ] as const)
    expectOk(
      w.run(
        offerAliasInstruction({
          programId,
          holder: alice,
          alias,
          recipient: bob,
          feeLamports: 1_000n,
          expiresAt,
        }),
      ),
    );
  const { delegate, authority } = w;
  for (const domain of [LIST_DOMAIN, BUY_DOMAIN, EXPIRED_DOMAIN])
    expectOk(w.run(createDomainInstruction({ programId, delegate, domain, authority })));
  for (const [domain, expiresAt] of [
    [BUY_DOMAIN, w.now + 7n * 86_400n],
    [EXPIRED_DOMAIN, w.now + 10n],
  ] as const)
    expectOk(
      w.run(listDomainInstruction({ programId, domain, holder: authority, priceLamports: SOL, expiresAt })),
    );
  w.advance(20n);
}

function cases(f: ReturnType<typeof fixture>): Case[] {
  const { w, programId, alice, bob, sender, newcomer, payer, closer, closing } = f;
  const { delegate, authority } = w;
  const direct = () =>
    sendMailInstruction({
      programId,
      sender,
      recipient: bob,
      index: w.mailbox(bob).mailCount,
      fromHash: fromHash(sender),
      cid: CID,
    });
  const relayed = () =>
    sendMailInstruction({
      programId,
      sender: w.authority,
      recipient: bob,
      index: w.mailbox(bob).mailCount,
      fromHash: RELAYED_FROM,
      cid: CID,
      domain: DOMAIN,
    });
  return [
    {
      name: 'InitPostoffice',
      make: () =>
        initPostofficeInstruction({
          programId,
          admin: payer,
          upgradeAuthority: w.upgradeAuthority,
          delegateAddress: payer,
          stampFeeLamports: 0n,
          settlementSurchargeLamports: 0n,
        }),
      signers: [0, 4],
      writables: [0, 1],
      system: 2,
      replaced: { 1: 'InvalidPda', 3: 'InvalidPda' },
      foreign: { 1: 'AlreadyExists', 3: 'InvalidAccount' },
    },
    {
      name: 'CreateMailbox',
      make: () => createMailboxInstruction({ programId, owner: newcomer, payer, domain: DOMAIN }),
      signers: [0, 1],
      writables: [0, 2],
      system: 3,
      replaced: { 2: 'InvalidPda', 4: 'InvalidAccount' },
      foreign: { 2: 'AlreadyExists', 4: 'InvalidAccount' },
      bump: { 4: { offset: DOMAIN_BUMP, error: 'InvalidPda' } },
    },
    {
      name: 'SetMailboxFlags',
      make: () => setMailboxFlagsInstruction({ programId, owner: alice, noIpfs: false }),
      signers: [0],
      writables: [1],
      replaced: { 1: 'NotFound' },
      foreign: { 1: 'InvalidAccount' },
      bump: { 1: { offset: MAILBOX_BUMP, error: 'InvalidPda' } },
    },
    {
      name: 'PublishKey',
      make: () => publishKeyInstruction({ programId, owner: alice, pubKey: w.address() }),
      signers: [0],
      writables: [0, 2],
      system: 3,
      replaced: { 1: 'InvalidPda', 2: 'InvalidPda' },
      foreign: { 1: 'InvalidAccount', 2: 'InvalidAccount' },
    },
    {
      name: 'RemoveKey',
      make: () => removeKeyInstruction({ programId, owner: alice }),
      signers: [0],
      writables: [0, 1],
      replaced: { 1: 'InvalidPda' },
      foreign: { 1: 'InvalidAccount' },
    },
    {
      name: 'CreateDomain',
      make: () =>
        createDomainInstruction({
          programId,
          delegate: w.delegate,
          domain: 'new.test',
          authority: w.authority,
        }),
      signers: [0],
      writables: [0, 2],
      system: 3,
      replaced: { 1: 'InvalidPda', 2: 'InvalidPda' },
      foreign: { 1: 'InvalidAccount', 2: 'AlreadyExists' },
    },
    {
      name: 'SendMail (direct)',
      make: direct,
      signers: [0],
      writables: [0, 1, 2, 3, 4],
      system: 6,
      replaced: { 1: 'NotFound', 2: 'InvalidPda', 3: 'InvalidPda', 4: 'InvalidAccount', 5: 'InvalidPda' },
      foreign: { 1: 'InvalidAccount', 2: 'AlreadyExists', 3: 'InvalidAccount', 5: 'InvalidAccount' },
      bump: {
        1: { offset: MAILBOX_BUMP, error: 'InvalidPda' },
        3: { offset: FROMBOX_BUMP, error: 'InvalidPda' },
      },
    },
    {
      name: 'SendMail (direct, reputation and rule)',
      make: () => withReputation(direct(), { programId, sender, recipient: bob, applyRule: true }),
      signers: [0],
      writables: [0, 1, 2, 3, 4, 7],
      system: 6,
      replaced: {
        1: 'NotFound',
        2: 'InvalidPda',
        3: 'InvalidPda',
        4: 'InvalidAccount',
        5: 'InvalidPda',
        7: 'InvalidPda',
        8: 'InvalidPda',
      },
      foreign: {
        1: 'InvalidAccount',
        2: 'AlreadyExists',
        3: 'InvalidAccount',
        5: 'InvalidAccount',
        7: 'InvalidPda',
        8: 'InvalidAccount',
      },
      bump: { 3: { offset: FROMBOX_BUMP, error: 'InvalidPda' } },
    },
    {
      name: 'SendMail (relayed)',
      make: relayed,
      signers: [0],
      writables: [0, 1, 2, 3, 4],
      system: 6,
      replaced: {
        1: 'NotFound',
        2: 'InvalidPda',
        3: 'InvalidPda',
        4: 'InvalidAccount',
        5: 'InvalidPda',
        7: 'NotFound',
      },
      foreign: { 1: 'InvalidAccount', 3: 'InvalidAccount', 7: 'InvalidAccount' },
      bump: {
        7: { offset: DOMAIN_BUMP, error: 'InvalidPda' },
        3: { offset: FROMBOX_BUMP, error: 'InvalidPda' },
      },
    },
    {
      name: 'DeleteMail',
      make: () =>
        deleteMailInstruction({ programId, signer: alice, recipient: alice, index: 0n, rentPayer: sender }),
      signers: [0],
      writables: [1, 2],
      replaced: { 1: 'NotFound', 2: 'InvalidAccount' },
      foreign: { 1: 'InvalidAccount' },
      bump: { 1: { offset: EMAIL_BUMP, error: 'InvalidPda' } },
    },
    {
      name: 'CreateAlias',
      make: () => createAliasInstruction({ programId, owner: alice, name: 'alice' }),
      signers: [0],
      writables: [0, 2],
      system: 3,
      replaced: { 1: 'InvalidPda', 2: 'InvalidPda' },
      foreign: { 1: 'InvalidAccount', 2: 'AlreadyExists' },
    },
    {
      name: 'CreateFrombox',
      make: () =>
        createFromboxInstruction({ programId, owner: alice, fromHash: RELAYED_FROM, requiredPostage: 1n }),
      signers: [0],
      writables: [0, 2],
      system: 3,
      replaced: { 1: 'InvalidPda', 2: 'InvalidPda' },
      foreign: { 1: 'InvalidAccount', 2: 'AlreadyExists' },
    },
    {
      name: 'UpdateFrombox',
      make: () =>
        updateFromboxInstruction({ programId, owner: bob, fromHash: RELAYED_FROM, requiredPostage: 600n }),
      signers: [0],
      writables: [2],
      replaced: { 1: 'InvalidPda', 2: 'InvalidPda' },
      foreign: { 1: 'InvalidAccount', 2: 'InvalidAccount' },
    },
    {
      name: 'AddStamps',
      make: () =>
        addStampsInstruction({ programId, payer, recipient: bob, fromHash: RELAYED_FROM, stamps: 1n }),
      signers: [0],
      writables: [0, 2, 3],
      system: 4,
      replaced: { 1: 'NotFound', 2: 'InvalidPda', 3: 'InvalidPda' },
      foreign: { 1: 'InvalidAccount', 2: 'InvalidAccount', 3: 'InvalidAccount' },
      bump: { 1: { offset: MAILBOX_BUMP, error: 'InvalidPda' } },
    },
    {
      name: 'BuyStamps',
      make: () => buyStampsInstruction({ programId, buyer: payer, recipient: bob, stamps: 1n }),
      signers: [0],
      writables: [0, 2, 3],
      system: 4,
      replaced: { 1: 'NotFound', 2: 'InvalidPda', 3: 'InvalidPda' },
      foreign: { 1: 'InvalidAccount', 2: 'InvalidAccount', 3: 'InvalidAccount' },
      bump: { 1: { offset: MAILBOX_BUMP, error: 'InvalidPda' } },
    },
    {
      name: 'TopUpStamps',
      make: () => topUpStampsInstruction({ programId, buyer: sender, recipient: bob, stamps: 1n }),
      signers: [0],
      writables: [0, 2, 3],
      system: 4,
      replaced: { 1: 'NotFound', 2: 'InvalidPda', 3: 'InvalidPda' },
      foreign: { 1: 'InvalidAccount', 2: 'InvalidAccount', 3: 'InvalidAccount' },
      bump: { 1: { offset: MAILBOX_BUMP, error: 'InvalidPda' } },
    },
    {
      name: 'ReclaimFromboxStamps',
      make: () => reclaimFromboxStampsInstruction({ programId, sender, recipient: bob }),
      signers: [0],
      writables: [0, 2],
      replaced: { 1: 'NotFound', 2: 'InvalidPda' },
      foreign: { 1: 'InvalidAccount', 2: 'InvalidAccount' },
      bump: { 1: { offset: MAILBOX_BUMP, error: 'InvalidPda' } },
    },
    {
      name: 'ClaimBounty',
      make: () => claimBountyInstruction({ programId, recipient: alice, index: 0n }),
      signers: [0],
      writables: [0, 1],
      replaced: { 1: 'NotFound' },
      foreign: { 1: 'InvalidAccount' },
      bump: { 1: { offset: EMAIL_BUMP, error: 'InvalidPda' } },
    },
    {
      name: 'CreatePinLease',
      make: () =>
        createPinLeaseInstruction({
          programId,
          holder: sender,
          operator: payer,
          cid: CID,
          expiresAt: w.now + 86_400n,
          feeLamports: 10_000n,
        }),
      signers: [0],
      writables: [0, 1, 2],
      system: 3,
      replaced: { 1: 'InsufficientFunds', 2: 'InvalidPda' },
      foreign: { 1: 'InvalidAccount', 2: 'AlreadyExists' },
    },
    {
      name: 'ClosePinLease',
      make: () => closePinLeaseInstruction({ programId, holder: alice, cid: CID }),
      signers: [0],
      writables: [0, 1],
      replaced: { 1: 'NotFound' },
      foreign: { 1: 'InvalidAccount' },
      bump: { 1: { offset: pinLeaseLayout.offsets.bump, error: 'InvalidPda' } },
    },
    {
      name: 'PublishBeacon',
      make: () => publishBeaconInstruction({ programId, owner: alice, tags: 6n, detailCid: CID }),
      signers: [0],
      writables: [0, 1],
      system: 2,
      replaced: { 1: 'InvalidPda' },
      foreign: { 1: 'InvalidAccount' },
    },
    {
      name: 'CloseBeacon',
      make: () => closeBeaconInstruction({ programId, owner: alice }),
      signers: [0],
      writables: [0, 1],
      replaced: { 1: 'InvalidPda' },
      foreign: { 1: 'InvalidAccount' },
    },
    // timelocks
    {
      name: 'RequestMailboxClose',
      make: () => requestMailboxCloseInstruction({ programId, owner: bob }),
      signers: [0],
      writables: [0, 2],
      system: 3,
      replaced: { 1: 'InvalidPda', 2: 'InvalidPda' },
      foreign: { 1: 'InvalidAccount', 2: 'AlreadyExists' },
    },
    {
      name: 'CancelMailboxClose',
      make: () => cancelMailboxCloseInstruction({ programId, owner: closer }),
      signers: [0],
      writables: [0, 1],
      replaced: { 1: 'NotFound' },
      foreign: { 1: 'InvalidAccount' },
      bump: { 1: { offset: pendingMailboxCloseLayout.offsets.bump, error: 'InvalidPda' } },
    },
    {
      name: 'CloseMailbox',
      make: () => closeMailboxInstruction({ programId, owner: closing }),
      signers: [0],
      writables: [0, 1, 2],
      replaced: { 1: 'InvalidPda', 2: 'NotFound' },
      foreign: { 1: 'InvalidAccount', 2: 'InvalidAccount' },
      bump: { 2: { offset: pendingMailboxCloseLayout.offsets.bump, error: 'InvalidPda' } },
    },
    {
      name: 'RequestDeactivation',
      make: () => requestDeactivationInstruction({ programId, authority, domain: DOMAIN }),
      signers: [0],
      writables: [0, 2],
      system: 3,
      replaced: { 1: 'NotFound', 2: 'InvalidPda' },
      foreign: { 1: 'InvalidAccount', 2: 'AlreadyExists' },
      bump: { 1: { offset: DOMAIN_BUMP, error: 'InvalidPda' } },
    },
    {
      name: 'CancelDeactivation',
      make: () => cancelDeactivationInstruction({ programId, authority, domain: PENDING_DOMAIN }),
      signers: [0],
      writables: [0, 2],
      replaced: { 1: 'NotFound', 2: 'NotFound' },
      foreign: { 1: 'InvalidAccount', 2: 'InvalidAccount' },
      bump: {
        1: { offset: DOMAIN_BUMP, error: 'InvalidPda' },
        2: { offset: pendingDeactivationLayout.offsets.bump, error: 'InvalidPda' },
      },
    },
    {
      name: 'RequestReclaim',
      make: () => requestReclaimInstruction({ programId, delegate, newAuthority: newcomer, domain: DOMAIN }),
      signers: [0, 1],
      writables: [0, 4],
      system: 5,
      replaced: { 2: 'InvalidPda', 3: 'NotFound', 4: 'InvalidPda' },
      foreign: { 2: 'InvalidAccount', 3: 'InvalidAccount', 4: 'AlreadyExists' },
      bump: { 3: { offset: DOMAIN_BUMP, error: 'InvalidPda' } },
    },
    {
      name: 'CancelReclaim',
      make: () =>
        cancelReclaimInstruction({ programId, signer: authority, payer: delegate, domain: PENDING_DOMAIN }),
      signers: [0],
      writables: [2, 3],
      replaced: { 1: 'NotFound', 2: 'NotFound', 3: 'InvalidAccount' },
      foreign: { 1: 'InvalidAccount', 2: 'InvalidAccount' },
      bump: {
        1: { offset: DOMAIN_BUMP, error: 'InvalidPda' },
        2: { offset: pendingReclaimLayout.offsets.bump, error: 'InvalidPda' },
      },
    },
    {
      name: 'SettleDomainTimelock',
      make: () =>
        settleDomainTimelockInstruction({
          programId,
          domain: SETTLE_DOMAIN,
          record: 'deactivation',
          rentTo: authority,
        }),
      signers: [],
      writables: [0, 1, 2],
      replaced: { 0: 'NotFound', 1: 'NotFound', 2: 'InvalidAccount' },
      foreign: { 0: 'InvalidAccount', 1: 'InvalidAccount' },
      bump: {
        0: { offset: DOMAIN_BUMP, error: 'InvalidPda' },
        1: { offset: pendingDeactivationLayout.offsets.bump, error: 'InvalidPda' },
      },
    },
    {
      name: 'AttestSender',
      make: () =>
        attestSenderInstruction({
          programId,
          authority: w.authority,
          payer,
          domain: DOMAIN,
          wallet: newcomer,
        }),
      signers: [0, 1],
      writables: [1, 3],
      system: 4,
      replaced: { 2: 'NotFound', 3: 'InvalidPda' },
      foreign: { 2: 'InvalidAccount', 3: 'AlreadyExists' },
      bump: { 2: { offset: DOMAIN_BUMP, error: 'InvalidPda' } },
    },
    {
      name: 'RevokeAttestation',
      make: () =>
        revokeAttestationInstruction({
          programId,
          signer: w.authority,
          domain: DOMAIN,
          wallet: alice,
          rentPayer: payer,
        }),
      signers: [0],
      writables: [1, 2],
      replaced: { 1: 'NotFound', 2: 'InvalidAccount', 3: 'InvalidAccount' },
      foreign: { 1: 'InvalidAccount', 3: 'InvalidAccount' },
      bump: {
        1: { offset: senderAttestationLayout.offsets.bump, error: 'InvalidPda' },
        3: { offset: DOMAIN_BUMP, error: 'InvalidPda' },
      },
    },
    {
      name: 'SetRecipientRule',
      make: () =>
        setRecipientRuleInstruction({
          programId,
          owner: bob,
          minReputationLamports: 9n,
          postageLamports: 1n,
        }),
      signers: [0],
      writables: [0, 2],
      system: 3,
      replaced: { 1: 'InvalidPda', 2: 'InvalidPda' },
      foreign: { 1: 'InvalidAccount', 2: 'InvalidAccount' },
    },
    {
      name: 'CloseRecipientRule',
      make: () => closeRecipientRuleInstruction({ programId, owner: alice }),
      signers: [0],
      writables: [0, 1],
      replaced: { 1: 'InvalidPda' },
      foreign: { 1: 'InvalidAccount' },
    },
    {
      name: 'SetMailboxDomain',
      make: () => setMailboxDomainInstruction({ programId, owner: alice, domain: DOMAIN }),
      signers: [0],
      writables: [1],
      replaced: { 1: 'NotFound', 2: 'InvalidAccount' },
      foreign: { 1: 'InvalidAccount', 2: 'InvalidAccount' },
      bump: {
        1: { offset: MAILBOX_BUMP, error: 'InvalidPda' },
        2: { offset: DOMAIN_BUMP, error: 'InvalidPda' },
      },
    },
    ...marketCases(f),
    ...adminCases(f),
  ];
}

/*
 * The postoffice admin's instructions, in the order the final pass runs them:
 * fees unchanged (the other cases price with them), one lamport withdrawn,
 * then the role handed to `payer` and taken by it.
 */
function adminCases(f: ReturnType<typeof fixture>): Case[] {
  const { w, programId, payer } = f;
  const admin = w.admin;
  return [
    {
      name: 'UpdatePostoffice',
      make: () =>
        updatePostofficeInstruction({ programId, admin, stampFeeLamports: w.postoffice().stampFeeLamports }),
      signers: [0],
      writables: [1],
      replaced: { 1: 'InvalidPda' },
      foreign: { 1: 'InvalidAccount' },
    },
    {
      name: 'WithdrawFees',
      make: () => withdrawFeesInstruction({ programId, admin, to: payer, amountLamports: 1n }),
      signers: [0],
      writables: [1, 2],
      replaced: { 1: 'InvalidPda', 2: 'InsufficientFunds' },
      foreign: { 1: 'InvalidAccount' },
    },
    {
      name: 'ProposeAdmin',
      make: () => proposeAdminInstruction({ programId, admin, newAdmin: payer }),
      signers: [0],
      writables: [1],
      replaced: { 1: 'InvalidPda' },
      foreign: { 1: 'InvalidAccount' },
    },
    {
      name: 'AcceptAdmin',
      make: () => acceptAdminInstruction({ programId, newAdmin: payer }),
      signers: [0],
      writables: [1],
      replaced: { 1: 'InvalidPda' },
      foreign: { 1: 'InvalidAccount' },
    },
  ];
}

function marketCases(f: ReturnType<typeof fixture>): Case[] {
  const { programId, alice, bob, sender, payer } = f;
  const aliasBump = { offset: ALIAS_BUMP, error: 'InvalidPda' } as const;
  const listingBump = { offset: LISTING_BUMP, error: 'InvalidPda' } as const;
  const escrowBump = { offset: ESCROW_BUMP, error: 'InvalidPda' } as const;
  return [
    {
      name: 'ListAlias',
      make: () => listAliasInstruction({ programId, holder: alice, alias: 'm-list', priceLamports: SOL }),
      signers: [0],
      writables: [0, 1, 2],
      system: 3,
      replaced: { 1: 'NotFound', 2: 'InvalidPda' },
      foreign: { 1: 'InvalidAccount', 2: 'AlreadyExists' },
      bump: { 1: aliasBump },
    },
    {
      name: 'BidAlias (refunding the high bidder)',
      make: () =>
        bidAliasInstruction({
          programId,
          bidder: payer,
          alias: 'm-bid',
          amountLamports: 2n * SOL,
          highBidder: sender,
        }),
      signers: [0],
      writables: [0, 1, 2, 4, 5],
      system: 3,
      replaced: { 1: 'NotFound', 2: 'InvalidPda', 4: 'InvalidPda', 5: 'InvalidAccount' },
      foreign: { 1: 'InvalidAccount', 2: 'InvalidAccount', 4: 'InvalidAccount' },
      bump: { 1: listingBump },
    },
    {
      name: 'BuyAlias',
      make: () => buyAliasInstruction({ programId, buyer: bob, alias: 'm-buy', holder: alice }),
      signers: [0],
      writables: [0, 1, 2, 3],
      system: 4,
      replaced: { 1: 'NotFound', 2: 'InvalidAccount', 3: 'InvalidAccount' },
      foreign: { 1: 'InvalidAccount', 2: 'InvalidAccount' },
      bump: { 1: listingBump, 2: aliasBump },
    },
    {
      name: 'SettleAuction',
      make: () =>
        settleAuctionInstruction({ programId, alias: 'm-settle', holder: alice, highBidder: sender }),
      signers: [],
      writables: [0, 1, 2, 3, 4],
      replaced: {
        0: 'NotFound',
        1: 'InvalidAccount',
        2: 'InvalidAccount',
        3: 'InvalidPda',
        4: 'InvalidAccount',
      },
      foreign: { 0: 'InvalidAccount', 1: 'InvalidAccount', 3: 'InvalidAccount' },
      bump: { 0: listingBump, 1: aliasBump },
    },
    {
      name: 'CancelListing',
      make: () => cancelListingInstruction({ programId, holder: alice, alias: 'm-cancel' }),
      signers: [0],
      writables: [0, 1, 2],
      replaced: { 1: 'NotFound', 2: 'InvalidAccount' },
      foreign: { 1: 'InvalidAccount', 2: 'InvalidAccount' },
      bump: { 1: listingBump, 2: aliasBump },
    },
    {
      name: 'OfferAlias',
      make: () =>
        offerAliasInstruction({
          programId,
          holder: alice,
          alias: 'm-offer',
          recipient: bob,
          feeLamports: 0n,
          expiresAt: f.w.now + 86_400n,
        }),
      signers: [0],
      writables: [0, 1, 2],
      system: 3,
      replaced: { 1: 'NotFound', 2: 'InvalidPda' },
      foreign: { 1: 'InvalidAccount', 2: 'AlreadyExists' },
      bump: { 1: aliasBump },
    },
    {
      name: 'AcceptAlias',
      make: () => acceptAliasInstruction({ programId, recipient: bob, alias: 'm-accept', holder: alice }),
      signers: [0],
      writables: [0, 1, 2, 3],
      system: 4,
      replaced: { 1: 'NotFound', 2: 'InvalidAccount', 3: 'InvalidAccount' },
      foreign: { 1: 'InvalidAccount', 2: 'InvalidAccount' },
      bump: { 1: escrowBump, 2: aliasBump },
    },
    ...domainMarketCases(f),
    {
      name: 'ReclaimAlias (after expiry, by anyone)',
      make: () => reclaimAliasInstruction({ programId, signer: payer, alias: 'm-reclaim', holder: alice }),
      signers: [0],
      writables: [1, 2, 3],
      replaced: { 1: 'NotFound', 2: 'InvalidAccount', 3: 'InvalidAccount' },
      foreign: { 1: 'InvalidAccount', 2: 'InvalidAccount' },
      bump: { 1: escrowBump, 2: aliasBump },
    },
  ];
}

function domainMarketCases(f: ReturnType<typeof fixture>): Case[] {
  const { w, programId, bob, payer } = f;
  const authority = w.authority;
  const domainBump = { offset: DOMAIN_BUMP, error: 'InvalidPda' } as const;
  const listingBump = { offset: domainListingLayout.offsets.bump, error: 'InvalidPda' } as const;
  return [
    {
      name: 'ListDomain',
      make: () =>
        listDomainInstruction({
          programId,
          domain: LIST_DOMAIN,
          holder: authority,
          priceLamports: SOL,
          expiresAt: w.now + 86_400n,
        }),
      signers: [0],
      writables: [0, 1, 2],
      system: 5,
      replaced: { 1: 'NotFound', 2: 'InvalidPda', 3: 'InvalidPda', 4: 'InvalidPda' },
      foreign: { 1: 'InvalidAccount', 2: 'AlreadyExists', 3: 'DomainPending', 4: 'DomainPending' },
      bump: { 1: domainBump },
    },
    {
      name: 'BuyDomain',
      make: () => buyDomainInstruction({ programId, domain: BUY_DOMAIN, buyer: bob, holder: authority }),
      signers: [0],
      writables: [0, 1, 2, 3],
      system: 5,
      replaced: { 1: 'InvalidAccount', 2: 'NotFound', 3: 'InvalidAccount', 4: 'InvalidPda' },
      foreign: { 1: 'InvalidAccount', 2: 'InvalidAccount', 4: 'DomainPending' },
      bump: { 1: domainBump, 2: listingBump },
    },
    {
      name: 'CancelDomainListing (after expiry, by anyone)',
      make: () =>
        cancelDomainListingInstruction({
          programId,
          domain: EXPIRED_DOMAIN,
          signer: payer,
          holder: authority,
        }),
      signers: [0],
      writables: [1, 2, 3],
      replaced: { 1: 'InvalidAccount', 2: 'NotFound', 3: 'InvalidAccount' },
      foreign: { 1: 'InvalidAccount', 2: 'InvalidAccount' },
      bump: { 1: domainBump, 2: listingBump },
    },
  ];
}

/** A failure the program chose (custom error), not one the runtime imposed on it. */
function expectClean(r: RunResult, what: string): void {
  if (r.ok) return;
  expect({ what, error: r.err?.message, custom: r.err?.customCode !== null }).toMatchObject({ custom: true });
}

function withData(ix: TransactionInstruction, data: Uint8Array): TransactionInstruction {
  return new TransactionInstruction({ programId: ix.programId, keys: ix.keys, data: Buffer.from(data) });
}

function withKeys(ix: TransactionInstruction, keys: AccountMeta[]): TransactionInstruction {
  return new TransactionInstruction({ programId: ix.programId, keys, data: ix.data });
}

describe('account checks of every instruction', () => {
  let f: ReturnType<typeof fixture>;
  let all: Case[];
  beforeAll(() => {
    f = fixture();
    all = cases(f);
  });

  it('covers all 48 instructions', () => {
    const tags = new Set(all.map((c) => c.make().data[0]));
    const market = [34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44];
    const admin = [50, 51, 52, 53];
    expect([...tags].sort((a, b) => (a as number) - (b as number))).toEqual([
      ...Array(33).keys(),
      ...market,
      ...admin,
    ]);
  });

  it('refuses a missing signature and a read-only account', () => {
    const { w } = f;
    for (const c of all) {
      for (const i of c.signers) {
        const ix = c.make();
        (ix.keys[i] as AccountMeta).isSigner = false;
        const r = w.run(ix);
        expect({ case: c.name, i, code: r.err?.customCode }).toEqual({
          case: c.name,
          i,
          code: MAIL_ERRORS.MissingSigner,
        });
      }
      for (const i of c.writables) {
        const ix = c.make();
        (ix.keys[i] as AccountMeta).isWritable = false;
        const r = w.run(ix);
        expect({ case: c.name, i, code: r.err?.customCode }).toEqual({
          case: c.name,
          i,
          code: MAIL_ERRORS.NotWritable,
        });
      }
    }
  });

  it('refuses each signer and writable account the schema lists, in a transaction with another instruction, and nothing moves', () => {
    // The binder (chain/program/src/generated/accounts.h) checks every flag the schema gives, not only
    // the ones a handler used to check by hand: every fixed account of every instruction is attacked
    // here, behind a System transfer in the same transaction that must be undone with it.
    const { w } = f;
    const from = w.wallet();
    const to = w.address();
    let attacked = 0;
    for (const c of all) {
      const kind = decodeInstruction(c.make().data).kind;
      const fixed = INSTRUCTIONS[kind].accounts.filter((a) => !('when' in a));
      fixed.forEach((spec, i) => {
        if (spec.name === 'systemProgram' || (!spec.signer && !spec.writable)) return;
        const ix = c.make();
        const meta = ix.keys[i] as AccountMeta;
        // The same key elsewhere in the list keeps the flag in the message: nothing to attack there.
        if (ix.keys.some((k, j) => j !== i && k.pubkey.equals(meta.pubkey))) return;
        if (spec.writable) meta.isWritable = false;
        else meta.isSigner = false;
        const keys = [...new Set(ix.keys.map((k) => k.pubkey.toBase58()))].map((k) => new PublicKey(k));
        const before = keys.map((k) => [w.balance(k), w.data(k)] as const);
        const toBefore = w.balance(to);
        const r = w.run(SystemProgram.transfer({ fromPubkey: from, toPubkey: to, lamports: 1_000_000 }), ix);
        const want = spec.writable ? MAIL_ERRORS.NotWritable : MAIL_ERRORS.MissingSigner;
        expect({ case: c.name, account: spec.name, code: r.err?.customCode }).toEqual({
          case: c.name,
          account: spec.name,
          code: want,
        });
        expect(
          keys.map((k) => [w.balance(k), w.data(k)] as const),
          `${c.name} ${spec.name}`,
        ).toEqual(before);
        expect(w.balance(to)).toBe(toBefore);
        attacked++;
      });
    }
    expect(attacked).toBe(139);
  });

  it('refuses a fake System program and unrelated addresses', () => {
    const { w } = f;
    for (const c of all) {
      if (c.system !== undefined) {
        const ix = c.make();
        (ix.keys[c.system] as AccountMeta).pubkey = w.address();
        expect({ case: c.name, code: w.run(ix).err?.customCode }).toEqual({
          case: c.name,
          code: MAIL_ERRORS.InvalidAccount,
        });
      }
      for (const [i, name] of Object.entries(c.replaced)) {
        const ix = c.make();
        (ix.keys[Number(i)] as AccountMeta).pubkey = w.address();
        const r = w.run(ix);
        expect({ case: c.name, i, code: r.err?.customCode }).toEqual({
          case: c.name,
          i,
          code: MAIL_ERRORS[name],
        });
      }
    }
  });

  it('refuses accounts owned by another program (and treats them as existing where one must not)', () => {
    const { w } = f;
    const stranger = w.address();
    for (const c of all) {
      for (const [i, name] of Object.entries(c.foreign)) {
        const ix = c.make();
        const key = (ix.keys[Number(i)] as AccountMeta).pubkey;
        const before = w.rt.account(key);
        w.put(key, {
          lamports: before && before.lamports > 0n ? before.lamports : 10_000_000n,
          owner: stranger,
          data: before?.data.length ? before.data : new Uint8Array(8),
        });
        const r = w.run(ix);
        if (before) w.rt.setAccount(key, before);
        else w.put(key, { lamports: 0n, owner: PublicKey.default, data: new Uint8Array(0) });
        expect({ case: c.name, i, code: r.err?.customCode }).toEqual({
          case: c.name,
          i,
          code: MAIL_ERRORS[name],
        });
      }
    }
  });

  it('refuses a stored bump that does not give the account address', () => {
    const { w } = f;
    for (const c of all) {
      for (const [i, { offset, error }] of Object.entries(c.bump ?? {})) {
        const ix = c.make();
        const key = (ix.keys[Number(i)] as AccountMeta).pubkey;
        const before = w.rt.account(key);
        if (!before) throw new Error(`${c.name}: no account ${i}`);
        const data = before.data.slice();
        data[offset] = ((data[offset] as number) - 1) & 0xff;
        w.patch(key, data);
        const r = w.run(ix);
        w.rt.setAccount(key, before);
        expect({ case: c.name, i, code: r.err?.customCode }).toEqual({
          case: c.name,
          i,
          code: MAIL_ERRORS[error],
        });
      }
    }
  });

  it('refuses the same account passed twice in place of another', () => {
    const { w } = f;
    let runs = 0;
    for (const c of all) {
      const n = c.make().keys.length;
      for (let i = 0; i < n; i++)
        for (let j = 0; j < n; j++) {
          // The payer may be the owner (or the attesting authority) itself: not a mix-up.
          if (i === j || (c.name === 'CreateMailbox' && i === 1 && j === 0)) continue;
          if (c.name === 'AttestSender' && i === 0 && j === 1) continue;
          // The upgrade authority may be the admin itself, and the admin may withdraw to itself.
          if (c.name === 'InitPostoffice' && i === 4 && j === 0) continue;
          if (c.name === 'WithdrawFees' && i === 0 && j === 2) continue;
          const ix = c.make();
          const src = ix.keys[i] as AccountMeta;
          const dst = ix.keys[j] as AccountMeta;
          ix.keys[j] = {
            pubkey: src.pubkey,
            isSigner: src.isSigner,
            isWritable: src.isWritable || dst.isWritable,
          };
          const r = w.run(ix);
          runs++;
          expect({ case: c.name, i, j, ok: r.ok }).toEqual({ case: c.name, i, j, ok: false });
          expectClean(r, `${c.name} account ${j} := account ${i}`);
        }
    }
    // 277 pairs for instructions 0-19 (InitPostoffice's 5 accounts: 19 of them, one more than the 3 it
    // had would give: +14 - 1), 86 for the timelocks' 20-27, 117 for the attestation block's 28-31,
    // 6 for SetMailboxDomain's 3; the marketplace's 4+6+5+5+3+4+5+4 accounts add 132, the domain
    // marketplace's 6+6+4 another 72; the admin's 2+3+2+2 another 12 (less the admin as `to`).
    expect(runs).toBe(277 + 13 + 86 + 117 + 6 + 132 + 72 + 11);
    // Seconds of CPU in one go: on a loaded 2-core machine it has run past vitest's 30 s default.
  }, 120_000);

  it('refuses short, trailing and unknown data and wrong account counts', () => {
    const { w, programId } = f;
    for (const c of all) {
      const ix = c.make();
      const data = new Uint8Array(ix.data);
      if (data.length > 1)
        expectErr(w.run(withData(ix, data.subarray(0, data.length - 1))), 'InvalidInstruction');
      expectErr(w.run(withData(ix, Uint8Array.from([...data, 0]))), 'InvalidInstruction');
      const n = ix.keys.length;
      const short = ix.keys.slice(0, n - 1);
      const tag = data[0];
      const long = [...ix.keys, { pubkey: w.address(), isSigner: false, isWritable: false }];
      // SendMail takes 7 (direct), 8 (relayed, or direct with reputation) or 9 (direct with reputation
      // and rule) accounts; CreateMailbox 4 or 5 by its domain field.
      if (tag !== 6 || n === 7) expectErr(w.run(withKeys(ix, short)), 'InvalidInstruction');
      if (tag !== 6 || n === 8) expectErr(w.run(withKeys(ix, long)), 'InvalidInstruction');
    }
    const keys = all[2]?.make().keys as AccountMeta[];
    for (const data of [[], [32], [33], [45], [99], [255], [255, 0, 0]])
      expectErr(
        w.run(
          new TransactionInstruction({ programId: new PublicKey(programId), keys, data: Buffer.from(data) }),
        ),
        'InvalidInstruction',
      );
    // Non-canonical booleans and option flags, invalid UTF-8 in strings.
    const set = all[2]?.make() as TransactionInstruction;
    expectErr(w.run(withData(set, Uint8Array.of(2, 1, 2, 0))), 'InvalidInstruction');
    expectErr(w.run(withData(set, Uint8Array.of(2, 2, 0))), 'InvalidInstruction');
    const alias = all.find((c) => c.name === 'CreateAlias')?.make() as TransactionInstruction;
    expectErr(w.run(withData(alias, Uint8Array.of(8, 2, 0, 0, 0, 0xc3, 0x28))), 'InvalidInstruction');
    expectErr(w.run(withData(alias, Uint8Array.of(8, 0xff, 0xff, 0xff, 0xff))), 'InvalidInstruction');
    // Valid UTF-8 that is not a normalized alias is the name rule's refusal, not a decoding one.
    expectErr(w.run(withData(alias, encodeInstructionOf('CreateAlias', { name: 'é' }))), 'InvalidArgument');
  });

  it('lets the valid form of each instruction through after all that', () => {
    const { w } = f;
    // DeleteMail closes the Email that ClaimBounty pays from: it goes last.
    const order = [
      ...all.filter((c) => c.name !== 'DeleteMail'),
      ...all.filter((c) => c.name === 'DeleteMail'),
    ];
    for (const c of order) {
      if (c.name === 'InitPostoffice') {
        expectErr(w.run(c.make()), 'AlreadyExists');
        continue;
      }
      const r = w.run(c.make());
      if (!r.ok) throw new Error(`${c.name}: ${r.err?.message}\n${r.logs.join('\n')}`);
    }
    expect(w.exists(mailboxKeyAddress(w.programId, f.alice)[0])).toBe(false);
  });
});

describe('fuzz', () => {
  it('answers 600 random instructions with success or a custom error, never a fault', () => {
    const f = fixture();
    const { w, programId } = f;
    const random = prng(20260101);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
    const templates = cases(f).map((c) => c.make());
    const signable = [f.alice, f.bob, f.sender, f.payer, f.newcomer, w.authority, w.delegate];
    const pool: PublicKey[] = [
      ...signable,
      ...templates.flatMap((t) => t.keys.map((k) => k.pubkey)),
      SystemProgram.programId,
      w.programKey,
      w.address(),
      w.address(),
    ];
    let ok = 0;
    let custom = 0;
    for (let n = 0; n < 600; n++) {
      const template = pick(templates);
      const mode = random();
      let data: Uint8Array;
      if (mode < 0.5) {
        data = new Uint8Array(template.data);
        const flips = Math.floor(random() * 4);
        for (let k = 0; k < flips && data.length; k++)
          data[Math.floor(random() * data.length)] = Math.floor(random() * 256);
      } else if (mode < 0.75) {
        const base = new Uint8Array(template.data);
        const len = Math.max(0, base.length + Math.floor(random() * 9) - 4);
        data = Uint8Array.from({ length: len }, (_, i) =>
          i < base.length ? (base[i] as number) : Math.floor(random() * 256),
        );
      } else {
        data = Uint8Array.from({ length: Math.floor(random() * 90) }, () => Math.floor(random() * 256));
        if (data.length && random() < 0.8) data[0] = Math.floor(random() * 20);
      }
      let keys: AccountMeta[];
      if (random() < 0.5) {
        keys = template.keys.map((k) => ({ ...k }));
        const swaps = Math.floor(random() * 3);
        for (let s = 0; s < swaps && keys.length; s++) {
          const pubkey = pick(pool);
          const canSign = signable.some((p) => p.equals(pubkey));
          keys[Math.floor(random() * keys.length)] = {
            pubkey,
            isSigner: canSign && random() < 0.7,
            isWritable: random() < 0.7,
          };
        }
      } else {
        keys = Array.from({ length: Math.floor(random() * 10) }, () => {
          const pubkey = pick(pool);
          const canSign = signable.some((p) => p.equals(pubkey));
          return { pubkey, isSigner: canSign && random() < 0.6, isWritable: random() < 0.6 };
        });
      }
      const ix = new TransactionInstruction({
        programId: new PublicKey(programId),
        keys,
        data: Buffer.from(data),
      });
      const r = w.run(ix);
      expectClean(r, `case ${n}: data ${Buffer.from(data).toString('hex')}`);
      if (r.ok) ok++;
      else custom++;
    }
    expect(ok + custom).toBe(600);
    expect(custom).toBeGreaterThan(300);
    // As above: CPU-bound, past 30 s on a loaded machine.
  }, 120_000);
});
