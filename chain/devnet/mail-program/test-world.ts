// Shared fixture for the mail-program tests: a TestChain with the postoffice
// initialized, one authorized domain, and helpers to read accounts back.
import type { PublicKey, TransactionInstruction } from '@solana/web3.js';
import { expect } from 'vitest';
import {
  decodeEmail,
  decodeFrombox,
  decodeMailbox,
  decodeMailDomain,
  decodePostoffice,
  type Email,
  type Frombox,
  type Mailbox,
  type MailDomain,
  type Postoffice,
} from '../../accounts/index.ts';
import { MAIL_ERRORS, type MailErrorName } from '../../errors.ts';
import {
  createDomainInstruction,
  createMailboxInstruction,
  initPostofficeInstruction,
} from '../../instructions.ts';
import { domainAddress, emailAddress, fromboxAddress, mailboxAddress, postofficeAddress } from '../../pda.ts';
import { TestChain, type TxResult } from './test-chain.ts';

export const FEE = 1_000n;
export const SURCHARGE = 5_000n;
export const DOMAIN = 'mail.test';

export function expectOk(r: TxResult): void {
  if (!r.ok) throw new Error(`expected success, got ${r.error.message}\n${r.logs.join('\n')}`);
}

export function expectErr(r: TxResult, name: MailErrorName): void {
  if (r.ok) throw new Error(`expected ${name}, but the transaction succeeded`);
  expect({ code: r.code, message: r.error.message }).toMatchObject({ code: MAIL_ERRORS[name] });
}

/** Clears one account's signer or writable flag, as a hand-built transaction might. */
export function without(
  ix: TransactionInstruction,
  index: number,
  flag: 'isSigner' | 'isWritable',
): TransactionInstruction {
  const meta = ix.keys[index];
  if (!meta) throw new Error(`no account ${index}`);
  meta[flag] = false;
  return ix;
}

export class World {
  readonly chain = new TestChain();
  readonly programId = this.chain.programId;
  readonly admin = this.chain.wallet();
  readonly delegate = this.chain.wallet();
  readonly authority = this.chain.wallet();

  constructor() {
    const { programId } = this;
    expectOk(
      this.chain.execute(
        initPostofficeInstruction({
          programId,
          admin: this.admin,
          delegateAddress: this.delegate,
          stampFeeLamports: FEE,
          settlementSurchargeLamports: SURCHARGE,
        }),
      ),
    );
    expectOk(
      this.chain.execute(
        createDomainInstruction({
          programId,
          delegate: this.delegate,
          domain: DOMAIN,
          authority: this.authority,
        }),
      ),
    );
  }

  /** A funded wallet with a mailbox. */
  user(opts: { defaultPostage?: bigint; lamports?: bigint } = {}): PublicKey {
    const owner = this.chain.wallet(opts.lamports);
    const params = {
      programId: this.programId,
      owner,
      defaultPostage: opts.defaultPostage ?? 0n,
      domain: DOMAIN,
    };
    expectOk(this.chain.execute(createMailboxInstruction(params)));
    return owner;
  }

  run(...ixs: TransactionInstruction[]): TxResult {
    return this.chain.execute(...ixs);
  }

  mailbox(owner: PublicKey): Mailbox {
    return decodeMailbox(this.must(mailboxAddress(this.programId, owner)[0]));
  }

  email(recipient: PublicKey, index: bigint): Email {
    return decodeEmail(this.must(emailAddress(this.programId, recipient, index)[0]));
  }

  emailAddress(recipient: PublicKey, index: bigint): PublicKey {
    return emailAddress(this.programId, recipient, index)[0];
  }

  frombox(fromHash: Uint8Array, recipient: PublicKey): Frombox | null {
    const data = this.chain.data(fromboxAddress(this.programId, fromHash, recipient)[0]);
    return data ? decodeFrombox(data) : null;
  }

  fromboxAddress(fromHash: Uint8Array, recipient: PublicKey): PublicKey {
    return fromboxAddress(this.programId, fromHash, recipient)[0];
  }

  postoffice(): Postoffice {
    return decodePostoffice(this.must(postofficeAddress(this.programId)[0]));
  }

  postofficeAddress(): PublicKey {
    return postofficeAddress(this.programId)[0];
  }

  domain(name = DOMAIN): MailDomain {
    return decodeMailDomain(this.must(domainAddress(this.programId, name)[0]));
  }

  domainAddress(name = DOMAIN): PublicKey {
    return domainAddress(this.programId, name)[0];
  }

  /** Overwrites a program account's data in place (to reach states no instruction of this version makes). */
  patch(address: PublicKey, data: Uint8Array): void {
    const s = this.chain.accounts.get(address.toBase58());
    if (!s) throw new Error('no account');
    this.chain.accounts.set(address.toBase58(), { ...s, data });
  }

  private must(address: PublicKey): Uint8Array {
    const data = this.chain.data(address);
    if (!data) throw new Error(`no account at ${address.toBase58()}`);
    return data;
  }
}
