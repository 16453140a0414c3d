// Runs bench/harness/install-peers.sh (Postfix with smtp-source and
// smtp-sink, Haraka) and reads back each peer's status line:
// `ok …` or why it is missing.
import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';

const SCRIPT = join(resolve(import.meta.dirname), 'install-peers.sh');

export function installPeers(log: (line: string) => void = () => {}): Map<string, string> {
  log('installing peers (bench/harness/install-peers.sh)');
  const status = new Map<string, string>();
  let out = '';
  try {
    out = execFileSync('bash', [SCRIPT], { encoding: 'utf8' });
  } catch (err) {
    out = String((err as { stdout?: string }).stdout ?? '');
  }
  for (const m of out.matchAll(/^peer (\S+): (.*)$/gm)) status.set(m[1] as string, m[2] as string);
  for (const peer of ['postfix', 'haraka'])
    if (!status.has(peer)) status.set(peer, 'missing (installer gave no answer)');
  return status;
}
