import { describe, expect, it } from 'vitest';
import { createLogger, newMessageId, newSortableId, withContext } from './log.ts';

function collector() {
  const lines: string[] = [];
  return { lines, stream: { write: (s: string) => void lines.push(s) } };
}

describe('logger', () => {
  it('writes JSON lines that carry the context ids', () => {
    const { lines, stream } = collector();
    const log = createLogger({ level: 'debug', name: 'smtp', destination: stream });
    const msgid = newMessageId();
    const child = withContext(log, { msgid, jobId: '42', reqid: undefined });
    child.info({ rcpt: 'a@b' }, 'accepted');
    child.debug('stage done');
    log.trace('not written');

    expect(lines).toHaveLength(2);
    const first = JSON.parse(lines[0] ?? '');
    expect(first).toMatchObject({
      level: 'info',
      name: 'smtp',
      msgid,
      jobId: '42',
      rcpt: 'a@b',
      msg: 'accepted',
    });
    expect(first).not.toHaveProperty('reqid');
    expect(typeof first.time).toBe('string');
    expect(JSON.parse(lines[1] ?? '')).toMatchObject({ level: 'debug', msgid, msg: 'stage done' });
  });

  it('redacts secrets in logged objects', () => {
    const { lines, stream } = collector();
    createLogger({ destination: stream }).info(
      { provider: { jwt: 'secret-jwt', kind: 'hosted_jwt' } },
      'set',
    );
    const entry = JSON.parse(lines[0] ?? '');
    expect(entry.provider).toEqual({ jwt: '[redacted]', kind: 'hosted_jwt' });
  });

  it('formats pretty lines', () => {
    const { lines, stream } = collector();
    const log = createLogger({ format: 'pretty', name: 'api', destination: stream });
    withContext(log, { reqid: 'R1' }).warn({ status: 503 }, 'no admin token');
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} WARN {2}api: no admin token reqid=R1 status=503\n$/);
  });
});

describe('sortable ids', () => {
  it('are 26-character ULIDs in generation order', () => {
    const ids = Array.from({ length: 2000 }, () => newMessageId());
    for (const id of ids) expect(id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it('sort by time first', () => {
    const a = newSortableId(Date.now() + 10_000);
    const b = newSortableId(Date.now() + 20_000);
    expect(a < b).toBe(true);
    // A clock step backwards still yields an increasing id.
    expect(newSortableId(Date.now()) > b).toBe(true);
  });
});
