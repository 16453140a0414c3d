// The MX's per-IP connection rate: a token bucket in Redis shared by every
// MX process; over it the greeting is 421 and the next minute lets the
// client in again. The concurrent-connection cap is separate and local.
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { join } from 'node:path';
import { Connection } from '@solana/web3.js';
import { FlowProducer } from 'bullmq';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_PROGRAM_ID } from '../../chain/client/index.ts';
import { BlobStore } from '../../src/core/blobs/blob-store.ts';
import { WindowLimiter } from '../../src/core/limits/window.ts';
import { type MxServer, startMx } from '../../src/edge/mx/mx-server.ts';
import { ChainView } from '../../src/mail/chain-view.ts';
import { tempDir } from '../support/temp-dir.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

function greeting(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1');
    let buf = '';
    sock.on('data', (d) => {
      buf += d.toString();
      if (buf.includes('\r\n')) {
        sock.destroy();
        resolve(buf.trim());
      }
    });
    sock.on('error', reject);
  });
}

async function mxWith(perMinute: number, redis: Redis, prefix: string): Promise<MxServer> {
  const flow = new FlowProducer({ connection: redis, prefix });
  const mx = await startMx({
    host: '127.0.0.1',
    port: 0,
    hostname: 'mx.mail.test',
    policy: { localDomains: ['mail.test'] },
    maxMessageBytes: 1 << 20,
    maxRecipients: 5,
    maxConnectionsPerIp: 100,
    socketTimeoutMs: 5000,
    chain: new ChainView({ connection: new Connection('http://127.0.0.1:9'), programId: DEFAULT_PROGRAM_ID }),
    accept: { blobs: new BlobStore(join(tempDir(), 'blobs')), flow, attempts: 1, backoffMs: 1000 },
    connectionRate: { limiter: new WindowLimiter(redis), prefix, perMinute },
    logger: pino({ level: 'silent' }),
  });
  cleanups.push(async () => {
    await mx.close(50);
    await flow.close();
  });
  return mx;
}

describe('MX connection rate per IP', () => {
  it('is shared by two MX processes on one Redis and answers 421 past the limit', async () => {
    const redis = new Redis('redis://127.0.0.1:6379');
    const prefix = `sptest-${randomBytes(6).toString('hex')}`;
    cleanups.push(async () => {
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    });
    const a = await mxWith(3, redis, prefix);
    const b = await mxWith(3, redis, prefix);
    expect(await greeting(a.port)).toMatch(/^220 /);
    expect(await greeting(b.port)).toMatch(/^220 /);
    expect(await greeting(a.port)).toMatch(/^220 /);
    expect(await greeting(b.port)).toMatch(/^421 4\.7\.0 /);
    expect(await greeting(a.port)).toMatch(/^421 4\.7\.0 /);
  });
});
