// `[blobs] backend = "postgres"` end to end: startServe on a devnet, real
// Redis (random prefix) and a real PostgreSQL schema of its own (dropped
// after). Mail accepted is delivered and its spool entry removed (nothing
// under the data directory's blobs/spool); a multi-chunk message arrives
// byte-exact; after the stack's Redis keys are flushed, reconcile rebuilds
// the jobs from the rows' manifests and the workers deliver each message
// once; with PostgreSQL unreachable the MX answers 451 and acknowledges
// nothing.
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import type { Keypair } from '@solana/web3.js';
import { sql } from 'kysely';
import nodemailer from 'nodemailer';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { listInbox } from '../../chain/client/index.ts';
import { DELIVERY_ATTEMPTS } from '../../delivery/backoff.ts';
import { reconcileSpool } from '../../delivery/reconcile.ts';
import { PgBlobStore } from '../../src/core/blobs/pg-blob-store.ts';
import { startServe } from '../../src/run/serve/serve.ts';
import { dropSchema, TEST_PG_URL, uniqueSchemaName } from '../support/postgres.ts';
import { deliveredTexts, RIG_DOMAIN, type ServeRig, startServeRig } from '../support/serve-rig.ts';
import { eventually } from '../support/spooler-rig.ts';

const schemas: string[] = [];
afterEach(async () => {
  for (const s of schemas.splice(0)) await dropSchema(s).catch(() => {});
});

function pgToml(url: string): string {
  return `\n[store]\nurl = "${url}"\n\n[blobs]\nbackend = "postgres"\n`;
}

function freshUrl(base = TEST_PG_URL): string {
  const schema = uniqueSchemaName('sealpost_blobs');
  schemas.push(schema);
  return `${base}?schema=${schema}`;
}

function send(rig: ServeRig, to: Keypair[], subject: string, body = `body of ${subject}`): Promise<string> {
  const t = nodemailer.createTransport({
    host: '127.0.0.1',
    port: rig.mxPort,
    secure: false,
    ignoreTLS: true,
  });
  return t
    .sendMail({
      envelope: { from: 'ann@remote.example', to: to.map((k) => `${k.publicKey.toBase58()}@${RIG_DOMAIN}`) },
      raw: `From: ann@remote.example\r\nSubject: ${subject}\r\n\r\n${body}\r\n`,
    })
    .then((info) => info.response.split(' ').pop() ?? '')
    .finally(() => t.close());
}

async function spoolRows(rig: ServeRig): Promise<number> {
  const r = await sql<{ n: number }>`select count(*)::int as n from blob_spool`.execute(rig.serving.store.db);
  return r.rows[0]?.n ?? -1;
}

