// `sealpost mailbox list|read` as a black box: the real CLI in a child
// process against a devnet holding Email accounts made by SendMail, and a
// plain HTTP server serving the sealed bodies at /ipfs/<cid> in place of a
// gateway (pind plays that role in a deployment).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { blake3 } from '@noble/hashes/blake3.js';
import {
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  sendAndConfirmTransaction,
  Transaction,
  type TransactionInstruction,
} from '@solana/web3.js';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createMailboxInstruction,
  emailAddress,
  fromHash,
  initPostofficeInstruction,
  publishKeyInstruction,
  replyToHash,
  sendMailInstruction,
  setMailboxFlagsInstruction,
} from '../../chain/client/index.ts';
import { type Devnet, startDevnet } from '../../chain/devnet/server.ts';
import { keypairFromSeed, writeKeypairFile } from '../../src/core/keys/keypair-file.ts';
import { computeCid } from '../../src/mail/cid.ts';
import {
  formatMailboxKeyFile,
  generateReaderKeypair,
  recipientSealKey,
  sealMessage,
} from '../../src/mail/seal/index.ts';

const BIN = resolve(import.meta.dirname, '..', '..', 'bin', 'sealpost.js');

interface Run {
  code: number;
  stdout: Buffer;
  stderr: string;
}

function sealpost(args: string[]): Promise<Run> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NO_COLOR: '1' } },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        done({ code, stdout, stderr: stderr.toString('utf8') });
      },
    );
  });
}

const SMALL = Buffer.concat([
  Buffer.from(
    'From: Alice <alice@remote.example>\r\nTo: bob@mail.test\r\nSubject: =?utf-8?q?Gr=C3=BC=C3=9Fe?=\r\n' +
      'Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\nGrüße, Bob — 日本語\r\n',
    'utf8',
  ),
  Buffer.from([0xff, 0x00, 0x0a, 0x0d, 0x0a]),
]);
const LARGE = Buffer.concat([Buffer.from('Subject: big\r\n\r\n'), Buffer.alloc(700_000, 'x\r\n')]);

/**
 * One devnet and mailbox for the whole file (each CLI run costs about a
 * second), so it is started here rather than with test/support/devnet.ts,
 * whose chains are stopped after every test. Removed in afterAll.
 */
interface Chain {
  devnet: Devnet;
  connection: Connection;
  programId: string;
  funded(): Promise<Keypair>;
  send(ixs: TransactionInstruction[], signers: Keypair[]): Promise<string>;
}

async function startChain(dataDir: string): Promise<Chain> {
  const devnet = await startDevnet({
    dataDir,
    host: '127.0.0.1',
    port: 0,
    slotMs: 40,
    logger: pino({ level: 'silent' }),
  });
  const connection = new Connection(devnet.rpcUrl, { commitment: 'confirmed', wsEndpoint: devnet.wsUrl });
  return {
    devnet,
    connection,
    programId: devnet.programId,
    async funded() {
      const kp = Keypair.generate();
      const signature = await connection.requestAirdrop(kp.publicKey, 10 * LAMPORTS_PER_SOL);
      await connection.confirmTransaction(
        { signature, ...(await connection.getLatestBlockhash()) },
        'confirmed',
      );
      return kp;
    },
    send: (ixs, signers) =>
      sendAndConfirmTransaction(connection, new Transaction().add(...ixs), signers, {
        commitment: 'confirmed',
      }),
  };
}

interface World {
  chain: Chain;
  bob: Keypair;
  alice: Keypair;
  dir: string;
  bobKey: string;
  aliceKey: string;
  mailboxKeyFile: string;
  gateway: string;
  served: Map<string, Uint8Array>;
}

let w: World;
const cleanups: (() => Promise<void>)[] = [];

function keyFile(dir: string, name: string, kp: Keypair): string {
  const file = join(dir, name);
  writeKeypairFile(file, keypairFromSeed(kp.secretKey.subarray(0, 32)));
  return file;
}

/** Seals `raw` to whatever recipientSealKey picks now and sends it directly from alice. */
async function deliver(
  raw: Uint8Array,
  index: bigint,
  opts: { cid?: string; reply?: PublicKey; bounty?: bigint } = {},
) {
  const key = await recipientSealKey(w.chain.connection, w.chain.programId, w.bob.publicKey);
  const { sealed } = await sealMessage({
    envelope: {
      version: 1,
      from: 'alice@remote.example',
      to: 'bob@mail.test',
      receivedAt: 1_720_000_000_000 + Number(index),
    },
    raw,
    recipientPublicKey: key.publicKey,
  });
  const cid = opts.cid ?? (await computeCid(sealed));
  if (!cid.startsWith('b3:')) w.served.set(cid, sealed);
  await w.chain.send(
    [
      sendMailInstruction({
        programId: w.chain.programId,
        sender: w.alice.publicKey,
        recipient: w.bob.publicKey,
        index,
        fromHash: fromHash(w.alice.publicKey.toBase58()),
        cid,
        replyToHash: opts.reply ? replyToHash(opts.reply) : undefined,
        bountyLamports: opts.bounty,
        expiresAt: opts.bounty ? BigInt(Math.floor(Date.now() / 1000) + 86_400) : undefined,
      }),
    ],
    [w.alice],
  );
  return { sealed, cid, address: emailAddress(w.chain.programId, w.bob.publicKey, index)[0] };
}

