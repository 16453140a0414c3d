// Public surface of the IMAP/POP reader keys (docs/imap-pop3.md).
export {
  DEFAULT_LOCK_PARAMS,
  type LockParams,
  lockSecret,
  ReaderKeyLockError,
  unlockSecret,
} from './lock.ts';
export {
  DEFAULT_LOGIN_BACKOFF,
  type LoginBackoff,
  MailLogin,
  type MailLoginDeps,
  MailLoginError,
  type MailLoginFailure,
} from './mail-login.ts';
export {
  getReaderKey,
  newReaderId,
  openReaderKey,
  type ReaderKeyChange,
  type ReaderKeyDeps,
  readerPublicKeys,
  type StoredReaderKey,
  storeMailCredentials,
  type UnlockedReaderKey,
  unlockForSession,
} from './reader-keys.ts';
