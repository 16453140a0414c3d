// Recipients of a submission: a local address must name a mailbox on chain
// and pass the postage gate toward it (answered now, not bounced later); any
// other address goes to the outbound spooler and only has to look like one.
import type { ChainView } from '../smtp/chain-view.ts';
import {
  postageGate,
  type RecipientPolicy,
  type ResolvedRecipient,
  resolveRecipient,
} from '../smtp/recipients.ts';
import { splitAddress } from './sender.ts';
import { SubmitError } from './submit-error.ts';

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
  for (const address of new Set(recipients)) {
    const local = await classifyRecipient(deps, envelopeFrom, address);
    if (local) plan.local.push(local);
    else plan.remote.push(address);
  }
  return plan;
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
    throw new SubmitError('bad_recipient', `No such mailbox here: <${address}>`, { recipient: address });
  }
  const gate = await lookup(() => postageGate(envelopeFrom, resolved.recipient, deps.chain));
  if (!gate.ok) {
    throw new SubmitError(
      'postage_required',
      `Recipient <${address}> asks first-contact senders for postage of ${gate.requiredPostage} lamports per message: ` +
        'buy a stamp toward this wallet and send again',
      { recipient: address },
    );
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
