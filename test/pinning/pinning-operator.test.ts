// The operator pin over real sockets: `kubo` against the Kubo RPC double,
// `pind` against a real pin daemon. Both must yield computeCid's CID.
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createOperatorPinner } from '../../pinning/operator.ts';
import { type Pind, startPind } from '../../pinning/pind/server.ts';
import { PinProviderError } from '../../src/contracts/pinner.ts';
import { parseConfig } from '../../src/core/config/index.ts';
import type { IpfsConfig } from '../../src/core/config/types.ts';
import { computeCid } from '../../src/mail/cid.ts';
import { type KuboRpcDouble, startKuboRpcDouble } from '../support/doubles/kubo-rpc-double.ts';
import { tempDir } from '../support/temp-dir.ts';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function kubo(): Promise<KuboRpcDouble> {
  const d = await startKuboRpcDouble();
  closers.push(() => d.close());
  return d;
}

async function pind(authToken?: string, maxPinBytes = 8 * 1024 * 1024): Promise<Pind> {
  const p = await startPind({
    dataDir: tempDir('sealpost-pind-'),
    pin: { host: '127.0.0.1', port: 0 },
    authToken,
    maxPinBytes,
    logger: pino({ level: 'silent' }),
  });
  closers.push(() => p.close());
  return p;
}

/** The [ipfs] section the way an operator writes it, resolved by the real config loader. */
function ipfsConfig(toml: string): IpfsConfig {
  return parseConfig(`[ipfs]\n${toml}\n`, { source: 'test.toml' }).ipfs;
}

function pattern(length: number, seed = 0): Uint8Array {
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++) out[i] = (i * 7 + seed) % 256;
  return out;
}

const BODIES = [pattern(6, 1), pattern(300_000, 2), pattern(1_200_000, 3)];

describe('operator pin: kubo', () => {
  it('adds with CIDv1, raw leaves, 256 KiB chunks and pin, yielding computeCid', async () => {
    const double = await kubo();
    const pinner = createOperatorPinner(ipfsConfig(`operator = "kubo"\nkubo_rpc_url = "${double.url}"`));
    expect(pinner.kind).toBe('kubo');
    for (const bytes of BODIES) {
      const result = await pinner.pin(bytes);
      expect(result).toEqual({ cid: await computeCid(bytes), size: bytes.byteLength });
      expect(double.pins.get(result.cid)).toBe(bytes.byteLength);
    }
    const asked = double.addRequests[0] as URLSearchParams;
    expect(asked.get('cid-version')).toBe('1');
    expect(asked.get('raw-leaves')).toBe('true');
    expect(asked.get('chunker')).toBe('size-262144');
    expect(asked.get('pin')).toBe('true');
  });

  it('releases with pin rm; releasing what is not pinned is not an error', async () => {
    const double = await kubo();
    const pinner = createOperatorPinner(ipfsConfig(`operator = "kubo"\nkubo_rpc_url = "${double.url}"`));
    const { cid } = await pinner.pin(BODIES[2] as Uint8Array);
    await pinner.release(cid);
    expect(double.pins.has(cid)).toBe(false);
    await expect(pinner.release(cid)).resolves.toBeUndefined();
    await expect(pinner.release('not-a-cid')).rejects.toThrow(/not a valid CID/);
  });

  it('fails with a PinProviderError when kubo hangs or is gone', async () => {
    const double = await kubo();
    double.mode = 'hang';
    const cfg = ipfsConfig(`operator = "kubo"\nkubo_rpc_url = "${double.url}"`);
    const slow = createOperatorPinner(cfg, { timeoutMs: 300 });
    const started = Date.now();
    const err = await slow.pin(pattern(10)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PinProviderError);
    expect((err as Error).message).toBe('kubo: no answer within 300 ms');
    expect(Date.now() - started).toBeLessThan(5000);

    const url = double.url;
    await double.close();
    closers.splice(0);
    const gone = createOperatorPinner(ipfsConfig(`operator = "kubo"\nkubo_rpc_url = "${url}"`), {
      timeoutMs: 2000,
    });
    await expect(gone.pin(pattern(10))).rejects.toThrow(PinProviderError);
  });

  it('the double is strict like kubo: POST only, errors as JSON', async () => {
    const double = await kubo();
    const get = await fetch(`${double.url}/api/v0/add`);
    expect(get.status).toBe(405);
    await get.arrayBuffer();
    const rm = await fetch(`${double.url}/api/v0/pin/rm?arg=${await computeCid(pattern(3))}`, {
      method: 'POST',
    });
    expect(rm.status).toBe(500);
    expect(await rm.json()).toEqual({ Message: 'not pinned or pinned indirectly', Code: 0, Type: 'error' });
    const bad = await fetch(`${double.url}/api/v0/add?chunker=rabin`, {
      method: 'POST',
      body: new FormData(),
    });
    expect(bad.status).toBe(500);
    await bad.arrayBuffer();
  });
});

