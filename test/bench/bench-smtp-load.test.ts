// The pipeline-load rows' SMTP client (bench/harness/smtp-load.ts) against a
// real smtp-server: the bytes arrive as written (dot-stuffing undone by the
// server), sessions are reused up to the pool size, and a refused command
// fails that one message without breaking the pool.
import { SMTPServer } from 'smtp-server';
import { afterEach, describe, expect, it } from 'vitest';
import { dataBlock, SmtpLoad, SmtpLoadError } from '../../bench/harness/smtp-load.ts';

let server: SMTPServer | undefined;

afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

async function listen(received: { to: string; text: string }[], sessions: Set<string>): Promise<number> {
  server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    onConnect(session, cb) {
      sessions.add(session.id);
      cb();
    },
    onRcptTo(address, _session, cb) {
      if (address.address.startsWith('refuse'))
        return cb(Object.assign(new Error('no such user'), { responseCode: 550 }));
      cb();
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received.push({
          to: session.envelope.rcptTo[0]?.address ?? '',
          text: Buffer.concat(chunks).toString('latin1'),
        });
        cb(null, `Ok: queued as q${received.length}`);
      });
    },
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const address = server.server.address();
  return typeof address === 'object' && address ? address.port : 0;
}

describe('bench SMTP load client', () => {
  it('dot-stuffs and terminates the data', () => {
    expect(dataBlock('a\r\n.b\r\n..c')).toBe('a\r\n..b\r\n...c\r\n.\r\n');
    expect(dataBlock('.x\n')).toBe('..x\r\n.\r\n');
  });

  it('sends over at most the pool size of sessions; a refusal fails only its message', async () => {
    const received: { to: string; text: string }[] = [];
    const sessions = new Set<string>();
    const port = await listen(received, sessions);
    const load = new SmtpLoad({ host: '127.0.0.1', port, sessions: 3 });
    try {
      const body = (i: number) => `Subject: m${i}\r\n\r\nline\r\n.dotted ${i}\r\n`;
      const replies = await Promise.all(
        Array.from({ length: 12 }, (_, i) => load.send('a@load.example', `u${i}@x.example`, body(i))),
      );
      expect(replies.every((r) => /^250 Ok: queued as q\d+$/.test(r))).toBe(true);
      expect(received).toHaveLength(12);
      expect(received.find((m) => m.to === 'u5@x.example')?.text).toBe(body(5));
      expect(sessions.size).toBe(3);
      await expect(load.send('a@load.example', 'refuse@x.example', body(99))).rejects.toBeInstanceOf(
        SmtpLoadError,
      );
      expect(await load.send('a@load.example', 'after@x.example', body(100))).toMatch(/^250 /);
      expect(received.at(-1)?.to).toBe('after@x.example');
    } finally {
      load.close();
    }
  });
});
