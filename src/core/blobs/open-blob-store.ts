// The blob store a process uses, by `[blobs] backend`: the filesystem under
// `<data_dir>/blobs` (the embedded default) or the store's PostgreSQL
// database (./pg-blob-store.ts), which needs `[store] url` to be PostgreSQL.
import { join } from 'node:path';
import type { Store } from '../store/open-store.ts';
import { type BlobBackend, type BlobStore, FsBlobStore } from './blob-store.ts';
import { PgBlobStore } from './pg-blob-store.ts';

export function openBlobStore(
  config: { blobs?: { backend: BlobBackend }; store: { data_dir: string } },
  store: Pick<Store, 'db' | 'dialect'>,
  backend: BlobBackend = config.blobs?.backend ?? 'fs',
): BlobStore {
  if (backend === 'fs') return new FsBlobStore(join(config.store.data_dir, 'blobs'));
  if (store.dialect !== 'postgres')
    throw new Error('[blobs] backend = "postgres" needs [store] url to be a postgres:// URL');
  return new PgBlobStore(store.db);
}
