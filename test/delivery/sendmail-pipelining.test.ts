// SendMail pipelining (delivery/stages/submit.ts, `[chain] pipeline_sendmail`)
// against a real devnet and real Redis: the recipient's lease is released
// once a send is processed, so the next send to the same recipient is built
// on it (index + 1) and sent while the first still waits for confirmation;
// both then confirm, each with its own Email account. Without pipelining the
// second send cannot take the lease until the first is confirmed.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { getMailbox } from '../../chain/client/client.ts';
import { type SubmitDeps, type SubmitInput, submitSendMail } from '../../delivery/stages/submit.ts';
import type { StageResults } from '../../src/contracts/inbound-jobs.ts';
import { computeCid } from '../../src/mail/cid.ts';
import { startTestChain } from '../support/devnet.ts';
import { prepareMailChain } from '../support/mail-chain.ts';

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

const tick = () => new Promise((r) => setTimeout(r, 5));

async function setup(pipelined: boolean) {
  // Slots of 1 s leave a send processed but unconfirmed long enough to watch.
  const chain = await startTestChain({ slotMs: 1000 });
  const mail = await prepareMailChain(chain, 'mail.test');
  const rcpt = await mail.mailbox();
  const prefix = `sptest-pipe-${randomBytes(6).toString('hex')}`;
  prefixes.push(prefix);
  const deps: SubmitDeps = {
    connection: chain.connection,
    programId: chain.programId,
    authority: mail.authority,
    redis,
    lockPrefix: prefix,
    pipelined,
  };
  const input = async (from: string, checkpoint: (s: Submitted) => void): Promise<SubmitInput> => ({
    wallet: rcpt.publicKey.toBase58(),
    envelopeFrom: from,
    localDomains: ['mail.test'],
    cid: await computeCid(randomBytes(64)),
    checkpoint: async (s) => checkpoint(s),
  });
  return { chain, rcpt, deps, input };
}

/**
 * Starts send A with its confirmation wait held at a gate (its 50 ms polls);
 * resolves once A has checkpointed. `held` tells whether A reached the gate,
 * i.e. was processed but not yet confirmed.
 */
async function startGatedSend(deps: SubmitDeps, input: SubmitInput) {
  let open = () => {};
  const gate = new Promise<void>((r) => {
    open = r;
  });
  const state = { held: false, checkpointed: undefined as Submitted | undefined };
  const done = submitSendMail(
    {
      ...deps,
      sleep: async (ms) => {
        if (ms === 50) {
          state.held = true;
          await gate;
        }
        await new Promise((r) => setTimeout(r, ms));
      },
    },
    {
      ...input,
      checkpoint: async (s) => {
        state.checkpointed = s;
        await input.checkpoint(s);
      },
    },
  );
  while (!state.checkpointed) await tick();
  return { state, done, open };
}

// If A is confirmed before its first poll (its slot closed right after it was
// processed), nothing can be observed; each test then tries again.
const ATTEMPTS = 3;

describe('SendMail pipelining', () => {
  it('sends the next message to a recipient while the previous one is still unconfirmed', async () => {
    const { chain, rcpt, deps, input } = await setup(true);
    let observed = false;
    for (let attempt = 0; attempt < ATTEMPTS && !observed; attempt++) {
      const a = await startGatedSend(deps, await input(`a${attempt}@elsewhere.example`, () => {}));
      let b: Submitted | undefined;
      let bSentWhileAHeld = false;
      const bDone = submitSendMail(
        deps,
        await input(`b${attempt}@elsewhere.example`, (s) => {
          b = s;
          bSentWhileAHeld = a.state.held;
        }),
      );
      while (!b) await tick();
      a.open();
      const [ra, rb] = await Promise.all([a.done, bDone]);
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
    const { deps, input } = await setup(false);
    let observed = false;
    for (let attempt = 0; attempt < ATTEMPTS && !observed; attempt++) {
      const a = await startGatedSend(deps, await input(`a${attempt}@elsewhere.example`, () => {}));
      let b: Submitted | undefined;
      const outcome = await submitSendMail(
        deps,
        await input(`b${attempt}@elsewhere.example`, (s) => {
          b = s;
        }),
      ).then(
        () => 'sent',
        (err: Error) => err.message,
      );
      if (a.state.held) {
        // B could not take the lease while A was unconfirmed: the job is given back for a retry.
        expect(outcome).toMatch(/is busy/);
        expect(b).toBeUndefined();
        observed = true;
      }
      a.open();
      expect((await a.done).confirmed).toBe(true);
    }
    expect(observed).toBe(true);
  }, 120_000);
});
