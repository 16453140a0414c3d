// The MX under faults that must not look like other faults, and limits on
// whole sessions: a client that hangs up mid-DATA is a disconnect (no 452
// in the log, nothing kept); a full disk is reported as ENOSPC (Node's
// recursive mkdir says ENOENT), with a 452 to the client; a session past
// `max_session_secs` gets 421 4.4.2 however busy it keeps the line; and
// past `max_connections` a new connection gets 421.
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readdirSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BlobStore } from '../../src/core/blobs/blob-store.ts';
import { LineClient, startMxRig } from '../support/mx-rig.ts';
import { tempDir } from '../support/temp-dir.ts';

const mounts: string[] = [];
afterEach(() => {
  for (const m of mounts.splice(0)) execFileSync('umount', ['-l', m]);
});

/** A small tmpfs at a new directory, filled to the last byte and inode. */
function fullDisk(): string {
  const dir = join(tempDir(), 'full');
  mkdirSync(dir);
  // Needs root and mount (as the disk-full drill): this machine kind and CI run as root.
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k,nr_inodes=64', 'tmpfs', dir]);
  mounts.push(dir);
  const fd = openSync(join(dir, 'filler'), 'a');
  try {
    for (;;) writeSync(fd, Buffer.alloc(4096));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
  for (let i = 0; ; i++) {
    try {
      mkdirSync(join(dir, `d${i}`));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
      break;
    }
  }
  return dir;
}

async function openData(c: LineClient, rcpt: string): Promise<void> {
  expect((await c.cmd('EHLO client.example')).code).toBe(250);
  expect((await c.cmd('MAIL FROM:<a@remote.example>')).code).toBe(250);
  expect((await c.cmd(`RCPT TO:<${rcpt}>`)).code).toBe(250);
  expect((await c.cmd('DATA')).code).toBe(354);
}

describe('faults that must not look like other faults', () => {
  it('a client hanging up mid-DATA is logged as a disconnect, with no 452 and nothing kept', async () => {
    const rig = await startMxRig();
    for (let i = 0; i < 3; i++) {
      const c = await LineClient.open(rig.port);
      await openData(c, rig.rcpt);
      c.write(['Subject: cut short', '', 'half a body']);
      await new Promise((r) => setTimeout(r, 100));
      c.end();
    }
    await new Promise((r) => setTimeout(r, 500));
    expect(rig.logs.withMsg('client disconnected during DATA; nothing kept')).toHaveLength(3);
    expect(rig.logs.lines.filter((l) => l.code === 452 || /storage/i.test(String(l.reason ?? '')))).toEqual(
      [],
    );
    expect(rig.logs.lines.filter((l) => Number(l.level) >= 40)).toEqual([]);
    const spool = join(rig.blobs.root, 'spool');
    const left = (() => {
      try {
        return readdirSync(spool).filter((n) => !n.startsWith('.tmp-'));
      } catch {
        return [];
      }
    })();
    expect(left).toEqual([]);
  });

  it('a full disk is ENOSPC in the blob store and in the MX log, and the client gets 452', async () => {
    const full = fullDisk();
    // Nested directories that do not exist yet: Node's recursive mkdir would say ENOENT.
    const store = new BlobStore(join(full, 'blobs'));
    await expect(store.putContent(new Uint8Array([1, 2, 3]))).rejects.toMatchObject({ code: 'ENOSPC' });

    const rig = await startMxRig({ blobDir: join(full, 'mx-blobs') });
    const c = await LineClient.open(rig.port);
    await openData(c, rig.rcpt);
    c.write(['Subject: no room', '', ...Array.from({ length: 4000 }, () => 'x'.repeat(76)), '.']);
    const reply = await c.next();
    expect(reply).toEqual({ code: 452, text: '4.3.1 Insufficient system storage, try again later' });
    const line = rig.logs.lines.find((l) =>
      String(l.msg).startsWith('message refused: the spool write failed'),
    );
    expect(line).toMatchObject({ level: 50, errno: 'ENOSPC', code: 452 });
    expect(line?.msg).toBe('message refused: the spool write failed (ENOSPC)');
  });
});

describe('limits on whole sessions', () => {
  it('ends a session past max_session_secs with 421 4.4.2, however busy the client keeps it', async () => {
    const rig = await startMxRig({ mx: { maxSessionMs: 1200 } });
    const c = await LineClient.open(rig.port);
    const started = Date.now();
    expect((await c.cmd('EHLO client.example')).code).toBe(250);
    let last = { code: 250, text: '' };
    while (!c.isClosed && Date.now() - started < 5000) {
      try {
        last = await c.cmd('NOOP');
      } catch {
        break;
      }
      if (last.code !== 250) break;
      await new Promise((r) => setTimeout(r, 150));
    }
    // The 421 may have come between two commands.
    if (last.code === 250) last = { ...(await c.next()) };
    expect(last.code).toBe(421);
    expect(last.text).toBe('4.4.2 mx.mail.test Session time limit reached, closing connection');
    await c.closed;
    expect(Date.now() - started).toBeGreaterThanOrEqual(1100);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(rig.logs.withMsg('session time limit reached, closing the connection')).toHaveLength(1);
  });

  it('answers 421 past max_connections across addresses, and admits again once one closes', async () => {
    const rig = await startMxRig({ mx: { maxConnections: 3 } });
    const held = await Promise.all([0, 1, 2].map(() => LineClient.open(rig.port)));
    await expect(LineClient.open(rig.port)).rejects.toThrow(/^greeting 421 .*Too many connected clients/);
    held[0]?.end();
    await held[0]?.closed;
    await new Promise((r) => setTimeout(r, 100));
    const again = await LineClient.open(rig.port);
    expect((await again.cmd('QUIT')).code).toBe(221);
    for (const c of held.slice(1)) c.end();
  });
});
