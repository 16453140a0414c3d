// devnet's JSON-RPC surface over real HTTP: error shapes, batches, CORS, the
// body limit, bad input (fuzzed), account queries and program-account filters.
import { randomBytes } from 'node:crypto';
import {
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  SystemProgram,
  sendAndConfirmTransaction,
  Transaction,
} from '@solana/web3.js';
import bs58 from 'bs58';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDevnet, type TestDevnet } from '../support/devnet-node.ts';

const SYSTEM = '11111111111111111111111111111111';
let t: TestDevnet;

beforeAll(async () => {
  t = await startTestDevnet({ mailProgram: false, maxBodyBytes: 64 * 1024 });
});

afterAll(async () => {
  await t?.close();
});

describe('devnet JSON-RPC errors', () => {
  it('answers malformed JSON with -32700 and a bad request object with -32600', async () => {
    expect((await t.post('{"jsonrpc":"2.0",')).body).toEqual({
      jsonrpc: '2.0',
      error: { code: -32700, message: 'Parse error' },
      id: null,
    });
    expect((await t.post('42')).body).toMatchObject({ error: { code: -32600 }, id: null });
    expect((await t.post('{"jsonrpc":"1.0","id":7,"method":"getSlot"}')).body).toMatchObject({
      error: { code: -32600, message: 'Invalid request' },
      id: 7,
    });
    expect((await t.post('{"jsonrpc":"2.0","id":{},"method":"getSlot"}')).body).toMatchObject({
      error: { code: -32600 },
    });
    expect((await t.post('[]')).body).toMatchObject({ error: { code: -32600 } });
  });

  it('answers an unknown method with -32601 and bad params with -32602', async () => {
    expect(await t.rpc('getNothing')).toMatchObject({ error: { code: -32601, message: 'Method not found' } });
    expect((await t.rpc('getBalance', [])).error?.code).toBe(-32602);
    expect(await t.rpc('getBalance', ['not-a-key'])).toMatchObject({
      error: { code: -32602, message: 'Invalid param: Invalid' },
    });
    expect(await t.rpc('getBalance', ['1111'])).toMatchObject({
      error: { code: -32602, message: 'Invalid param: WrongSize' },
    });
    expect((await t.rpc('getBalance', [SYSTEM, 'finalized'])).error?.code).toBe(-32602);
    expect((await t.rpc('getBalance', [SYSTEM, { commitment: 'soon' }])).error?.code).toBe(-32602);
    expect((await t.rpc('getMinimumBalanceForRentExemption', [-1])).error?.code).toBe(-32602);
    expect((await t.rpc('getSignatureStatuses', [['xyz']])).error?.code).toBe(-32602);
    expect((await t.rpc('getMultipleAccounts', [Array(101).fill(SYSTEM)])).error?.message).toBe(
      'Too many inputs provided; max 100',
    );
    expect(
      (await t.rpc('getTransaction', [bs58.encode(randomBytes(64)), { commitment: 'processed' }])).error
        ?.message,
    ).toBe('Method does not support commitment below `confirmed`');
    const params = await t.post(
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getSlot', params: { a: 1 } }),
    );
    expect(params.body).toMatchObject({ error: { code: -32602 } });
  });

  it('refuses undecodable transactions with -32602', async () => {
    const bad64 = await t.rpc('sendTransaction', ['!!!not base64!!!', { encoding: 'base64' }]);
    expect(bad64.error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/^invalid base64 encoding/),
    });
    const short = await t.rpc('sendTransaction', [
      Buffer.from([1, 2, 3]).toString('base64'),
      { encoding: 'base64' },
    ]);
    expect(short.error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/^failed to deserialize/),
    });
    const bad58 = await t.rpc('sendTransaction', ['0OIl']);
    expect(bad58.error?.message).toMatch(/^invalid base58 encoding/);
    const big = await t.rpc('sendTransaction', [
      randomBytes(1300).toString('base64'),
      { encoding: 'base64' },
    ]);
    expect(big.error?.message).toMatch(/too large/);
    const enc = await t.rpc('sendTransaction', ['AA==', { encoding: 'hex' }]);
    expect(enc.error?.code).toBe(-32602);
    // A v0 message with an address lookup table: refused with a clear message.
    const payer = Keypair.generate();
    const message = Buffer.concat([
      Buffer.from([0x80, 1, 0, 1, 2]),
      payer.publicKey.toBuffer(),
      Buffer.from(bs58.decode(SYSTEM)),
      randomBytes(32),
      Buffer.from([0]),
      Buffer.from([1]),
      randomBytes(32),
      Buffer.from([1, 0, 0]),
    ]);
    const wire = Buffer.concat([Buffer.from([1]), randomBytes(64), message]);
    const lookup = await t.rpc('sendTransaction', [wire.toString('base64'), { encoding: 'base64' }]);
    expect(lookup.error?.message).toMatch(/address lookup tables are not supported/);
  });

  it('handles batches, notifications included', async () => {
    const res = await t.post(
      JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'getSlot', params: [{ commitment: 'processed' }] },
        { jsonrpc: '2.0', method: 'getSlot' },
        { jsonrpc: '2.0', id: 'b', method: 'nope' },
        7,
        { jsonrpc: '2.0', id: 3, method: 'getHealth' },
      ]),
    );
    const body = res.body as { id: unknown; result?: unknown; error?: { code: number } }[];
    expect(body).toHaveLength(4);
    expect(typeof body[0]?.result).toBe('number');
    expect(body[1]).toMatchObject({ id: 'b', error: { code: -32601 } });
    expect(body[2]).toMatchObject({ id: null, error: { code: -32600 } });
    expect(body[3]).toMatchObject({ id: 3, result: 'ok' });
    const silent = await t.post(JSON.stringify({ jsonrpc: '2.0', method: 'getSlot' }));
    expect(silent).toMatchObject({ status: 200, body: '' });
  });

  it('sends CORS headers, answers preflight, GET /health, and limits the body', async () => {
    const pre = await fetch(t.devnet.rpcUrl, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://localhost:5173',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,solana-client',
      },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    expect(pre.headers.get('access-control-allow-headers')).toBe('content-type,solana-client');
    const res = await t.post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getSlot' }));
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(await (await fetch(`${t.devnet.rpcUrl}/health`)).text()).toBe('ok');
    expect((await fetch(t.devnet.rpcUrl)).status).toBe(405);
    const huge = await t.post(
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getSlot', pad: 'x'.repeat(70_000) }),
    );
    expect(huge.status).toBe(413);
  });

  it('never crashes on fuzzed input', async () => {
    const methods = [
      'getAccountInfo',
      'getBalance',
      'sendTransaction',
      'simulateTransaction',
      'getProgramAccounts',
      'getSignatureStatuses',
      'getTransaction',
      'getMultipleAccounts',
      'requestAirdrop',
      'getFeeForMessage',
      'getSignaturesForAddress',
      'getLatestBlockhash',
      'getMinimumBalanceForRentExemption',
      'getBlockTime',
    ];
    const values = [
      null,
      0,
      -1,
      1e300,
      'x',
      '',
      true,
      [],
      {},
      [null],
      { encoding: 'jsonParsed' },
      { filters: [{}] },
      randomBytes(40).toString('base64'),
      bs58.encode(randomBytes(32)),
      { dataSlice: { offset: -1 } },
      { filters: [{ memcmp: { offset: 0, bytes: '!!' } }] },
      { commitment: 7 },
      [SYSTEM],
      'A'.repeat(5000),
    ];
    const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)] as T;
    // Small batches: the test devnet's body limit is 64 KiB.
    for (let round = 0; round < 20; round++) {
      const batch = Array.from({ length: 10 }, (_, i) => ({
        jsonrpc: '2.0',
        id: i,
        method: pick(methods),
        params: Array.from({ length: Math.floor(Math.random() * 3) }, () => pick(values)),
      }));
      const res = await t.post(JSON.stringify(batch));
      const body = res.body as { error?: { code: number; message: string } }[];
      expect(body).toHaveLength(10);
      for (const r of body) if (r.error) expect(r.error.code, r.error.message).not.toBe(-32603);
    }
    const garbage = await t.post(randomBytes(512).toString('latin1'));
    expect(garbage.body).toMatchObject({ error: { code: -32700 } });
    expect((await t.rpc('getHealth')).result).toBe('ok');
  });
});

