// A world around the real mail program (chain/program/src, built to
// chain/program/mail_program.so), shared by its tests and bench:program: a
// litesvm runtime with the program deployed through the upgradeable loader,
// deterministic wallets, the postoffice and one domain set up, and readers
// for the accounts. Every transaction goes through the real runtime; the fee
// payer is the runtime's own payer, so wallet balances move only by what the
// program does. Node only (litesvm is a native module).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Keypair, PublicKey, type TransactionInstruction } from '@solana/web3.js';
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
} from '../../client/accounts/index.ts';
import {
  createDomainInstruction,
  createMailboxInstruction,
  initPostofficeInstruction,
} from '../../client/instructions.ts';
import {
  domainAddress,
  emailAddress,
  fromboxAddress,
  mailboxAddress,
  postofficeAddress,
} from '../../client/pda.ts';
import { prng } from '../../client/prng.ts';
import { DEFAULT_PROGRAM_ID } from '../../client/program-id.ts';
import { checkFunds, type FundsAccount, formatViolation, fundsAccounts } from './funds.ts';
import {
  createRuntime,
  type DeployedImage,
  deployedImage,
  innerOf,
  type RunResult,
  type Runtime,
} from './runtime.ts';

export const SO_PATH = fileURLToPath(new URL('../mail_program.so', import.meta.url));
export const C_SOURCE = fileURLToPath(new URL('../src/mail.c', import.meta.url));

export const FEE = 1_000n;
export const SURCHARGE = 5_000n;
export const DOMAIN = 'mail.test';
export const START = 1_700_000_000n;
export const SOL = 1_000_000_000n;

export const rent = (size: number): bigint => (128n + BigInt(size)) * 6960n;

let so: Uint8Array | null = null;
/**
 * Per program id, the first world's deployment (through the upgradeable
 * loader): later worlds in the process start from its accounts instead of
 * deploying again.
 */
const images = new Map<string, DeployedImage>();

/** The committed program binary. */
export function programSo(): Uint8Array {
  so ??= new Uint8Array(readFileSync(SO_PATH));
  return so;
}

/** A small deterministic PRNG (mulberry32), for keys and fuzz cases. */
export { prng };

