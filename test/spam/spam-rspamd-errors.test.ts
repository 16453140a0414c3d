// Bad answers from "rspamd" (a real HTTP server on loopback that answers
// garbage, an error status, or nothing in time): the SpamFilter follows
// `on_error` every time, never hangs past timeout_ms, logs once a minute at
// most and counts every failure.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { SealpostMetrics } from '../../src/core/metrics/index.ts';
import { SpamFilter } from '../../src/mail/spam/filter.ts';
import { LogLines } from '../support/mx-rig.ts';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

async function fakeRspamd(answer: (res: import('node:http').ServerResponse) => void): Promise<string> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => answer(res));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const message = Buffer.from('From: a@b.example\r\nSubject: x\r\n\r\nhello\r\n');
const req = { message, ip: '192.0.2.1', from: 'a@b.example', rcpts: ['c@d.example'], queueId: 'q1' };

describe('SpamFilter when rspamd misbehaves', () => {
  it.each([
    ['garbage', (res: import('node:http').ServerResponse) => res.end('<html>not json</html>')],
    ['garbage', (res: import('node:http').ServerResponse) => res.end('{"action":"maybe","score":1}')],
    ['status', (res: import('node:http').ServerResponse) => res.writeHead(500).end('boom')],
    ['timeout', () => {}],
  ] as const)('%s → accept under on_error=accept, 451 4.7.1 under defer', async (kind, answer) => {
    const url = await fakeRspamd(answer);
    const logs = new LogLines();
    const metrics = new SealpostMetrics({ processMetrics: false });
    const mk = (onError: 'accept' | 'defer') =>
      new SpamFilter({
        url,
        timeoutMs: 300,
        onError,
        maxScanBytes: 1e6,
        publishJunk: false,
        logger: pino(logs.stream),
        metrics,
      });
    const started = performance.now();
    expect(await mk('accept').decide(req)).toEqual({ kind: 'unscanned', why: 'error' });
    const accepting = mk('accept');
    await accepting.decide(req);
    await accepting.decide(req);
    await expect(mk('defer').decide(req)).rejects.toMatchObject({ responseCode: 451, enhanced: '4.7.1' });
    expect(performance.now() - started).toBeLessThan(4 * 300 + 1500);
    // One filter, two failures inside a minute: one line.
    expect(logs.lines.filter((l) => String(l.msg).startsWith('spam scan failed')).length).toBe(3);
    const text = await metrics.registry.getSingleMetricAsString('sealpost_spam_scan_errors_total');
    expect(text).toContain(`kind="${kind}",handled="accept"} 3`);
    expect(text).toContain(`kind="${kind}",handled="defer"} 1`);
  });

  it('does not send a message over max_scan_bytes', async () => {
    let asked = 0;
    const url = await fakeRspamd((res) => {
      asked++;
      res.end('{}');
    });
    const f = new SpamFilter({
      url,
      timeoutMs: 300,
      onError: 'defer',
      maxScanBytes: 10,
      publishJunk: false,
      logger: pino({ level: 'silent' }),
    });
    expect(await f.decide(req)).toEqual({ kind: 'unscanned', why: 'too-big' });
    expect(asked).toBe(0);
  });
});
