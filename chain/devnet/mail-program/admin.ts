// InitPostoffice and CreateDomain: the operator-side records.
import { PublicKey } from '@solana/web3.js';
import { mailDomainLayout, postofficeLayout } from '../../accounts/mail.ts';
import { blake3Text, isValidDomainName } from '../../hash.ts';
import type { CreateDomainData, InitPostofficeData } from '../../instruction-data.ts';
import { seeds } from '../../pda.ts';
import { E, fail, type Run } from './runtime.ts';

export function initPostoffice(run: Run, ix: InitPostofficeData): void {
  run.expectAccounts(3);
  const admin = run.signer(0, true);
  const postoffice = run.writable(1);
  run.system(2);
  const bump = run.expectPda(postoffice, seeds.postoffice(), 'postoffice');
  run.expectAbsent(postoffice, 'Postoffice');
  run.create(
    postoffice,
    postofficeLayout,
    {
      admin: new PublicKey(admin),
      rootKsk: ix.rootKsk,
      delegateAddress: ix.delegateAddress,
      commitmentRoot: ix.commitmentRoot,
      stampFeeLamports: ix.stampFeeLamports,
      settlementSurchargeLamports: ix.settlementSurchargeLamports,
      feesCollected: 0n,
      bump,
    },
    admin,
  );
}

export function createDomain(run: Run, ix: CreateDomainData): void {
  run.expectAccounts(4);
  const delegate = run.signer(0, true);
  const postofficeAddress = run.readonly(1);
  const mailDomain = run.writable(2);
  run.system(3);
  run.expectPda(postofficeAddress, seeds.postoffice(), 'postoffice');
  const postoffice = run.require(postofficeAddress, postofficeLayout);
  if (postoffice.delegateAddress.toBase58() !== delegate) {
    fail(E.Unauthorized, 'CreateDomain must be signed by the postoffice delegate');
  }
  if (!isValidDomainName(ix.domain))
    fail(E.InvalidArgument, `invalid domain name ${JSON.stringify(ix.domain)}`);
  const nameHash = blake3Text(ix.domain);
  const bump = run.expectPda(mailDomain, seeds.domain(nameHash), 'mail domain');
  run.expectAbsent(mailDomain, `MailDomain ${ix.domain}`);
  run.create(
    mailDomain,
    mailDomainLayout,
    {
      isActive: true,
      authority: ix.authority,
      rentPayer: new PublicKey(delegate),
      nameHash,
      createdAt: run.now,
      bump,
      domain: ix.domain,
    },
    delegate,
  );
  run.ctx.log(`Domain ${ix.domain} authorized`);
}
