// issue 33 part 3: DNS blocklists and allowlists at the MX. `sealpost serve`
// in-process (MX, pipeline, store) on a devnet, `[dns] resolvers` pointed at
// the loopback DNS double (test/support/doubles/dns-server.ts), real SMTP over
// sockets. The client connects from other loopback addresses (127.0.0.5 …,
// all of 127/8 is local on Linux) so the lists can list it while their RFC
// 5782 test entries stay as they must be: 127.0.0.2 listed, 127.0.0.1 not.
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Keypair } from '@solana/web3.js';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { getMailbox } from '../../chain/client/index.ts';
import { openBlobStore } from '../../src/core/blobs/open-blob-store.ts';
import { openSealed, walletEncryptionKeypair } from '../../src/mail/seal/index.ts';
import { type DnsDouble, type DnsZone, startDnsDouble } from '../support/doubles/dns-server.ts';
import { LogLines } from '../support/mx-rig.ts';
import { deliveredTexts, RIG_DOMAIN, type ServeRig, startServeRig } from '../support/serve-rig.ts';

/** A raw SMTP client bound to a chosen loopback source address, keeping a transcript. */
class Client {
  transcript = '';
  private buf = '';
  private readonly replies: { code: number; text: string }[] = [];
  private waiter: (() => void) | undefined;
  closed = false;

  private constructor(private readonly sock: Socket) {
    sock.on('data', (d: Buffer) => {
      this.buf += d.toString('latin1');
      for (let i = this.buf.indexOf('\r\n'); i >= 0; i = this.buf.indexOf('\r\n')) {
        const line = this.buf.slice(0, i);
        this.buf = this.buf.slice(i + 2);
        this.transcript += `S: ${line}\n`;
        const m = /^(\d{3}) (.*)$/.exec(line);
        if (m) this.replies.push({ code: Number(m[1]), text: m[2] ?? '' });
      }
      this.waiter?.();
    });
    sock.on('close', () => {
      this.closed = true;
      this.waiter?.();
    });
    sock.on('error', () => {});
  }

  /** Connects from `from`; resolves with the greeting (or refusal) and how long it took. */
  static async open(port: number, from: string): Promise<{ client: Client; greeting: Reply; ms: number }> {
    const started = performance.now();
    const client = new Client(connect({ port, host: '127.0.0.1', localAddress: from }));
    const greeting = await client.next();
    return { client, greeting, ms: performance.now() - started };
  }

  async next(): Promise<Reply> {
    const deadline = performance.now() + 20_000;
    while (this.replies.length === 0) {
      if (this.closed) throw new Error('connection closed');
      if (performance.now() > deadline) throw new Error('no reply in 20 s');
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
        setTimeout(resolve, 200);
      });
    }
    return this.replies.shift() as Reply;
  }

  async cmd(line: string): Promise<Reply> {
    this.transcript += `C: ${line.split('\r\n').join('\nC: ')}\n`;
    this.sock.write(`${line}\r\n`);
    return this.next();
  }

  /** Waits until the server has closed the connection. */
  async closedByServer(): Promise<boolean> {
    for (let i = 0; i < 50 && !this.closed; i++) await sleep(100);
    return this.closed;
  }

  end(): void {
    this.sock.destroy();
  }
}

interface Reply {
  code: number;
  text: string;
}

/** EHLO … DATA on an open session; the reply to the final dot (or to the first refused command). */
async function send(
  c: Client,
  from: string,
  to: string,
  body: string,
): Promise<{ stage: string; reply: Reply }> {
  const steps: [string, string, number][] = [
    ['ehlo', 'EHLO client.remote.example', 250],
    ['mail', `MAIL FROM:<${from}>`, 250],
    ['rcpt', `RCPT TO:<${to}>`, 250],
    ['data', 'DATA', 354],
  ];
  for (const [stage, line, want] of steps) {
    const reply = await c.cmd(line);
    if (reply.code !== want) return { stage, reply };
  }
  const message =
    `From: <${from}>\r\nTo: <${to}>\r\nSubject: dnsbl test\r\nMessage-ID: <${Date.now()}.${Math.random()}@remote.example>\r\n` +
    `Date: ${new Date().toUTCString()}\r\n\r\n${body}\r\n.`;
  return { stage: 'dot', reply: await c.cmd(message) };
}