describe('devnet account queries', () => {
  it('serves getAccountInfo / getMultipleAccounts in every encoding, with dataSlice', async () => {
    const payer = Keypair.generate();
    await t.fund(payer, 2);
    const system = await t.rpc('getAccountInfo', [SYSTEM, { encoding: 'base64' }]);
    expect(system.result.value).toMatchObject({
      executable: true,
      owner: 'NativeLoader1111111111111111111111111111111',
    });
    const wallet = await t.rpc('getAccountInfo', [payer.publicKey.toBase58(), { encoding: 'jsonParsed' }]);
    expect(wallet.result.value).toMatchObject({
      data: ['', 'base64'],
      lamports: 2 * LAMPORTS_PER_SOL,
      owner: SYSTEM,
      space: 0,
    });
    expect((await t.rpc('getAccountInfo', [payer.publicKey.toBase58()])).result.value.data).toBe('');
    const missing = Keypair.generate().publicKey;
    const multi = await t.conn.getMultipleAccountsInfo([payer.publicKey, missing]);
    expect(multi[0]?.lamports).toBe(2 * LAMPORTS_PER_SOL);
    expect(multi[1]).toBeNull();
    const { value } = await t
      .rpc('getAccountInfo', [SYSTEM, { encoding: 'base64', dataSlice: { offset: 7, length: 6 } }])
      .then((r) => r.result);
    // The runtime's builtin account: owned by the native loader, its data the program's name.
    expect(Buffer.from(value.data[0], 'base64').toString()).toBe('system');
    expect(value.space).toBe('solana_system_program'.length);
    expect(value.owner).toBe('NativeLoader1111111111111111111111111111111');
    expect(value.executable).toBe(true);
  });

  it('filters getProgramAccounts by dataSize and memcmp (base58 and base64)', async () => {
    const payer = Keypair.generate();
    const owner = Keypair.generate();
    await t.fund(payer, 5);
    // Accounts the System program owns but with data (Allocate keeps the owner).
    const sized = [Keypair.generate(), Keypair.generate(), Keypair.generate()];
    const sizes = [10, 10, 33];
    const tx = new Transaction();
    for (const [i, kp] of sized.entries()) {
      const size = sizes[i] as number;
      tx.add(
        SystemProgram.createAccount({
          fromPubkey: payer.publicKey,
          newAccountPubkey: kp.publicKey,
          lamports: (128 + size) * 6960,
          space: size,
          programId: i === 2 ? owner.publicKey : SystemProgram.programId,
        }),
      );
    }
    await sendAndConfirmTransaction(t.conn, tx, [payer, ...sized]);
    const addresses = (list: readonly { pubkey: PublicKey }[]) => list.map((a) => a.pubkey.toBase58()).sort();

    const bySize = await t.conn.getProgramAccounts(SystemProgram.programId, { filters: [{ dataSize: 10 }] });
    expect(addresses(bySize)).toEqual([sized[0], sized[1]].map((k) => k?.publicKey.toBase58()).sort());

    const owned = await t.conn.getProgramAccounts(owner.publicKey);
    expect(addresses(owned)).toEqual([sized[2]?.publicKey.toBase58()]);
    expect(owned[0]?.account.data.length).toBe(33);

    // Zeroed data: a zero byte at offset 32 only fits the 33-byte account.
    const zero58 = await t.conn.getProgramAccounts(owner.publicKey, {
      filters: [{ memcmp: { offset: 32, bytes: '1' } }],
    });
    expect(zero58).toHaveLength(1);
    const past = await t.conn.getProgramAccounts(owner.publicKey, {
      filters: [{ memcmp: { offset: 33, bytes: '1' } }],
    });
    expect(past).toHaveLength(0);
    const one = await t.rpc('getProgramAccounts', [
      owner.publicKey.toBase58(),
      {
        encoding: 'base64',
        filters: [{ memcmp: { offset: 0, bytes: Buffer.from([1]).toString('base64'), encoding: 'base64' } }],
      },
    ]);
    expect(one.result).toEqual([]);
    const ctx = await t.rpc('getProgramAccounts', [
      owner.publicKey.toBase58(),
      { encoding: 'base64', withContext: true, dataSlice: { offset: 0, length: 0 } },
    ]);
    expect(ctx.result.context.slot).toBeGreaterThan(0);
    expect(ctx.result.value[0].account.data).toEqual(['', 'base64']);
    const tooMany = await t.rpc('getProgramAccounts', [
      owner.publicKey.toBase58(),
      { filters: Array(5).fill({ dataSize: 1 }) },
    ]);
    expect(tooMany.error?.message).toBe('Too many filters provided; max 4');
    expect(new PublicKey(owner.publicKey).equals(owner.publicKey)).toBe(true);
  });

  it('serves u64 lamports exactly', async () => {
    const faucet = t.devnet.bank.faucetAddress;
    const res = await t.post(
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getBalance', params: [faucet] }),
    );
    expect(res.status).toBe(200);
    const raw = await fetch(t.devnet.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getBalance', params: [faucet] }),
    }).then((r) => r.text());
    const digits = /"value":(\d+)/.exec(raw)?.[1];
    expect(BigInt(digits ?? '0')).toBe(t.devnet.bank.getAccount(faucet)?.lamports);
  });
});
