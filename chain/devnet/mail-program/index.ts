// The mail program's rules (docs/protocol.md) as a devnet Program. The bank
// calls process() once per instruction and applies the transaction atomically;
// here each instruction validates everything first, works on a copy of the
// accounts, and writes back only at the end.
import { DecodeError } from '../../accounts/layout.ts';
import { decodeInstruction, type MailInstruction } from '../../instruction-data.ts';
import type { InvokeContext, Program } from '../program-api.ts';
import { createDomain, initPostoffice } from './admin.ts';
import { createAlias, createMailbox, publishKey, removeKey, setMailboxFlags } from './mailbox.ts';
import { Pdas } from './pdas.ts';
import { E, fail, Run } from './runtime.ts';
import { claimBounty, deleteMail, sendMail } from './send.ts';
import { createFrombox, purchaseStamps, reclaimFromboxStamps, updateFrombox } from './stamps.ts';

type Handlers = {
  [K in MailInstruction['kind']]: (run: Run, ix: Extract<MailInstruction, { kind: K }>) => void;
};

const HANDLERS: Handlers = {
  InitPostoffice: initPostoffice,
  CreateMailbox: createMailbox,
  SetMailboxFlags: setMailboxFlags,
  PublishKey: publishKey,
  RemoveKey: removeKey,
  CreateDomain: createDomain,
  SendMail: sendMail,
  DeleteMail: deleteMail,
  CreateAlias: createAlias,
  CreateFrombox: createFrombox,
  UpdateFrombox: updateFrombox,
  AddStamps: purchaseStamps,
  BuyStamps: purchaseStamps,
  TopUpStamps: purchaseStamps,
  ReclaimFromboxStamps: reclaimFromboxStamps,
  ClaimBounty: claimBounty,
};

function decode(data: Uint8Array): MailInstruction {
  try {
    return decodeInstruction(data);
  } catch (err) {
    if (err instanceof DecodeError || err instanceof RangeError) fail(E.InvalidInstruction, err.message);
    throw err;
  }
}

export function createMailProgram(programId: string): Program {
  const pdas = new Pdas(programId);
  return {
    programId,
    // A thrown ProgramError's message is logged by the bank, as a program's msg! before its error.
    process(ctx: InvokeContext): void {
      const ix = decode(ctx.data);
      ctx.log(`Instruction: ${ix.kind}`);
      const run = new Run(ctx, pdas);
      (HANDLERS[ix.kind] as (run: Run, ix: MailInstruction) => void)(run, ix);
      run.commit();
    },
  };
}
