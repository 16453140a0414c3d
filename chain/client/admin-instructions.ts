// Builders for the postoffice admin's instructions (tags 50-53,
// docs/protocol.md "The postoffice's admin"): changing the fees, the
// delegate or the root KSK digest, withdrawing collected fees, and handing
// the admin role to another key in two steps.
import type { TransactionInstruction } from '@solana/web3.js';
import { type Key, toPublicKey, ZERO_KEY } from './bytes.ts';
import { instruction } from './ix-helpers.ts';
import { postofficeAddress } from './pda.ts';

export interface UpdatePostofficeParams {
  programId: Key;
  admin: Key;
  /** Each field omitted is left as it is. */
  stampFeeLamports?: bigint;
  settlementSurchargeLamports?: bigint;
  delegateAddress?: Key;
  rootKsk?: Uint8Array;
}

export function updatePostofficeInstruction(p: UpdatePostofficeParams): TransactionInstruction {
  const accounts = { admin: p.admin, postoffice: postofficeAddress(p.programId)[0] };
  return instruction(p.programId, 'UpdatePostoffice', accounts, {
    stampFeeLamports: p.stampFeeLamports ?? null,
    settlementSurchargeLamports: p.settlementSurchargeLamports ?? null,
    delegateAddress: p.delegateAddress === undefined ? null : toPublicKey(p.delegateAddress),
    rootKsk: p.rootKsk ?? null,
  });
}

export interface WithdrawFeesParams {
  programId: Key;
  admin: Key;
  /** Receives the lamports. */
  to: Key;
  amountLamports: bigint;
}

export function withdrawFeesInstruction(p: WithdrawFeesParams): TransactionInstruction {
  const accounts = { admin: p.admin, postoffice: postofficeAddress(p.programId)[0], to: p.to };
  return instruction(p.programId, 'WithdrawFees', accounts, { amountLamports: p.amountLamports });
}

/** Names the key that may take the admin role; `newAdmin` null withdraws a proposal. */
export function proposeAdminInstruction(p: {
  programId: Key;
  admin: Key;
  newAdmin: Key | null;
}): TransactionInstruction {
  const accounts = { admin: p.admin, postoffice: postofficeAddress(p.programId)[0] };
  return instruction(p.programId, 'ProposeAdmin', accounts, {
    newAdmin: p.newAdmin === null ? ZERO_KEY : toPublicKey(p.newAdmin),
  });
}

/** Signed by the proposed key: it becomes the admin. */
export function acceptAdminInstruction(p: { programId: Key; newAdmin: Key }): TransactionInstruction {
  const accounts = { newAdmin: p.newAdmin, postoffice: postofficeAddress(p.programId)[0] };
  return instruction(p.programId, 'AcceptAdmin', accounts, {});
}
