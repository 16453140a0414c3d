// Stage 3: the operator pin, authoritative for the CID the chain records.
// Under no_ipfs nothing is pinned anywhere: the cid is the `b3:` marker and
// the sealed body stays in the operator's store only.

import type { StageResults } from '../../src/contracts/inbound-jobs.ts';
import type { Pinner } from '../../src/contracts/pinner.ts';
import type { BlobStore } from '../../src/core/blobs/blob-store.ts';
import { b3Marker } from '../../src/mail/cid.ts';

export interface PinDeps {
  blobs: BlobStore;
  operatorPin: Pinner;
  timeoutMs?: number;
}

export async function pinStage(
  deps: PinDeps,
  seal: NonNullable<StageResults['seal']>,
  noIpfs: boolean,
): Promise<NonNullable<StageResults['pin']>> {
  const sealed = new Uint8Array(await deps.blobs.read(seal.blobKey));
  if (noIpfs) return { cid: b3Marker(sealed), pinned: false };
  const { cid } = await deps.operatorPin.pin(sealed, {
    signal: AbortSignal.timeout(deps.timeoutMs ?? 60_000),
  });
  return { cid, pinned: true };
}
