// Stage 2: seal the spooled message to the recipient's key (DESIGN.md
// "Sealing") and store the sealed object in the blob store. Wraps for the
// operator-kept readers of this wallet (its IMAP/POP reader key) are made
// here too, while the content key exists; only the wraps (public-key
// sealed) reach the job data, never the content key.
import bs58 from 'bs58';
import type { Envelope, StageResults } from '../../src/contracts/inbound-jobs.ts';
import type { BlobStore } from '../../src/core/blobs/blob-store.ts';
import { sealMessage, wrapContentKey } from '../../src/mail/seal/index.ts';
import { type AttestedSenderFact, deliveredMessage, type MxTrace } from '../../src/mail/trace.ts';

export interface ReaderKey {
  readerId: string;
  publicKey: Uint8Array;
}

export interface SealDeps {
  blobs: BlobStore;
  /** Operator-kept readers of a wallet; none when the wallet has no mail password. */
  readerKeys?: (wallet: string) => Promise<ReaderKey[]>;
}

export interface SealInput {
  spoolKey: string;
  wallet: string;
  envelope: Envelope;
  receivedAt: number;
  resolve: NonNullable<StageResults['resolve']>;
  /** The queue id (the Received `id`) and our hostname (the authserv-id). */
  queueId: string;
  hostname: string;
  mx?: MxTrace;
  /** The envelope sender is an attested wallet (delivery/stages/attest.ts). */
  attested?: AttestedSenderFact;
}

export async function sealStage(
  deps: SealDeps,
  input: SealInput,
): Promise<NonNullable<StageResults['seal']>> {
  // The sealed message is this recipient's copy: trace fields on top of the bytes as received.
  const raw = deliveredMessage(await deps.blobs.read(input.spoolKey), {
    envelopeFrom: input.envelope.from,
    recipient: input.envelope.to,
    id: input.queueId,
    receivedAt: input.receivedAt,
    hostname: input.hostname,
    mx: input.mx,
    attested: input.attested,
  });
  const { sealed, contentKey } = await sealMessage({
    envelope: { version: 1, from: input.envelope.from, to: input.envelope.to, receivedAt: input.receivedAt },
    raw: new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength),
    recipientPublicKey: bs58.decode(input.resolve.publicKey),
  });
  try {
    const readers = deps.readerKeys ? await deps.readerKeys(input.wallet) : [];
    const wraps: { readerId: string; wrap: string }[] = [];
    for (const r of readers) {
      const wrap = await wrapContentKey(contentKey, r.publicKey);
      wraps.push({ readerId: r.readerId, wrap: Buffer.from(wrap).toString('base64') });
    }
    const stored = await deps.blobs.putContent(sealed);
    return { blobKey: stored.key, size: stored.size, wraps };
  } finally {
    contentKey.fill(0);
  }
}
