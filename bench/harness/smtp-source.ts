// Drives an MX with Postfix's smtp-source: `sessions` parallel sessions, each
// reusing its connection (-d) unless `reuse` is false (then every message has
// a connection of its own), `messages` in all, `bytes` of body each. The
// same command line for every system; messages/s is messages over wall time.
import { execFile } from 'node:child_process';

export interface SourceResult {
  messages: number;
  seconds: number;
  perSecond: number;
}

export function smtpSource(opts: {
  port: number;
  rcpt: string;
  sessions: number;
  messages: number;
  bytes: number;
  reuse?: boolean;
}): Promise<SourceResult> {
  const args = [
    '-s',
    String(opts.sessions),
    '-m',
    String(opts.messages),
    '-l',
    String(opts.bytes),
    ...(opts.reuse === false ? [] : ['-d']),
    '-M',
    'load.example',
    '-f',
    'bench@load.example',
    '-t',
    opts.rcpt,
    `127.0.0.1:${opts.port}`,
  ];
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    execFile('smtp-source', args, { timeout: 15 * 60_000 }, (err, _stdout, stderr) => {
      const seconds = (performance.now() - t0) / 1000;
      if (err) return reject(new Error(`smtp-source failed: ${stderr.trim() || err.message}`));
      resolve({ messages: opts.messages, seconds, perSecond: opts.messages / seconds });
    });
  });
}
