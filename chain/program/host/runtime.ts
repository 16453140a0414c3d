// A small host around Solana's real runtime (litesvm, Agave's SVM) for tests
// and tools: deploys an SBF program through the BPF Upgradeable Loader's real
// instruction sequence (CreateAccount+InitializeBuffer, Write chunks,
// CreateAccount+DeployWithMaxDataLen) and runs web3.js legacy transactions.
// Node only (litesvm is a native module).
import { Keypair, PublicKey, type Signer, Transaction, type TransactionInstruction } from '@solana/web3.js';
import bs58 from 'bs58';
import { Account, Clock, LiteSVM } from 'litesvm';
import type {
  FailedTransactionMetadata,
  LiteSvm as InnerSvm,
  TransactionMetadata,
} from 'litesvm/dist/internal.js';
import { createBuffer, deployWithMaxDataLen, programDataAddress, writeChunks } from '../../client/loader.ts';

export interface RunError {
  /** The runtime's TransactionError, as it prints it (e.g. `InstructionError(0, Custom(6))`). */
  message: string;
  /** Index of the failing instruction, for an InstructionError. */
  instructionIndex: number | null;
  /** The InstructionError's name (e.g. `Custom`, `IncorrectProgramId`). */
  instructionError: string | null;
  /** The program's custom error code, when it returned one. */
  customCode: number | null;
}

export interface RunResult {
  ok: boolean;
  err: RunError | null;
  logs: string[];
  computeUnits: number;
  fee: number;
  signature: string;
}

export interface AccountState {
  lamports: bigint;
  owner: PublicKey;
  executable: boolean;
  data: Uint8Array;
}

export interface DeployOptions {
  so: Uint8Array;
  payer: Keypair;
  /** A Keypair signs the program account's creation; a bare PublicKey is deployed with signature checks off for that one transaction (genesis-style). */
  programId?: Keypair | PublicKey;
  /** Upgrade authority; the payer when omitted. Must sign, so it is a Keypair. */
  authority?: Keypair;
  maxDataLen?: number;
}

export interface Deployed {
  programId: PublicKey;
  programData: PublicKey;
  buffer: PublicKey;
  /** Transactions the deployment took. */
  transactions: number;
}

export interface Runtime {
  svm: LiteSVM;
  programId: PublicKey;
  programData: PublicKey;
  payer: Keypair;
  /** Signs (fee payer: `payer` unless the transaction names one) and sends; never throws on a failed transaction. */
  run(tx: Transaction | TransactionInstruction[], signers?: Signer[]): RunResult;
  account(address: PublicKey): AccountState | null;
  setAccount(address: PublicKey, account: AccountState): void;
  airdrop(address: PublicKey, lamports: bigint): void;
  clock(): { slot: bigint; unixTimestamp: bigint; epoch: bigint };
  setClock(p: { slot?: bigint; unixTimestamp?: bigint; epoch?: bigint }): void;
  /** Advances the slot (and the clock's unix time by `seconds`) and moves to a new blockhash, as a new block would. */
  warp(slots?: number, seconds?: number): void;
  /** Moves to a new blockhash, so an identical transaction is not a duplicate (`AlreadyProcessed`). */
  expireBlockhash(): void;
}

/** The native handle behind LiteSVM (the wrapper keeps it private; its API takes raw bytes). */
export function innerOf(svm: LiteSVM): InnerSvm {
  return (svm as unknown as { inner: InnerSvm }).inner;
}

