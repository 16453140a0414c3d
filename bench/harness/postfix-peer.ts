// A throwaway Postfix instance for the MX-accept comparison: its own config,
// queue and data directories in a temp dir, smtpd on a loopback port of its
// own, every message put on the hold queue after its queue file is written
// (`smtpd_data_restrictions = check_client_access static:HOLD`), so Postfix
// does what Sealpost's MX does before its 250 (durably queue) and nothing
// more. Started with `postfix -c DIR start`, stopped with `postfix -c DIR stop`.
import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { waitForSmtp } from './net.ts';

const run = promisify(execFile);

export interface PostfixPeer {
  port: number;
  /** Queue files on the hold queue (what Postfix has acknowledged). */
  held(): number;
  stop(): Promise<void>;
}

const SERVICES = [
  ['pickup', 'unix', 'n', '-', 'n', '60', '1', 'pickup'],
  ['cleanup', 'unix', 'n', '-', 'n', '-', '0', 'cleanup'],
  ['qmgr', 'unix', 'n', '-', 'n', '300', '1', 'qmgr'],
  ['rewrite', 'unix', '-', '-', 'n', '-', '-', 'trivial-rewrite'],
  ['bounce', 'unix', '-', '-', 'n', '-', '0', 'bounce'],
  ['defer', 'unix', '-', '-', 'n', '-', '0', 'bounce'],
  ['trace', 'unix', '-', '-', 'n', '-', '0', 'bounce'],
  ['verify', 'unix', '-', '-', 'n', '-', '1', 'verify'],
  ['flush', 'unix', 'n', '-', 'n', '1000?', '0', 'flush'],
  ['proxymap', 'unix', '-', '-', 'n', '-', '-', 'proxymap'],
  ['smtp', 'unix', '-', '-', 'n', '-', '-', 'smtp'],
  ['relay', 'unix', '-', '-', 'n', '-', '-', 'smtp'],
  ['showq', 'unix', 'n', '-', 'n', '-', '-', 'showq'],
  ['error', 'unix', '-', '-', 'n', '-', '-', 'error'],
  ['retry', 'unix', '-', '-', 'n', '-', '-', 'error'],
  ['discard', 'unix', '-', '-', 'n', '-', '-', 'discard'],
  ['local', 'unix', '-', 'n', 'n', '-', '-', 'local'],
  ['anvil', 'unix', '-', '-', 'n', '-', '1', 'anvil'],
  ['scache', 'unix', '-', '-', 'n', '-', '1', 'scache'],
  ['postlog', 'unix-dgram', 'n', '-', 'n', '-', '1', 'postlogd'],
];

/** Postfix commands report errors only to syslog or a terminal: `script` gives them one. */
function postfixCmd(argv: string[]): void {
  const r = spawnSync('script', ['-qec', argv.join(' '), '/dev/null'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${argv.join(' ')} failed: ${(r.stdout + r.stderr).trim()}`);
}

async function postconf(name: string): Promise<string> {
  const { stdout } = await run('postconf', ['-h', '-d', name]);
  return stdout.trim();
}

export async function startPostfixPeer(opts: { port: number; domain: string }): Promise<PostfixPeer> {
  const dir = mkdtempSync(join(tmpdir(), 'sealpost-bench-postfix-mx-'));
  // Postfix's daemons run as the postfix user and must reach the queue.
  chmodSync(dir, 0o755);
  const etc = join(dir, 'etc');
  mkdirSync(etc);
  mkdirSync(join(dir, 'spool'));
  mkdirSync(join(dir, 'data'));
  await run('chown', ['postfix', join(dir, 'data')]);
  const main = [
    'compatibility_level = 3.6',
    `queue_directory = ${join(dir, 'spool')}`,
    `data_directory = ${join(dir, 'data')}`,
    `command_directory = ${await postconf('command_directory')}`,
    `daemon_directory = ${await postconf('daemon_directory')}`,
    `meta_directory = ${await postconf('meta_directory')}`,
    `shlib_directory = ${await postconf('shlib_directory')}`,
    'mail_owner = postfix',
    'setgid_group = postdrop',
    'myhostname = postfix.bench.localdomain',
    'mydestination =',
    'inet_interfaces = loopback-only',
    'inet_protocols = ipv4',
    'mynetworks = 127.0.0.0/8',
    `relay_domains = ${opts.domain}`,
    'smtpd_recipient_restrictions = permit_mynetworks, reject_unauth_destination',
    // Queue and hold: the message is written (and fsynced by cleanup) before the 250, then left alone.
    'smtpd_data_restrictions = check_client_access static:HOLD',
    'smtpd_client_connection_count_limit = 0',
    'smtpd_client_connection_rate_limit = 0',
    'default_process_limit = 100',
    `maillog_file_prefixes = ${dir}`,
    `maillog_file = ${join(dir, 'maillog')}`,
    'biff = no',
  ];
  writeFileSync(join(etc, 'main.cf'), `${main.join('\n')}\n`);
  const master = [`127.0.0.1:${opts.port} inet n - n - - smtpd`, ...SERVICES.map((s) => s.join(' '))];
  writeFileSync(join(etc, 'master.cf'), `${master.join('\n')}\n`);
  postfixCmd(['postfix', '-c', etc, 'start']);
  await waitForSmtp(opts.port, 20_000);
  return {
    port: opts.port,
    held() {
      try {
        return readdirSync(join(dir, 'spool', 'hold')).length;
      } catch {
        return 0;
      }
    },
    async stop() {
      try {
        postfixCmd(['postfix', '-c', etc, 'stop']);
      } catch {
        // not running
      }
      // master exits asynchronously; give it a moment before the files go.
      await new Promise((r) => setTimeout(r, 1000));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
