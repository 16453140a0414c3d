// No plaintext at rest: after a message is delivered over SMTP, read and
// flagged over IMAP, and a client has appended a Sent copy, neither its
// subject nor its body appears anywhere the operator keeps data — the
// store's rows (SQLite file and WAL, or every PostgreSQL table of the
// schema), the blob files (sealed bodies, spool) and Redis (queues).
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { deliver, imapFlow, mailUser, rawMessage, startMailRig, waitForCopies } from '../support/imap-rig.ts';
import { dropSchema, TEST_PG_URL, uniqueSchemaName } from '../support/postgres.ts';
import type { ServeRig } from '../support/serve-rig.ts';

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else out.push(path);
  }
  return out;
}

async function redisDump(rig: ServeRig): Promise<string> {
  const parts: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await rig.redis.scan(cursor, 'MATCH', `${rig.prefix}:*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const type = await rig.redis.type(key);
      if (type === 'string') parts.push((await rig.redis.get(key)) ?? '');
      else if (type === 'hash') parts.push(JSON.stringify(await rig.redis.hgetall(key)));
      else if (type === 'list') parts.push(JSON.stringify(await rig.redis.lrange(key, 0, -1)));
      else if (type === 'set') parts.push(JSON.stringify(await rig.redis.smembers(key)));
      else if (type === 'zset') parts.push(JSON.stringify(await rig.redis.zrange(key, 0, -1)));
      else if (type === 'stream') parts.push(JSON.stringify(await rig.redis.xrange(key, '-', '+')));
    }
  } while (cursor !== '0');
  return parts.join('\n');
}

/** Delivers, reads, flags and appends; returns the words that must never be found at rest, and the wallet. */
async function exercise(rig: ServeRig): Promise<{ words: string[]; wallet: string }> {
  const user = await mailUser(rig);
  const secret = randomBytes(6).toString('hex');
  const words = [`subject-${secret}`, `body-${secret}`, `sent-subject-${secret}`, `sent-body-${secret}`];
  await deliver(rig, user.address, rawMessage(words[0] as string, `${words[1]}\r\n`));
  await waitForCopies(rig, user.wallet, 1);
  const client = imapFlow(rig, user.address, user.password);
  await client.connect();
  try {
    await client.mailboxOpen('INBOX');
    const m = await client.fetchOne('1', { source: true });
    expect(m ? m.source?.toString('utf8') : '').toContain(words[1]);
    await client.messageFlagsAdd('1', ['\\Seen', '\\Flagged']);
    expect(await client.search({ body: words[1] })).toEqual([1]);
    await client.append('Sent', rawMessage(words[2] as string, `${words[3]}\r\n`), ['\\Seen']);
    await client.mailboxOpen('Sent');
    const sent = await client.fetchOne('1', { source: true });
    expect(sent ? sent.source?.toString('utf8') : '').toContain(words[3]);
  } finally {
    await client.logout().catch(() => client.close());
  }
  // The raw spool file is removed once the delivery is done.
  const spool = join(rig.dataDir, 'blobs', 'spool');
  for (let i = 0; i < 100; i++) {
    let left: string[] = [];
    try {
      left = readdirSync(spool);
    } catch {}
    if (left.length === 0) break;
    await sleep(100);
  }
  return { words, wallet: user.wallet };
}

function expectAbsent(haystack: Buffer | string, words: string[], where: string): void {
  const text = typeof haystack === 'string' ? haystack : haystack.toString('latin1');
  for (const w of words) {
    if (text.includes(w)) throw new Error(`found "${w}" in ${where}`);
  }
}

describe('no plaintext at rest', () => {
  it('SQLite: rows, WAL, blob files and Redis hold no subject or body', async () => {
    const rig = await startMailRig();
    const { words, wallet } = await exercise(rig);
    const files = filesUnder(rig.dataDir);
    // Control: the scan does see what the store holds in the clear (the wallet address).
    const db = Buffer.concat(
      files.filter((f) => /sealpost\.sqlite(-wal)?$/.test(f)).map((f) => readFileSync(f)),
    );
    expect(db.includes(wallet)).toBe(true);
    expect(files.some((f) => f.endsWith('sealpost.sqlite'))).toBe(true);
    expect(files.some((f) => f.includes(`${join('blobs', 'sha256')}`))).toBe(true);
    for (const f of files) expectAbsent(readFileSync(f), words, f);
    expectAbsent(await redisDump(rig), words, 'redis');
    // The sealed rows are really there: two copies with a reader wrap each.
    const wraps = await rig.serving.store.db.selectFrom('reader_wraps').selectAll().execute();
    expect(wraps).toHaveLength(2);
  }, 120_000);

  it('PostgreSQL: every table of the schema, blob files and Redis hold no subject or body', async () => {
    const schema = uniqueSchemaName('sealpost_imap');
    try {
      const rig = await startMailRig({ extraToml: `\n[store]\nurl = "${TEST_PG_URL}?schema=${schema}"\n` });
      expect(rig.config.store.url).toContain(schema);
      const { words, wallet } = await exercise(rig);
      const client = new pg.Client({ connectionString: TEST_PG_URL });
      await client.connect();
      try {
        const tables = await client.query(
          'select table_name from information_schema.tables where table_schema = $1',
          [schema],
        );
        expect(tables.rows.map((r) => r.table_name)).toEqual(
          expect.arrayContaining(['messages', 'reader_keys']),
        );
        let dump = '';
        for (const { table_name } of tables.rows) {
          const r = await client.query(`select * from "${schema}"."${table_name}"`);
          const text = JSON.stringify(r.rows);
          dump += text;
          expectAbsent(text, words, `${schema}.${table_name}`);
        }
        // Control: the dump does hold what the store keeps in the clear.
        expect(dump).toContain(wallet);
      } finally {
        await client.end();
      }
      for (const f of filesUnder(join(rig.dataDir, 'blobs'))) expectAbsent(readFileSync(f), words, f);
      expectAbsent(await redisDump(rig), words, 'redis');
      await rig.stop();
    } finally {
      await dropSchema(schema);
    }
  }, 120_000);
});
