// Stage 5: the operator's store row for this copy (idempotent per job id),
// pointing at the sealed blob, with the chain facts of the SendMail.

import type { StageResults } from '../../src/contracts/inbound-jobs.ts';
import type { MessagesRepo } from '../../src/core/store/index.ts';

export interface StoreInput {
  copyId: string;
  wallet: string;
  receivedAt: number;
  stages: Required<Pick<StageResults, 'seal' | 'pin' | 'submit'>>;
  /** `Junk` for mail rspamd flagged (published on chain under `[spam] publish_junk`). */
  folder?: string;
}

export async function storeStage(
  messages: MessagesRepo,
  input: StoreInput,
): Promise<NonNullable<StageResults['store']>> {
  const { seal, pin, submit } = input.stages;
  const { message } = await messages.storeDelivered({
    id: input.copyId,
    wallet: input.wallet,
    blobKey: seal.blobKey,
    size: seal.size,
    receivedAt: input.receivedAt,
    cid: pin.cid,
    pinnedByOperator: pin.pinned,
    chainIndex: submit.index,
    emailAddress: submit.emailAddress,
    txSignature: submit.signature,
    publishedByUs: true,
    wraps: seal.wraps,
    ...(input.folder ? { folder: input.folder } : {}),
  });
  return { messageId: message.id };
}
