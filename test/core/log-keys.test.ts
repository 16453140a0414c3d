// Every JSON log line of a serving process names each key once: a child
// logger of a child that binds `component` again (serve → spooler →
// spooler) used to print `"component":"spooler","component":"spooler"`.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { sendOne, waitForInbox } from '../support/cost-guard-helpers.ts';
import { RIG_DOMAIN, startServeRig } from '../support/serve-rig.ts';

/** Top-level keys of a JSON object text, in order, duplicates kept. */
function topLevelKeys(line: string): string[] {
  const keys: string[] = [];
  let depth = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '"') {
      let j = i + 1;
      while (j < line.length && line[j] !== '"') j += line[j] === '\\' ? 2 : 1;
      if (depth === 1 && line[j + 1] === ':') keys.push(line.slice(i + 1, j));
      i = j;
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
  }
  return keys;
}

describe('serve log lines', () => {
  it('carry each key once, the spooler and pipeline lines included', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'debug' }, { write: (s: string) => void lines.push(s.trim()) });
    const rig = await startServeRig({ serve: { logger } });
    const bob = await rig.mail.mailbox();
    expect(
      (await sendOne(rig.mxPort, 'alice@remote.example', `${bob.publicKey.toBase58()}@${RIG_DOMAIN}`, 'hi'))
        .code,
    ).toBe(250);
    await waitForInbox(rig.chain.connection, rig.chain.programId, bob.publicKey, 1);
    expect(lines.some((l) => l.includes('"component":"spooler"'))).toBe(true);
    const repeated = lines.filter((l) => {
      const keys = topLevelKeys(l);
      return new Set(keys).size !== keys.length;
    });
    expect(repeated).toEqual([]);
  }, 60_000);
});
