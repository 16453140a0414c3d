// A recipient's own pin provider accepts connections and never answers.
// Its pins are best-effort jobs apart from delivery, so that recipient's
// delivery latency (250 → Email account on chain) must stay within noise of
// a recipient without a provider. The provider is set the way a wallet
// holder sets it: login, step-up, PUT /v1/account/pin-provider.
import { createServer, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { PublicKey } from '@solana/web3.js';
import nodemailer from 'nodemailer';
import { listInbox } from '../../../chain/client/index.ts';
import type { Keypair } from '../../../src/core/keys/keypair-file.ts';
import { STACK_DOMAIN } from '../../harness/stack.ts';
import { setPinProvider } from '../api-client.ts';
import type { Drill } from '../drill.ts';
import type { DrillStack } from '../rig.ts';
import { startDrillStack } from '../rig.ts';

const ROUNDS = 15;

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
}

async function deliverOnce(stack: DrillStack, to: Keypair, i: number): Promise<number> {
  const owner = new PublicKey(to.publicKey);
  const before = (await listInbox(stack.connection, stack.programId, owner, { limit: 1000 })).length;
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port: stack.mxPort,
    secure: false,
    ignoreTLS: true,
  });
  await transport.sendMail({
    envelope: { from: 'drill@remote.example', to: [`${to.address}@${STACK_DOMAIN}`] },
    raw: `From: drill@remote.example\r\nSubject: hang-${i}\r\n\r\nround ${i}\r\n`,
  });
  const t0 = Date.now();
  transport.close();
  for (;;) {
    const n = (await listInbox(stack.connection, stack.programId, owner, { limit: 1000 })).length;
    if (n > before) return Date.now() - t0;
    if (Date.now() - t0 > 120_000) throw new Error(`message ${i} not delivered within 120 s`);
    await sleep(50);
  }
}

export const providerHang: Drill = {
  name: 'provider-hang',
  summary: `a recipient provider that never answers; ${ROUNDS} deliveries each to it and to a recipient without one`,
  budgetMs: 10 * 60_000,
  async run(log) {
    const sockets = new Set<Socket>();
    let accepted = 0;
    const hang = createServer((s) => {
      accepted++;
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.resume(); // read the request, answer nothing, ever
    });
    await new Promise<void>((r) => hang.listen(0, '127.0.0.1', () => r()));
    const port = (hang.address() as { port: number }).port;
    const stack = await startDrillStack({ label: 'hang', wallets: 2 });
    try {
      const [plain, hung] = stack.wallets as [Keypair, Keypair];
      await setPinProvider(stack.apiUrl, hung, { kind: 'remote', endpoint: `http://127.0.0.1:${port}` });
      log(`provider of ${hung.address.slice(0, 8)}… set to a server that never answers`);
      const plainMs: number[] = [];
      const hungMs: number[] = [];
      await deliverOnce(stack, plain, -1); // warm-up
      for (let i = 0; i < ROUNDS; i++) {
        plainMs.push(await deliverOnce(stack, plain, i));
        hungMs.push(await deliverOnce(stack, hung, i));
      }
      const a = median(plainMs);
      const b = median(hungMs);
      // Within noise: 150 ms (scheduling on a shared 2-core machine) or half the median, whichever is larger.
      const tolerance = Math.max(150, a * 0.5);
      return {
        pass: b <= a + tolerance && accepted > 0,
        detail: `median 250 → Email: ${a} ms without a provider, ${b} ms with the hanging one (tolerance ${tolerance.toFixed(0)} ms); ${accepted} pin attempts hung at the provider`,
      };
    } finally {
      await stack.close();
      for (const s of sockets) s.destroy();
      hang.close();
    }
  },
};