async function flushStack(rig: ServeRig): Promise<number> {
  let cursor = '0';
  let n = 0;
  do {
    const [next, keys] = await rig.redis.scan(cursor, 'MATCH', `${rig.prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) n += await rig.redis.del(...keys);
  } while (cursor !== '0');
  return n;
}

const localSpoolEmpty = (rig: ServeRig) => {
  const dir = join(rig.dataDir, 'blobs', 'spool');
  return !existsSync(dir) || readdirSync(dir).length === 0;
};

/** A TCP proxy to PostgreSQL that can be taken down (connections cut, new ones refused). */
async function pgProxy(): Promise<{ url: string; down(): Promise<void> }> {
  const target = new URL(TEST_PG_URL);
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {});
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as { port: number }).port;
  const url = new URL(TEST_PG_URL);
  url.host = `127.0.0.1:${port}`;
  return {
    url: url.toString(),
    down: async () => {
      await new Promise<void>((done) => {
        server.close(() => done());
        for (const s of sockets) s.destroy();
      });
    },
  };
}

describe('[blobs] backend = "postgres"', () => {
  it('accepted mail is delivered, byte-exact across chunks, and its spool row removed', async () => {
    const rig = await startServeRig({ extraToml: pgToml(freshUrl()) });
    try {
      expect(rig.config.blobs?.backend).toBe('postgres');
      const ann = await rig.mail.mailbox();
      const bob = await rig.mail.mailbox();
      // ~700 KiB of base64-ish text: three chunk rows and a bit.
      const big = randomBytes(525 * 1024)
        .toString('base64')
        .replace(/(.{76})/g, '$1\r\n');
      const ids = [await send(rig, [ann], 'small one'), await send(rig, [ann, bob], 'large one', big)];
      expect(ids.every((id) => id.length > 0)).toBe(true);
      const texts = await deliveredTexts(rig, bob, 1);
      expect(texts[0]).toContain(big);
      expect((await deliveredTexts(rig, ann, 2)).length).toBe(2);
      await eventually(async () => ((await spoolRows(rig)) === 0 ? true : undefined), 30_000);
      const chunks = await sql<{ n: number }>`select count(*)::int as n from blob_spool_chunks`.execute(
        rig.serving.store.db,
      );
      expect(chunks.rows[0]?.n).toBe(0);
      expect(localSpoolEmpty(rig)).toBe(true);
    } finally {
      await rig.stop();
    }
  }, 120_000);

  it('reconcile rebuilds the jobs from the rows after the stack lost its Redis keys', async () => {
    const rig = await startServeRig({
      extraToml: pgToml(freshUrl()),
      serve: { components: { workers: false } },
    });
    const ann = await rig.mail.mailbox();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await send(rig, [ann], `backlog ${i}`));
    expect(await spoolRows(rig)).toBe(5);
    expect(await flushStack(rig)).toBeGreaterThanOrEqual(5);
    const deps = {
      redis: rig.redis,
      prefix: rig.prefix,
      blobs: new PgBlobStore(rig.serving.store.db),
      db: rig.serving.store.db,
      policy: { attempts: DELIVERY_ATTEMPTS, backoffMs: 2000 },
    };
    expect(await reconcileSpool({ ...deps, graceMs: 0 })).toMatchObject({
      outcome: 'done',
      scanned: 5,
      recovered: 5,
      recoveredJobs: 5,
      corrupt: 0,
    });
    const workers = await startServe({
      config: rig.config,
      logger: pino({ level: 'silent' }),
      components: { smtp: false, workers: true, api: false, spooler: false },
      singletons: false,
      mailAccess: { imap: false, pop3: false },
    });
    try {
      await eventually(async () => {
        const inbox = await listInbox(rig.chain.connection, rig.chain.programId, ann.publicKey);
        return inbox.length >= 5 ? inbox : undefined;
      }, 90_000);
      await eventually(async () => ((await spoolRows(rig)) === 0 ? true : undefined), 30_000);
      const inbox = await listInbox(rig.chain.connection, rig.chain.programId, ann.publicKey);
      expect(inbox.length).toBe(5);
      expect(new Set(inbox.map((e) => e.email.cid)).size).toBe(5);
      expect(await reconcileSpool({ ...deps, graceMs: 0 })).toMatchObject({ scanned: 0, recovered: 0 });
    } finally {
      await workers.close();
      await rig.stop();
    }
  }, 150_000);

  it('PostgreSQL unreachable: the MX answers 451 and acknowledges nothing', async () => {
    const proxy = await pgProxy();
    const direct = freshUrl();
    const schema = new URL(direct).searchParams.get('schema') as string;
    const viaProxy = new URL(proxy.url);
    viaProxy.searchParams.set('schema', schema);
    const rig = await startServeRig({
      extraToml: pgToml(viaProxy.toString()),
      serve: { components: { workers: false } },
    });
    try {
      const ann = await rig.mail.mailbox();
      expect((await send(rig, [ann], 'before')).length).toBeGreaterThan(0);
      await proxy.down();
      const err = await send(rig, [ann], 'during').then(
        () => null,
        (e: { responseCode?: number; response?: string }) => e,
      );
      expect(err?.responseCode).toBe(451);
      // Nothing acknowledged: one row (the first message), one message's jobs in Redis.
      const { openStore } = await import('../../src/core/store/index.ts');
      const check = await openStore({ url: direct, dataDir: rig.dataDir, migrate: false });
      try {
        const rows = await sql<{ id: string }>`select id from blob_spool`.execute(check.db);
        expect(rows.rows.length).toBe(1);
      } finally {
        await check.close();
      }
      // And one message's job in Redis: the first one's (no worker runs).
      expect(await rig.redis.keys(`${rig.prefix}:deliver:*.0`)).toHaveLength(1);
      expect(localSpoolEmpty(rig)).toBe(true);
    } finally {
      await rig.stop();
    }
  }, 120_000);
});
