// Rent recovery (`[chain] rent_recovery_days`, delivery/rent-recovery.ts):
// a few hundred messages are delivered through the stack, their stored
// receipt times are moved back past the policy's age, and the sweeps of two
// `sealpost worker` processes (one schedule, one lease) close their Email
// accounts in batches. Proof: every account closed by exactly one
// DeleteMail (two signatures per Email account: its SendMail and one
// DeleteMail), the rent back at the authority, every message still in the
// store and readable from its sealed copy there, and what it cost in RPC
// calls (counted by the harness's proxy between the stack and the chain).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { PublicKey } from '@solana/web3.js';
import { BlobStore } from '../../../src/core/blobs/blob-store.ts';
import { parseConfig } from '../../../src/core/config/index.ts';
import { readKeypairFile } from '../../../src/core/keys/keypair-file.ts';
import { openStore } from '../../../src/core/store/index.ts';
import { openSealed, walletEncryptionKeypair } from '../../../src/mail/seal/index.ts';
import { rpcCountSince, startRpcCounter } from '../../harness/stack.ts';
import type { Drill } from '../drill.ts';
import { formatReplies, sendLoad, waitForInboxes } from '../mail.ts';
import { startDrillStack } from '../rig.ts';

const MESSAGES = 300;
const BATCH = 100;
const INTERVAL_SECS = 10;
const DAY_MS = 86_400_000;

