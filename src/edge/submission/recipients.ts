// Recipients of a submission: a local address must name a mailbox on chain
// and pass the postage gate toward it (answered now, not bounced later); any
// other address goes to the outbound spooler and only has to look like one.
import type { ChainView } from '../../mail/chain-view.ts';
import {
  postageGate,
  type RecipientPolicy,
  type ResolvedRecipient,
  resolveRecipient,
} from '../../mail/recipients.ts';
import { splitAddress } from './sender.ts';
import { type PostageHold, SubmitError } from './submit-error.ts';

export interface RecipientDeps {
  policy: RecipientPolicy;
  chain: ChainView;
  /** `[smtp] max_recipients`. */
  maxRecipients: number;
}

export interface RecipientPlan {
  local: ResolvedRecipient[];
  remote: string[];
}

/** Chain and Redis failures are temporary, never a refusal. */
export async function lookup<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof SubmitError) throw err;
    throw new SubmitError('unavailable', 'Temporary lookup failure, try again later');
  }
}

/** Local recipients resolved on chain (and through the postage gate); remote ones checked for form. */
export async function planRecipients(
  deps: RecipientDeps,
  envelopeFrom: string,
  recipients: string[],
): Promise<RecipientPlan> {
  if (recipients.length === 0) throw new SubmitError('no_recipients', 'No recipients');
  if (recipients.length > deps.maxRecipients) {
    throw new SubmitError('bad_recipient', `Too many recipients (at most ${deps.maxRecipients} per message)`);
  }
  const plan: RecipientPlan = { local: [], remote: [] };
  // Every recipient held for postage is named at once, so a client can pay
  // for each and send the rest (docs/submission.md "Postage holds").
  const held: PostageHold[] = [];
  for (const address of new Set(recipients)) {
    let local: ResolvedRecipient | null;
    try {
      local = await classifyRecipient(deps, envelopeFrom, address);
    } catch (err) {
      if (err instanceof SubmitError && err.code === 'postage_required' && err.detail.postage) {
        held.push(...err.detail.postage);
        continue;
      }
      throw err;
    }
    if (local) plan.local.push(local);
    else plan.remote.push(address);
  }
  if (held.length > 0) throw postageError(held);
  return plan;
}

function postageError(held: PostageHold[]): SubmitError {
  const first = held[0] as PostageHold;
  const text =
    held.length === 1
      ? `Recipient <${first.address}> asks first-contact senders for postage of ${first.requiredPostage} lamports per message: ` +
        'buy a stamp toward this wallet and send again'
      : `${held.length} recipients ask first-contact senders for postage (${held
          .map((h) => `<${h.address}> ${h.requiredPostage} lamports`)
          .join(', ')}): buy a stamp toward each wallet, or send without them; nothing was sent`;
  return new SubmitError('postage_required', text, { recipient: first.address, postage: held });
}

/** The resolved local recipient, or null for a remote address; throws for anything unusable. */
export async function classifyRecipient(
  deps: Pick<RecipientDeps, 'policy' | 'chain'>,
  envelopeFrom: string,
  address: string,
): Promise<ResolvedRecipient | null> {
  const parts = splitAddress(address);
  if (!parts || !isMailAddress(address)) {
    throw new SubmitError('bad_recipient', `Bad recipient address <${address}>`, { recipient: address });
  }
  if (!deps.policy.localDomains.includes(parts.domain)) return null;
  const resolved = await lookup(() => resolveRecipient(address, deps.policy, deps.chain));
  if (!resolved.ok) {
    const why =
      resolved.reason === 'closing'
        ? `Mailbox <${address}> is closing and takes no new mail`
        : resolved.reason === 'domain-inactive'
          ? `Domain ${resolved.detail ?? parts.domain} has been deactivated: <${address}> takes no mail`
          : resolved.reason === 'domain-listed'
            ? `Domain ${resolved.detail ?? parts.domain} is being transferred on chain: <${address}> takes no mail until that ends`
            : resolved.reason === 'relay-not-allowed'
              ? resolved.detail === undefined
                ? `<${address}>: this mailbox has no mail domain; its owner can join one (sealpost mailbox domain set)`
                : `<${address}>: this mailbox takes relayed mail only through its own domain (${resolved.detail}), not through this server`
              : `No such mailbox here: <${address}>`;
    throw new SubmitError('bad_recipient', why, { recipient: address });
  }
  const gate = await lookup(() => postageGate(envelopeFrom, resolved.recipient, deps.chain));
  if (!gate.ok) {
    throw postageError([
      { address, wallet: resolved.recipient.wallet, requiredPostage: gate.requiredPostage },
    ]);
  }
  return resolved.recipient;
}

// local@domain with a dotted (or bracketed literal) domain; no spaces or controls.
function isMailAddress(address: string): boolean {
  if (address.length > 254) return false;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused.
  if (/[\s\u0000-\u001f\u007f<>]/.test(address)) return false;
  const domain = address.slice(address.lastIndexOf('@') + 1);
  return /^(\[[^\]]+\]|[^.@]+(\.[^.@]+)+)$/.test(domain);
}