async function mailCount(rig: ServeRig, owner: Keypair): Promise<bigint> {
  const mb = await getMailbox(rig.chain.connection, rig.chain.programId, owner.publicKey);
  return mb?.mailCount ?? -1n;
}

async function storedRows(rig: ServeRig, wallet: string) {
  return rig.serving.store.db
    .selectFrom('messages')
    .innerJoin('mailboxes', 'mailboxes.id', 'messages.mailbox_id')
    .select(['messages.id', 'mailboxes.name', 'messages.cid', 'messages.email_address', 'messages.blob_key'])
    .where('messages.wallet', '=', wallet)
    .execute();
}

async function metric(rig: ServeRig, name: string): Promise<string> {
  return rig.serving.prometheus.registry.getSingleMetricAsString(name);
}

/** Queries the double received for one name and type. */
function asked(dns: DnsDouble, name: string, type = 'A'): number {
  return dns.queries.filter((q) => q.name === name && q.type === type).length;
}

/** A list zone whose RFC 5782 test entries are as they must be. */
function wellBehaved(
  zone: string,
  listed: Record<string, string[]>,
  txt: Record<string, string> = {},
): DnsZone {
  const out: DnsZone = { [`2.0.0.127.${zone}`]: { A: ['127.0.0.2'], TXT: ['test entry'] } };
  for (const [ip, codes] of Object.entries(listed)) {
    const name = `${ip.split('.').reverse().join('.')}.${zone}`;
    out[name] = { A: codes, ...(txt[ip] ? { TXT: [txt[ip]] } : {}) };
  }
  return out;
}

/** `sealpost serve` asking `dns` for everything; loopback clients are looked up like any other. */
function rigWith(dns: DnsDouble, spamToml: string, logs?: LogLines): Promise<ServeRig> {
  return startServeRig({
    resolver: dns.address,
    extraToml: `\n[spam]\ndnsbl_skip_networks = []\n${spamToml}\n`,
    ...(logs ? { serve: { logger: pino({ level: 'info' }, logs.stream) } } : {}),
  });
}

const doubles: DnsDouble[] = [];
afterEach(async () => {
  for (const d of doubles.splice(0)) await d.close();
});

async function dnsDouble(zone: DnsZone): Promise<DnsDouble> {
  const dns = await startDnsDouble(zone);
  doubles.push(dns);
  return dns;
}