export function expectOk(r: RunResult): void {
  if (!r.ok) throw new Error(`expected success, got ${r.err?.message}\n${r.logs.join('\n')}`);
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

/** Replaces account `index` of an instruction. */
export function swap(ix: TransactionInstruction, index: number, key: PublicKey): TransactionInstruction {
  const meta = ix.keys[index];
  if (!meta) throw new Error(`no account ${index}`);
  meta.pubkey = key;
  return ix;
}

export class World {
  readonly rt: Runtime;
  readonly programId: string;
  readonly programKey: PublicKey;
  readonly keys = new Map<string, Keypair>();
  private readonly random: () => number;
  admin!: PublicKey;
  delegate!: PublicKey;
  authority!: PublicKey;
  /** The program's upgrade authority (the runtime's payer, which deployed it): co-signs InitPostoffice. */
  readonly upgradeAuthority: PublicKey;

  constructor(opts: { seed?: number; setup?: boolean; programId?: PublicKey } = {}) {
    this.random = prng(opts.seed ?? 1);
    this.programKey = opts.programId ?? new PublicKey(DEFAULT_PROGRAM_ID);
    this.programId = this.programKey.toBase58();
    const image = images.get(this.programId);
    this.rt = createRuntime({ so: programSo(), programId: this.programKey, ...(image ? { image } : {}) });
    if (!image) images.set(this.programId, deployedImage(this.rt));
    // A key of its own, not the fee payer (which signs every transaction), so a test can leave it out.
    const upgrader = Keypair.fromSeed(new Uint8Array(32).fill(0x55));
    this.upgradeAuthority = upgrader.publicKey;
    this.keys.set(this.upgradeAuthority.toBase58(), upgrader);
    this.setUpgradeAuthority(upgrader.publicKey);
    this.rt.setClock({ unixTimestamp: START });
    if (opts.setup === false) return;
    this.admin = this.wallet();
    this.delegate = this.wallet();
    this.authority = this.wallet();
    expectOk(
      this.run(
        initPostofficeInstruction({
          programId: this.programId,
          admin: this.admin,
          upgradeAuthority: this.upgradeAuthority,
          delegateAddress: this.delegate,
          stampFeeLamports: FEE,
          settlementSurchargeLamports: SURCHARGE,
        }),
      ),
    );
    expectOk(
      this.run(
        createDomainInstruction({
          programId: this.programId,
          delegate: this.delegate,
          domain: DOMAIN,
          authority: this.authority,
        }),
      ),
    );
  }

  /** 32 deterministic bytes. */
  bytes32(): Uint8Array {
    const out = new Uint8Array(32);
    for (let i = 0; i < 32; i++) out[i] = Math.floor(this.random() * 256);
    return out;
  }

  /** A deterministic keypair the world can sign with (unfunded). */
  keypair(): Keypair {
    const kp = Keypair.fromSeed(this.bytes32());
    this.keys.set(kp.publicKey.toBase58(), kp);
    return kp;
  }

  /** A funded wallet the world signs for. */
  wallet(lamports = 10n * SOL): PublicKey {
    const pk = this.keypair().publicKey;
    if (lamports > 0n) this.fund(pk, lamports);
    return pk;
  }

  /** An address nobody signs for. */
  address(): PublicKey {
    return new PublicKey(this.bytes32());
  }

  /** Adds lamports to an account (a System account when it does not exist). */
  fund(key: PublicKey, lamports: bigint): void {
    const prev = this.rt.account(key);
    this.rt.setAccount(key, {
      lamports: (prev?.lamports ?? 0n) + lamports,
      owner: prev?.owner ?? PublicKey.default,
      executable: prev?.executable ?? false,
      data: prev?.data ?? new Uint8Array(0),
    });
  }

  /** A funded wallet with a mailbox in the world's domain. */
  user(opts: { defaultPostage?: bigint; lamports?: bigint } = {}): PublicKey {
    const owner = this.wallet(opts.lamports);
    const params = {
      programId: this.programId,
      owner,
      defaultPostage: opts.defaultPostage ?? 0n,
      domain: DOMAIN,
    };
    expectOk(this.run(createMailboxInstruction(params)));
    return owner;
  }

  /**
   * Runs one transaction (fee paid by the runtime's payer), signed by every
   * known key it names as signer. A successful one must keep the funds
   * invariant (chain/program/host/funds.ts): the balances of the accounts it
   * names, before and after, differ by its fee and move as the
   * instruction's documented flow says; otherwise this throws, listing each
   * violation.
   */
  run(...ixs: TransactionInstruction[]): RunResult {
    const signers: Keypair[] = [];
    for (const ix of ixs)
      for (const k of ix.keys) {
        const kp = k.isSigner ? this.keys.get(k.pubkey.toBase58()) : undefined;
        if (kp && !signers.includes(kp)) signers.push(kp);
      }
    const accounts = fundsAccounts(ixs, this.rt.payer.publicKey);
    const before = this.snapshot(accounts);
    const r = this.rt.run(ixs, signers);
    // A fresh blockhash per transaction: the same instruction may be sent twice.
    innerOf(this.rt.svm).expireBlockhash();
    if (r.ok) {
      const violations = checkFunds({
        instructions: ixs,
        before,
        after: this.snapshot(accounts),
        fee: r.fee,
        feePayer: this.rt.payer.publicKey,
        programId: this.programKey,
      });
      if (violations.length > 0)
        throw new Error(
          `the funds invariant does not hold (chain/program/host/funds.ts):\n${violations.map(formatViolation).join('\n')}\n${r.logs.join('\n')}`,
        );
    }
    return r;
  }

  /** The accounts' states now, by address (null: none), for the funds check of run(). */
  private snapshot(keys: PublicKey[]): Map<string, FundsAccount | null> {
    const out = new Map<string, FundsAccount | null>();
    for (const key of keys) {
      const a = this.rt.account(key);
      out.set(key.toBase58(), a && { lamports: a.lamports, owner: a.owner, data: a.data });
    }
    return out;
  }

  get now(): bigint {
    return this.rt.clock().unixTimestamp;
  }

  advance(seconds: bigint): void {
    this.rt.warp(1, Number(seconds));
  }

  balance(key: PublicKey): bigint {
    return this.rt.account(key)?.lamports ?? 0n;
  }

  data(key: PublicKey): Uint8Array | null {
    const a = this.rt.account(key);
    if (!a || (a.lamports === 0n && a.data.length === 0)) return null;
    return a.data;
  }

  exists(key: PublicKey): boolean {
    const a = this.rt.account(key);
    return !!a && (a.lamports > 0n || a.data.length > 0);
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
    const data = this.data(fromboxAddress(this.programId, fromHash, recipient)[0]);
    return data && data.length > 0 ? decodeFrombox(data) : null;
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

  /** Writes `key` as the program's upgrade authority into its ProgramData (null: an immutable program). */
  setUpgradeAuthority(key: PublicKey | null): void {
    const a = this.rt.account(this.rt.programData);
    if (!a) throw new Error('no ProgramData');
    const data = Uint8Array.from(a.data);
    // UpgradeableLoaderState::ProgramData: u32 tag, u64 slot, Option<Pubkey> authority.
    data[12] = key ? 1 : 0;
    data.set(key ? key.toBytes() : new Uint8Array(32), 13);
    this.rt.setAccount(this.rt.programData, { ...a, data });
  }

  /** Overwrites an account's data in place (to reach states no instruction makes). */
  patch(address: PublicKey, data: Uint8Array): void {
    const a = this.rt.account(address);
    if (!a) throw new Error('no account');
    this.rt.setAccount(address, { ...a, data });
  }

  /** Sets an account outright. */
  put(address: PublicKey, a: { lamports: bigint; owner: PublicKey; data: Uint8Array }): void {
    this.rt.setAccount(address, { ...a, executable: false });
  }

  private must(address: PublicKey): Uint8Array {
    const data = this.data(address);
    if (!data) throw new Error(`no account at ${address.toBase58()}`);
    return data;
  }
}
