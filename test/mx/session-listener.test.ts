// The listener IMAP and POP3 share, over real loopback sockets (plain and
// TLS): the per-IP connection cap, the refusal line, and a shutdown that asks
// sessions to end, waits for the drain time, then cuts the ones that stay.
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type ListenedSession,
  type SessionListener,
  startSessionListener,
} from '../../src/core/net/session-listener.ts';
import { createSelfSignedCert } from '../../src/core/tls/self-signed.ts';

const listeners: SessionListener[] = [];
afterEach(async () => {
  for (const l of listeners.splice(0)) await l.close(100);
});

/** Greets, then says BYE on shutdown unless it is stubborn. */
class GreeterSession implements ListenedSession {
  static shutdowns = 0;
  constructor(
    private readonly socket: Socket,
    private readonly stubborn: boolean,
  ) {}
  async run(): Promise<void> {
    this.socket.write('HELLO\r\n');
  }
  shutdown(): void {
    GreeterSession.shutdowns++;
    if (this.stubborn) return;
    this.socket.end('BYE\r\n');
  }
  destroy(): void {
    this.socket.destroy();
  }
}

function reader(socket: Socket) {
  let text = '';
  let closed = false;
  socket.setEncoding('latin1');
  socket.on('data', (d: string) => {
    text += d;
  });
  socket.on('close', () => {
    closed = true;
  });
  socket.on('error', () => {});
  return {
    socket,
    get text() {
      return text;
    },
    async until(check: () => boolean, ms = 5000) {
      const deadline = Date.now() + ms;
      while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      return check();
    },
    get closed() {
      return closed;
    },
  };
}

async function start(tls: 'implicit' | 'starttls', stubborn = false) {
  const cert = await createSelfSignedCert(['localhost', '127.0.0.1']);
  const l = await startSessionListener({
    component: 'test',
    host: '127.0.0.1',
    port: 0,
    tls,
    ...cert,
    maxConnectionsPerIp: 2,
    logger: pino({ level: 'silent' }),
    refusal: (reason) => `NO ${reason}\r\n`,
    create: (socket) => new GreeterSession(socket, stubborn),
  });
  listeners.push(l);
  return l;
}

describe('session listener', () => {
  it('caps sessions per address and frees a slot when one closes', async () => {
    const l = await start('starttls');
    const a = reader(netConnect(l.port, '127.0.0.1'));
    const b = reader(netConnect(l.port, '127.0.0.1'));
    expect(await a.until(() => a.text === 'HELLO\r\n')).toBe(true);
    expect(await b.until(() => b.text === 'HELLO\r\n')).toBe(true);
    const c = reader(netConnect(l.port, '127.0.0.1'));
    expect(await c.until(() => c.closed)).toBe(true);
    expect(c.text).toBe('NO busy\r\n');
    a.socket.destroy();
    await a.until(() => a.closed);
    await new Promise((r) => setTimeout(r, 50));
    const d = reader(netConnect(l.port, '127.0.0.1'));
    expect(await d.until(() => d.text === 'HELLO\r\n')).toBe(true);
    b.socket.destroy();
    d.socket.destroy();
  });

  it('speaks TLS from the first byte on an implicit listener', async () => {
    const l = await start('implicit');
    const s = reader(tlsConnect({ host: '127.0.0.1', port: l.port, rejectUnauthorized: false }));
    expect(await s.until(() => s.text === 'HELLO\r\n')).toBe(true);
    s.socket.destroy();
  });

  it('on close: asks sessions to end, then cuts the ones that stay after the drain time', async () => {
    const polite = await start('starttls');
    const p = reader(netConnect(polite.port, '127.0.0.1'));
    await p.until(() => p.text === 'HELLO\r\n');
    const before = GreeterSession.shutdowns;
    const t0 = Date.now();
    await polite.close(5000);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(GreeterSession.shutdowns).toBe(before + 1);
    expect(await p.until(() => p.closed)).toBe(true);
    expect(p.text).toBe('HELLO\r\nBYE\r\n');

    const stubborn = await start('starttls', true);
    const s = reader(netConnect(stubborn.port, '127.0.0.1'));
    await s.until(() => s.text === 'HELLO\r\n');
    const t1 = Date.now();
    await stubborn.close(300);
    expect(Date.now() - t1).toBeGreaterThanOrEqual(250);
    expect(await s.until(() => s.closed)).toBe(true);
    expect(s.text).toBe('HELLO\r\n');
    // No longer listening.
    const late = reader(netConnect(stubborn.port, '127.0.0.1'));
    expect(await late.until(() => late.closed)).toBe(true);
    expect(late.text).toBe('');
  });
});
