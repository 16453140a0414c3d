// The sealing library (docs/sealing.md). Runs in Node and the browser:
// libsodium's WebAssembly build, Uint8Array only, no Node APIs.
export { decodeEnvelope, encodeEnvelope, MAX_ADDRESS_BYTES, type SealEnvelope } from './envelope.ts';
export { SealFormatError } from './errors.ts';
export {
  DEFAULT_CHUNK_SIZE,
  FORMAT_VERSION,
  MAX_CHUNK_SIZE,
  MIN_CHUNK_SIZE,
  type Preamble,
  parsePreamble,
  WRAP_BYTES,
} from './format.ts';
export {
  type FetchedSealed,
  type FetchSealedOptions,
  fetchSealedBody,
  GatewayError,
  readCappedBody,
} from './gateway.ts';
export { formatMailboxKeyFile, parseMailboxKeyFile } from './key-file.ts';
export {
  generateReaderKeypair,
  type RandomBytes,
  type ReaderKeypair,
  readerKeypairFromSecret,
  unwrapContentKey,
  walletEncryptionKeypair,
  walletEncryptionPublicKey,
  wrapContentKey,
} from './keys.ts';
export { type RecipientSealKey, recipientSealKey, type SealKeySource } from './recipient-key.ts';
export {
  type Opened,
  openContentKey,
  openSealed,
  openSealedWithWrap,
  type Sealed,
  type SealMessageInput,
  type SealOptions,
  sealMessage,
} from './seal.ts';
export { sodiumReady } from './sodium.ts';
export {
  type ByteSource,
  type OpenedStream,
  openSealedStream,
  type SealedStream,
  type SealStreamInput,
  sealMessageStream,
} from './stream.ts';
export { type CidCheck, checkCid } from './verify-cid.ts';