export const rentRecovery: Drill = {
  name: 'rent-recovery',
  summary: `deliver ${MESSAGES} messages, age them past rent_recovery_days = 1 and let two workers' sweeps (batch ${BATCH}, every ${INTERVAL_SECS} s) close their Email accounts`,
  budgetMs: 15 * 60_000,
  async run(log) {
    const counter = await startRpcCounter();
    const stack = await startDrillStack({
      label: 'rent',
      wallets: 5,
      workers: 2,
      chain: {
        rent_recovery_days: 1,
        rent_recovery_batch: BATCH,
        rent_recovery_interval_secs: INTERVAL_SECS,
      },
    });
    const config = parseConfig(readFileSync(stack.configFile, 'utf8'), { source: stack.configFile });
    const store = await openStore({ url: config.store.url, dataDir: config.store.data_dir });
    try {
      const authority = new PublicKey(readKeypairFile(config.chain.authority_key_file as string).address);
      const load = await sendLoad({
        mxPort: stack.mxPort,
        to: stack.addresses(),
        count: MESSAGES,
        connections: 4,
        deadlineMs: 5 * 60_000,
        tag: 'rent',
      });
      log(`sent: ${load.acked.length} acknowledged (${formatReplies(load.replies)})`);
      const onChain = await waitForInboxes(
        stack.connection,
        stack.programId,
        stack.wallets,
        load.acked.length,
        6 * 60_000,
      );
      const published = async () =>
        store.db
          .selectFrom('messages')
          .selectAll()
          .where('email_address', 'is not', null)
          .where('published_by_us', '=', 1)
          .execute();
      let rows = await published();
      for (let i = 0; i < 120 && rows.length < load.acked.length; i++) {
        await sleep(1000);
        rows = await published();
      }
      log(`delivered: ${onChain} Email accounts, ${rows.length} copies in the store`);
      // Fresh mail is never swept: the sweeps so far found nothing to do.
      const early = rows.filter((r) => r.rent_recovered_at !== null).length;

      const addresses = rows.map((r) => new PublicKey(r.email_address as string));
      const held = new Map<string, number>();
      for (let i = 0; i < addresses.length; i += 100) {
        const infos = await stack.connection.getMultipleAccountsInfo(
          addresses.slice(i, i + 100),
          'confirmed',
        );
        infos.forEach((info, j) => {
          held.set((addresses[i + j] as PublicKey).toBase58(), info?.lamports ?? 0);
        });
      }
      const heldTotal = [...held.values()].reduce((s, v) => s + v, 0);
      const balanceBefore = await stack.connection.getBalance(authority, 'confirmed');
      const rpcBefore = await counter.count();
      const t0 = Date.now();
      // Age every stored copy by two days: now older than rent_recovery_days = 1.
      for (const r of rows) {
        await store.db
          .updateTable('messages')
          .set({ received_at: Number(r.received_at) - 2 * DAY_MS })
          .where('id', '=', r.id)
          .execute();
      }
      log(`aged ${rows.length} copies by 2 days; waiting for the sweeps`);
      let marked = 0;
      const deadline = Date.now() + 6 * 60_000;
      for (;;) {
        const r = await store.db
          .selectFrom('messages')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('rent_recovered_at', 'is not', null)
          .executeTakeFirstOrThrow();
        marked = Number(r.n);
        if (marked >= rows.length || Date.now() > deadline) break;
        await sleep(1000);
      }
      const seconds = (Date.now() - t0) / 1000;
      // Let any stray job finish before the counts are read.
      await sleep(3000);
      const rpc = rpcCountSince(rpcBefore, await counter.count());
      const balanceAfter = await stack.connection.getBalance(authority, 'confirmed');
      log(`recovered: ${marked} of ${rows.length} rows marked in ${seconds.toFixed(0)} s`);

      let stillOpen = 0;
      for (let i = 0; i < addresses.length; i += 100) {
        const infos = await stack.connection.getMultipleAccountsInfo(
          addresses.slice(i, i + 100),
          'confirmed',
        );
        stillOpen += infos.filter((x) => x !== null).length;
      }
      const closed = addresses.length - stillOpen;
      let doubleCloses = 0;
      let missingCloses = 0;
      for (const a of addresses) {
        const sigs = await stack.connection.getSignaturesForAddress(a, { limit: 10 }, 'confirmed');
        if (sigs.length > 2) doubleCloses += sigs.length - 2;
        if (sigs.length < 2) missingCloses++;
      }
      // Every message is still in the store and opens from its sealed copy there.
      const blobs = new BlobStore(join(config.store.data_dir, 'blobs'));
      const keyOf = new Map(stack.wallets.map((w) => [w.address, walletEncryptionKeypair(w.secretKey)]));
      const after = await store.db.selectFrom('messages').selectAll().execute();
      const subjects = new Set<string>();
      let unreadable = 0;
      for (const r of after) {
        try {
          const sealed = await blobs.read(r.blob_key);
          const reader = keyOf.get(r.wallet);
          if (!reader) throw new Error('no key');
          const opened = await openSealed(
            new Uint8Array(sealed.buffer, sealed.byteOffset, sealed.byteLength),
            reader,
          );
          const subject = /^Subject: (\S+)/m.exec(Buffer.from(opened.raw).toString('utf8'))?.[1];
          if (subject) subjects.add(subject);
        } catch {
          unreadable++;
        }
      }
      const lostFromStore = load.acked.filter((s) => !subjects.has(s.subject)).length;

      const net = balanceAfter - balanceBefore;
      const perMessage = closed ? Math.round(net / closed) : 0;
      const grossPerMessage = closed ? Math.round(heldTotal / addresses.length) : 0;
      const methods = Object.entries(rpc.methods)
        .sort(([, x], [, y]) => y - x)
        .map(([m, n]) => `${m} ${n}`)
        .join(', ');
      log(
        `chain: ${closed} accounts closed, ${stillOpen} open, ${doubleCloses} double closes, ${missingCloses} without a DeleteMail`,
      );
      log(
        `lamports: ${heldTotal} held by the accounts (${grossPerMessage} a message); authority net +${net} (${perMessage} a message after fees)`,
      );
      log(
        `rpc while sweeping: ${rpc.calls} calls in ${rpc.requests} requests (${closed ? (rpc.calls / closed).toFixed(1) : '-'} a closed account, idle polling included): ${methods}`,
      );
      const pass =
        rows.length === load.acked.length &&
        early === 0 &&
        marked === rows.length &&
        closed === rows.length &&
        doubleCloses === 0 &&
        missingCloses === 0 &&
        lostFromStore === 0 &&
        unreadable === 0 &&
        after.length === rows.length;
      return {
        pass,
        detail:
          `${closed}/${rows.length} Email accounts closed in ${seconds.toFixed(0)} s, ${perMessage} lamports recovered a message (net of fees; ${grossPerMessage} gross), ` +
          `${lostFromStore} messages lost from the store (${unreadable} unreadable), ${doubleCloses} double closes, ` +
          `${rpc.calls} RPC calls (${closed ? (rpc.calls / closed).toFixed(1) : '-'} a message)`,
      };
    } finally {
      await store.close();
      await stack.close();
      await counter.close();
    }
  },
};
