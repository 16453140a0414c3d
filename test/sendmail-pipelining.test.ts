// SendMail pipelining (delivery/stages/submit.ts, `[chain] pipeline_sendmail`)
// against a real devnet and real Redis: the recipient's lease is released
// once a send is processed, so the next send to the same recipient is built
// on it (index + 1) and sent while the first still waits for confirmation;
// both then confirm, each with its own Email account. Without pipelining the
// second send waits for the first's confirmation.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { getMailbox } from '../chain/client.ts';
import type { StageResults } from '../delivery/jobs.ts';
import { type SubmitDeps, submitSendMail } from '../delivery/stages/submit.ts';
import { computeCid } from '../pinning/cid.ts';
import { startTestChain } from './helpers/devnet.ts';
import { prepareMailChain } from './helpers/mail-chain.ts';

type Submitted = NonNullable<StageResults['submit']>;
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
const prefixes: string[] = [];
afterEach(async () => {
  for (const p of prefixes.splice(0)) {
    const keys = await redis.keys(`${p}:*`);
    if (keys.length) await redis.del(...keys);
  }
});
afterAll(() => redis.disconnect());

async function setup() {
  // Slots of 1 s leave a send processed but unconfirmed long enough to watch.
  const chain = await startTestChain({ slotMs: 1000 });
  const mail = await prepareMailChain(chain, 'mail.test');
  const rcpt = await mail.mailbox();
  const prefix = `sptest-pipe-${randomBytes(6).toString('hex')}`;
  prefixes.push(prefix);
  return { chain, mail, rcpt, prefix };
}

describe('SendMail pipelining', () => {
  it('sends the next message to a recipient while the previous one is still unconfirmed', async () => {
    const { chain, mail, rcpt, prefix } = await setup();
    const base: SubmitDeps = {
      connection: chain.connection,
      programId: chain.programId,
      authority: mail.authority,
      redis,
      lockPrefix: prefix,
      pipelined: true,
    };
    const wallet = rcpt.publicKey.toBase58();
    const input = async (n: number, onCheckpoint: (s: Submitted) => void) => ({
      wallet,
      envelopeFrom: `sender${n}@elsewhere.example`,
      domain: 'mail.test',
      cid: await computeCid(randomBytes(64)),
      checkpoint: async (s: Submitted) => onCheckpoint(s),
    });

    // A's confirmation wait is held at a gate (its 50 ms polls) until B has sent.
    // If A happens to be confirmed before its first poll (the slot closed right
    // after it was processed), nothing could be observed: try again.
    let observed = false;
    for (let attempt = 0; attempt < 3 && !observed; attempt++) {
      let openGate = () => {};
      const gate = new Promise<void>((r) => {
        openGate = r;
      });
      let aHeld = false;
      let bSentWhileAHeld = false;
      let a: Submitted | undefined;
      let b: Submitted | undefined;
      const aDone = submitSendMail(
        {
          ...base,
          sleep: async (ms) => {
            if (ms === 50) {
              aHeld = true;
              await gate;
            }
            await new Promise((r) => setTimeout(r, ms));
          },
        },
        await input(1, (s) => {
          a = s;
        }),
      );
      // B starts once A has checkpointed (A holds the lease from before that until processed).
      while (!a) await new Promise((r) => setTimeout(r, 5));
      const bDone = submitSendMail(
        base,
        await input(2, (s) => {
          b = s;
          bSentWhileAHeld = aHeld;
        }),
      );
      while (!b) await new Promise((r) => setTimeout(r, 5));
      openGate();
      const [ra, rb] = await Promise.all([aDone, bDone]);
      expect(ra.confirmed && rb.confirmed).toBe(true);
      expect(BigInt(rb.index)).toBe(BigInt(ra.index) + 1n);
      expect(rb.emailAddress).not.toBe(ra.emailAddress);
      observed = bSentWhileAHeld;
    }
    expect(observed).toBe(true);
    const mailbox = await getMailbox(chain.connection, chain.programId, rcpt.publicKey, 'confirmed');
    expect(mailbox?.mailCount).toBeGreaterThanOrEqual(2n);
  }, 120_000);

  it('without pipelining, the next send to the recipient waits for the confirmation', async () => {
    const { chain, mail, rcpt, prefix } = await setup();
    const wallet = rcpt.publicKey.toBase58();
    const deps: SubmitDeps = {
      connection: chain.connection,
      programId: chain.programId,
      authority: mail.authority,
      redis,
      lockPrefix: prefix,
      pipelined: false,
    };
    const input = async (from: string, onCheckpoint: (s: Submitted) => void) => ({
      wallet,
      envelopeFrom: from,
      domain: 'mail.test',
      cid: await computeCid(randomBytes(64)),
      checkpoint: async (s: Submitted) => onCheckpoint(s),
    });
    // As above: an attempt counts only when A was still unconfirmed while B tried.
    let observed = false;
    for (let attempt = 0; attempt < 3 && !observed; attempt++) {
      let openGate = () => {};
      const gate = new Promise<void>((r) => {
        openGate = r;
      });
      let aHeld = false;
      let a: Submitted | undefined;
      let b: Submitted | undefined;
      const aDone = submitSendMail(
        {
          ...deps,
          sleep: async (ms) => {
            if (ms === 50) {
              aHeld = true;
              await gate;
            }
            await new Promise((r) => setTimeout(r, ms));
          },
        },
        await input(`one${attempt}@elsewhere.example`, (s) => {
          a = s;
        }),
      );
      while (!a) await new Promise((r) => setTimeout(r, 5));
      const outcome = await submitSendMail(
        deps,
        await input(`two${attempt}@elsewhere.example`, (s) => {
          b = s;
        }),
      ).then(
        () => 'sent',
        (err: Error) => err.message,
      );
      if (aHeld) {
        // B could not take the lease while A was unconfirmed: the job is given back for a retry.
        expect(outcome).toMatch(/is busy/);
        expect(b).toBeUndefined();
        observed = true;
      }
      openGate();
      expect((await aDone).confirmed).toBe(true);
    }
    expect(observed).toBe(true);
  }, 120_000);
});
