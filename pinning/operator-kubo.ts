// Operator pin on a Kubo node through its RPC API (kubo-rpc-client): add with
// the same settings computeCid uses, release with `pin rm`.
import { create, type KuboRPCClient } from 'kubo-rpc-client';
import { type Pinner, PinProviderError } from '../src/contracts/pinner.ts';
import { CHUNK_SIZE, normalizeCid, parseCid } from '../src/mail/cid.ts';
import { Deadline, isPermanentStatus } from './http-util.ts';

// Kubo's answer when the CID is not (directly) pinned; releasing it is a no-op.
const NOT_PINNED = /not pinned/i;

export function createKuboPinner(rpcUrl: string, o: { timeoutMs: number }): Pinner {
  // The client's own `timeout` option is not applied in this client version,
  // so every call carries its own deadline signal instead.
  const client: KuboRPCClient = create({ url: rpcUrl });
  return {
    kind: 'kubo',
    async pin(bytes, opts) {
      const d = new Deadline(o.timeoutMs, opts?.signal);
      try {
        const added = await client.add(bytes, {
          cidVersion: 1,
          rawLeaves: true,
          chunker: `size-${CHUNK_SIZE}`,
          pin: true,
          signal: d.signal,
        });
        return { cid: normalizeCid(added.cid.toString()), size: bytes.byteLength };
      } catch (err) {
        throw kuboError(err, d);
      }
    },
    async release(cid, opts) {
      const parsed = parseCid(cid);
      const d = new Deadline(o.timeoutMs, opts?.signal);
      try {
        await client.pin.rm(parsed, { signal: d.signal });
      } catch (err) {
        if (err instanceof Error && NOT_PINNED.test(err.message)) return;
        throw kuboError(err, d);
      }
    },
  };
}

function kuboError(err: unknown, d: Deadline): Error {
  const late = d.timeoutMessage(err);
  if (late) return new PinProviderError('kubo', null, late);
  if (err instanceof Error && (err.name === 'AbortError' || d.caller?.aborted)) return err;
  const status = httpStatus(err);
  const message = err instanceof Error ? err.message : String(err);
  if (status !== null) return new PinProviderError('kubo', status, message, isPermanentStatus(status));
  const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return new PinProviderError('kubo', null, `request failed: ${message}${cause}`);
}

function httpStatus(err: unknown): number | null {
  if (typeof err !== 'object' || err === null || !('response' in err)) return null;
  const res = (err as { response?: { status?: unknown } }).response;
  return typeof res?.status === 'number' ? res.status : null;
}
