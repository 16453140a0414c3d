// Public surface of the accounts store.
export * from './accounts-repo.ts';
export * from './folders-repo.ts';
export * from './intents-repo.ts';
export * from './messages-repo.ts';
export { MIGRATIONS, MigrationError, migrateToLatest } from './migrations/index.ts';
export {
  type OpenStoreOptions,
  openStore,
  type Store,
  type StoreDialect,
  sqlitePathFromUrl,
} from './open-store.ts';
export * from './sender-evaluations-repo.ts';
export type * from './types.ts';
export { toBool } from './types.ts';
