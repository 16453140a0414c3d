// SendMail, DeleteMail and ClaimBounty: the message records.
import { PublicKey } from '@solana/web3.js';
import { CID_MAX_BYTES } from '../../accounts/index.ts';
import {
  emailLayout,
  fromboxLayout,
  mailboxLayout,
  mailDomainLayout,
  postofficeLayout,
} from '../../accounts/mail.ts';
import { bytesEqual, utf8 } from '../../bytes.ts';
import { blake3Text } from '../../hash.ts';
import type { ClaimBountyData, DeleteMailData, SendMailData } from '../../instruction-data.ts';
import { seeds } from '../../pda.ts';
import { requireMailbox } from './mailbox.ts';
import { add, E, fail, type Run } from './runtime.ts';

const NO_IPFS_CID = /^b3:[0-9a-f]{64}$/;

function checkCid(cid: string, noIpfs: boolean): void {
  const len = utf8(cid).length;
  if (len < 1 || len > CID_MAX_BYTES)
    fail(E.InvalidArgument, `cid must be 1..=${CID_MAX_BYTES} bytes, got ${len}`);
  if (noIpfs) {
    if (!NO_IPFS_CID.test(cid)) fail(E.NoIpfs, 'the mailbox has no_ipfs: cid must be b3: + 64 lowercase hex');
  } else if (cid.startsWith('b3:')) {
    fail(E.InvalidArgument, 'a b3: cid is only for no_ipfs mailboxes');
  }
}

export function sendMail(run: Run, ix: SendMailData): void {
  const relayed = run.expectAccounts(7, 8) === 8;
  const sender = run.signer(0, true);
  const mailboxAddress = run.writable(1);
  const emailAddress = run.writable(2);
  const fromboxAddress = run.writable(3);
  const recipientWallet = run.writable(4);
  const postofficeAddress = run.readonly(5);
  run.system(6);

  const mailbox = requireMailbox(run, mailboxAddress);
  const recipient = mailbox.owner.toBase58();
  const recipientBytes = mailbox.owner.toBytes();
  if (recipientWallet !== recipient) fail(E.InvalidAccount, 'account 4 must be the mailbox owner');
  run.expectPda(postofficeAddress, seeds.postoffice(), 'postoffice');
  const postoffice = run.require(postofficeAddress, postofficeLayout);

  if (relayed) {
    const domainAddress = run.readonly(7);
    const domain = run.require(domainAddress, mailDomainLayout);
    run.expectStoredPda(domainAddress, seeds.domain(domain.nameHash), domain.bump, 'mail domain');
    if (!domain.isActive) fail(E.DomainInactive, `domain ${domain.domain} is not active`);
    if (domain.authority.toBase58() !== sender)
      fail(E.Unauthorized, `signer is not the authority of ${domain.domain}`);
    if (ix.bountyLamports > 0n) fail(E.BountyNotAllowed, 'relayed sends carry no bounty');
  } else if (!bytesEqual(ix.fromHash, blake3Text(sender))) {
    fail(E.FromHashMismatch, 'a direct send must carry blake3 of the signer address as from_hash');
  }

  checkCid(ix.cid, mailbox.noIpfs);
  if (ix.bountyLamports > 0n) {
    if (ix.expiresAt <= run.now) fail(E.BountyExpired, 'the bounty would be born expired');
  } else if (ix.expiresAt !== 0n) {
    fail(E.InvalidArgument, 'expires_at must be 0 without a bounty');
  }

  const index = mailbox.mailCount;
  const emailBump = run.expectPda(emailAddress, seeds.email(recipientBytes, index), 'email');
  run.expectAbsent(emailAddress, 'Email');

  const frombox = run.read(fromboxAddress, fromboxLayout);
  if (frombox) {
    // A stored frombox vouches for its own seeds; they must be this send's.
    if (!bytesEqual(frombox.fromHash, ix.fromHash) || !frombox.recipient.equals(mailbox.owner)) {
      fail(E.InvalidPda, 'frombox does not belong to this sender and recipient');
    }
    run.expectStoredPda(
      fromboxAddress,
      seeds.frombox(frombox.fromHash, recipientBytes),
      frombox.bump,
      'frombox',
    );
  } else {
    run.expectPda(fromboxAddress, seeds.frombox(ix.fromHash, recipientBytes), 'frombox');
  }

  const free =
    sender === recipient || (frombox ? frombox.requiredPostage === 0n : mailbox.defaultPostage === 0n);
  if (!free) {
    if (!frombox || frombox.stamps === 0n)
      fail(E.PostageRequired, 'first contact needs a stamp: buy stamps first');
    const share = frombox.postageEscrow / frombox.stamps;
    const surcharge = postoffice.settlementSurchargeLamports;
    run.debitKeepingRent(fromboxAddress, add(share, surcharge));
    run.credit(recipient, share);
    run.credit(sender, surcharge);
    run.write(fromboxAddress, fromboxLayout, {
      ...frombox,
      stamps: frombox.stamps - 1n,
      postageEscrow: frombox.postageEscrow - share,
      updatedAt: run.now,
    });
  }

  run.create(
    emailAddress,
    emailLayout,
    {
      recipient: mailbox.owner,
      sender: new PublicKey(sender),
      fromHash: ix.fromHash,
      index,
      epoch: run.now,
      bountyLamports: ix.bountyLamports,
      expiresAt: ix.expiresAt,
      replyToHash: ix.replyToHash,
      rentPayer: new PublicKey(sender),
      bump: emailBump,
      cid: ix.cid,
    },
    sender,
    ix.bountyLamports,
  );
  run.write(mailboxAddress, mailboxLayout, { ...mailbox, mailCount: add(index, 1n) });
  run.ctx.log(`Email ${index} for ${recipient}${relayed ? ' (relayed)' : ''}`);
}

export function deleteMail(run: Run, _ix: DeleteMailData): void {
  run.expectAccounts(3);
  const signer = run.signer(0);
  const emailAddress = run.writable(1);
  const rentPayer = run.writable(2);
  const email = run.require(emailAddress, emailLayout);
  run.expectStoredPda(emailAddress, seeds.email(email.recipient.toBytes(), email.index), email.bump, 'email');
  if (email.recipient.toBase58() !== signer && email.sender.toBase58() !== signer) {
    fail(E.Unauthorized, 'only the recipient or the sender may delete an email');
  }
  if (email.rentPayer.toBase58() !== rentPayer)
    fail(E.InvalidAccount, 'account 2 must be the email rent_payer');
  run.close(emailAddress, rentPayer);
}

export function claimBounty(run: Run, _ix: ClaimBountyData): void {
  run.expectAccounts(2);
  const recipient = run.signer(0, true);
  const emailAddress = run.writable(1);
  const email = run.require(emailAddress, emailLayout);
  run.expectStoredPda(emailAddress, seeds.email(email.recipient.toBytes(), email.index), email.bump, 'email');
  if (email.recipient.toBase58() !== recipient)
    fail(E.Unauthorized, 'only the recipient may claim the bounty');
  if (email.bountyLamports === 0n) fail(E.NothingToClaim, 'the email carries no bounty');
  if (run.now < email.epoch || run.now >= email.expiresAt) fail(E.BountyExpired, 'outside the claim window');
  run.transfer(emailAddress, recipient, email.bountyLamports);
  run.write(emailAddress, emailLayout, { ...email, bountyLamports: 0n });
}
