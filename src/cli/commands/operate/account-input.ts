// Reading the mail password for `sealpost account password`: from stdin
// when it is not a terminal (one line, or two: current then new), else
// prompted on the terminal without echo. Passwords never come from argv,
// where `ps` and shell history would see them.
import { CliError, EXIT_USAGE } from '../../common.ts';

const MAX_STDIN_BYTES = 64 * 1024;

/** The lines of stdin, line endings removed; at most two non-empty lines are meaningful. */
export async function readStdinLines(): Promise<string[]> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of process.stdin) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : (chunk as Buffer);
    total += buf.length;
    if (total > MAX_STDIN_BYTES)
      throw new CliError('more than 64 KiB on stdin; expected one or two lines', EXIT_USAGE);
    chunks.push(buf);
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw new CliError('stdin is not valid UTF-8', EXIT_USAGE);
  }
  const lines = text.split(/\r?\n/);
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/** Asks on the terminal without echo (stderr for the prompt, so stdout stays clean). */
export function promptHidden(question: string): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) throw new CliError('stdin is not a terminal; give the password on stdin', EXIT_USAGE);
  // Echo off before the prompt shows, so nothing typed after it is echoed.
  stdin.setRawMode(true);
  process.stderr.write(question);
  return new Promise((resolve, reject) => {
    let value = '';
    const finish = (err?: Error) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (chunk: Buffer) => {
      for (const ch of chunk.toString('utf8')) {
        if (ch === '\r' || ch === '\n') return finish();
        if (ch === '\u0003') return finish(new CliError('cancelled; nothing was changed', 130));
        if (ch === '\u0004' && value === '')
          return finish(new CliError('no password given; nothing was changed'));
        if (ch === '\u007f' || ch === '\b') value = [...value].slice(0, -1).join('');
        else if (ch >= ' ') value += ch;
      }
    };
    stdin.resume();
    stdin.on('data', onData);
  });
}
