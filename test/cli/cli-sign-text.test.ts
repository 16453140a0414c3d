// Black-box: `sealpost mailbox sign-text` run as a child process. Keys are
// made with @solana/web3.js (as solana-keygen would), and signatures are
// checked with @noble/curves — the CLI signs through node:crypto, so the
// verifier is an independent ed25519 implementation.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import { Keypair } from '@solana/web3.js';
import bs58 from 'bs58';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/temp-dir.ts';

const BIN = resolve(import.meta.dirname, '..', '..', 'bin', 'sealpost.js');
const NONCE = 'Sealpost step-up nonce: 9f2c1e7a0b4d4c31a8e5f00d7c6b2a19';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function signText(args: string[], stdin?: string | Uint8Array): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [BIN, 'mailbox', 'sign-text', ...args], {
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', fail);
    child.on('close', (code) =>
      done({
        code,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      }),
    );
    child.stdin.on('error', () => {}); // the CLI may exit before reading stdin (bad key file)
    child.stdin.end(stdin === undefined ? undefined : Buffer.from(stdin));
  });
}

/** A Solana CLI keypair file written by @solana/web3.js, not by our code. */
function walletFile(dir = tempDir()): { path: string; keypair: Keypair } {
  const keypair = Keypair.generate();
  const path = join(dir, 'wallet.json');
  writeFileSync(path, JSON.stringify(Array.from(keypair.secretKey)), { mode: 0o600 });
  return { path, keypair };
}

const utf8 = (s: string) => new TextEncoder().encode(s);

function signatureOf(run: Run): Uint8Array {
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout).toMatch(/^[1-9A-HJ-NP-Za-km-z]{80,90}\n$/);
  const sig = bs58.decode(run.stdout.trimEnd());
  expect(sig).toHaveLength(64);
  return sig;
}

function verifies(sig: Uint8Array, message: Uint8Array, keypair: Keypair): boolean {
  return ed25519.verify(sig, message, keypair.publicKey.toBytes());
}

