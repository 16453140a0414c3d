// The webmail's pure pieces, in Node: the message builder against the
// parser the page uses, amounts, secret-key import, the passphrase vault
// (WebCrypto, as in the browser) and the mode rule of the settings.
import { ed25519 } from '@noble/curves/ed25519.js';
import { Keypair } from '@solana/web3.js';
import bs58 from 'bs58';
import { describe, expect, it } from 'vitest';
import { mailPasswordProblem as serverPasswordProblem } from '../../src/mail/reader-keys/mail-password.ts';
import { ComposeRefusal, formatSol, type Prepared, parseSol } from '../../webmail/src/chain/compose.ts';
import {
  changedNotice,
  draftChanges,
  freshDifference,
  type HeldPrepared,
  quoteSnapshot,
} from '../../webmail/src/chain/held-quote.ts';
import { importMailboxKey, KeyFileError } from '../../webmail/src/chain/mailbox-key.ts';
import { RepricedError } from '../../webmail/src/chain/prepay.ts';
import { addressForm, bareAddress } from '../../webmail/src/chain/recipient.ts';
import { humanError, isRefusal } from '../../webmail/src/errors.ts';
import { ReadMarks, relativeTime, snippetOf } from '../../webmail/src/inbox-state.ts';
import { buildMessage, encodeHeaderText, replySubject } from '../../webmail/src/mail/build-message.ts';
import { htmlFrameDocument } from '../../webmail/src/mail/html-frame.ts';
import { parseMail } from '../../webmail/src/mail/parse.ts';
import { Refusal } from '../../webmail/src/refusal.ts';
import { mailPasswordProblem } from '../../webmail/src/server/mail-password.ts';
import { DEV_DEFAULTS, modeOf } from '../../webmail/src/settings.ts';
import {
  BackupError,
  BackupPassphraseError,
  backupFileName,
  createBackup,
  openBackup,
  parseBackup,
} from '../../webmail/src/wallet/backup.ts';
import { chainIdFor } from '../../webmail/src/wallet/external.ts';
import { parseSecretKey, SecretKeyFormatError } from '../../webmail/src/wallet/secret-key.ts';
import {
  openVault,
  saveVault,
  VAULT_KEY,
  type VaultContents,
  vaultSummary,
  WrongPassphraseError,
} from '../../webmail/src/wallet/vault.ts';

class MemoryStorage implements Storage {
  private readonly m = new Map<string, string>();
  get length() {
    return this.m.size;
  }
  clear() {
    this.m.clear();
  }
  getItem(k: string) {
    return this.m.get(k) ?? null;
  }
  key(i: number) {
    return [...this.m.keys()][i] ?? null;
  }
  removeItem(k: string) {
    this.m.delete(k);
  }
  setItem(k: string, v: string) {
    this.m.set(k, v);
  }
}

describe('message builder', () => {
  it('builds what the parser reads back exactly: UTF-8 subject and body, reply headers', async () => {
    const text = 'Hällo ✓\nsecond line\n\n-- \nme';
    const raw = buildMessage({
      from: 'a@x.example',
      to: ['b@x.example'],
      subject: 'Grüße — a rather long subject line that needs more than one encoded word ✓✓✓',
      text,
      date: new Date('2026-01-02T03:04:05Z'),
      messageId: 'id1@x.example',
      inReplyTo: 'parent@x.example',
      references: ['root@x.example', 'parent@x.example'],
    });
    const wire = new TextDecoder().decode(raw);
    expect(wire).toMatch(/^Date: Fri, 2 Jan 2026 03:04:05 \+0000\r\n/);
    expect(wire).not.toMatch(/[^\r]\n/);
    expect(wire.split('\r\n').every((l) => l.length <= 998)).toBe(true);
    expect(wire).toContain('Content-Transfer-Encoding: base64');
    const parsed = await parseMail(raw);
    expect(parsed.subject).toBe(
      'Grüße — a rather long subject line that needs more than one encoded word ✓✓✓',
    );
    expect(parsed.text?.replace(/\r\n/g, '\n').trimEnd()).toBe(text);
    expect(parsed.messageId).toBe('id1@x.example');
    expect(parsed.references).toEqual(['root@x.example', 'parent@x.example']);
    expect(parsed.from).toEqual({ name: '', address: 'a@x.example' });
  });

  it('keeps plain ASCII as 7bit and header text without line breaks', () => {
    const wire = new TextDecoder().decode(
      buildMessage({
        from: 'a@x.example',
        to: ['b@x.example', 'c@x.example'],
        subject: 'two\r\nlines',
        text: 'plain',
        date: new Date(0),
        messageId: 'm@x',
      }),
    );
    expect(wire).toContain('Subject: two lines\r\n');
    expect(wire).toContain('To: b@x.example, c@x.example\r\n');
    expect(wire).toContain('Content-Transfer-Encoding: 7bit');
    expect(wire.endsWith('\r\n\r\nplain\r\n')).toBe(true);
    expect(encodeHeaderText('ascii only')).toBe('ascii only');
    expect(replySubject('Re: hi')).toBe('Re: hi');
    expect(replySubject(' hi ')).toBe('Re: hi');
  });
});