describe('operator pin: pind', () => {
  it('pins over HTTP with the bearer token, yielding computeCid', async () => {
    const daemon = await pind('operator-token');
    const pinner = createOperatorPinner(
      ipfsConfig(`operator = "pind"\npind_url = "${daemon.pinUrl}"\npind_auth_token = "operator-token"`),
    );
    expect(pinner.kind).toBe('pind');
    for (const bytes of BODIES) {
      const result = await pinner.pin(bytes);
      expect(result).toEqual({ cid: await computeCid(bytes), size: bytes.byteLength });
      const back = await fetch(`${daemon.gatewayUrl}/ipfs/${result.cid}`);
      expect(Buffer.from(await back.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true);
    }
  });

  it('takes the token from [pind] auth_token when [ipfs] names none', async () => {
    const daemon = await pind('shared-token');
    const cfg = parseConfig(`[ipfs]\npind_url = "${daemon.pinUrl}"\n[pind]\nauth_token = "shared-token"\n`, {
      source: 'test.toml',
    }).ipfs;
    await expect(createOperatorPinner(cfg).pin(pattern(100))).resolves.toMatchObject({ size: 100 });
  });

  it('reports refusals as PinProviderError with the status', async () => {
    const daemon = await pind('right-token', 1000);
    const wrong = createOperatorPinner(
      ipfsConfig(`pind_url = "${daemon.pinUrl}"\npind_auth_token = "wrong"`),
    );
    const denied = (await wrong.pin(pattern(10)).catch((e: unknown) => e)) as PinProviderError;
    expect(denied).toBeInstanceOf(PinProviderError);
    expect(denied.status).toBe(401);
    expect(denied.permanent).toBe(true);
    expect(denied.message).toContain('missing or wrong bearer token');
    expect(denied.message).not.toContain('wrong"');

    const right = createOperatorPinner(
      ipfsConfig(`pind_url = "${daemon.pinUrl}"\npind_auth_token = "right-token"`),
    );
    const tooBig = (await right.pin(pattern(1001)).catch((e: unknown) => e)) as PinProviderError;
    expect(tooBig.status).toBe(413);
    expect(tooBig.message).toContain('max_pin_bytes');
  });

  it('refuses bodies over [ipfs] max_pin_bytes before uploading', async () => {
    for (const op of ['pind', 'kubo']) {
      const double = await kubo();
      const pinner = createOperatorPinner(
        ipfsConfig(
          `operator = "${op}"\nkubo_rpc_url = "${double.url}"\npind_url = "http://127.0.0.1:9"\nmax_pin_bytes = 1000`,
        ),
      );
      const err = (await pinner.pin(pattern(1001)).catch((e: unknown) => e)) as PinProviderError;
      expect(err).toBeInstanceOf(PinProviderError);
      expect(err.message).toBe(`${op}: 1001 bytes exceed [ipfs] max_pin_bytes (1000)`);
      expect(err.permanent).toBe(true);
      expect(double.addRequests).toHaveLength(0);
    }
  });

  it('release is a no-op: pind never releases pins over HTTP', async () => {
    const daemon = await pind();
    const pinner = createOperatorPinner(ipfsConfig(`pind_url = "${daemon.pinUrl}"`));
    const { cid } = await pinner.pin(pattern(500));
    await expect(pinner.release(cid)).resolves.toBeUndefined();
    expect((await fetch(`${daemon.gatewayUrl}/ipfs/${cid}`)).status).toBe(200);
    await expect(pinner.release('Qm-nope')).rejects.toThrow(/not a valid CID/);
  });
});
