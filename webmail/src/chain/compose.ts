// The trustless compose flow in the page. The checks, pricing, sealing,
// pinning and SendMail building are shared with the CLI
// (src/mail/trustless/send.ts); the page adds the draft (subject and body typed
// in, built into an RFC 5322 message here) and signs with its wallet.
import type { StampQuote } from '../../../chain/client/client.ts';
import { fetchStampQuote } from '../../../chain/client/client.ts';
import {
  buildSendMail,
  type ComposeStep,
  directEnvelope,
  type Prepared,
  sealAndPin,
} from '../../../src/mail/trustless/send.ts';
import { buildMessage, type DraftAttachment, newMessageId, toOutgoing } from '../mail/build-message.ts';
import type { Wallet } from '../wallet/wallet.ts';
import type { ResolvedRecipient } from './recipient.ts';
import { type PollOptions, sendInstructions, TxFailedError } from './tx.ts';

export {
  bountyTerms,
  ComposeRefusal,
  type ComposeStep,
  DEFAULT_CLAIM_DAYS,
  formatSol,
  LAMPORTS_PER_SOL,
  needsPostage,
  type Prepared,
  parseSol,
  prepareSend,
  type RefusalCode,
  type SendCost,
  SIGNATURE_FEE,
} from '../../../src/mail/trustless/send.ts';

export interface Draft {
  to: string;
  subject: string;
  body: string;
  /** SOL as typed; blank = a plain send. */
  bountySol: string;
  /** Days as typed; blank = the default 7. */
  claimDays: string;
  /** The parent of a reply: its Email account and, when known, its Message-ID. */
  replyTo: { email: string; messageId: string | null; references: string[] } | null;
  /** Sent after the text: a forward as an attachment carries the original as message/rfc822. */
  attachments?: DraftAttachment[];
}

export type ComposeResult =
  | { kind: 'sent'; emailAddress: string; signature: string; cid: string }
  | { kind: 'pending'; emailAddress: string; signature: string; cid: string }
  | { kind: 'held'; recipient: ResolvedRecipient; quote: StampQuote };

export interface ComposeDeps {
  conn: import('@solana/web3.js').Connection;
  programId: string;
  wallet: Wallet;
  /** Pins sealed bytes; resolves to the CID the pin service reports. */
  pin: (bytes: Uint8Array) => Promise<string>;
  now?: () => number;
  random?: (n: number) => Uint8Array;
  poll?: PollOptions;
  /** Progress for the screen: 'resolve' | 'seal' | 'pin' | 'sign' | 'confirm'. */
  onStep?: (step: ComposeStep) => void;
}

/** Seals, pins and sends a prepared draft. */
export async function executeSend(
  deps: ComposeDeps,
  draft: Draft,
  prepared: Extract<Prepared, { kind: 'ready' }>,
): Promise<ComposeResult> {
  const { conn, programId, wallet } = deps;
  const now = deps.now ?? Date.now;
  const random = deps.random ?? ((n: number) => crypto.getRandomValues(new Uint8Array(n)));
  const step = deps.onStep ?? (() => {});
  const { recipient, bounty } = prepared;
  const { from, to, domain } = await directEnvelope(conn, programId, wallet.publicKey, recipient);
  const raw = buildMessage({
    from,
    to: [to],
    subject: draft.subject,
    text: draft.body,
    date: new Date(now()),
    messageId: newMessageId(domain, random),
    inReplyTo: draft.replyTo?.messageId ?? undefined,
    references: draft.replyTo?.messageId
      ? [...(draft.replyTo.references ?? []), draft.replyTo.messageId]
      : undefined,
    attachments: toOutgoing(draft.attachments),
  });
  const { cid } = await sealAndPin(deps, { recipient, envelope: { from, to }, raw, pin: deps.pin });

  for (let attempt = 0; ; attempt++) {
    const built = await buildSendMail(deps, {
      recipient: recipient.wallet,
      cid,
      bounty,
      replyTo: draft.replyTo?.email ?? null,
    });
    try {
      step('sign');
      const out = await sendInstructions(conn, wallet, [built.ix], {
        ...deps.poll,
        // The price the confirmation showed (the limit sized for the instruction as built).
        priorityFee: prepared.cost.feeQuote,
        onSubmitted: () => step('confirm'),
      });
      return {
        kind: out.status === 'confirmed' ? 'sent' : 'pending',
        emailAddress: built.emailAddress,
        signature: out.signature,
        cid,
      };
    } catch (err) {
      const name = err instanceof TxFailedError ? err.mailError?.name : undefined;
      if ((name === 'InvalidPda' || name === 'AlreadyExists') && attempt < 3) continue;
      if (name === 'PostageRequired') {
        const quote = await fetchStampQuote(conn, programId, {
          buyer: wallet.publicKey,
          recipient: recipient.wallet,
          stamps: 1n,
        });
        return { kind: 'held', recipient, quote };
      }
      throw err;
    }
  }
}