describe('amounts', () => {
  it('parses SOL to lamports exactly and refuses anything else', () => {
    expect(parseSol('')).toBeNull();
    expect(parseSol('0.01')).toBe(10_000_000n);
    expect(parseSol('2')).toBe(2_000_000_000n);
    expect(parseSol('0.000000001')).toBe(1n);
    for (const bad of ['abc', '-1', '0.0000000001', '1e3', '1,5']) {
      expect(() => parseSol(bad)).toThrow(ComposeRefusal);
    }
    expect(formatSol(10_000_000n)).toBe('0.01');
    expect(formatSol(1_684_320n)).toBe('0.00168432');
    expect(formatSol(3_000_000_000n)).toBe('3');
  });
});

describe('secret key import', () => {
  const seed = new Uint8Array(32).fill(7);
  const secret = new Uint8Array([...seed, ...ed25519.getPublicKey(seed)]);

  it('reads a keypair file, base58 and a bare seed alike', () => {
    expect(parseSecretKey(JSON.stringify(Array.from(secret)))).toEqual(secret);
    expect(parseSecretKey(` ${bs58.encode(secret)}\n`)).toEqual(secret);
    expect(parseSecretKey(JSON.stringify(Array.from(seed)))).toEqual(secret);
  });

  it('says what is wrong with anything else', () => {
    const mismatched = Uint8Array.from(secret);
    mismatched[40] = (mismatched[40] ?? 0) ^ 1;
    const cases: [string, RegExp][] = [
      ['', /paste a secret key/],
      ['[1,2,', /does not parse/],
      ['[1,2,300]', /numbers 0–255/],
      [JSON.stringify(Array.from(mismatched)), /do not belong together/],
      ['not base58 0OIl', /not a secret key/],
      [bs58.encode(new Uint8Array(10)), /64 bytes/],
    ];
    for (const [text, why] of cases) {
      expect(() => parseSecretKey(text)).toThrow(SecretKeyFormatError);
      expect(() => parseSecretKey(text)).toThrow(why);
    }
  });
});

