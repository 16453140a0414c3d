// The server side of the webmail over real HTTP: the mail view routes
// (src/edge/api/routes/mail.ts) on SQLite and real Redis, compose through the
// server into the real submission path on a devnet, and the static webmail
// files (src/edge/api/static-webmail.ts).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Keypair } from '@solana/web3.js';
import { FlowProducer, Queue } from 'bullmq';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { QUEUE_DELIVER } from '../../src/contracts/inbound-jobs.ts';
import { submitDepsFromConfig } from '../../src/edge/submission/from-config.ts';
import { submitMessage } from '../../src/edge/submission/submit.ts';
import { ChainView } from '../../src/mail/chain-view.ts';
import { openSealed, walletEncryptionKeypair } from '../../src/mail/seal/index.ts';
import { ApiClient, postageHolds } from '../../webmail/src/server/api.ts';
import { startTestChain, type TestChain } from '../support/devnet.ts';
import {
  call,
  deliverSealed,
  login,
  MAIL_DOMAIN,
  type MailApiRig,
  useMailApiRigs,
} from '../support/mail-api-rig.ts';
import { prepareMailChain } from '../support/mail-chain.ts';
import { tempDir } from '../support/temp-dir.ts';

const DOMAIN = MAIL_DOMAIN;
type Rig = MailApiRig;
const startRig = useMailApiRigs();

/** The API rig whose compose-through-the-server runs the real submission path on `chain`. */
async function startSubmitRig(
  chain: TestChain,
  maxMessageBytes?: number,
): Promise<{ rig: Rig; flow: FlowProducer }> {
  let flow: FlowProducer | undefined;
  const rig = await startRig({
    mail: (r) => {
      flow = new FlowProducer({ connection: r.redis, prefix: r.prefix });
      const config = {
        ...r.config,
        chain: { ...r.config.chain, rpc_url: chain.devnet.rpcUrl, program_id: chain.programId },
      };
      const deps = submitDepsFromConfig(config, {
        chain: new ChainView({ connection: chain.connection, programId: chain.programId }),
        flow,
        blobs: r.blobs,
        redis: r.redis,
        store: r.store,
        credentialKey: new Uint8Array(32),
        logger: pino({ level: 'silent' }),
      });
      const limited = maxMessageBytes === undefined ? deps : { ...deps, maxMessageBytes };
      return {
        ...(maxMessageBytes !== undefined && { maxMessageBytes }),
        submit: (input) => submitMessage(limited, input),
      };
    },
  });
  if (!flow) throw new Error('the rig did not build its mail routes');
  return { rig, flow };
}

/** A delivered copy the way the pipeline stores it: sealed to the wallet, in the blob store. */
function deliver(rig: Rig, kp: Keypair, id: string, subject: string): Promise<Uint8Array> {
  const raw = new TextEncoder().encode(
    `From: a@remote.example\r\nSubject: ${subject}\r\n\r\nbody ${subject}\r\n`,
  );
  return deliverSealed(rig, kp, id, raw, { publishedByUs: true });
}

