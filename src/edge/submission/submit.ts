// The one hand-off for mail a user (or a peer Sealpost server) submits, used
// by the 465/587 listeners and by the webmail's "compose through the server":
//   1. the bytes must be carriable as they are (same checks as the MX), with
//      exactly one From field;
//   2. the sender may only use their own addresses (MAIL FROM and header From);
//   3. recipients: local ones must resolve on chain and pass the postage gate,
//      remote ones must be addresses;
//   4. local recipients cost the operator a SendMail each, as MX mail does:
//      the same cost guard applies (authority balance floor, per-sender,
//      per-recipient and overall publication windows), so submitting is no
//      way around the MX's limits; then the account's send-rate windows must
//      have room (all counted here, given back if queuing then fails);
//   5. trace fields on top; remote copies DKIM-signed (only submitted mail is
//      ever signed) and stored content-addressed;
//   6. local recipients' delivery jobs and the outbound job(s) are added in a
//      single atomic Redis step;
//   7. only then, for an account, the Sent copy is stored (sent-copy.ts); a
//      failure there is logged and never fails or repeats the send.
// A failure before step 7 leaves nothing queued and no blob behind.

import { type AcceptDeps, acceptMessage } from '../../../delivery/intake/accept.ts';
import type { OutboundJobData } from '../../contracts/inbound-jobs.ts';
import type { CostGuard, Reservation } from '../../core/limits/cost-guard.ts';
import type { Logger } from '../../core/log.ts';
import { newMessageId } from '../../core/log.ts';
import type { OutboundLedger } from '../../core/store/outbound-ledger.ts';
import type { ChainView } from '../../mail/chain-view.ts';
import type { DkimSigner } from '../../mail/dkim-sign.ts';
import type { RecipientPolicy } from '../../mail/recipients.ts';
import { SmtpReply } from '../../mail/smtp-error.ts';
import type { SpamFilter } from '../../mail/spam/filter.ts';
import { MessageChecker } from '../mx/message-checks.ts';
import { type HeaderFacts, headerFacts, submissionHeaders } from './headers.ts';
import { type DsnRequest, prepareOutbound, removeBlobs } from './outbound.ts';
import { lookup, planRecipients, type RecipientPlan } from './recipients.ts';
import type { SendRate } from './send-rate.ts';
import { ownsAddress, type Submitter, splitAddress } from './sender.ts';
import type { SentCopy } from './sent-copy.ts';
import { SubmitError } from './submit-error.ts';

export type { DsnNotify, DsnRequest } from './outbound.ts';

export interface SubmitDeps {
  /** `[smtp] local_domains` and `postmaster_wallet`. */
  policy: RecipientPolicy;
  chain: ChainView;
  /** Spool, flow producer and retry settings shared with the MX. */
  accept: AcceptDeps;
  /** src/mail/dkim-sign.ts `createDkimSigner([[spooler.dkim]])`. */
  dkim: Pick<DkimSigner, 'sign'>;
  /** Per-account send-rate windows ([smtp] submission_max_per_hour/day). */
  sendRate: SendRate;
  /** The MX's cost guard (docs/cost-guard.md), charged for local recipients; absent means none. */
  costGuard?: Pick<CostGuard, 'checkBalance' | 'reserve' | 'release'>;
  /** `[smtp] max_message_bytes`. */
  maxMessageBytes: number;
  /** `[smtp] max_recipients`. */
  maxRecipients: number;
  /** Name in the Received field and generated Message-IDs: `[smtp] hostname`. */
  hostname: string;
  /**
   * Keeps the Sent copy of an account's queued message (sent-copy.ts
   * `storeSentCopy` bound to the store); absent: no copy is kept.
   */
  sentCopy?: (copy: SentCopy) => Promise<unknown>;
  /**
   * The outbound ledger (src/core/store/outbound-ledger.ts): remote copies are
   * recorded there before they are queued, so a Redis that loses its data
   * loses no accepted message. Absent (no store): Redis alone holds them.
   */
  ledger?: OutboundLedger;
  /**
   * The outbound content scan (`[spam] scan_submission`): every submission is
   * scored by rspamd with its User set before anything is queued, so a
   * compromised account cannot spam the world. Absent: not scanned.
   */
  spam?: Pick<SpamFilter, 'decide'>;
  logger?: Logger;
  now?: () => number;
}

export interface SubmitInput {
  wallet: string;
  raw: Buffer;
  envelopeFrom: string;
  recipients: string[];
  /** For the delivery jobs' records; default 127.0.0.1 (a local caller). */
  remoteIp?: string;
  /** The `with` word of the Received field; default `HTTP` (webmail). */
  protocol?: string;
  /** RFC 3461 requests for remote recipients: ENVID, RET, and NOTIFY and ORCPT per recipient address. */
  dsn?: DsnRequest;
}

export interface SubmitResult {
  msgid: string;
  /** Recipients handed to the inbound pipeline. */
  local: number;
  /** Recipients handed to the outbound spooler. */
  remote: number;
}

