// Fault drill: the pipeline worker runs as its own process and is killed
// with SIGKILL at random moments while 500 messages flow through the MX.
// Afterwards every accepted message has exactly one Email account on chain:
// none lost, none doubled, each opening to the message that was sent.
import { type ChildProcess, spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import nodemailer from 'nodemailer';
import { describe, expect, it } from 'vitest';
import { listInbox } from '../../chain/client/index.ts';
import { QUEUE_DELIVER } from '../../src/contracts/inbound-jobs.ts';
import { MessagesRepo } from '../../src/core/store/index.ts';
import { openSealed, walletEncryptionKeypair } from '../../src/mail/seal/index.ts';
import { RIG_DOMAIN, startServeRig } from '../support/serve-rig.ts';

const MESSAGES = Number(process.env.DRILL_MESSAGES ?? 500);
const RECIPIENTS = 10;
const KILLS = 6;

interface WorkerProcess {
  child: ChildProcess;
  /** Resolves once the worker says it is running (start-up takes seconds under tsx). */
  ready: Promise<void>;
}

function startWorker(configFile: string, dataDir: string): WorkerProcess {
  const child = spawn(
    process.execPath,
    ['bin/sealpost.js', 'worker', '--config', configFile, '--data-dir', dataDir],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const ready = new Promise<void>((resolve) => {
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('pipeline workers running')) resolve();
    });
    child.once('exit', () => resolve());
  });
  return { child, ready };
}

async function kill(worker: WorkerProcess, signal: NodeJS.Signals): Promise<void> {
  if (worker.child.exitCode !== null || worker.child.signalCode !== null) return;
  const exited = new Promise((r) => worker.child.once('exit', r));
  worker.child.kill(signal);
  await exited;
}

describe('crash drill', () => {
  it('SIGKILLed workers lose nothing and double nothing across 500 messages', async () => {
    const rig = await startServeRig({ serve: { components: { smtp: true, workers: false } } });
    const wallets = await Promise.all(Array.from({ length: RECIPIENTS }, () => rig.mail.mailbox()));
    const deliver = new Queue(QUEUE_DELIVER, { connection: rig.redis, prefix: rig.prefix });

    let worker = startWorker(rig.configFile, rig.dataDir);
    let kills = 0;
    // The killer: once a worker runs, SIGKILL it at a random moment and start a
    // new one, KILLS times; the last worker is left to finish the queue.
    const killer = (async () => {
      while (kills < KILLS) {
        await worker.ready;
        await sleep(200 + Math.random() * 2500);
        await kill(worker, 'SIGKILL');
        kills++;
        worker = startWorker(rig.configFile, rig.dataDir);
      }
    })();

    // Senders: 10 connections in parallel, 50 messages each over reused sessions.
    const sent = new Map<string, string>();
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: rig.mxPort,
      secure: false,
      ignoreTLS: true,
      pool: true,
      maxConnections: 10,
      maxMessages: Number.POSITIVE_INFINITY,
    });
    await Promise.all(
      Array.from({ length: MESSAGES }, async (_, i) => {
        const wallet = wallets[i % RECIPIENTS]?.publicKey.toBase58() ?? '';
        const subject = `drill-${i}`;
        const raw = `From: load@remote.example\r\nSubject: ${subject}\r\n\r\nmessage ${i}\r\n`;
        await transport.sendMail({
          envelope: { from: 'load@remote.example', to: [`${wallet}@${RIG_DOMAIN}`] },
          raw,
        });
        sent.set(subject, wallet);
      }),
    );
    transport.close();
    expect(sent.size).toBe(MESSAGES);

    // Let the last worker finish the queue.
    await killer;
    const deadline = Date.now() + 240_000;
    while (Date.now() < deadline) {
      const counts = await deliver.getJobCounts('completed', 'failed');
      if ((counts.completed ?? 0) + (counts.failed ?? 0) >= MESSAGES) break;
      await sleep(500);
    }
    const counts = await deliver.getJobCounts('completed', 'failed');
    await worker.ready;
    await kill(worker, 'SIGTERM');
    await deliver.close();
    expect(kills).toBe(KILLS);
    expect(counts.failed).toBe(0);
    expect(counts.completed).toBe(MESSAGES);

    // Exactly one Email account per accepted message, each opening to its message.
    const seen = new Map<string, number>();
    let accounts = 0;
    for (const w of wallets) {
      const inbox = await listInbox(rig.chain.connection, rig.chain.programId, w.publicKey, { limit: 1000 });
      accounts += inbox.length;
      const reader = walletEncryptionKeypair(w.secretKey);
      for (const entry of inbox) {
        const res = await fetch(`${rig.gatewayUrl}/ipfs/${entry.email.cid}`);
        const opened = await openSealed(new Uint8Array(await res.arrayBuffer()), reader);
        const subject = /Subject: (drill-\d+)/.exec(Buffer.from(opened.raw).toString('utf8'))?.[1] ?? '?';
        expect(sent.get(subject)).toBe(w.publicKey.toBase58());
        seen.set(subject, (seen.get(subject) ?? 0) + 1);
      }
    }
    expect(accounts).toBe(MESSAGES);
    expect(seen.size).toBe(MESSAGES);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    // And the store holds one copy per message, pointing at those accounts.
    const messages = new MessagesRepo(rig.serving.store.db);
    let copies = 0;
    for (const w of wallets)
      copies += (await messages.listForWallet(w.publicKey.toBase58(), { limit: 1000 })).length;
    expect(copies).toBe(MESSAGES);
  }, 300_000);
});