describe('vault', () => {
  const contents: VaultContents = {
    wallet: { type: 'in-page', secretKey: Array.from({ length: 64 }, (_, i) => (i * 7) % 256) },
    mailboxKeys: [{ secret: 'c2VjcmV0LWtleS1ieXRlcy0xMjM0NTY3ODkwMTIzNA==', publicKey: 'Pub1', addedAt: 1 }],
  };

  it('opens with the passphrase, refuses another one, and stores no secret in the clear', async () => {
    const storage = new MemoryStorage();
    await saveVault(storage, 'a good passphrase', contents, 'Addr1');
    expect(vaultSummary(storage)).toEqual({ address: 'Addr1', kind: 'in-page' });
    expect(await openVault(storage, 'a good passphrase')).toEqual(contents);
    await expect(openVault(storage, 'a good passphrasE')).rejects.toBeInstanceOf(WrongPassphraseError);
    const stored = storage.getItem(VAULT_KEY) ?? '';
    expect(JSON.parse(stored)).toMatchObject({
      kdf: 'pbkdf2-sha256',
      iterations: 600_000,
      cipher: 'aes-256-gcm',
    });
    expect(stored).not.toContain(contents.mailboxKeys[0]?.secret);
    expect(stored).not.toContain(JSON.stringify(contents.wallet));
  });

  it('refuses a short passphrase and says when nothing is stored', async () => {
    const storage = new MemoryStorage();
    await expect(saveVault(storage, 'short', contents, 'A')).rejects.toThrow(/at least 8 characters/);
    expect(storage.getItem(VAULT_KEY)).toBeNull();
    await expect(openVault(storage, 'whatever pass')).rejects.toThrow(/No wallet is stored/);
  });
});

describe('settings', () => {
  it('picks the mode from the API URL: absent = same origin, blank = trustless', () => {
    expect(modeOf({ ...DEV_DEFAULTS }, 'http://here:8080')).toEqual({
      kind: 'server',
      apiUrl: 'http://here:8080',
    });
    expect(modeOf({ ...DEV_DEFAULTS, apiUrl: '  ' }, 'http://here')).toEqual({ kind: 'trustless' });
    expect(modeOf({ ...DEV_DEFAULTS, apiUrl: 'https://api.example/' }, 'http://here')).toEqual({
      kind: 'server',
      apiUrl: 'https://api.example',
    });
  });
});

describe('Wallet Standard chain id', () => {
  it('names a loopback node localnet and public clusters by their host', () => {
    expect(chainIdFor('http://127.0.0.1:8899')).toBe('solana:localnet');
    expect(chainIdFor('http://localhost:8899')).toBe('solana:localnet');
    expect(chainIdFor('https://api.devnet.solana.com')).toBe('solana:devnet');
    expect(chainIdFor('https://api.testnet.solana.com')).toBe('solana:testnet');
    expect(chainIdFor('https://rpc.example.com')).toBe('solana:mainnet');
  });
});

describe('HTML frame', () => {
  // Noticing remote references runs the sanitizer, which needs a DOM: test/webmail/webmail-html.test.ts checks it in Chromium.
  it('blocks remote content by CSP unless allowed, and resolves nothing against the page', () => {
    const blocked = htmlFrameDocument('<p>x</p>', false);
    expect(blocked).toContain("default-src 'none'; img-src data:; media-src data:;");
    expect(blocked).toContain('<base href="about:blank"');
    expect(htmlFrameDocument('<p>x</p>', true)).toContain('img-src data: https: http:');
  });
});

describe('recipient address forms', () => {
  const wallet = bs58.encode(new Uint8Array(32).fill(7));
  it('reads a wallet whatever follows the @, and a display name around the address', () => {
    expect(addressForm(wallet)).toEqual({ kind: 'wallet', wallet });
    expect(addressForm(`${wallet}@example.org`)).toEqual({ kind: 'wallet', wallet });
    expect(addressForm(`Bob <${wallet}@mail.example>`)).toEqual({ kind: 'wallet', wallet });
    expect(bareAddress('  Alice Example <alice@example.org>  ')).toBe('alice@example.org');
  });
  it('keeps the domain of alias@domain so it is checked on chain, and lowercases both', () => {
    expect(addressForm('Alice@Example.ORG')).toEqual({
      kind: 'alias',
      alias: 'alice',
      domain: 'example.org',
    });
    expect(addressForm('bob')).toEqual({ kind: 'alias', alias: 'bob', domain: null });
    expect(addressForm('bob@sealpost.localhost.')).toEqual({
      kind: 'alias',
      alias: 'bob',
      domain: 'sealpost.localhost',
    });
  });
  it('refuses what cannot be an on-chain mailbox, with the reason', () => {
    expect(addressForm('')).toMatchObject({ kind: 'invalid', reason: /Enter a recipient/ });
    expect(addressForm('a@x.org, b@y.org')).toMatchObject({ kind: 'invalid', reason: /one recipient/ });
    expect(addressForm('bob@')).toMatchObject({ kind: 'invalid', reason: /no valid domain/ });
    expect(addressForm('bob@exa_mple.org')).toMatchObject({ kind: 'invalid', reason: /no valid domain/ });
    expect(addressForm('"bob smith"@example.org')).toMatchObject({ kind: 'invalid' });
    expect(addressForm('.bob@example.org')).toMatchObject({ kind: 'invalid', reason: /neither a wallet/ });
  });
});