/** Webmail's hand-off: submission as the account `input.wallet`. */
export function submitMessage(deps: SubmitDeps, input: SubmitInput): Promise<SubmitResult> {
  const { wallet, ...rest } = input;
  return submitAs(deps, { kind: 'account', wallet }, rest);
}

/** Submission as any submitter (an account, or a peer authenticated by client certificate). */
export async function submitAs(
  deps: SubmitDeps,
  submitter: Submitter,
  input: Omit<SubmitInput, 'wallet'>,
): Promise<SubmitResult> {
  const now = deps.now ?? Date.now;
  if (input.raw.length > deps.maxMessageBytes) {
    throw new SubmitError(
      'too_big',
      `Message exceeds the fixed maximum message size of ${deps.maxMessageBytes} bytes`,
    );
  }
  checkBytes(input.raw);
  const facts = headerFacts(input.raw);
  if (facts.fromFields !== 1 || facts.from.length === 0) {
    throw new SubmitError('bad_message', 'Message must have exactly one From header field with an address');
  }
  await checkSenders(deps, submitter, input.envelopeFrom, facts.from);
  const plan = await planRecipients(deps, input.envelopeFrom, input.recipients);

  const msgid = newMessageId();
  await scanOutbound(deps, submitter, input, plan, msgid);
  const reservations = await reservePublications(deps, input.envelopeFrom, plan);
  const giveBack = async (refundKeys: string[]) => {
    if (reservations.length > 0) await deps.costGuard?.release(reservations).catch(() => {});
    if (refundKeys.length > 0) await deps.sendRate.refund(refundKeys).catch(() => {});
  };
  let refundKeys: string[] = [];
  if (submitter.kind === 'account') {
    const taken = await lookup(() => deps.sendRate.take(submitter.wallet)).catch(async (err) => {
      await giveBack([]);
      throw err;
    });
    if (!taken.ok) {
      await giveBack([]);
      throw new SubmitError(
        'rate_limited',
        `Send rate limit of ${taken.limit} messages per ${taken.window} reached, try again in ${taken.retryAfterSecs} seconds`,
        { retryAfterSecs: taken.retryAfterSecs },
      );
    }
    refundKeys = taken.keys;
  }

  const at = now();
  const messageFor = (id: string) => withTrace(deps, input, facts, id, at);
  try {
    await queue(deps, input, plan, msgid, facts, messageFor, at);
  } catch (err) {
    await giveBack(refundKeys);
    throw err;
  }
  if (submitter.kind === 'account' && deps.sentCopy) {
    // Queued is sent: the copy is a convenience, so its failure is only logged.
    try {
      await deps.sentCopy({
        wallet: submitter.wallet,
        msgid,
        raw: messageFor(msgid),
        envelopeFrom: input.envelopeFrom,
        recipients: [...plan.local.map((r) => r.address), ...plan.remote],
        sentAt: at,
      });
    } catch (err) {
      deps.logger?.warn({ msgid, err: (err as Error).message }, 'sent copy not stored');
    }
  }
  deps.logger?.info(
    {
      msgid,
      sender: submitter.kind === 'account' ? submitter.wallet : `peer:${submitter.name}`,
      local: plan.local.length,
      remote: plan.remote.length,
      size: input.raw.length,
    },
    'submission queued',
  );
  return { msgid, local: plan.local.length, remote: plan.remote.length };
}

/** `[spam] scan_submission`: rspamd's reject refuses the submission, soft reject and greylist defer it. */
async function scanOutbound(
  deps: SubmitDeps,
  submitter: Submitter,
  input: Omit<SubmitInput, 'wallet'>,
  plan: RecipientPlan,
  msgid: string,
): Promise<void> {
  if (!deps.spam) return;
  const user = submitter.kind === 'account' ? submitter.wallet : `peer:${submitter.name}`;
  try {
    const decision = await deps.spam.decide(
      {
        message: input.raw,
        ip: input.remoteIp ?? '127.0.0.1',
        from: input.envelopeFrom,
        rcpts: [...plan.local.map((r) => r.address), ...plan.remote],
        queueId: msgid,
        user,
      },
      'outbound',
    );
    if (decision.kind === 'junk')
      // Flagged but under the reject score: sent as is (our verdict is not written into outgoing mail), and logged.
      deps.logger?.warn(
        { msgid, sender: user, action: decision.fact.action, score: decision.fact.score },
        'outbound spam scan flagged a submission (sent; rspamd did not reject it)',
      );
  } catch (err) {
    if (!(err instanceof SmtpReply)) throw err;
    deps.logger?.warn(
      { msgid, sender: user, reply: `${err.responseCode} ${err.message}`, reason: err.reason },
      'outbound spam scan refused a submission',
    );
    const text = err.message.startsWith(`${err.enhanced} `)
      ? err.message.slice(err.enhanced.length + 1)
      : err.message;
    throw new SubmitError(err.responseCode >= 500 ? 'spam' : 'spam_deferred', text);
  }
}

const GUARD_WORDS = {
  sender: 'publication limit for this sender',
  recipient: 'publication limit for this recipient',
  overall: 'publication limit of this server',
  null_sender: 'publication limit for the null sender',
} as const;

