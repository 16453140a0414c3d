// Content addressing across every pin path: the same bytes get the same CID
// from computeCid, both operator kinds and all three recipient kinds (the
// reference's "Both providers serve the same CID").
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createOperatorPinner } from '../../pinning/operator.ts';
import { startPind } from '../../pinning/pind/server.ts';
import { createRecipientPinner } from '../../pinning/recipient.ts';
import { parseConfig } from '../../src/core/config/index.ts';
import { computeCid } from '../../src/mail/cid.ts';
import { startHostedPinDouble } from '../support/doubles/hosted-pin-double.ts';
import { startKuboRpcDouble } from '../support/doubles/kubo-rpc-double.ts';
import { startS3Double } from '../support/doubles/s3-double.ts';
import { tempDir } from '../support/temp-dir.ts';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe('CIDs agree across pin paths', () => {
  it('operator kubo and pind, recipient hosted_jwt, s3_bucket and remote', async () => {
    const logger = pino({ level: 'silent' });
    const kubo = await startKuboRpcDouble();
    const hosted = await startHostedPinDouble({ jwt: 'jwt-1' });
    const s3 = await startS3Double({ accessKey: 'AK', secretKey: 'SK', buckets: ['b'] });
    const pind = await startPind({
      dataDir: tempDir('sealpost-pind-'),
      pin: { host: '127.0.0.1', port: 0 },
      maxPinBytes: 8 * 1024 * 1024,
      logger,
    });
    closers.push(kubo.close, hosted.close, s3.close, pind.close);

    const ipfs = (op: string) =>
      parseConfig(`[ipfs]\noperator = "${op}"\nkubo_rpc_url = "${kubo.url}"\npind_url = "${pind.pinUrl}"\n`, {
        source: 'test.toml',
      }).ipfs;
    const operators = [createOperatorPinner(ipfs('kubo')), createOperatorPinner(ipfs('pind'))];
    const recipients = [
      createRecipientPinner(
        { kind: 'hosted_jwt', jwt: 'jwt-1', gateway: 'https://gw.example', api_url: hosted.url },
        { logger },
      ),
      createRecipientPinner(
        { kind: 's3_bucket', access_key: 'AK', secret_key: 'SK', bucket: 'b', endpoint: s3.url },
        { logger },
      ),
      createRecipientPinner({ kind: 'remote', endpoint: pind.pinUrl }, { logger }),
    ];

    // Small (one raw block), just over one chunk, and over 1 MiB.
    for (const size of [777, 262_145, 1_500_000]) {
      const bytes = new Uint8Array(size);
      for (let i = 0; i < size; i++) bytes[i] = (i * 31 + size) % 256;
      const expectedCid = await computeCid(bytes);
      for (const op of operators) expect((await op.pin(bytes)).cid, `${op.kind} ${size}`).toBe(expectedCid);
      for (const r of recipients)
        expect((await r.pin(bytes, { expectedCid })).cid, `${r.kind} ${size}`).toBe(expectedCid);
    }
  });
});
