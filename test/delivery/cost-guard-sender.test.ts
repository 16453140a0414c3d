// The cost guard's canonical sender (src/core/limits/sender-address.ts): the table
// of docs/cost-guard.md "Sender forms" — which spellings share one window and
// which stay apart — the window keys the guard derives for local senders, and
// the same through a real MX over SMTP.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { fromHash } from '../../chain/client/index.ts';
import { generateKeypair } from '../../src/core/keys/keypair-file.ts';
import { CostGuard } from '../../src/core/limits/cost-guard.ts';
import { senderPublicationWindowKey } from '../../src/core/limits/redis-keys.ts';
import { canonicalSender, normalizeSenderAddress } from '../../src/core/limits/sender-address.ts';
import { LineClient, startMxRig } from '../support/mx-rig.ts';

const wallet = generateKeypair().address;
const other = generateKeypair().address;

/** ASCII letters and digits as their fullwidth forms (U+FF01…), which NFKC maps back. */
function fullwidth(s: string): string {
  return s.replace(/[A-Za-z0-9]/g, (c) => String.fromCodePoint((c.codePointAt(0) ?? 0) + 0xfee0));
}

// Each row: spellings that must share one window, and the canonical form they share.
const SAME: [string, string[]][] = [
  [
    'alice@example.org',
    [
      'alice@example.org',
      'Alice@EXAMPLE.org',
      'alice@example.org.',
      '"alice"@example.org',
      '"al\\ice"@example.org',
      'alice+news@example.org',
      'alice+a+b@example.org',
      '"alice+x"@example.org',
      'alice%relay.example@example.org',
      'ａｌｉｃｅ@ｅｘａｍｐｌｅ.ｏｒｇ',
      'ALICE@Example.Org.',
    ],
  ],
  [
    'bob@xn--bcher-kva.example',
    ['bob@bücher.example', 'bob@BÜCHER.example', 'bob@xn--bcher-kva.example', 'bob@XN--BCHER-KVA.EXAMPLE.'],
  ],
  ['a.b@example.org', ['a.b@example.org', '"a.b"@example.org', '"A.B+c"@Example.org']],
  [
    '@[192.0.2.1]',
    ['x@[192.0.2.1]', 'other@[192.0.2.1]', '"q"@[192.0.2.1]', 'y@[IPv6:::ffff:192.0.2.1]', '@[192.0.2.1]'],
  ],
  ['@[IPv6:2001:db8::1]', ['a@[IPv6:2001:DB8:0:0::1]', 'b@[ipv6:2001:db8::0:1]']],
  [
    `${wallet}@mail.test`,
    [
      `${wallet}@mail.test`,
      `"${wallet}"@mail.test`,
      `${wallet}+tag@MAIL.test.`,
      `${wallet}%x.example@mail.test`,
      `${fullwidth(wallet)}@mail.test`,
    ],
  ],
];

// Spellings that stay distinct from each other.
const DISTINCT: string[][] = [
  // base58 is case-sensitive: a wallet keeps its case.
  [`${wallet}@mail.test`, `${wallet.toLowerCase()}@mail.test`, `${other}@mail.test`],
  // `-`, `_` and `.` are part of the name, not separators.
  ['john.doe@example.org', 'john-doe@example.org', 'john_doe@example.org', 'johndoe@example.org'],
  // A quoted local part that is not a dot-atom stays quoted.
  ['"john doe"@example.org', 'johndoe@example.org', '"john.doe."@example.org'],
  // Different domains, and a literal versus a name.
  ['alice@example.org', 'alice@example.net', 'alice@[192.0.2.1]', 'alice@[192.0.2.2]'],
];

