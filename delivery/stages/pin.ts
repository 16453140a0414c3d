// Stage 3: the operator pin, authoritative for the CID the chain records.
// Under no_ipfs nothing is pinned anywhere: the cid is the `b3:` marker and
// the sealed body stays in the operator's store only.
import { b3Marker } from '../../pinning/cid.ts';
import type { Pinner } from '../../pinning/types.ts';
import type { BlobStore } from '../../src/blobs/blob-store.ts';
import type { StageResults } from '../jobs.ts';

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
