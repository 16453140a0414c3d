// The recipient's own pin, a best-effort job apart from delivery (rule 3 of
// "Delivery-time pinning rules"): its failures are logged and dropped and
// never touch delivery or chain state. The provider is read when the job
// runs, so a provider removed meanwhile is not used.

import { createRecipientPinner } from '../pinning/recipient.ts';
import type { RecipientPinJobData } from '../src/contracts/inbound-jobs.ts';
import type { PinProviderConfig } from '../src/contracts/pin-provider.ts';
import type { RecipientPinner } from '../src/contracts/pinner.ts';
import type { BlobStore } from '../src/core/blobs/blob-store.ts';
import type { Logger } from '../src/core/log.ts';
import type { AccountsRepo } from '../src/core/store/index.ts';
import { openPinProvider } from '../src/mail/provider-credentials.ts';

export interface RecipientPinDeps {
  accounts: AccountsRepo;
  blobs: BlobStore;
  credentialKey: Uint8Array;
  logger: Logger;
  timeoutMs: number;
  /** Builds the provider client; the default talks to the real service. */
  pinnerFor?: (cfg: PinProviderConfig) => RecipientPinner;
}

export type RecipientPinOutcome = 'pinned' | 'no-provider';

export async function pinForRecipient(
  deps: RecipientPinDeps,
  data: RecipientPinJobData,
): Promise<RecipientPinOutcome> {
  const stored = await deps.accounts.getPinProvider(data.wallet);
  if (!stored) return 'no-provider';
  const cfg = openPinProvider(deps.credentialKey, data.wallet, stored.sealedCredentials);
  const pinner = (
    deps.pinnerFor ?? ((c) => createRecipientPinner(c, { timeoutMs: deps.timeoutMs, logger: deps.logger }))
  )(cfg);
  const bytes = new Uint8Array(await deps.blobs.read(data.blobKey));
  const result = await pinner.pin(bytes, {
    expectedCid: data.cid,
    name: data.msgid,
    signal: AbortSignal.timeout(deps.timeoutMs),
  });
  deps.logger.info(
    { msgid: data.msgid, wallet: data.wallet, kind: cfg.kind, cid: result.cid },
    'recipient pin made',
  );
  return 'pinned';
}
