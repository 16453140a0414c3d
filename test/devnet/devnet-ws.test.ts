// devnet's PubSub WebSocket with a raw `ws` client and through web3.js:
// signature, account, program, slot, root and logs subscriptions.
import {
  Keypair,
  LAMPORTS_PER_SOL,
  SystemProgram,
  sendAndConfirmTransaction,
  Transaction,
} from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTestDevnet, type TestDevnet, waitForStatus } from '../support/devnet-node.ts';

let t: TestDevnet;

beforeAll(async () => {
  t = await startTestDevnet({ mailProgram: false });
});

afterAll(async () => {
  await t?.close();
});

type Message = {
  id?: unknown;
  result?: unknown;
  error?: { code: number; message: string };
  method?: string;
  // biome-ignore lint/suspicious/noExplicitAny: notifications are read field by field
  params?: any;
};

class Client {
  readonly messages: Message[] = [];
  private waiters: (() => void)[] = [];
  private nextId = 1;
  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      this.messages.push(JSON.parse(data.toString()) as Message);
      for (const w of this.waiters.splice(0)) w();
    });
  }

  static async open(url: string): Promise<Client> {
    const socket = new WebSocket(url);
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    return new Client(socket);
  }

  async waitFor(pred: (m: Message) => boolean, timeoutMs = 5000): Promise<Message> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.messages.find(pred);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no matching message; got ${JSON.stringify(this.messages)}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }

  async call(method: string, params: unknown[] = []): Promise<Message> {
    const id = this.nextId++;
    this.socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    return this.waitFor((m) => m.id === id);
  }

  notifications(subscription: unknown): Message[] {
    return this.messages.filter((m) => m.params?.subscription === subscription);
  }

  close(): void {
    this.socket.close();
  }
}

async function transfer(from: Keypair, to: Keypair, lamports: number): Promise<string> {
  const tx = new Transaction().add(
    SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: to.publicKey, lamports }),
  );
  return sendAndConfirmTransaction(t.conn, tx, [from]);
}