describe('DNSBL and DNSWL at the MX', { timeout: 120_000 }, () => {
  it('refuses a listed client at connect with 554 naming the list and its TXT; cached; an allowlisted client gets in', async () => {
    const dns = await dnsDouble({
      ...wellBehaved(
        'bl.test',
        { '127.0.0.5': ['127.0.0.2'], '127.0.0.6': ['127.0.0.3'] },
        { '127.0.0.5': 'Listed by BL-TEST, see https://bl.test/query/127.0.0.5' },
      ),
      ...wellBehaved('wl.test', { '127.0.0.6': ['127.0.10.2'] }),
    });
    const rig = await rigWith(dns, 'dnsbl = ["bl.test"]\ndnswl = ["wl.test"]');
    const bob = await rig.mail.mailbox();
    const wallet = bob.publicKey.toBase58();
    const to = `${wallet}@${RIG_DOMAIN}`;
    const before = await mailCount(rig, bob);

    const first = await Client.open(rig.mxPort, '127.0.0.5');
    console.log(`554 at connect (mail_count before: ${before}):\n${first.client.transcript}`);
    expect(first.greeting.code).toBe(554);
    expect(first.greeting.text).toBe(
      '5.7.1 Service unavailable; Client host [127.0.0.5] blocked using bl.test: Listed by BL-TEST, see https://bl.test/query/127.0.0.5',
    );
    // The session is over: no command is read after the refusal.
    expect(await first.client.closedByServer()).toBe(true);
    first.client.end();

    // A second connection from the same address: the answer (and its TXT) come from the cache.
    const second = await Client.open(rig.mxPort, '127.0.0.5');
    expect(second.greeting.code).toBe(554);
    second.client.end();
    expect(asked(dns, '5.0.0.127.bl.test')).toBe(1);
    expect(asked(dns, '5.0.0.127.bl.test', 'TXT')).toBe(1);
    expect(asked(dns, '5.0.0.127.wl.test')).toBe(1);
    expect(await metric(rig, 'sealpost_dnsbl_cache_hits_total')).toMatch(/list="bl.test"[^\n]* [1-9]/);
    expect(await metric(rig, 'sealpost_dnsbl_rejections_total')).toMatch(
      /list="bl.test",action="reject"[^\n]* 2/,
    );
    expect(await metric(rig, 'sealpost_smtp_replies_total')).toMatch(/phase="connect",code="554"[^\n]* 2/);

    // Listed in the blocklist too, but the allowlist wins: delivered on chain.
    const allowed = await Client.open(rig.mxPort, '127.0.0.6');
    expect(allowed.greeting.code).toBe(220);
    const sent = await send(allowed.client, 'friend@remote.example', to, 'allowlisted hello');
    expect(sent).toMatchObject({ stage: 'dot', reply: { code: 250 } });
    allowed.client.end();
    const [text] = await deliveredTexts(rig, bob, 1);
    expect(text).toContain('allowlisted hello');
    expect(await metric(rig, 'sealpost_dnsbl_allowlisted_total')).toMatch(/list="wl.test"[^\n]* 1/);

    // Nothing of the refused client was kept: the one message is the allowlisted one.
    expect(await mailCount(rig, bob)).toBe(before + 1n);
    // The store row follows the chain confirmation: wait for it, then give a stray one time to show.
    for (let i = 0; i < 100 && (await storedRows(rig, wallet)).length === 0; i++) await sleep(100);
    await sleep(500);
    expect((await storedRows(rig, wallet)).map((r) => r.name)).toEqual(['INBOX']);

    // An address no list holds is greeted.
    const clean = await Client.open(rig.mxPort, '127.0.0.7');
    expect(clean.greeting.code).toBe(220);
    clean.client.end();
    expect(await metric(rig, 'sealpost_dnsbl_list_disabled')).toMatch(/list="bl.test"[^\n]* 0/);
  });

  it('defers at connect, refuses at RCPT (IP list at rcpt, sender domain), and files score listings as Junk off chain', async () => {
    const dns = await dnsDouble({
      ...wellBehaved('defer.test', { '127.0.0.8': ['127.0.0.2'] }, { '127.0.0.8': 'Temporarily listed' }),
      ...wellBehaved('late.test', { '127.0.0.9': ['127.0.0.4'] }),
      ...wellBehaved('score.test', { '127.0.0.10': ['127.0.0.2'] }),
      // A domain list: RFC 5782 test entries are "test" (listed) and "invalid" (not).
      'test.dbl.test': { A: ['127.0.1.2'] },
      'spammer.example.dbl.test': { A: ['127.0.1.2'], TXT: ['Spam domain'] },
    });
    const rig = await rigWith(
      dns,
      [
        'dnsbl = [',
        '  { zone = "defer.test", action = "defer" },',
        '  { zone = "late.test", at = "rcpt", responses = ["127.0.0.4"], reason = "see https://late.test/{ip}" },',
        '  { zone = "dbl.test", check = ["sender"], responses = ["127.0.1.2-127.0.1.99"] },',
        '  { zone = "score.test", action = "score", weight = 2.5 },',
        ']',
        'dnsbl_junk_score = 2',
      ].join('\n'),
    );
    const bob = await rig.mail.mailbox();
    const wallet = bob.publicKey.toBase58();
    const to = `${wallet}@${RIG_DOMAIN}`;
    const before = await mailCount(rig, bob);

    const deferred = await Client.open(rig.mxPort, '127.0.0.8');
    expect(deferred.greeting).toEqual({
      code: 421,
      text: '4.7.1 Service temporarily unavailable; Client host [127.0.0.8] listed by defer.test, try again later: Temporarily listed',
    });
    deferred.client.end();

    const late = await Client.open(rig.mxPort, '127.0.0.9');
    expect(late.greeting.code).toBe(220);
    const lateSent = await send(late.client, 'someone@remote.example', to, 'x');
    expect(lateSent.stage).toBe('rcpt');
    expect(lateSent.reply).toEqual({
      code: 550,
      text: '5.7.1 Service unavailable; Client host [127.0.0.9] blocked using late.test: see https://late.test/127.0.0.9',
    });
    late.client.end();

    const rhsbl = await Client.open(rig.mxPort, '127.0.0.7');
    expect(rhsbl.greeting.code).toBe(220);
    const rhsblSent = await send(rhsbl.client, 'offers@Spammer.Example', to, 'x');
    expect(rhsblSent.stage).toBe('rcpt');
    expect(rhsblSent.reply).toEqual({
      code: 550,
      text: '5.7.1 Service unavailable; Sender domain spammer.example blocked using dbl.test: Spam domain',
    });
    // Another sender on the same connection is fine (the domain list is asked per transaction).
    expect((await rhsbl.client.cmd('RSET')).code).toBe(250);
    const ok = await send(rhsbl.client, 'friend@remote.example', to, 'from a clean domain');
    expect(ok).toMatchObject({ stage: 'dot', reply: { code: 250 } });
    rhsbl.client.end();
    expect(asked(dns, 'spammer.example.dbl.test')).toBe(1);
    expect(asked(dns, 'remote.example.dbl.test')).toBe(1);
    expect(asked(dns, 'invalid.dbl.test')).toBeGreaterThanOrEqual(1);
    const [cleanText] = await deliveredTexts(rig, bob, 1);
    expect(cleanText).toContain('from a clean domain');
    expect(await mailCount(rig, bob)).toBe(before + 1n);

    // Weight 2.5 ≥ dnsbl_junk_score 2: accepted, sealed with X-Spam-* fields, filed in Junk, not published.
    const scored = await Client.open(rig.mxPort, '127.0.0.10');
    expect(scored.greeting.code).toBe(220);
    const junkSent = await send(scored.client, 'bulk@remote.example', to, 'special offer');
    expect(junkSent).toMatchObject({ stage: 'dot', reply: { code: 250 } });
    scored.client.end();
    let junk = (await storedRows(rig, wallet)).filter((r) => r.name === 'Junk');
    for (let i = 0; i < 150 && junk.length === 0; i++) {
      await sleep(200);
      junk = (await storedRows(rig, wallet)).filter((r) => r.name === 'Junk');
    }
    expect(junk).toHaveLength(1);
    const row = junk[0];
    if (!row) throw new Error('no Junk row');
    expect(row.cid).toBeNull();
    expect(row.email_address).toBeNull();
    expect(await mailCount(rig, bob)).toBe(before + 1n);
    const sealed = await openBlobStore(rig.config, rig.serving.store).read(row.blob_key);
    const opened = await openSealed(new Uint8Array(sealed), walletEncryptionKeypair(bob.secretKey));
    const text = Buffer.from(opened.raw).toString('utf8');
    expect(text).toMatch(/^X-Spam-Status: Yes, score=2\.5 required=2 action="add header" scanner=dnsbl at /m);
    expect(text).toMatch(/^X-Spam-Symbols: RBL_score\.test\(2\.5\)/m);
    expect(text).toContain('special offer');

    const refusals = await metric(rig, 'sealpost_dnsbl_rejections_total');
    expect(refusals).toMatch(/list="defer.test",action="defer"[^\n]* 1/);
    expect(refusals).toMatch(/list="late.test",action="reject"[^\n]* 1/);
    expect(refusals).toMatch(/list="dbl.test",action="reject"[^\n]* 1/);
    expect(await metric(rig, 'sealpost_dnsbl_junk_total')).toMatch(/list="score.test"[^\n]* 1/);
  });

  it('disables a list that answers for everything, with a warning and the gauge, and enables it when it behaves', async () => {
    const dns = await dnsDouble({
      // Answers 127.0.0.2 for any name at all, 127.0.0.1 included.
      '*.all.test': { A: ['127.0.0.2'] },
      // Spamhaus-style "query refused" code for one client, an NXDOMAIN-rewriting answer for another.
      ...wellBehaved('quota.test', { '127.0.0.5': ['127.255.255.254'] }),
      ...wellBehaved('hijack.test', { '127.0.0.5': ['198.51.100.7'] }),
    });
    const logs = new LogLines();
    const rig = await rigWith(
      dns,
      'dnsbl = ["all.test", "quota.test", "hijack.test"]\ndnsbl_probe_secs = 1',
      logs,
    );
    const bob = await rig.mail.mailbox();
    const to = `${bob.publicKey.toBase58()}@${RIG_DOMAIN}`;

    const c = await Client.open(rig.mxPort, '127.0.0.5');
    expect(c.greeting.code).toBe(220);
    const sent = await send(c.client, 'friend@remote.example', to, 'not blocked by a broken list');
    expect(sent).toMatchObject({ stage: 'dot', reply: { code: 250 } });
    c.client.end();

    const warning = logs.lines.find(
      (l) => typeof l.msg === 'string' && l.msg.startsWith('DNSBL all.test answers for everything'),
    );
    expect(warning).toMatchObject({ level: 40, list: 'all.test', probe: '1.0.0.127.all.test' });
    expect(await metric(rig, 'sealpost_dnsbl_list_disabled')).toMatch(/list="all.test"[^\n]* 1/);
    // Disabled: the client's own name was never asked of it.
    expect(asked(dns, '5.0.0.127.all.test')).toBe(0);
    // A refusal code and an answer outside 127/8 are not listings.
    const lookups = await metric(rig, 'sealpost_dnsbl_lookups_total');
    expect(lookups).toMatch(/list="quota.test",result="list-error"[^\n]* 1/);
    expect(lookups).toMatch(/list="hijack.test",result="invalid"[^\n]* 1/);
    expect(await metric(rig, 'sealpost_dnsbl_list_disabled')).toMatch(/list="quota.test"[^\n]* 0/);

    // The zone is fixed: the next probe (every second here) enables it, and it lists 127.0.0.5 again.
    dns.remove('*.all.test');
    for (const [name, a] of Object.entries(wellBehaved('all.test', { '127.0.0.5': ['127.0.0.3'] })))
      dns.set(name, 'A', a.A ?? []);
    for (
      let i = 0;
      i < 50 && !logs.lines.some((l) => String(l.msg).startsWith('DNSBL all.test behaves again'));
      i++
    )
      await sleep(100);
    expect(await metric(rig, 'sealpost_dnsbl_list_disabled')).toMatch(/list="all.test"[^\n]* 0/);
    const again = await Client.open(rig.mxPort, '127.0.0.5');
    expect(again.greeting).toEqual({
      code: 554,
      text: '5.7.1 Service unavailable; Client host [127.0.0.5] blocked using all.test',
    });
    again.client.end();
  });

  it('fails open within the timeout when the lists time out or SERVFAIL, logging once a minute per list', async () => {
    const dns = await dnsDouble({});
    dns.setFault('slow.test', 'timeout');
    dns.setFault('broken.test', 'servfail');
    const logs = new LogLines();
    const rig = await rigWith(dns, 'dnsbl = ["slow.test", "broken.test"]\ndnsbl_timeout_ms = 500', logs);
    const bob = await rig.mail.mailbox();
    const to = `${bob.publicKey.toBase58()}@${RIG_DOMAIN}`;

    for (const from of ['127.0.0.5', '127.0.0.5', '127.0.0.6']) {
      const c = await Client.open(rig.mxPort, from);
      expect(c.greeting.code).toBe(220);
      // The look-up's timeout (500 ms) bounds the greeting's delay.
      expect(c.ms).toBeLessThan(1500);
      c.client.end();
    }
    const c = await Client.open(rig.mxPort, '127.0.0.5');
    const sent = await send(c.client, 'friend@remote.example', to, 'resolver trouble');
    expect(sent).toMatchObject({ stage: 'dot', reply: { code: 250 } });
    c.client.end();
    const [text] = await deliveredTexts(rig, bob, 1);
    expect(text).toContain('resolver trouble');

    const lookups = await metric(rig, 'sealpost_dnsbl_lookups_total');
    expect(lookups).toMatch(/list="slow.test",result="timeout"[^\n]* [3-9]/);
    expect(lookups).toMatch(/list="broken.test",result="servfail"[^\n]* [3-9]/);
    const failures = logs.lines.filter((l) => String(l.msg).startsWith('DNSBL look-up failed'));
    expect(failures.filter((l) => l.list === 'slow.test')).toHaveLength(1);
    expect(failures.filter((l) => l.list === 'broken.test')).toHaveLength(1);
    // Failures are not kept: every connection asked again.
    expect(asked(dns, '5.0.0.127.slow.test')).toBeGreaterThanOrEqual(3);
    expect(await metric(rig, 'sealpost_dnsbl_list_disabled')).toMatch(/list="slow.test"[^\n]* 0/);
  });
});