describe('mail view routes', () => {
  it("list folders and rows newest first, serve a copy's sealed bytes, set flags — the token wallet's own only", async () => {
    const rig = await startRig();
    const ann = Keypair.generate();
    const bob = Keypair.generate();
    const first = await deliver(rig, ann, 'm1.0', 'one');
    await deliver(rig, ann, 'm2.0', 'two');
    await deliver(rig, bob, 'm3.0', 'bob');
    const token = await login(rig, ann);

    expect((await call(rig, 'GET', '/v1/mail/mailboxes')).status).toBe(401);
    const boxes = await call(rig, 'GET', '/v1/mail/mailboxes', { token });
    expect(boxes.status).toBe(200);
    expect(boxes.body?.addresses).toEqual([`${ann.publicKey.toBase58()}@${DOMAIN}`]);
    expect(boxes.body?.mailboxes).toEqual([
      { id: expect.any(String), name: 'INBOX', messages: 2, unseen: 2 },
    ]);

    const all = await call(rig, 'GET', '/v1/mail/messages?mailbox=INBOX', { token });
    expect(((all.body?.messages ?? []) as { id: string }[]).map((m) => m.id)).toEqual(['m2.0', 'm1.0']);
    expect(all.body?.next_before).toBeNull();
    const page1 = await call(rig, 'GET', '/v1/mail/messages?mailbox=INBOX&limit=1', { token });
    expect(((page1.body?.messages ?? []) as { id: string; uid: number }[])[0]?.id).toBe('m2.0');
    const page2 = await call(
      rig,
      'GET',
      `/v1/mail/messages?mailbox=INBOX&limit=1&before=${page1.body?.next_before}`,
      {
        token,
      },
    );
    expect(((page2.body?.messages ?? []) as { id: string }[]).map((m) => m.id)).toEqual(['m1.0']);

    const sealed = await call(rig, 'GET', '/v1/mail/messages/m1.0/sealed', { token });
    expect(sealed.status).toBe(200);
    expect(sealed.headers.get('content-type')).toBe('application/octet-stream');
    expect(Buffer.from(sealed.bytes).equals(Buffer.from(first))).toBe(true);
    const opened = await openSealed(sealed.bytes, walletEncryptionKeypair(ann.secretKey));
    expect(new TextDecoder().decode(opened.raw)).toContain('Subject: one');

    // Another wallet's message and an unknown id look the same.
    for (const id of ['m3.0', 'nope']) {
      const r = await call(rig, 'GET', `/v1/mail/messages/${id}/sealed`, { token });
      expect(r.status).toBe(404);
      expect(r.body?.error).toBe('message_not_found');
    }
    expect(
      (await call(rig, 'PATCH', '/v1/mail/messages/m3.0', { token, json: { flags: ['\\Seen'] } })).status,
    ).toBe(404);
    expect((await rig.messages.get('m3.0'))?.flags).toEqual([]);

    const flagged = await call(rig, 'PATCH', '/v1/mail/messages/m1.0', {
      token,
      json: { flags: ['\\Seen', '\\Seen'] },
    });
    expect(flagged.status).toBe(200);
    expect(flagged.body?.flags).toEqual(['\\Seen']);
    const after = await call(rig, 'GET', '/v1/mail/mailboxes', { token });
    expect(((after.body?.mailboxes ?? []) as { unseen: number }[])[0]?.unseen).toBe(1);

    const badFlag = await call(rig, 'PATCH', '/v1/mail/messages/m1.0', {
      token,
      json: { flags: ['not a flag'] },
    });
    expect([badFlag.status, badFlag.body?.error]).toEqual([400, 'invalid_flag']);
    const unknown = await call(rig, 'PATCH', '/v1/mail/messages/m1.0', { token, json: { flags: [], x: 1 } });
    expect([unknown.status, unknown.body?.error]).toEqual([400, 'unknown_field']);
    expect((await rig.messages.get('m1.0'))?.flags).toEqual(['\\Seen']);
    const noBox = await call(rig, 'GET', '/v1/mail/messages?mailbox=Archive', { token });
    expect([noBox.status, noBox.body?.error]).toEqual([404, 'mailbox_not_found']);
    expect((await call(rig, 'GET', '/v1/mail/messages?mailbox=INBOX&before=abc', { token })).status).toBe(
      400,
    );
  });

  it('compose through the server: hands the message to the submission path and maps its refusals', async () => {
    const chain = await startTestChain();
    const mail = await prepareMailChain(chain, DOMAIN);
    const ann = await mail.mailbox();
    const bob = await mail.mailbox();
    const carol = await mail.mailbox({ postage: 5000n });
    const { rig, flow } = await startSubmitRig(chain, 4096);
    try {
      const token = await login(rig, ann);
      const me = `${ann.publicKey.toBase58()}@${DOMAIN}`;
      const message = (from: string, extra = '') =>
        Buffer.from(
          `From: ${from}\r\nTo: x\r\nSubject: hi\r\nMessage-ID: <1@x>\r\n\r\nhello${extra}\r\n`,
        ).toString('base64');
      const send = (json: unknown) => call(rig, 'POST', '/v1/mail/send', { token, json });

      const ok = await send({ raw: message(me), to: [`${bob.publicKey.toBase58()}@${DOMAIN}`] });
      expect(ok.status).toBe(202);
      expect(ok.body).toMatchObject({ local: 1, remote: 0 });
      const deliver = new Queue(QUEUE_DELIVER, { connection: rig.redis, prefix: rig.prefix });
      const jobs = await deliver.getJobs(['waiting', 'waiting-children', 'delayed', 'prioritized']);
      await deliver.close();
      expect(jobs.map((j) => j.id)).toContain(`${ok.body?.msgid}.0`);

      const cases: [unknown, number, string][] = [
        [
          { raw: message('someone@else.example'), to: [`${bob.publicKey.toBase58()}@${DOMAIN}`] },
          403,
          'sender_not_owned',
        ],
        [
          { raw: message(me), to: [`${Keypair.generate().publicKey.toBase58()}@${DOMAIN}`] },
          400,
          'bad_recipient',
        ],
        [{ raw: message(me), to: [`${carol.publicKey.toBase58()}@${DOMAIN}`] }, 402, 'postage_required'],
        [
          { raw: message(me, 'x'.repeat(5000)), to: [`${bob.publicKey.toBase58()}@${DOMAIN}`] },
          413,
          'too_big',
        ],
        [{ raw: message(me), to: [] }, 400, 'invalid_request'],
        [{ raw: 'not base64!', to: [`${bob.publicKey.toBase58()}@${DOMAIN}`] }, 400, 'invalid_request'],
      ];
      for (const [json, status, code] of cases) {
        const r = await send(json);
        expect([r.status, r.body?.error], code).toEqual([status, code]);
      }
    } finally {
      await flow.close();
    }
  });

  it('compose through the server: a 402 names every recipient held for postage; the Sent folder keeps what was queued', async () => {
    const chain = await startTestChain();
    const mail = await prepareMailChain(chain, DOMAIN);
    const ann = await mail.mailbox();
    const bob = await mail.mailbox();
    const carol = await mail.mailbox({ postage: 5000n });
    const dave = await mail.mailbox({ postage: 7000n });
    const { rig, flow } = await startSubmitRig(chain);
    try {
      const token = await login(rig, ann);
      expect((await call(rig, 'POST', '/v1/account', { token })).status).toBe(201);
      const me = `${ann.publicKey.toBase58()}@${DOMAIN}`;
      const to = (kp: Keypair) => `${kp.publicKey.toBase58()}@${DOMAIN}`;
      const raw = Buffer.from(
        `From: ${me}\r\nTo: ${[bob, carol, dave].map(to).join(', ')}\r\nSubject: to three\r\nMessage-ID: <3@x>\r\n\r\nhello\r\n`,
      ).toString('base64');
      const sent = () => call(rig, 'GET', '/v1/mail/messages?mailbox=Sent', { token });

      const held = await call(rig, 'POST', '/v1/mail/send', {
        token,
        json: { raw, to: [to(bob), to(carol), 'friend@remote.example', to(dave)] },
      });
      expect(held.status).toBe(402);
      expect(held.body).toEqual({
        error: 'postage_required',
        message: expect.stringContaining('2 recipients ask first-contact senders for postage'),
        recipients: [
          { address: to(carol), wallet: carol.publicKey.toBase58(), required_postage: '5000' },
          { address: to(dave), wallet: dave.publicKey.toBase58(), required_postage: '7000' },
        ],
      });
      // The page's own API client reads the same body into its holds.
      const client = new ApiClient(rig.url);
      client.token = token;
      const err = await client
        .send(Buffer.from(raw, 'base64'), [to(bob), to(carol), to(dave)])
        .catch((e: unknown) => e);
      expect(postageHolds(err)).toEqual([
        { address: to(carol), wallet: carol.publicKey.toBase58(), requiredPostage: 5000n },
        { address: to(dave), wallet: dave.publicKey.toBase58(), requiredPostage: 7000n },
      ]);
      expect(postageHolds(new Error('other'))).toBeNull();
      // Refused: nothing queued, no Sent copy (the folder may not even exist yet).
      const before = await sent();
      expect(before.status === 404 || (before.body?.messages as unknown[] | undefined)?.length === 0).toBe(
        true,
      );

      // The page sends again to the recipients that passed.
      const ok = await call(rig, 'POST', '/v1/mail/send', {
        token,
        json: { raw, to: [to(bob), 'friend@remote.example'] },
      });
      expect(ok.status).toBe(202);
      const rows = (await sent()).body?.messages as { id: string; flags: string[]; cid: unknown }[];
      expect(rows).toEqual([
        expect.objectContaining({ id: `s.${ok.body?.msgid}`, flags: ['\\Seen'], cid: null }),
      ]);
      const boxes = (await call(rig, 'GET', '/v1/mail/mailboxes', { token })).body?.mailboxes as {
        name: string;
        messages: number;
        unseen: number;
      }[];
      expect(boxes.find((b) => b.name === 'Sent')).toMatchObject({ messages: 1, unseen: 0 });
      // The page opens it with the wallet's key, like delivered mail.
      const sealed = await call(rig, 'GET', `/v1/mail/messages/${rows[0]?.id}/sealed`, { token });
      const opened = await openSealed(sealed.bytes, walletEncryptionKeypair(ann.secretKey));
      expect(new TextDecoder().decode(opened.raw)).toContain('Subject: to three');
      expect(opened.envelope.to).toBe(`${to(bob)}, friend@remote.example`);
    } finally {
      await flow.close();
    }
  });

  it('answers 503 for sending when the server wires no submission path', async () => {
    const rig = await startRig();
    const ann = Keypair.generate();
    const token = await login(rig, ann);
    const r = await call(rig, 'POST', '/v1/mail/send', { token, json: { raw: 'aGk=', to: ['x@y.example'] } });
    expect([r.status, r.body?.error]).toEqual([503, 'submission_unavailable']);
  });

  it('documents the mail routes in the OpenAPI document', async () => {
    const rig = await startRig();
    const doc = (await call(rig, 'GET', '/v1/openapi.json')).body as {
      paths: Record<string, Record<string, unknown>>;
    };
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/v1/mail/mailboxes',
        '/v1/mail/messages',
        '/v1/mail/messages/{id}/sealed',
        '/v1/mail/messages/{id}',
        '/v1/mail/send',
      ]),
    );
    const send = doc.paths['/v1/mail/send']?.post as {
      security: unknown[];
      responses: Record<string, unknown>;
    };
    expect(send.security).toEqual([{ sessionToken: [] }]);
    expect(Object.keys(send.responses)).toEqual(
      expect.arrayContaining(['202', '402', '403', '413', '429', '503']),
    );
    const postage = send.responses['402'] as {
      content: Record<string, { schema: { required: string[]; properties: Record<string, unknown> } }>;
    };
    expect(postage.content['application/json']?.schema.required).toEqual(['error', 'message', 'recipients']);
  });
});