describe('key backup file', () => {
  const seed = new Uint8Array(32).fill(3);
  const secretKey = [...seed, ...ed25519.getPublicKey(seed)];
  const address = bs58.encode(ed25519.getPublicKey(seed));
  const contents = {
    wallet: { type: 'in-page' as const, secretKey },
    mailboxKeys: [{ secret: 'c2VjcmV0', publicKey: 'Pub1111', addedAt: 1 }],
  };

  it('round-trips the wallet key and mailbox keys under its passphrase, and names the wallet in the clear', async () => {
    const file = await createBackup(contents, 'backup passphrase', new Date('2026-11-25T10:00:00Z'));
    const text = JSON.stringify(file);
    expect(text).not.toContain('c2VjcmV0');
    expect(file.address).toBe(address);
    expect(file.mailbox_keys).toBe(1);
    expect(backupFileName(file)).toBe(`sealpost-keys-${address.slice(0, 8)}-2026-11-25.json`);
    expect(await openBackup(parseBackup(text), 'backup passphrase')).toEqual(contents);
  });

  it('refuses a wrong passphrase, a changed header, a corrupt or foreign file, each with its own words', async () => {
    const file = await createBackup(contents, 'backup passphrase');
    await expect(openBackup(file, 'not the passphrase')).rejects.toBeInstanceOf(BackupPassphraseError);
    // The header is authenticated: pointing the file at another wallet is detected.
    const other = bs58.encode(new Uint8Array(32).fill(9));
    await expect(openBackup({ ...file, address: other }, 'backup passphrase')).rejects.toBeInstanceOf(
      BackupPassphraseError,
    );
    const flipped = Buffer.from(file.box, 'base64');
    flipped[5] = (flipped[5] ?? 0) ^ 1;
    await expect(
      openBackup({ ...file, box: flipped.toString('base64') }, 'backup passphrase'),
    ).rejects.toBeInstanceOf(BackupPassphraseError);
    expect(() => parseBackup('{not json')).toThrow(/not a Sealpost key backup \(it is not JSON\)/);
    expect(() => parseBackup('{"format":"something-else"}')).toThrow(/not a Sealpost key backup/);
    expect(() => parseBackup(JSON.stringify({ ...file, version: 2 }))).toThrow(/version 2/);
    expect(() => parseBackup(JSON.stringify({ ...file, kdf: { ...file.kdf, iterations: 1000 } }))).toThrow(
      /damaged or incomplete/,
    );
    expect(() => parseBackup(JSON.stringify({ ...file, box: undefined }))).toThrow(BackupError);
    await expect(createBackup(contents, 'short')).rejects.toThrow(/at least 8 characters/);
  });
});

