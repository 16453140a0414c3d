// An envelope sender that names a wallet at a domain (`<wallet base58>@<domain>`),
// as the attested-sender badge looks it up.
import { isBase58Key, normalizeDomain } from '../../../chain/client/hash.ts';

/** The (wallet, domain) an envelope sender names, or null when it is no wallet address. */
export function walletSender(from: string): { wallet: string; domain: string } | null {
  const at = from.lastIndexOf('@');
  const wallet = from.slice(0, at);
  if (at <= 0 || !isBase58Key(wallet)) return null;
  try {
    return { wallet, domain: normalizeDomain(from.slice(at + 1)) };
  } catch {
    return null;
  }
}