describe('devnet pubsub', () => {
  it('notifies an already-landed signature right after the subscription ack', async () => {
    const from = Keypair.generate();
    await t.fund(from, 1);
    const signature = await transfer(from, Keypair.generate(), LAMPORTS_PER_SOL / 2);
    await waitForStatus(t.conn, signature, 'confirmed');
    const c = await Client.open(t.devnet.wsUrl);
    const ack = await c.call('signatureSubscribe', [signature, { commitment: 'confirmed' }]);
    expect(typeof ack.result).toBe('number');
    const note = await c.waitFor((m) => m.method === 'signatureNotification');
    expect(note.params).toEqual({
      result: { context: { slot: expect.any(Number) }, value: { err: null } },
      subscription: ack.result,
    });
    expect(c.messages.indexOf(ack)).toBeLessThan(c.messages.indexOf(note));
    // The subscription ended with its notification.
    expect((await c.call('signatureUnsubscribe', [ack.result])).error?.code).toBe(-32602);
    // Finalized comes a few slots later (the test devnet finalizes 4 slots behind).
    const fin = await c.call('signatureSubscribe', [signature, { commitment: 'finalized' }]);
    await c.waitFor((m) => m.method === 'signatureNotification' && m.params.subscription === fin.result);
    c.close();
  });

  it('notifies a pending signature once it lands, with receivedSignature when asked', async () => {
    const from = Keypair.generate();
    const to = Keypair.generate();
    await t.fund(from, 1);
    const tx = new Transaction().add(
      SystemProgram.transfer({
        fromPubkey: from.publicKey,
        toPubkey: to.publicKey,
        lamports: LAMPORTS_PER_SOL / 2,
      }),
    );
    tx.recentBlockhash = (await t.conn.getLatestBlockhash('processed')).blockhash;
    tx.sign(from);
    const signature = (await import('bs58')).default.encode(tx.signature as Buffer);
    const c = await Client.open(t.devnet.wsUrl);
    const processed = await c.call('signatureSubscribe', [signature, { commitment: 'processed' }]);
    const confirmed = await c.call('signatureSubscribe', [
      signature,
      { commitment: 'confirmed', enableReceivedNotification: true },
    ]);
    expect(c.notifications(processed.result)).toHaveLength(0);
    await t.conn.sendRawTransaction(tx.serialize());
    await c.waitFor((m) => m.params?.subscription === processed.result);
    await c.waitFor((m) => m.params?.subscription === confirmed.result && m.params.result.value.err === null);
    const received = c.notifications(confirmed.result);
    expect(received.map((m) => m.params.result.value)).toEqual(['receivedSignature', { err: null }]);
    c.close();
  });

  it('sends account, program and logs notifications', async () => {
    const from = Keypair.generate();
    const to = Keypair.generate();
    await t.fund(from, 2);
    const c = await Client.open(t.devnet.wsUrl);
    const acct = await c.call('accountSubscribe', [
      to.publicKey.toBase58(),
      { commitment: 'confirmed', encoding: 'base64' },
    ]);
    const proc = await c.call('accountSubscribe', [
      to.publicKey.toBase58(),
      { commitment: 'processed', encoding: 'base64' },
    ]);
    const prog = await c.call('programSubscribe', [
      '11111111111111111111111111111111',
      { commitment: 'processed', encoding: 'base64', filters: [{ dataSize: 0 }] },
    ]);
    const logs = await c.call('logsSubscribe', [
      { mentions: [to.publicKey.toBase58()] },
      { commitment: 'processed' },
    ]);
    const signature = await transfer(from, to, LAMPORTS_PER_SOL);
    const note = await c.waitFor((m) => m.params?.subscription === acct.result);
    expect(note.method).toBe('accountNotification');
    expect(note.params.result.value).toMatchObject({
      lamports: LAMPORTS_PER_SOL,
      owner: '11111111111111111111111111111111',
      data: ['', 'base64'],
      executable: false,
    });
    expect(c.notifications(proc.result)).toHaveLength(1);
    const progNote = await c.waitFor(
      (m) =>
        m.params?.subscription === prog.result && m.params.result.value.pubkey === to.publicKey.toBase58(),
    );
    expect(progNote.method).toBe('programNotification');
    const logNote = await c.waitFor((m) => m.params?.subscription === logs.result);
    expect(logNote.params.result.value).toMatchObject({ signature, err: null });
    expect(logNote.params.result.value.logs).toHaveLength(2);
    expect((await c.call('accountUnsubscribe', [acct.result])).result).toBe(true);
    expect((await c.call('accountUnsubscribe', [acct.result])).error).toMatchObject({ code: -32602 });
    c.close();
  });

  it('streams slots and roots, and answers bad requests with JSON-RPC errors', async () => {
    const c = await Client.open(t.devnet.wsUrl);
    const slot = await c.call('slotSubscribe');
    const root = await c.call('rootSubscribe');
    await c.waitFor((m) => m.params?.subscription === slot.result);
    await c.waitFor((m) => m.params?.subscription === root.result);
    const first = c.notifications(slot.result)[0]?.params.result;
    expect(first.parent).toBe(first.slot - 1);
    expect(first.root).toBeLessThanOrEqual(first.slot);
    expect((await c.call('slotUnsubscribe', [slot.result])).result).toBe(true);
    expect((await c.call('slotUnsubscribe', [root.result])).error?.code).toBe(-32602);
    expect((await c.call('fooSubscribe')).error?.code).toBe(-32601);
    expect((await c.call('accountSubscribe', ['nope'])).error?.code).toBe(-32602);
    expect((await c.call('signatureSubscribe', [])).error?.code).toBe(-32602);
    c.socket.send('{not json');
    await c.waitFor((m) => m.error?.code === -32700);
    c.close();
  });

  it('lets web3.js onAccountChange and onSlotChange work', async () => {
    const from = Keypair.generate();
    const to = Keypair.generate();
    await t.fund(from, 2);
    let accountId = 0;
    let slotId = 0;
    const changed = new Promise<number>((resolve) => {
      accountId = t.conn.onAccountChange(to.publicKey, (info) => resolve(info.lamports));
    });
    const slot = new Promise<number>((resolve) => {
      slotId = t.conn.onSlotChange((info) => resolve(info.slot));
    });
    await new Promise((r) => setTimeout(r, 200));
    await transfer(from, to, LAMPORTS_PER_SOL);
    expect(await changed).toBe(LAMPORTS_PER_SOL);
    expect(await slot).toBeGreaterThan(0);
    await t.conn.removeAccountChangeListener(accountId);
    await t.conn.removeSlotChangeListener(slotId);
    // Let web3.js close its idle socket before the node goes away.
    await new Promise((r) => setTimeout(r, 700));
  });
});