describe('canonical sender', () => {
  it('collapses every spelling the docs promise into one form', () => {
    for (const [canonical, forms] of SAME) {
      for (const form of forms) expect(normalizeSenderAddress(form), form).toBe(canonical);
    }
  });

  it('keeps the documented forms apart', () => {
    for (const group of DISTINCT) {
      const keys = group.map(normalizeSenderAddress);
      expect(new Set(keys).size, group.join(' ')).toBe(group.length);
    }
  });

  it('is idempotent, and quotes again what is not a dot-atom', () => {
    for (const a of [
      '"john doe"@example.org',
      '"a\\"b"@x.org',
      '+x@y.org',
      'x@[IPv6:2001:db8::1]',
      'a_b@x_y.org',
    ]) {
      const once = normalizeSenderAddress(a);
      expect(normalizeSenderAddress(once), a).toBe(once);
    }
    expect(normalizeSenderAddress('"john doe"@example.org')).toBe('"john doe"@example.org');
    expect(normalizeSenderAddress('"a\\"b"@x.org')).toBe('"a\\"b"@x.org');
    // Nothing before the `+`: the `+` is the name, not a tag.
    expect(normalizeSenderAddress('+x@y.org')).toBe('+x@y.org');
    expect(canonicalSender(`"${wallet}"@Mail.Test`)).toEqual({
      local: wallet,
      domain: 'mail.test',
      wallet: true,
      address: `${wallet}@mail.test`,
    });
  });

  it('refuses what is not an address', () => {
    for (const bad of ['no-at-sign', '@example.org', 'alice@', '']) {
      expect(() => normalizeSenderAddress(bad), bad).toThrow(/not a mail address/);
    }
  });

  it('leaves from_hash alone: the protocol value still tells the forms apart', () => {
    const hex = (s: string) => Buffer.from(fromHash(s)).toString('hex');
    expect(hex('alice+x@example.org')).not.toBe(hex('alice@example.org'));
    expect(hex('Alice@example.org')).not.toBe(hex('alice@example.org'));
  });
});

describe('sender window keys of the guard', () => {
  const redis = new Redis('redis://127.0.0.1:6379', { lazyConnect: true });
  afterAll(() => redis.disconnect());
  const off = { limit: 0, windowMs: 1000 };
  const guard = new CostGuard({
    redis,
    prefix: 'sp',
    limits: { sender: off, recipient: off, overall: off, nullSender: off },
    localDomains: ['mail.test', 'other.test'],
    resolveAlias: async (alias) => (alias === 'carol' ? wallet : null),
  });
  const walletKeys = ['mail.test', 'other.test'].map((d) =>
    senderPublicationWindowKey('sp', `${wallet}@${d}`),
  );

  it('charges every local spelling of a wallet to the same windows', async () => {
    for (const from of [
      `"${wallet}"@mail.test`,
      `${wallet}+x@OTHER.test.`,
      `"${wallet}"@other.test`,
      `${wallet}%elsewhere.example@mail.test`,
    ]) {
      expect(await guard.senderKeys(from), from).toEqual(walletKeys);
    }
    // An alias adds its own form, whatever its spelling.
    for (const from of [
      'carol@mail.test',
      '"Carol"@mail.test',
      'carol+list@Mail.Test',
      'ｃａｒｏｌ@mail.test',
    ]) {
      expect(await guard.senderKeys(from), from).toEqual([
        ...walletKeys,
        senderPublicationWindowKey('sp', 'carol@mail.test'),
      ]);
    }
  });

  it('derives no sender keys when the sender window is off, and charges the windows that are on', async () => {
    const prefix = `sp-${Math.random().toString(36).slice(2, 10)}`;
    const aliasLookups: string[] = [];
    const on = { limit: 5, windowMs: 60_000 };
    const guardWith = (sender: typeof on) =>
      new CostGuard({
        redis,
        prefix,
        limits: { sender, recipient: on, overall: off, nullSender: off },
        localDomains: ['mail.test'],
        resolveAlias: async (alias) => {
          aliasLookups.push(alias);
          return alias === 'carol' ? wallet : null;
        },
      });
    try {
      const offReserved = await guardWith(off).reserve('carol@mail.test', other);
      if (!offReserved.ok) throw new Error('refused');
      expect(offReserved.reservation.windows.map((w) => w.key)).toEqual([
        `${prefix}:rl:wallet:${other}:pubrcpt`,
      ]);
      expect(aliasLookups).toEqual([]);
      const onReserved = await guardWith(on).reserve('carol@mail.test', other);
      if (!onReserved.ok) throw new Error('refused');
      expect(onReserved.reservation.windows.map((w) => w.key)).toEqual([
        senderPublicationWindowKey(prefix, `${wallet}@mail.test`),
        senderPublicationWindowKey(prefix, 'carol@mail.test'),
        `${prefix}:rl:wallet:${other}:pubrcpt`,
      ]);
      expect(aliasLookups).toEqual(['carol']);
    } finally {
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length) await redis.del(...keys);
    }
  });

  it('keys remote, literal and unqualified senders by their canonical form', async () => {
    expect(await guard.senderKeys('Dave+x@Example.ORG.')).toEqual(['sp:pubwin:sender:dave@example.org']);
    expect(await guard.senderKeys('x@[192.0.2.1]')).toEqual(['sp:pubwin:sender:@[192.0.2.1]']);
    expect(await guard.senderKeys('Name')).toEqual(['sp:pubwin:sender:name@unqualified.invalid']);
    expect(await guard.senderKeys('name@')).toEqual(['sp:pubwin:sender:"name@"@unqualified.invalid']);
    expect(await guard.senderKeys('')).toEqual(['sp:pubwin:null']);
  });
});

