// libsodium (the WebAssembly build, same code in Node and the browser) and
// the two things its JS wrapper leaves to the caller: waiting for the module
// to load, and releasing secretstream state.
import sodium from 'libsodium-wrappers';

export type Sodium = typeof sodium;

/** Resolves once libsodium's WebAssembly module is loaded; cheap to call again. */
export async function sodiumReady(): Promise<void> {
  await sodium.ready;
  poolRandom();
}

let loaded: Sodium | undefined;
sodium.ready.then(
  () => {
    loaded = sodium;
  },
  () => undefined,
);

/** libsodium if its module has finished loading, for synchronous callers with a fallback of their own. */
export function sodiumIfLoaded(): Sodium | undefined {
  return loaded;
}

/** libsodium, loaded. Every async entry point of src/mail/seal goes through here. */
export async function loadSodium(): Promise<Sodium> {
  await sodium.ready;
  poolRandom();
  return sodium;
}

interface RandomSource {
  getRandomValue?: () => number;
}

const POOL_WORDS = 1024;
let pooled = false;

/**
 * The WebAssembly build draws its randomness one byte at a time, each byte a
 * call to the module's `getRandomValue`, which asks the platform CSPRNG
 * (crypto.getRandomValues) for one fresh 32-bit word: about 120 calls per
 * sealed message (the ephemeral key of every wrap, the content key, the
 * stream header), several microseconds each. The same source is asked here
 * for 1,024 words at a time, handed out in order and wiped as they are used.
 * Typed loosely on purpose, as releaseStreamState: a build without the hook
 * keeps its own.
 */
function poolRandom(): void {
  if (pooled) return;
  pooled = true;
  const module = (sodium as unknown as { libsodium?: RandomSource }).libsodium;
  if (typeof module?.getRandomValue !== 'function') return;
  const pool = new Uint32Array(POOL_WORDS);
  let next = POOL_WORDS;
  module.getRandomValue = () => {
    if (next === POOL_WORDS) {
      globalThis.crypto.getRandomValues(pool);
      next = 0;
    }
    const word = pool[next] as number;
    pool[next++] = 0;
    return word >>> 0;
  };
}

/** Secretstream state as the wrapper hands it out: a pointer into the module's heap. */
export type StreamState = ReturnType<Sodium['crypto_secretstream_xchacha20poly1305_init_pull']>;

interface WasmHeap {
  HEAPU8?: Uint8Array;
  _free?: (ptr: number) => void;
}

/**
 * The wrapper mallocs 52 bytes of state per stream (holding key material)
 * and never frees it; a long-running server would leak it per message. The
 * state is wiped and freed here. Typed loosely on purpose: the heap handle is
 * not part of the wrapper's declared API, so a build without it just skips.
 */
export function releaseStreamState(s: Sodium, state: StreamState): void {
  const ptr = state as unknown;
  const heap = (s as unknown as { libsodium?: WasmHeap }).libsodium;
  if (typeof ptr !== 'number' || !heap) return;
  heap.HEAPU8?.fill(0, ptr, ptr + 52);
  heap._free?.(ptr);
}
