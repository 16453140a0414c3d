// Devnet's programs (the mail program) are deployed by transactions through
// the BPF Upgradeable Loader, the sequence `solana program deploy` sends:
// CreateAccount + InitializeBuffer, Write in chunks, CreateAccount of the
// program account + DeployWithMaxDataLen. The faucet pays and is the upgrade
// authority, so a restart with a rebuilt `.so` upgrades the program in place
// (a new buffer, then Upgrade).
//
// Deploying at a chosen address needs the program id's signature on the
// CreateAccount of the program account. Devnet has no keypair for a
// configured id, so that one transaction lands with signature verification
// off, as genesis accounts are placed on a real cluster; everything else,
// and the loader's own checks, run as on a cluster.
import { Keypair, PublicKey, type TransactionInstruction } from '@solana/web3.js';
import type { Logger } from 'pino';
import { legacyMessage, legacyWire } from '../client/legacy-tx.ts';
import {
  createBuffer,
  decodeLoaderState,
  deployWithMaxDataLen,
  LOADER_ID,
  upgrade,
  writeChunks,
} from '../client/loader.ts';
import type { AccountState, Address } from './account-store.ts';
import type { ProcessOptions, ProcessOutcome, ProgramImage } from './bank-types.ts';
import { type Ed25519Signer, signerFromSeed } from './ed25519.ts';
import { type DecodedTransaction, decodeTransaction } from './transaction.ts';
import { transactionErrorMessage } from './tx-error.ts';

/** The parts of the bank a deployment uses. */
export interface DeployBank {
  /** Fee payer and upgrade authority. */
  readonly faucet: Ed25519Signer;
  latestBlockhash(commitment: 'processed'): { blockhash: string };
  getAccount(address: Address): AccountState | null;
  processTransaction(tx: DecodedTransaction, opts: ProcessOptions): ProcessOutcome;
}

interface DeployHost {
  bank: DeployBank;
  payer: Keypair;
}

type Status =
  | { kind: 'missing' }
  | { kind: 'current' }
  | { kind: 'outdated' }
  | { kind: 'foreign'; why: string };

const LOADER = LOADER_ID.toBase58();

function sameImage(bytes: Uint8Array, elf: Uint8Array): boolean {
  if (bytes.length < elf.length) return false;
  if (!Buffer.from(bytes.buffer, bytes.byteOffset, elf.length).equals(elf)) return false;
  return bytes.subarray(elf.length).every((b) => b === 0);
}

function status(host: DeployHost, image: ProgramImage): Status {
  const program = host.bank.getAccount(image.programId);
  if (!program) return { kind: 'missing' };
  if (program.owner !== LOADER || !program.executable) {
    return { kind: 'foreign', why: `the account is owned by ${program.owner}` };
  }
  const state = decodeLoaderState(program.data);
  if (state.kind !== 'program') return { kind: 'foreign', why: `the loader account is a ${state.kind}` };
  const data = host.bank.getAccount(state.programData.toBase58());
  const programData = data ? decodeLoaderState(data.data) : null;
  if (programData?.kind !== 'programData') return { kind: 'foreign', why: 'its ProgramData is missing' };
  if (sameImage(programData.bytes, image.elf)) return { kind: 'current' };
  if (!programData.authority?.equals(host.payer.publicKey)) {
    return { kind: 'foreign', why: 'its upgrade authority is not the faucet' };
  }
  if (image.elf.length > programData.bytes.length) {
    return { kind: 'foreign', why: `the new image exceeds its ${programData.bytes.length}-byte ProgramData` };
  }
  return { kind: 'outdated' };
}

function send(host: DeployHost, ixs: TransactionInstruction[], signers: Keypair[], verify = true): void {
  const recentBlockhash = host.bank.latestBlockhash('processed').blockhash;
  const message = legacyMessage(host.payer.publicKey, recentBlockhash, ixs);
  const wire = legacyWire(message, [
    { publicKey: host.payer.publicKey, sign: host.bank.faucet.sign },
    ...signers.map((k) => ({
      publicKey: k.publicKey,
      sign: signerFromSeed(k.secretKey.subarray(0, 32)).sign,
    })),
  ]);
  const outcome = host.bank.processTransaction(decodeTransaction(wire), {
    mode: 'commit',
    verifySignatures: verify,
  });
  if (outcome.err !== null) {
    const logs = outcome.execution?.logs.join('\n') ?? '';
    throw new Error(`devnet: program deployment failed: ${transactionErrorMessage(outcome.err)}\n${logs}`);
  }
}

/** A filled Buffer account holding `elf`, its authority the payer. */
function writeBuffer(host: DeployHost, elf: Uint8Array): PublicKey {
  const buffer = Keypair.generate();
  const payer = host.payer.publicKey;
  send(host, createBuffer({ payer, buffer: buffer.publicKey, authority: payer, programLen: elf.length }), [
    buffer,
  ]);
  for (const ix of writeChunks(buffer.publicKey, payer, elf)) send(host, [ix], []);
  return buffer.publicKey;
}

/**
 * Deploys or upgrades each image whose bytes the chain does not hold yet.
 * Returns true when something landed: the caller closes the slot, since a
 * program deployed in slot N runs from slot N + 1.
 */
export function installPrograms(bank: DeployBank, images: readonly ProgramImage[], log: Logger): boolean {
  const host = { bank, payer: Keypair.fromSeed(bank.faucet.seed) };
  let landed = false;
  for (const image of images) {
    const found = status(host, image);
    const programId = new PublicKey(image.programId);
    const payer = host.payer.publicKey;
    if (found.kind === 'current') continue;
    if (found.kind === 'foreign') {
      log.warn({ programId: image.programId, why: found.why }, 'devnet: program left as it is');
      continue;
    }
    const buffer = writeBuffer(host, image.elf);
    if (found.kind === 'missing') {
      // Room to grow, as `solana program deploy` leaves by default.
      const maxDataLen = image.elf.length * 2;
      send(host, deployWithMaxDataLen({ payer, programId, buffer, authority: payer, maxDataLen }), [], false);
    } else {
      send(host, [upgrade({ programId, buffer, authority: payer, spill: payer })], []);
    }
    log.info(
      {
        programId: image.programId,
        bytes: image.elf.length,
        action: found.kind === 'missing' ? 'deploy' : 'upgrade',
      },
      'devnet: program deployed',
    );
    landed = true;
  }
  return landed;
}