/**
 * One chain publication per local recipient, all or nothing, under the
 * MX's cost guard; nothing when every recipient is remote.
 */
async function reservePublications(
  deps: SubmitDeps,
  envelopeFrom: string,
  plan: RecipientPlan,
): Promise<Reservation[]> {
  const guard = deps.costGuard;
  if (!guard || plan.local.length === 0) return [];
  if (!guard.checkBalance().ok) {
    throw new SubmitError(
      'unavailable',
      'Not accepting mail for local recipients now (the server cannot publish on chain), try again later',
    );
  }
  const held: Reservation[] = [];
  for (const recipient of plan.local) {
    const result = await lookup(() => guard.reserve(envelopeFrom, recipient.wallet)).catch(async (err) => {
      await guard.release(held).catch(() => {});
      throw err;
    });
    if (!result.ok) {
      await guard.release(held).catch(() => {});
      throw new SubmitError(
        'rate_limited',
        `The ${GUARD_WORDS[result.reason]} is reached, try again in ${result.retryAfterSecs} seconds`,
        { recipient: recipient.address, retryAfterSecs: result.retryAfterSecs },
      );
    }
    held.push(result.reservation);
  }
  return held;
}

function checkBytes(raw: Buffer): void {
  const checker = new MessageChecker();
  try {
    checker.check(raw);
    checker.finish();
  } catch (err) {
    if (err instanceof SmtpReply) {
      throw new SubmitError('bad_message', err.message.replace(/^\d\.\d+\.\d+ /, ''));
    }
    throw err;
  }
}

async function checkSenders(
  deps: SubmitDeps,
  submitter: Submitter,
  envelopeFrom: string,
  headerFrom: string[],
): Promise<void> {
  // Only a peer relays bounces (the null sender); a person always sends from an address.
  if (envelopeFrom === '' && submitter.kind !== 'peer') {
    throw new SubmitError('sender_not_owned', 'The null sender <> is not available to accounts', {
      address: '',
    });
  }
  const addresses = envelopeFrom === '' ? headerFrom : [envelopeFrom, ...headerFrom];
  for (const address of addresses) {
    const owned = await lookup(() => ownsAddress(submitter, address, deps.policy, deps.chain));
    if (!owned) {
      throw new SubmitError('sender_not_owned', `Sender address <${address}> is not yours to use`, {
        address,
      });
    }
  }
}

/** The message as queued: trace and missing fields on top of the submitted bytes. */
function withTrace(
  deps: SubmitDeps,
  input: Omit<SubmitInput, 'wallet'>,
  facts: HeaderFacts,
  id: string,
  at: number,
): Buffer {
  const trace = submissionHeaders({
    hostname: deps.hostname,
    msgid: id,
    protocol: input.protocol ?? 'HTTP',
    date: new Date(at),
    facts,
  });
  return Buffer.concat([Buffer.from(trace, 'latin1'), input.raw]);
}

async function queue(
  deps: SubmitDeps,
  input: Omit<SubmitInput, 'wallet'>,
  plan: RecipientPlan,
  msgid: string,
  facts: HeaderFacts,
  messageFor: (id: string) => Buffer,
  at: number,
): Promise<void> {
  const outbound =
    plan.remote.length > 0
      ? await prepareOutbound(
          { blobs: deps.accept.blobs, dkim: deps.dkim, logger: deps.logger },
          {
            msgid,
            envelopeFrom: input.envelopeFrom,
            remote: plan.remote,
            fromDomain: splitAddress(facts.from[0] as string)?.domain ?? '',
            messageFor,
            createdAt: at,
            dsn: input.dsn,
          },
        )
      : { jobs: [], blobKeys: [] };
  const ledgered = outbound.jobs.map((j) => j.data as OutboundJobData);
  try {
    // Durable before it is queued (and so before the 250): reconcile rebuilds it if Redis loses it.
    if (deps.ledger) await deps.ledger.record(ledgered);
    if (plan.local.length > 0) {
      const message = messageFor(msgid);
      await acceptMessage(deps.accept, {
        msgid,
        from: input.envelopeFrom,
        recipients: plan.local,
        remoteIp: input.remoteIp ?? '127.0.0.1',
        receivedAt: at,
        source: once(message),
        maxBytes: message.length,
        alsoQueue: outbound.jobs,
      });
    } else {
      await deps.accept.flow.addBulk(outbound.jobs);
    }
  } catch (err) {
    // Each signed copy carries its own id in its Received field: no other job shares it.
    await deps.ledger?.finish(ledgered.map((d) => d.msgid)).catch(() => undefined);
    await removeBlobs(deps.accept.blobs, outbound.blobKeys);
    if (err instanceof SmtpReply && !err.temporary) throw new SubmitError('bad_message', err.message);
    throw new SubmitError('unavailable', 'Mail queue temporarily unavailable, try again later');
  }
}

async function* once(bytes: Buffer): AsyncGenerator<Uint8Array> {
  yield bytes;
}