describe('inbox rows', () => {
  it('says how long ago in words, then a weekday, then a date', () => {
    const now = new Date(2026, 10, 25, 15, 0, 0).getTime();
    const at = (d: Date) => Math.floor(d.getTime() / 1000);
    expect(relativeTime(at(new Date(now - 10_000)), now)).toBe('just now');
    expect(relativeTime(at(new Date(now - 5 * 60_000)), now)).toBe('5 min ago');
    expect(relativeTime(at(new Date(2026, 10, 25, 9, 30)), now)).toBe('5 h ago');
    expect(relativeTime(at(new Date(2026, 10, 24, 23, 0)), now)).toBe('yesterday');
    expect(relativeTime(at(new Date(2026, 10, 21, 12, 0)), now)).toBe(
      new Date(2026, 10, 21).toLocaleDateString(undefined, { weekday: 'long' }),
    );
    expect(relativeTime(at(new Date(2026, 2, 12, 12, 0)), now)).toBe(
      new Date(2026, 2, 12).toLocaleDateString(undefined, { day: 'numeric', month: 'short' }),
    );
    expect(relativeTime(at(new Date(2024, 2, 12, 12, 0)), now)).toContain('2024');
    expect(relativeTime(0, now)).toBe('');
  });

  it('previews the first words, skipping quotes, attributions and the signature', () => {
    expect(snippetOf('Hi Bob,\n\nthe  report is\tattached.\n-- \nAnn')).toBe(
      'Hi Bob, the report is attached.',
    );
    expect(snippetOf('On Monday Ann wrote:\n> old text\nMy answer.')).toBe('My answer.');
    expect(snippetOf('x'.repeat(300))).toHaveLength(110);
    expect(snippetOf(null)).toBe('');
  });

  it('keeps read marks per wallet in the browser, bounded', () => {
    const storage = new MemoryStorage();
    const a = new ReadMarks(storage, 'walletA');
    a.mark(['m1', 'm2']);
    expect(new ReadMarks(storage, 'walletA').has('m2')).toBe(true);
    expect(new ReadMarks(storage, 'walletB').has('m2')).toBe(false);
    storage.setItem('sealpost.read.v1.walletC', '{broken');
    expect(new ReadMarks(storage, 'walletC').has('m1')).toBe(false);
    const many = Array.from({ length: 5100 }, (_, i) => `k${i}`);
    a.mark(many);
    const reread = new ReadMarks(storage, 'walletA');
    expect(reread.has('k5099')).toBe(true);
    expect(reread.has('m1')).toBe(false);
  });
});

describe('a held draft bound to its quote', () => {
  const first = Keypair.generate().publicKey;
  const second = Keypair.generate().publicKey;
  // Only what the snapshot and the comparison read; the rest of a preparation does not matter here.
  const prepared = (
    o: { wallet?: typeof first; perStamp?: bigint; rent?: bigint; bounty?: bigint; ready?: boolean } = {},
  ): Prepared => {
    const base = {
      recipient: { input: 'alice@mail.test', wallet: o.wallet ?? first, alias: 'alice', domain: 'mail.test' },
      bounty: { lamports: o.bounty ?? 0n, expiresAt: o.bounty ? 1_700_000_000n : 0n },
      cost: {},
    };
    const quote = { perStamp: o.perStamp ?? 106_000n, rent: o.rent ?? 1_524_240n };
    return (o.ready ? { kind: 'ready', ...base } : { kind: 'held', ...base, quote }) as unknown as Prepared;
  };
  const terms = { to: 'alice@mail.test', bountySol: '', claimDays: '' };
  const snap = quoteSnapshot(terms, prepared() as HeldPrepared);

  it('takes the quoted wallet, bounty, expiry and price', () => {
    expect(snap).toEqual({
      terms,
      label: 'alice@mail.test',
      wallet: first.toBase58(),
      bountyLamports: 0n,
      expiresAt: 0n,
      perStamp: 106_000n,
      rent: 1_524_240n,
    });
  });

  it('names every change of To, bounty and claim window, and none for edits that mean the same', () => {
    expect(draftChanges(snap, terms)).toEqual([]);
    expect(draftChanges(snap, { ...terms, to: '  alice@mail.test ' })).toEqual([]);
    expect(draftChanges(snap, { ...terms, to: 'bob@mail.test' })).toEqual([
      'To ("alice@mail.test" → "bob@mail.test")',
    ]);
    expect(draftChanges(snap, { ...terms, bountySol: '0' })).toEqual([]);
    expect(draftChanges(snap, { ...terms, bountySol: '0.01' })).toEqual(['the bounty (none → "0.01" SOL)']);
    expect(draftChanges(snap, { ...terms, bountySol: 'lots' })).toEqual(['the bounty (none → "lots" SOL)']);
    // Without a bounty the window is moot; with one, blank means 7.
    expect(draftChanges(snap, { ...terms, claimDays: '2' })).toEqual([]);
    const withBounty = quoteSnapshot(
      { ...terms, bountySol: '0.01' },
      prepared({ bounty: 10_000_000n }) as HeldPrepared,
    );
    expect(draftChanges(withBounty, { ...terms, bountySol: '0.010', claimDays: '7' })).toEqual([]);
    expect(draftChanges(withBounty, { ...terms, bountySol: '0.01', claimDays: '0.5' })).toEqual([
      'the bounty\'s claim window (7 → "0.5" days)',
    ]);
    expect(changedNotice(['To ("a" → "b")'])).toBe(
      'The draft changed after the postage quote: To ("a" → "b"). Nothing was bought. Check the new quote and confirm again.',
    );
  });

  it('finds a fresh read that no longer matches: another wallet, no postage needed, another price or rent', () => {
    expect(freshDifference(snap, prepared())).toBeNull();
    expect(freshDifference(snap, prepared({ wallet: second }))).toMatch(
      /^alice@mail\.test now resolves to wallet \S+…\S+, not \S+…\S+ as the quote said\. Nothing was bought\./,
    );
    expect(freshDifference(snap, prepared({ bounty: 5n }))).toMatch(/^The bounty is now/);
    expect(freshDifference(snap, prepared({ ready: true }))).toMatch(/no longer asks you for postage/);
    expect(freshDifference(snap, prepared({ perStamp: 206_000n }))).toBe(
      new RepricedError(106_000n, 206_000n).message,
    );
    // Cheaper is a change too: the card asks again rather than charge what it did not show.
    expect(freshDifference(snap, prepared({ perStamp: 6_000n }))).toMatch(/price changed to 0\.000006 SOL/);
    expect(freshDifference(snap, prepared({ rent: 0n }))).toMatch(/rent changed to 0 SOL/);
  });
});

