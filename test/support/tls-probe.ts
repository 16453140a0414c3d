// Which certificate a listener presents to a new connection: the SHA-256
// fingerprint of the peer certificate, over implicit TLS (IMAPS, POP3S,
// submissions) or after SMTP STARTTLS (MX, submission on 587).
import { connect as netConnect, type Socket } from 'node:net';
import { type TLSSocket, connect as tlsConnect } from 'node:tls';

function handshake(opts: { port?: number; socket?: Socket }): Promise<TLSSocket> {
  const socket = tlsConnect({
    host: '127.0.0.1',
    ...opts,
    rejectUnauthorized: false,
    servername: 'localhost',
  });
  return new Promise((resolve, reject) => {
    socket.once('secureConnect', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** The fingerprint a new implicit-TLS connection to `port` sees. */
export async function implicitTlsFingerprint(port: number): Promise<string> {
  const socket = await handshake({ port });
  const fp = socket.getPeerCertificate().fingerprint256;
  socket.destroy();
  return fp;
}

/** Reads from a plain socket until `done` matches the text so far. */
function readUntil(socket: Socket, done: RegExp, timeoutMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`timed out waiting for ${done}; got ${JSON.stringify(text)}`));
    }, timeoutMs);
    const onData = (d: Buffer) => {
      text += d.toString('latin1');
      if (done.test(text)) {
        cleanup();
        resolve(text);
      }
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const cleanup = () => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('error', onError);
    };
    socket.on('data', onData);
    socket.on('error', onError);
  });
}

/** The fingerprint an SMTP client sees after EHLO and STARTTLS on `port`. */
export async function smtpStarttlsFingerprint(port: number): Promise<string> {
  const plain = netConnect({ host: '127.0.0.1', port });
  try {
    await readUntil(plain, /^220 .*\r\n/m);
    plain.write('EHLO probe.test\r\n');
    const ehlo = await readUntil(plain, /^250 .*\r\n/m);
    if (!/STARTTLS/.test(ehlo)) throw new Error(`no STARTTLS offered: ${ehlo}`);
    plain.write('STARTTLS\r\n');
    await readUntil(plain, /^220 .*\r\n/m);
    const tls = await handshake({ socket: plain });
    const fp = tls.getPeerCertificate().fingerprint256;
    tls.destroy();
    return fp;
  } finally {
    plain.destroy();
  }
}
