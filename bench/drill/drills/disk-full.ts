// The blob store's disk fills up. The blob store is a 16 MiB tmpfs mounted
// over its directory (needs root and mount; without them the drill fails and
// says so). Mail acknowledged before the disk filled must all be delivered
// once space returns; while it is full the MX answers 452 and acknowledges
// nothing.
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Drill } from '../drill.ts';
import {
  account,
  accountingOk,
  describeAccounting,
  formatReplies,
  readInboxes,
  type Sent,
  sendLoad,
  waitForInboxes,
} from '../mail.ts';
import { startDrillStack } from '../rig.ts';

/** Size of the messages sent while the disk is full. */
const PROBE_BYTES = 256 * 1024;

/** Appends zeros until the filesystem says ENOSPC; returns the bytes written. */
function fill(file: string): number {
  const fd = openSync(file, 'a');
  const chunk = Buffer.alloc(256 * 1024);
  let written = 0;
  try {
    for (;;) written += writeSync(fd, chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
  // The last partial blocks: fill them byte by byte as far as they go.
  const fd2 = openSync(file, 'a');
  try {
    for (;;) written += writeSync(fd2, Buffer.alloc(512));
  } catch {
    // full
  } finally {
    closeSync(fd2);
  }
  return written;
}

export const diskFull: Drill = {
  name: 'disk-full',
  summary: 'fill the blob store (a 16 MiB tmpfs) mid-run, then free it',
  budgetMs: 8 * 60_000,
  async run(log) {
    const stack = await startDrillStack({
      label: 'disk',
      wallets: 3,
      prepareBlobs: (dir) => execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', dir]),
    });
    try {
      const common = { mxPort: stack.mxPort, to: stack.addresses(), connections: 4, deadlineMs: 60_000 };
      const before = await sendLoad({ ...common, count: 40, tag: 'before' });
      const filler = join(stack.blobDir, 'filler');
      const bytes = fill(filler);
      const free = statfsSync(stack.blobDir);
      log(
        `blob store filled: ${(bytes / 1048576).toFixed(1)} MiB of filler, ${free.bavail * free.bsize} bytes left`,
      );
      // One message at a time, the disk topped up before each. The workers may
      // still free a few pages (spool files of mail delivered meanwhile), so the
      // probes are larger than anything they can free at once.
      const full = { acked: [] as Sent[], replies: new Map<string, number>() };
      for (let i = 0; i < 20; i++) {
        fill(filler);
        const one = await sendLoad({
          ...common,
          connections: 1,
          count: 1,
          tag: `full${i}`,
          noRetry: true,
          bodyBytes: PROBE_BYTES,
        });
        full.acked.push(...one.acked);
        for (const [code, n] of one.replies) full.replies.set(code, (full.replies.get(code) ?? 0) + n);
      }
      log(`while full: ${formatReplies(full.replies)}`);
      await sleep(5000);
      rmSync(filler);
      log('filler removed');
      const after = await sendLoad({ ...common, count: 40, tag: 'after' });
      const acked = [...before.acked, ...after.acked];
      await waitForInboxes(stack.connection, stack.programId, stack.wallets, acked.length, 4 * 60_000);
      await sleep(3000);
      const a = account(
        [...acked, ...full.acked],
        await readInboxes(stack.connection, stack.programId, stack.gatewayUrl, stack.wallets),
      );
      const only452 = full.acked.length === 0 && (full.replies.get('452 4.3.1') ?? 0) === 20;
      return {
        pass: accountingOk(a) && only452 && before.unacked === 0 && after.unacked === 0,
        detail: `while full the MX answered ${formatReplies(full.replies)}; before/after: ${before.acked.length}/${after.acked.length} acknowledged; ${describeAccounting(a)}`,
      };
    } finally {
      await stack.close();
    }
  },
};