// Each run starts a Node process with tsx; allow for a busy machine.
describe('sealpost mailbox sign-text', { timeout: 120_000 }, () => {
  it('signs the exact UTF-8 bytes of the argument; one extra trailing space fails', async () => {
    const { path, keypair } = walletFile();
    const run = await signText(['--key', path, NONCE]);
    const sig = signatureOf(run);
    expect(run.stderr).toBe(`signer: ${keypair.publicKey.toBase58()}\n`);
    expect(verifies(sig, utf8(NONCE), keypair)).toBe(true);
    expect(verifies(sig, utf8(`${NONCE} `), keypair)).toBe(false);
    expect(verifies(sig, utf8(`${NONCE}\n`), keypair)).toBe(false);
    // ed25519 is deterministic: the independent implementation yields the same bytes.
    expect(bs58.encode(ed25519.sign(utf8(NONCE), keypair.secretKey.subarray(0, 32)))).toBe(
      run.stdout.trimEnd(),
    );

    // A nonce signed with a trailing space is a different message.
    const spaced = signatureOf(await signText(['--key', path, `${NONCE} `]));
    expect(verifies(spaced, utf8(`${NONCE} `), keypair)).toBe(true);
    expect(verifies(spaced, utf8(NONCE), keypair)).toBe(false);
  });

  it('signs non-ASCII text as UTF-8, from the argument and from stdin alike', async () => {
    const { path, keypair } = walletFile();
    const text = 'Grüße ✉ 日本語 — ñ';
    const fromArg = signatureOf(await signText(['-k', path, text]));
    expect(verifies(fromArg, Buffer.from(text, 'utf8'), keypair)).toBe(true);
    const fromStdin = signatureOf(await signText(['-k', path], Buffer.from(text, 'utf8')));
    expect(Buffer.from(fromStdin).equals(Buffer.from(fromArg))).toBe(true);
  });

  it('takes stdin byte for byte: a trailing newline is signed unless --strip-newline', async () => {
    const { path, keypair } = walletFile();

    const kept = signatureOf(await signText(['--key', path], `${NONCE}\n`));
    expect(verifies(kept, utf8(`${NONCE}\n`), keypair)).toBe(true);
    expect(verifies(kept, utf8(NONCE), keypair)).toBe(false);

    const dash = signatureOf(await signText(['--key', path, '-'], `${NONCE}\n`));
    expect(verifies(dash, utf8(`${NONCE}\n`), keypair)).toBe(true);

    const stripped = signatureOf(await signText(['--key', path, '--strip-newline'], `${NONCE}\n`));
    expect(verifies(stripped, utf8(NONCE), keypair)).toBe(true);

    // Exactly one line ending goes: "\n\n" keeps one.
    const twice = signatureOf(await signText(['--key', path, '--strip-newline'], `${NONCE}\n\n`));
    expect(verifies(twice, utf8(`${NONCE}\n`), keypair)).toBe(true);

    // No newline at all: nothing is removed.
    const bare = signatureOf(await signText(['--key', path, '--strip-newline'], NONCE));
    expect(verifies(bare, utf8(NONCE), keypair)).toBe(true);

    // Spaces are never stripped: the trailing-space nonce still fails as NONCE.
    const space = signatureOf(await signText(['--key', path, '--strip-newline'], `${NONCE} \n`));
    expect(verifies(space, utf8(`${NONCE} `), keypair)).toBe(true);
    expect(verifies(space, utf8(NONCE), keypair)).toBe(false);
  });

  it('keeps CRLF by default and strips it as one line ending with --strip-newline', async () => {
    const { path, keypair } = walletFile();
    const kept = signatureOf(await signText(['--key', path], `${NONCE}\r\n`));
    expect(verifies(kept, utf8(`${NONCE}\r\n`), keypair)).toBe(true);
    const stripped = signatureOf(await signText(['--key', path, '--strip-newline'], `${NONCE}\r\n`));
    expect(verifies(stripped, utf8(NONCE), keypair)).toBe(true);
    // A lone "\r" is not a line ending here.
    const cr = signatureOf(await signText(['--key', path, '--strip-newline'], `${NONCE}\r`));
    expect(verifies(cr, utf8(`${NONCE}\r`), keypair)).toBe(true);
  });

  it('prints signature and signer as JSON with --json', async () => {
    const { path, keypair } = walletFile();
    const run = await signText(['--key', path, '--json', NONCE]);
    expect(run.code, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout) as { signature: string; signer: string };
    expect(out.signer).toBe(keypair.publicKey.toBase58());
    expect(verifies(bs58.decode(out.signature), utf8(NONCE), keypair)).toBe(true);
  });

  it('works with a key file made by `sealpost keygen wallet`', async () => {
    const dir = tempDir();
    const path = join(dir, 'made.json');
    const made = await new Promise<Run>((done) => {
      const child = spawn(process.execPath, [BIN, 'keygen', 'wallet', path]);
      let stdout = '';
      child.stdout.on('data', (b: Buffer) => {
        stdout += b.toString();
      });
      child.on('close', (code) => done({ code, stdout, stderr: '' }));
    });
    expect(made.code).toBe(0);
    const address = made.stdout.trim();
    const run = await signText(['--key', path, NONCE]);
    expect(run.stderr).toBe(`signer: ${address}\n`);
    expect(ed25519.verify(signatureOf(run), utf8(NONCE), bs58.decode(address))).toBe(true);
  });

  describe('key file errors exit 1 and name what to fix, with nothing on stdout', () => {
    const cases: [string, (dir: string) => string, RegExp][] = [
      ['missing', (dir) => join(dir, 'absent.json'), /absent\.json: file not found; create one with/],
      ['a directory', (dir) => dir, /keypair file .*: EISDIR/],
      ['not JSON', (dir) => file(dir, 'not json'), /not JSON; expected an array of 64 numbers/],
      ['a JSON object', (dir) => file(dir, '{"secretKey":[1,2]}'), /expected a JSON array of 64 numbers/],
      [
        'too short (32 numbers)',
        (dir) => file(dir, JSON.stringify(Array.from(Keypair.generate().secretKey.subarray(0, 32)))),
        /expected 64 numbers \(32-byte seed \+ 32-byte public key\), found 32/,
      ],
      [
        'too long (65 numbers)',
        (dir) => file(dir, JSON.stringify([...Keypair.generate().secretKey, 0])),
        /found 65/,
      ],
      [
        'a number out of range',
        (dir) => file(dir, JSON.stringify([...Keypair.generate().secretKey.subarray(0, 63), 256])),
        /element 63 is 256; expected an integer 0-255/,
      ],
      [
        'a public half that does not match the secret half',
        (dir) => {
          const a = Keypair.generate();
          const b = Keypair.generate();
          return file(dir, JSON.stringify([...a.secretKey.subarray(0, 32), ...b.publicKey.toBytes()]));
        },
        /the public key half \(\w+\) does not belong to the seed/,
      ],
    ];

    function file(dir: string, content: string): string {
      const path = join(dir, 'key.json');
      writeFileSync(path, content);
      return path;
    }

    for (const [what, make, message] of cases) {
      it(`key file ${what}`, async () => {
        const run = await signText(['--key', make(tempDir()), NONCE]);
        expect(run.code).toBe(1);
        expect(run.stdout).toBe('');
        expect(run.stderr).toMatch(/^error: keypair file /);
        expect(run.stderr).toMatch(message);
      });
    }
  });

  it('exits 2 on usage errors: no --key, empty text, text that is not UTF-8', async () => {
    const { path } = walletFile();
    const noKey = await signText([NONCE]);
    expect(noKey).toMatchObject({ code: 2, stdout: '' });
    expect(noKey.stderr).toContain("required option '-k, --key <file>' not specified");

    const emptyArg = await signText(['--key', path, '']);
    expect(emptyArg).toMatchObject({ code: 2, stdout: '' });
    expect(emptyArg.stderr).toContain('the text argument is empty; nothing to sign');

    const emptyStdin = await signText(['--key', path], '');
    expect(emptyStdin).toMatchObject({ code: 2, stdout: '' });
    expect(emptyStdin.stderr).toContain('the text on stdin is empty');

    const onlyNewline = await signText(['--key', path, '--strip-newline'], '\n');
    expect(onlyNewline).toMatchObject({ code: 2, stdout: '' });

    const binary = await signText(['--key', path], new Uint8Array([0x6e, 0xff, 0xfe, 0x0a]));
    expect(binary).toMatchObject({ code: 2, stdout: '' });
    expect(binary.stderr).toContain('the text on stdin is not valid UTF-8');
  });

  it('documents newline handling and shows an example in --help', async () => {
    const run = await signText(['--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('--strip-newline');
    expect(run.stdout).toContain('A trailing newline read from stdin IS signed');
    expect(run.stdout).toContain('Examples:');
    expect(run.stdout).toContain('$ sealpost mailbox sign-text --key wallet.json');
  });
});