describe('static webmail', () => {
  function fakeBuild(dir: string): string {
    const root = join(dir, 'built');
    mkdirSync(join(root, 'assets'), { recursive: true });
    writeFileSync(
      join(root, 'index.html'),
      '<!doctype html><script type="module" src="./assets/app-1a2b.js"></script>',
    );
    writeFileSync(join(root, 'assets', 'app-1a2b.js'), `console.log(${JSON.stringify('x'.repeat(5000))});`);
    return root;
  }

  it('serves the page with its CSP, hashed assets (gzip when accepted) and the public config', async () => {
    const root = fakeBuild(tempDir());
    const rig = await startRig({ toml: `webmail_dir = "${root}"\n`, mail: () => null });
    const page = await fetch(`${rig.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self' 'wasm-unsafe-eval'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(await page.text()).toContain('app-1a2b.js');

    const gz = await call(rig, 'GET', '/assets/app-1a2b.js');
    // fetch asks for gzip and decodes it: the body is the file as written.
    expect(gz.status).toBe(200);
    expect(new TextDecoder().decode(gz.bytes)).toContain('xxxx');
    expect(gz.headers.get('cache-control')).toContain('immutable');
    const raw = await rig.app.inject({
      method: 'GET',
      url: '/assets/app-1a2b.js',
      headers: { 'accept-encoding': 'gzip' },
    });
    expect(raw.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(raw.rawPayload).toString()).toContain('xxxx');
    expect(raw.rawPayload.length).toBeLessThan(500);

    for (const path of ['/assets/missing.js', '/assets/..%2Findex.html', '/assets/.hidden']) {
      const r = await call(rig, 'GET', path);
      expect([r.status, r.body?.error], path).toEqual([404, 'asset_not_found']);
    }
    const cfg = await call(rig, 'GET', '/config.json');
    expect(cfg.body).toEqual({
      rpc_url: rig.config.chain.rpc_url,
      gateway_url: rig.config.ipfs.gateway_url,
      program_id: rig.config.chain.program_id,
      pin_url: rig.config.ipfs.pind_url,
    });
    // The API still answers JSON 404s for unknown routes.
    expect((await call(rig, 'GET', '/v1/nothing')).body?.error).toBe('not_found');
  });

  it('says how to build the webmail when it is not built', async () => {
    const empty = tempDir();
    const rig = await startRig({ toml: `webmail_dir = "${empty}"\n`, mail: () => null });
    const r = await call(rig, 'GET', '/');
    expect(r.status).toBe(503);
    expect(r.body?.error).toBe('webmail_not_built');
    expect(r.body?.message).toContain('npm run build:webmail');
  });
});