const chainArgs = () => ['--rpc', w.chain.devnet.rpcUrl, '--program-id', w.chain.programId];
const readArgs = () => [...chainArgs(), '--gateway', w.gateway];

// Each CLI run starts Node and loads the whole CLI; on a busy machine that takes seconds.
const SLOW = { timeout: 180_000 };

describe('sealpost mailbox list / read', () => {
  // One chain and one mailbox for the whole file: each subprocess run costs a second.
  let first: Awaited<ReturnType<typeof deliver>>;
  let second: Awaited<ReturnType<typeof deliver>>;
  let delegated: Awaited<ReturnType<typeof deliver>>;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sealpost-seal-cli-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const chain = await startChain(join(dir, 'devnet'));
    cleanups.push(() => chain.devnet.close());
    const served = new Map<string, Uint8Array>();
    const server = createServer((req, res) => {
      const cid = /^\/ipfs\/([^/?]+)$/.exec(req.url ?? '')?.[1];
      const body = cid ? served.get(decodeURIComponent(cid)) : undefined;
      if (body) res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.from(body));
      else res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    });
    const admin = await chain.funded();
    const bob = await chain.funded();
    const alice = await chain.funded();
    await chain.send(
      [
        initPostofficeInstruction({
          programId: chain.programId,
          admin: admin.publicKey,
          upgradeAuthority: chain.devnet.faucetKeypair.publicKey,
          delegateAddress: admin.publicKey,
          stampFeeLamports: 0n,
          settlementSurchargeLamports: 0n,
        }),
      ],
      [admin, chain.devnet.faucetKeypair],
    );
    await chain.send([createMailboxInstruction({ programId: chain.programId, owner: bob.publicKey })], [bob]);
    w = {
      chain,
      bob,
      alice,
      dir,
      bobKey: keyFile(dir, 'bob.json', bob),
      aliceKey: keyFile(dir, 'alice.json', alice),
      mailboxKeyFile: join(dir, 'mailbox-key.json'),
      gateway: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      served,
    };
    first = await deliver(SMALL, 0n);
    second = await deliver(LARGE, 1n, { reply: first.address, bounty: 50_000_000n });
    // Bob delegates decryption to a separate key; later mail is sealed to it.
    const mailboxKey = generateReaderKeypair();
    writeFileSync(w.mailboxKeyFile, formatMailboxKeyFile(mailboxKey), { mode: 0o600 });
    await chain.send(
      [
        publishKeyInstruction({
          programId: chain.programId,
          owner: bob.publicKey,
          pubKey: new PublicKey(mailboxKey.publicKey),
        }),
      ],
      [bob],
    );
    delegated = await deliver(Buffer.from('Subject: to the delegated key\r\n\r\nhi\r\n'), 2n);
    // Then he opts out of IPFS: the body of message 3 stays with the operator.
    await chain.send(
      [setMailboxFlagsInstruction({ programId: chain.programId, owner: bob.publicKey, noIpfs: true })],
      [bob],
    );
    await deliver(Buffer.from('Subject: local\r\n\r\nlocal only\r\n'), 3n, {
      cid: `b3:${Buffer.from(blake3(new Uint8Array(8))).toString('hex')}`,
    });
  }, 120_000);

  afterAll(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('lists the inbox newest first as JSON with time, cid, bounty and reply linkage', SLOW, async () => {
    const run = await sealpost([
      'mailbox',
      'list',
      '--wallet',
      w.bob.publicKey.toBase58(),
      ...chainArgs(),
      '--json',
    ]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout.toString('utf8'));
    expect(out.wallet).toBe(w.bob.publicKey.toBase58());
    expect(out.mail_count).toBe(4);
    expect(out.messages.map((m: { index: number }) => m.index)).toEqual([3, 2, 1, 0]);
    const [m3, , m1, m0] = out.messages;
    expect(m0).toMatchObject({
      index: 0,
      address: first.address.toBase58(),
      cid: first.cid,
      local_only: false,
      sender: w.alice.publicKey.toBase58(),
      bounty_lamports: '0',
      expires_at: null,
      reply_to_hash: null,
      reply_to_index: null,
    });
    expect(new Date(m0.received_at).getTime()).toBe(m0.epoch * 1000);
    expect(Math.abs(m0.epoch - Date.now() / 1000)).toBeLessThan(600);
    expect(m1).toMatchObject({ index: 1, cid: second.cid, bounty_lamports: '50000000', reply_to_index: 0 });
    expect(m1.reply_to_hash).toBe(Buffer.from(replyToHash(first.address)).toString('hex'));
    expect(m1.expires_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(m3.local_only).toBe(true);
  });

  it('lists as a table from a key file, with --limit and --before paging', SLOW, async () => {
    const run = await sealpost([
      'mailbox',
      'list',
      '--key',
      w.bobKey,
      ...chainArgs(),
      '--limit',
      '2',
      '--before',
      '2',
    ]);
    expect(run.code).toBe(0);
    const text = run.stdout.toString('utf8');
    expect(text).toContain(`inbox of ${w.bob.publicKey.toBase58()}: mail_count 4, showing 2`);
    expect(text).toMatch(/INDEX\s+RECEIVED \(UTC\)\s+BOUNTY\s+REPLY TO\s+CID\s+MESSAGE ACCOUNT/);
    const rows = text.trim().split('\n').slice(2);
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatch(
      new RegExp(
        `^1\\s+\\S+Z\\s+0\\.05 SOL until \\S+\\s+#0\\s+${second.cid}\\s+${second.address.toBase58()}$`,
      ),
    );
    expect(rows[1]).toMatch(
      new RegExp(`^0\\s+\\S+Z\\s+-\\s+-\\s+${first.cid}\\s+${first.address.toBase58()}$`),
    );
  });

  it('reads a message: the exact original bytes on stdout, the envelope on stderr', SLOW, async () => {
    const run = await sealpost(['mailbox', 'read', '--key', w.bobKey, '--index', '0', ...readArgs()]);
    expect(run.stderr).toContain('envelope from: alice@remote.example');
    expect(run.stderr).toContain('envelope to: bob@mail.test');
    expect(run.stderr).toContain(`cid ${first.cid} verified`);
    expect(run.code).toBe(0);
    expect(run.stdout.equals(SMALL)).toBe(true);
  });

  it('reads a chunked (multi-block CID) message by its account address, and as JSON', SLOW, async () => {
    const byArg = await sealpost([
      'mailbox',
      'read',
      second.address.toBase58(),
      '--key',
      w.bobKey,
      ...readArgs(),
    ]);
    expect(byArg.code).toBe(0);
    expect(second.cid.startsWith('bafybei')).toBe(true);
    expect(byArg.stdout.equals(LARGE)).toBe(true);
    const json = await sealpost([
      'mailbox',
      'read',
      '--address',
      first.address.toBase58(),
      '--key',
      w.bobKey,
      ...readArgs(),
      '--json',
    ]);
    expect(json.code).toBe(0);
    const out = JSON.parse(json.stdout.toString('utf8'));
    expect(out).toMatchObject({
      address: first.address.toBase58(),
      index: 0,
      cid: first.cid,
      cid_verified: true,
      envelope: {
        from: 'alice@remote.example',
        to: 'bob@mail.test',
        received_at: new Date(1_720_000_000_000).toISOString(),
      },
      raw: null, // SMALL ends in bytes that are not UTF-8
    });
    expect(Buffer.from(out.raw_base64, 'base64').equals(SMALL)).toBe(true);
  });

  it('takes rpc, program id and gateway from --config', SLOW, async () => {
    const config = join(w.dir, 'sealpost.toml');
    writeFileSync(
      config,
      `[chain]\nrpc_url = "${w.chain.devnet.rpcUrl}"\nprogram_id = "${w.chain.programId}"\n\n[ipfs]\ngateway_url = "${w.gateway}"\n`,
    );
    const run = await sealpost(['mailbox', 'read', '--config', config, '--key', w.bobKey, '--index', '0']);
    expect(run.code).toBe(0);
    expect(run.stdout.equals(SMALL)).toBe(true);
  });

  it(
    'needs the delegated key for mail sealed to the published MailboxKey, and still opens older mail with it given',
    SLOW,
    async () => {
      const walletOnly = await sealpost([
        'mailbox',
        'read',
        '--key',
        w.bobKey,
        '--index',
        '2',
        ...readArgs(),
      ]);
      expect(walletOnly.code).toBe(1);
      expect(walletOnly.stderr).toMatch(
        /cannot open message .*none of the 1 wrap.*published a MailboxKey.*--mailbox-key-file/s,
      );
      expect(walletOnly.stdout.length).toBe(0);
      const both = await sealpost([
        'mailbox',
        'read',
        '--key',
        w.bobKey,
        '--mailbox-key-file',
        w.mailboxKeyFile,
        '--index',
        '2',
        ...readArgs(),
      ]);
      expect(both.code).toBe(0);
      expect(both.stdout.toString('utf8')).toBe('Subject: to the delegated key\r\n\r\nhi\r\n');
      // Newest readable by default is message 3 (local-only), so name it; wallet mail opens via --key.
      const older = await sealpost([
        'mailbox',
        'read',
        '--key',
        w.bobKey,
        '--mailbox-key-file',
        w.mailboxKeyFile,
        '--index',
        '0',
        ...readArgs(),
      ]);
      expect(older.stdout.equals(SMALL)).toBe(true);
      const keyFileOnly = await sealpost([
        'mailbox',
        'read',
        '--wallet',
        w.bob.publicKey.toBase58(),
        '--mailbox-key-file',
        w.mailboxKeyFile,
        '--index',
        '2',
        ...readArgs(),
      ]);
      expect(keyFileOnly.code).toBe(0);
      expect(delegated.cid).toBeTruthy();
    },
  );

  it(
    'says a local-only (no_ipfs) message lives on the operator server, reading the newest by default',
    SLOW,
    async () => {
      const run = await sealpost(['mailbox', 'read', '--key', w.bobKey, ...readArgs()]);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('reading the newest message, index 3');
      expect(run.stderr).toMatch(/local-only \(cid b3:[0-9a-f]{64}\).*stored only on the operator's server/);
    },
  );

  it('refuses bytes that do not match the CID and reports a gateway 404', SLOW, async () => {
    const original = w.served.get(first.cid) as Uint8Array;
    w.served.set(first.cid, w.served.get(delegated.cid) as Uint8Array);
    const swapped = await sealpost(['mailbox', 'read', '--key', w.bobKey, '--index', '0', ...readArgs()]);
    w.served.set(first.cid, original);
    expect(swapped.code).toBe(1);
    expect(swapped.stderr).toMatch(/do not match the CID; refusing them/);
    expect(swapped.stdout.length).toBe(0);
    w.served.delete(second.cid);
    const missing = await sealpost(['mailbox', 'read', '--key', w.bobKey, '--index', '1', ...readArgs()]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('gateway answered 404');
  });

  it("refuses someone else's message, unknown indices and wallets without a mailbox", SLOW, async () => {
    const other = await sealpost([
      'mailbox',
      'read',
      first.address.toBase58(),
      '--key',
      w.aliceKey,
      ...readArgs(),
    ]);
    expect(other.code).toBe(1);
    expect(other.stderr).toContain(
      `is addressed to ${w.bob.publicKey.toBase58()}, not to ${w.alice.publicKey.toBase58()}`,
    );
    const gone = await sealpost(['mailbox', 'read', '--key', w.bobKey, '--index', '9', ...readArgs()]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('has no message at index 9');
    const none = await sealpost(['mailbox', 'list', '--key', w.aliceKey, ...chainArgs()]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(`wallet ${w.alice.publicKey.toBase58()} has no mailbox on chain`);
  });

  it('exits 2 on usage errors and 1 when the chain cannot be reached', SLOW, async () => {
    const cases: [string[], RegExp][] = [
      [['mailbox', 'list'], /--wallet <base58> or --key/],
      [['mailbox', 'list', '--wallet', 'nope'], /expected a base58 wallet address/],
      [['mailbox', 'list', '--wallet', w.bob.publicKey.toBase58(), '--limit', '0'], /integer 1\.\.1000/],
      [['mailbox', 'read', '--key', w.bobKey, '--index', 'x'], /message index/],
      [['mailbox', 'read', '--index', '0'], /needs a key/],
      [
        ['mailbox', 'read', '--key', w.bobKey, '--index', '0', '--address', first.address.toBase58()],
        /not both/,
      ],
      [['mailbox', 'read', '--key', w.bobKey, '--gateway', 'ftp://x'], /http\(s\) URL/],
    ];
    const runs = await Promise.all(cases.map(([args]) => sealpost(args)));
    runs.forEach((run, i) => {
      const [args, pattern] = cases[i] as [string[], RegExp];
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr).toMatch(pattern);
    });
    const down = await sealpost([
      'mailbox',
      'list',
      '--wallet',
      w.bob.publicKey.toBase58(),
      '--rpc',
      'http://127.0.0.1:1',
    ]);
    expect(down.code).toBe(1);
    expect(down.stderr).toContain('could not read the mailbox from the chain at http://127.0.0.1:1');
    const badKey = join(w.dir, 'bad-key.json');
    writeFileSync(badKey, '[1,2,3]');
    const bad = await sealpost(['mailbox', 'read', '--key', badKey, '--index', '0', ...readArgs()]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('expected 64 numbers');
  });
});
