// The physical floor of one inbound message: seal it (crypto_box_seal wrap +
// secretstream), compute its CIDv1 (what the operator pin yields) and its
// blake3 (the no_ipfs marker and the chain's hashes), in a tight loop in one
// process. Every other path in the table does at least this per message.
import { blake3 } from '@noble/hashes/blake3.js';
import { computeCid } from '../../src/mail/cid.ts';
import { generateReaderKeypair, sealMessage, sodiumReady } from '../../src/mail/seal/index.ts';

export interface FloorResult {
  messages: number;
  microsPerMessage: number;
  perSecond: number;
  sealMicros: number;
  cidMicros: number;
  blake3Micros: number;
}

export async function measureFloor(opts: { messages: number; bytes: number }): Promise<FloorResult> {
  await sodiumReady();
  const reader = generateReaderKeypair();
  const line = `${'0123456789abcdef'.repeat(4)}\r\n`;
  const raw = new TextEncoder().encode(
    `From: floor@load.example\r\nSubject: floor\r\n\r\n${line.repeat(Math.ceil(opts.bytes / line.length))}`,
  );
  const spent = { seal: 0, cid: 0, blake3: 0 };
  const once = async (i: number) => {
    const t0 = performance.now();
    const { sealed, contentKey } = await sealMessage({
      envelope: {
        version: 1,
        from: 'floor@load.example',
        to: 'rcpt@bench.test',
        receivedAt: 1_700_000_000_000 + i,
      },
      raw,
      recipientPublicKey: reader.publicKey,
    });
    contentKey.fill(0);
    const t1 = performance.now();
    await computeCid(sealed);
    const t2 = performance.now();
    blake3(sealed);
    const t3 = performance.now();
    spent.seal += t1 - t0;
    spent.cid += t2 - t1;
    spent.blake3 += t3 - t2;
  };
  for (let i = 0; i < Math.min(200, opts.messages); i++) await once(i); // warm-up (JIT, WebAssembly)
  Object.assign(spent, { seal: 0, cid: 0, blake3: 0 });
  const t0 = performance.now();
  for (let i = 0; i < opts.messages; i++) await once(i);
  const ms = performance.now() - t0;
  const micros = (total: number) => (total * 1000) / opts.messages;
  return {
    messages: opts.messages,
    microsPerMessage: micros(ms),
    perSecond: opts.messages / (ms / 1000),
    sealMicros: micros(spent.seal),
    cidMicros: micros(spent.cid),
    blake3Micros: micros(spent.blake3),
  };
}