function describeError(failed: FailedTransactionMetadata): RunError {
  const text = failed.toString();
  const message = /\berr: (.*?), meta: TransactionMetadata/.exec(text)?.[1] ?? text;
  const ix = /^InstructionError\((\d+), (\w+)/.exec(message);
  const custom = /^InstructionError\(\d+, Custom\((\d+)\)\)/.exec(message);
  return {
    message,
    instructionIndex: ix ? Number(ix[1]) : null,
    instructionError: ix?.[2] ?? null,
    customCode: custom ? Number(custom[1]) : null,
  };
}

function requiredSigners(tx: Transaction): PublicKey[] {
  const msg = tx.compileMessage();
  return msg.accountKeys.slice(0, msg.header.numRequiredSignatures);
}

/** Sends a web3.js legacy transaction to a LiteSVM and returns a plain result. */
export function sendLegacy(svm: LiteSVM, tx: Transaction, signers: Signer[], verify = true): RunResult {
  const inner = innerOf(svm);
  if (!tx.recentBlockhash) tx.recentBlockhash = inner.latestBlockhash();
  const needed = requiredSigners(tx);
  const mine = signers.filter(
    (s, i) =>
      needed.some((k) => k.equals(s.publicKey)) &&
      signers.findIndex((t) => t.publicKey.equals(s.publicKey)) === i,
  );
  if (mine.length) tx.partialSign(...mine);
  const bytes = tx.serialize({ requireAllSignatures: verify, verifySignatures: verify });
  const signature = tx.signature ? bs58.encode(tx.signature) : '';
  let out: TransactionMetadata | FailedTransactionMetadata;
  try {
    out = inner.sendLegacyTransaction(bytes);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    const err = { message, instructionIndex: null, instructionError: null, customCode: null };
    return { ok: false, err, logs: [], computeUnits: 0, fee: 0, signature };
  }
  const failed = 'err' in out ? out : null;
  const meta = failed ? failed.meta() : (out as TransactionMetadata);
  const fee = /\bfee: (\d+)/.exec(meta.toString())?.[1];
  return {
    ok: !failed,
    err: failed ? describeError(failed) : null,
    logs: meta.logs(),
    computeUnits: Number(meta.computeUnitsConsumed()),
    fee: fee === undefined ? 5000 * needed.length : Number(fee),
    signature,
  };
}

function mustSucceed(step: string, r: RunResult): void {
  if (!r.ok) throw new Error(`program deployment failed at ${step}: ${r.err?.message}\n${r.logs.join('\n')}`);
}

/** Deploys `so` into `svm` the way `solana program deploy` does, then advances one slot so it is invokable. */
export function deployProgram(svm: LiteSVM, o: DeployOptions): Deployed {
  const payer = o.payer;
  const authority = o.authority ?? payer;
  const programKey = o.programId ?? Keypair.generate();
  const programId = programKey instanceof Keypair ? programKey.publicKey : programKey;
  const buffer = Keypair.generate();
  const base = { feePayer: payer.publicKey };
  const send = (ixs: TransactionInstruction[], signers: Signer[], verify = true) =>
    sendLegacy(svm, new Transaction(base).add(...ixs), [payer, ...signers], verify);
  let count = 0;

  const create = createBuffer({
    payer: payer.publicKey,
    buffer: buffer.publicKey,
    authority: authority.publicKey,
    programLen: o.so.length,
  });
  mustSucceed('InitializeBuffer', send(create, [buffer]));
  count++;
  for (const w of writeChunks(buffer.publicKey, authority.publicKey, o.so)) {
    mustSucceed('Write', send([w], [authority]));
    count++;
  }
  const deploy = deployWithMaxDataLen({
    payer: payer.publicKey,
    programId,
    buffer: buffer.publicKey,
    authority: authority.publicKey,
    maxDataLen: o.maxDataLen ?? o.so.length,
  });
  const inner = innerOf(svm);
  const signed = programKey instanceof Keypair;
  const checked = inner.getSigverify();
  if (!signed) inner.setSigverify(false);
  try {
    mustSucceed('DeployWithMaxDataLen', send(deploy, signed ? [programKey, authority] : [authority], signed));
  } finally {
    inner.setSigverify(checked);
  }
  count++;
  // A program deployed in slot N can be invoked from slot N+1.
  inner.warpToSlot(inner.getClock().slot + 1n);
  return {
    programId,
    programData: programDataAddress(programId),
    buffer: buffer.publicKey,
    transactions: count,
  };
}

/**
 * What a deployment through the upgradeable loader left in a runtime: the
 * program and ProgramData accounts, the slot after it and the payer's
 * balance. A later runtime given it starts from the same state without
 * running the deployment's transactions again (about a hundred for the mail
 * program, most of a test world's set-up cost).
 */
export interface DeployedImage {
  programId: PublicKey;
  programData: PublicKey;
  program: AccountState;
  data: AccountState;
  slot: bigint;
  payerLamports: bigint;
}

/** The image of `rt`'s deployment (its payer was the upgrade authority), for `createRuntime({ image })`. */
export function deployedImage(rt: Runtime): DeployedImage {
  const account = (address: PublicKey) => {
    const a = rt.account(address);
    if (!a) throw new Error(`no account ${address.toBase58()} after the deployment`);
    return { ...a, data: Uint8Array.from(a.data) };
  };
  return {
    programId: rt.programId,
    programData: rt.programData,
    program: account(rt.programId),
    data: account(rt.programData),
    slot: rt.clock().slot,
    payerLamports: account(rt.payer.publicKey).lamports,
  };
}

// UpgradeableLoaderState::ProgramData: u32 tag, u64 slot, Option<Pubkey> upgrade authority, then the ELF.
const PROGRAM_DATA_AUTHORITY = 4 + 8 + 1;

/**
 * A fresh LiteSVM with `so` deployed through the upgradeable loader and a
 * funded payer; or, given an `image` of such a deployment, the same program
 * and ProgramData accounts written in directly, the new payer as upgrade
 * authority and with the balance the deployment would have left it.
 */
export function createRuntime(o: {
  so: Uint8Array;
  programId?: Keypair | PublicKey;
  payer?: Keypair;
  payerLamports?: bigint;
  /** ProgramData capacity for later upgrades; the program's size when omitted. */
  maxDataLen?: number;
  image?: DeployedImage;
}): Runtime {
  const svm = new LiteSVM();
  const inner = innerOf(svm);
  const payer = o.payer ?? Keypair.generate();
  const airdrop = (address: PublicKey, lamports: bigint) => {
    const r = inner.airdrop(address.toBytes(), lamports);
    if (r && 'err' in r) throw new Error(`airdrop failed: ${r.toString()}`);
  };
  const put = (address: PublicKey, a: AccountState) =>
    inner.setAccount(address.toBytes(), new Account(a.lamports, a.data, a.owner.toBytes(), a.executable, 0n));
  let deployed: { programId: PublicKey; programData: PublicKey };
  if (o.image) {
    const image = o.image;
    airdrop(payer.publicKey, image.payerLamports);
    const data = Uint8Array.from(image.data.data);
    if (data[PROGRAM_DATA_AUTHORITY - 1] !== 1)
      throw new Error('the deployed image has no upgrade authority');
    data.set(payer.publicKey.toBytes(), PROGRAM_DATA_AUTHORITY);
    // ProgramData first: writing the program account loads the program from it.
    put(image.programData, { ...image.data, data });
    put(image.programId, image.program);
    inner.warpToSlot(image.slot);
    deployed = image;
  } else {
    airdrop(payer.publicKey, o.payerLamports ?? 100_000_000_000n);
    deployed = deployProgram(svm, {
      so: o.so,
      payer,
      ...(o.programId ? { programId: o.programId } : {}),
      ...(o.maxDataLen ? { maxDataLen: o.maxDataLen } : {}),
    });
  }
  return {
    svm,
    programId: deployed.programId,
    programData: deployed.programData,
    payer,
    run(tx, signers = []) {
      const t = Array.isArray(tx) ? new Transaction().add(...tx) : tx;
      if (!t.feePayer) t.feePayer = payer.publicKey;
      return sendLegacy(svm, t, [payer, ...signers]);
    },
    account(address) {
      const a = inner.getAccount(address.toBytes());
      if (!a) return null;
      return {
        lamports: a.lamports(),
        owner: new PublicKey(a.owner()),
        executable: a.executable(),
        data: a.data(),
      };
    },
    setAccount(address, a) {
      inner.setAccount(
        address.toBytes(),
        new Account(a.lamports, a.data, a.owner.toBytes(), a.executable, 0n),
      );
    },
    airdrop,
    clock() {
      const c = inner.getClock();
      return { slot: c.slot, unixTimestamp: c.unixTimestamp, epoch: c.epoch };
    },
    setClock(p) {
      const c = inner.getClock();
      inner.setClock(
        new Clock(
          p.slot ?? c.slot,
          c.epochStartTimestamp,
          p.epoch ?? c.epoch,
          c.leaderScheduleEpoch,
          p.unixTimestamp ?? c.unixTimestamp,
        ),
      );
    },
    warp(slots = 1, seconds = 0) {
      const c = inner.getClock();
      this.setClock({ slot: c.slot + BigInt(slots), unixTimestamp: c.unixTimestamp + BigInt(seconds) });
      inner.expireBlockhash();
    },
    expireBlockhash() {
      inner.expireBlockhash();
    },
  };
}
