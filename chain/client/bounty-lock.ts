// A bounty is a promise to its recipient (docs/protocol.md, DeleteMail): while
// `now < expires_at` only the recipient may take it, so DeleteMail signed by
// the email's sender (and not its recipient) is refused with BountyLocked
// until the window ends. Clients check this before they sign. Browser-safe.
import type { Email } from './accounts/index.ts';
import { type Key, toPublicKey } from './bytes.ts';

/**
 * Whether DeleteMail by `signer` would be refused with BountyLocked at chain
 * time `nowSecs` (Unix seconds): the signer is not the recipient, the email
 * still holds a bounty and its claim window is open.
 */
export function deleteBountyLocked(
  email: Pick<Email, 'recipient' | 'bountyLamports' | 'expiresAt'>,
  signer: Key,
  nowSecs: number | bigint,
): boolean {
  if (toPublicKey(signer).equals(email.recipient)) return false;
  return email.bountyLamports > 0n && BigInt(nowSecs) < email.expiresAt;
}
