// Opening a message in the page: the sealed bytes come from the gateway
// (trustless, checked against the CID) or from the server's mail view
// (server mode, which also holds no_ipfs mail); every key the page holds
// is tried, and the raw message is parsed for display.
import {
  fetchSealedBody,
  GatewayError,
  openSealed,
  type ReaderKeypair,
  type SealEnvelope,
} from '../../../src/mail/seal/index.ts';

export interface OpenedMessage {
  envelope: SealEnvelope;
  raw: Uint8Array;
}

export class NoKeyOpensError extends Error {
  constructor(hint: string) {
    super(`None of your keys opens this message. ${hint}`);
    this.name = 'NoKeyOpensError';
  }
}

export async function openWithKeys(
  sealed: Uint8Array,
  keys: ReaderKeypair[],
  hint: string,
): Promise<OpenedMessage> {
  let last: unknown = null;
  for (const key of keys) {
    try {
      return await openSealed(sealed, key);
    } catch (err) {
      last = err;
    }
  }
  if (keys.length === 0) {
    throw new NoKeyOpensError(
      'This wallet keeps no decryption key in the page: publish a mailbox key (Keys) first.',
    );
  }
  const msg = last instanceof Error ? last.message : '';
  throw new NoKeyOpensError(/another key|no wrap/i.test(msg) || msg === '' ? hint : `${hint} (${msg})`);
}

export async function fetchFromGateway(gatewayUrl: string, cid: string): Promise<Uint8Array> {
  if (cid.startsWith('b3:')) {
    throw new GatewayError(
      'This message is local-only (its mailbox has no_ipfs): the body is on the operator’s server, not on IPFS. Read it in server mode.',
      null,
    );
  }
  return (await fetchSealedBody(gatewayUrl, cid, { timeoutMs: 20_000 })).bytes;
}
