// Every failure, put in words a person understands. The raw detail stays
// available to the console for failures the page did not expect; a refusal
// (bad input, a program's refusal, the server's 4xx) is shown, not logged.
import { GatewayError, SealFormatError } from '../../src/mail/seal/index.ts';
import { ComposeRefusal } from './chain/compose.ts';
import { MarketInputError } from './chain/market.ts';
import { PinServiceError } from './chain/pin.ts';
import { RepricedError } from './chain/prepay.ts';
import { NoKeyOpensError } from './chain/read.ts';
import { RecipientError } from './chain/recipient.ts';
import { TxFailedError } from './chain/tx.ts';
import { Refusal } from './refusal.ts';
import { ApiRequestError } from './server/api.ts';
import { BackupError } from './wallet/backup.ts';
import { SecretKeyFormatError } from './wallet/secret-key.ts';
import { WrongPassphraseError } from './wallet/vault.ts';

const PROGRAM_ERRORS: Record<string, string> = {
  PostageRequired: 'The recipient asks for postage and you have no stamp toward them yet.',
  NoIpfs: 'The recipient keeps mail off IPFS (no_ipfs); a trustless send is not possible.',
  BountyExpired: 'The bounty’s claim window is already over.',
  PriceAboveCeiling: 'The price per stamp changed above the quoted price; nothing was bought.',
  BountyLocked:
    'The bounty is the recipient’s to claim until its window ends; you can delete this message after that.',
  RelayNotAllowed: 'That mailbox takes relayed mail only through its own mail domain.',
  StampsNotRelayable: 'Stamps a wallet buys for itself pay only for its own direct sends.',
  InsufficientFunds: 'Not enough SOL for this transaction.',
  AlreadyExists: 'That account already exists on chain.',
  NotFound: 'A needed account does not exist on chain.',
  Unauthorized: 'This wallet may not do that.',
  NothingToClaim: 'There is nothing to claim.',
  FromHashMismatch: 'The sender hash does not match the signing wallet.',
  DomainInactive: 'That domain is no longer active.',
  TimelockNotElapsed: 'Its waiting window has not ended yet. Nothing changed.',
  AliasLocked: 'That alias is already listed or offered; cancel that first.',
  BidTooLow:
    'Your bid is too low: the first bid must reach the reserve, later bids the high bid plus 5 % (at least 0.001 SOL). Nothing was spent.',
  AuctionEnded: 'The auction has ended; no more bids. Settle it instead.',
  AuctionNotEnded: 'The auction has not ended yet, so it cannot be settled.',
  OwnListing: 'You cannot buy or bid on your own listing.',
  ListingHasBids: 'Someone has bid on this listing, so it cannot be cancelled; settle it after the end.',
  WrongListingMode: 'That does not apply to this kind of listing (fixed price or auction).',
  EscrowExpired: 'The offer has expired (or its end is not in the future).',
  EscrowNotExpired: 'Only the offering holder can take the alias back before the offer expires.',
  ListingExpired:
    'This listing has expired: it can no longer be bought, only returned to its holder. Nothing was spent.',
  ListingNotExpired: 'Only the holder can take a domain off the market before its listing expires.',
  DomainLocked: 'That domain is already listed; cancel that listing first.',
  DomainPending:
    'A deactivation or reclaim of that domain is pending, so it cannot be listed or bought now. Nothing was spent.',
};

function chainDown(settings: { rpcUrl: string }): string {
  return `The chain RPC at ${settings.rpcUrl} does not answer. Is it running? Check the RPC URL in Settings.`;
}

export interface ErrorContext {
  rpcUrl: string;
  gatewayUrl: string;
}

/** Whether a failure is a refusal put to the holder in words (not a fault worth a console error). */
export function isRefusal(err: unknown): boolean {
  if (err instanceof ApiRequestError) return err.status >= 400 && err.status < 500;
  if (err instanceof TxFailedError) return Boolean(err.mailError?.name && PROGRAM_ERRORS[err.mailError.name]);
  return (
    err instanceof Refusal ||
    err instanceof WrongPassphraseError ||
    err instanceof ComposeRefusal ||
    err instanceof RecipientError ||
    err instanceof RepricedError ||
    err instanceof SecretKeyFormatError ||
    err instanceof NoKeyOpensError ||
    err instanceof BackupError ||
    err instanceof MarketInputError
  );
}

export function humanError(err: unknown, ctx: ErrorContext): string {
  if (err instanceof WrongPassphraseError) return 'Wrong passphrase. Try again.';
  if (
    err instanceof Refusal ||
    err instanceof ComposeRefusal ||
    err instanceof RecipientError ||
    err instanceof RepricedError ||
    err instanceof PinServiceError ||
    err instanceof SecretKeyFormatError ||
    err instanceof NoKeyOpensError ||
    err instanceof ApiRequestError ||
    err instanceof BackupError ||
    err instanceof MarketInputError
  ) {
    return err.message;
  }
  if (err instanceof GatewayError) {
    if (err.status === 404) {
      return `The IPFS gateway at ${ctx.gatewayUrl} does not have this message (404). It may not be pinned anywhere the gateway can reach.`;
    }
    if (err.status === null && /could not fetch/i.test(err.message)) {
      return `The IPFS gateway at ${ctx.gatewayUrl} does not answer. Check the gateway URL in Settings.`;
    }
    return err.message;
  }
  if (err instanceof SealFormatError) return `The message could not be opened: ${err.message}.`;
  if (err instanceof TxFailedError) {
    const name = err.mailError?.name;
    if (name && PROGRAM_ERRORS[name]) return PROGRAM_ERRORS[name];
    return `The transaction failed: ${err.message}`;
  }
  const message = err instanceof Error ? err.message : String(err);
  if (
    /insufficient (funds|lamports)|no record of a prior credit|InsufficientFundsForRent|insufficient funds for rent/i.test(
      message,
    )
  ) {
    return 'Not enough SOL in your wallet to pay for this (fees, rent or postage). Top it up and try again.';
  }
  if (/failed to fetch|fetch failed|networkerror|load failed|ECONNREFUSED/i.test(message))
    return chainDown(ctx);
  if (/User rejected|rejected the request/i.test(message)) return 'The wallet declined the request.';
  return message || 'Something went wrong.';
}