describe('refusals in words', () => {
  const ctx = { rpcUrl: 'http://rpc.test', gatewayUrl: 'http://gw.test' };

  it('says what is wrong with a pasted mailbox key file, without naming a file', () => {
    const refused = (text: string) => {
      try {
        importMailboxKey(text, 0);
      } catch (err) {
        expect(err).toBeInstanceOf(KeyFileError);
        expect(isRefusal(err)).toBe(true);
        return humanError(err, ctx);
      }
      throw new Error('accepted');
    };
    expect(refused('not a key')).toBe(
      'The pasted text is not a mailbox key file: not JSON; expected an array of 64 numbers.',
    );
    expect(refused('[1,2,3]')).toBe(
      'The pasted text is not a mailbox key file: expected a JSON array of 64 (or 32) numbers.',
    );
    expect(refused(JSON.stringify(Array(32).fill(300)))).toBe(
      'The pasted text is not a mailbox key file: every element must be an integer 0-255.',
    );
    expect(importMailboxKey(JSON.stringify(Array(32).fill(7)), 5).addedAt).toBe(5);
  });

  it('tells refusals (shown, not logged) from faults', () => {
    expect(isRefusal(new Refusal('Buy at least one stamp.'))).toBe(true);
    expect(isRefusal(new RepricedError(1n, 2n))).toBe(true);
    expect(isRefusal(new ComposeRefusal('bad_bounty', 'x'))).toBe(true);
    expect(isRefusal(new Error('socket hang up'))).toBe(false);
    expect(isRefusal(new TypeError('x is undefined'))).toBe(false);
  });

  it('checks a mail password in the page exactly as the server does', () => {
    for (const p of [
      '',
      'short',
      'nine char',
      'ten chars!',
      'x'.repeat(256),
      'x'.repeat(257),
      'tab\there ok',
      '😀'.repeat(10),
      '😀'.repeat(9),
    ]) {
      expect(mailPasswordProblem(p) === null).toBe(serverPasswordProblem(p) === null);
    }
    expect(mailPasswordProblem('nine char')).toBe(
      'The mail password must be at least 10 characters (this one has 9). Nothing was signed or changed.',
    );
  });
});