describe('sender forms at the MX, over SMTP', () => {
  /** One message on its own connection; the reply to RCPT when refused, else DATA's. */
  async function send(port: number, from: string, to: string): Promise<number> {
    const c = await LineClient.open(port);
    try {
      await c.cmd('EHLO client.example');
      const mail = await c.cmd(`MAIL FROM:<${from}>`);
      if (mail.code !== 250) return mail.code;
      const rcpt = await c.cmd(`RCPT TO:<${to}>`);
      if (rcpt.code !== 250) return rcpt.code;
      expect((await c.cmd('DATA')).code).toBe(354);
      return (await c.cmd('Subject: forms\r\n\r\nhello\r\n.')).code;
    } finally {
      c.end();
    }
  }

  it('charges every spelling of one sender to one window', async () => {
    const rig = await startMxRig({ limits: { sender: { limit: 2, windowMs: 3_600_000 } } });
    const groups: [string, string[]][] = [
      [
        `${rig.wallet}@mail.test`,
        [`"${rig.wallet}"@mail.test`, `${rig.wallet}+x@MAIL.test`, `${rig.wallet}@mail.test`],
      ],
      [
        'alice@example.org',
        [
          '"alice"@example.org',
          'ALICE+x@Example.org',
          'alice%relay.example@example.org',
          'ａｌｉｃｅ@example.org',
        ],
      ],
      [
        'bob@xn--bcher-kva.example',
        ['bob@bücher.example', 'bob@XN--BCHER-KVA.example', 'bob@xn--bcher-kva.example'],
      ],
      ['@[192.0.2.1]', ['x@[192.0.2.1]', 'y@[192.0.2.1]', 'z@[IPv6:::ffff:192.0.2.1]']],
    ];
    for (const [canonical, forms] of groups) {
      const codes: number[] = [];
      for (const from of forms) codes.push(await send(rig.port, from, rig.rcpt));
      // Two fit the window; every further spelling finds it full.
      expect(codes, canonical).toEqual([250, 250, ...forms.slice(2).map(() => 451)]);
      expect(await rig.redis.exists(senderPublicationWindowKey(rig.prefix, canonical)), canonical).toBe(1);
    }
    // Another sender still gets through.
    expect(await send(rig.port, 'carol@example.org', rig.rcpt)).toBe(250);
    expect((await rig.redis.keys(`${rig.prefix}:pubwin:sender:*`)).sort()).toEqual(
      [...groups.map(([c]) => c), 'carol@example.org'].map((c) => `${rig.prefix}:pubwin:sender:${c}`).sort(),
    );
  }, 60_000);
});
