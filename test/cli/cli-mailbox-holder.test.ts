// A wallet holder's trustless commands as a black box: the real CLI in child
// processes against one devnet (the real runtime and mail program) and one
// pind with a bearer token, shared by the whole file. Results are read back
// with chain/client.ts; each refusal is checked for its exit code, its one
// line, and that no balance or account moved. The external-signer flow is
// signed by a separate node process that holds the key.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  Transaction,
  type TransactionInstruction,
} from '@solana/web3.js';
import bs58 from 'bs58';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createDomainInstruction,
  domainAddress,
  emailAddress,
  emailSize,
  FROMBOX_SIZE,
  fromHash,
  getAlias,
  getEmailAt,
  getFrombox,
  getMailbox,
  getMailboxKey,
  MAILBOX_SIZE,
  rentExemptLamports,
  sendMailInstruction,
  setMailboxFlagsInstruction,
  updatePostofficeInstruction,
  ZERO_KEY,
} from '../../chain/client/index.ts';
import { type Devnet, startDevnet } from '../../chain/devnet/server.ts';
import { type Pind, startPind } from '../../pinning/pind/server.ts';
import { computeCid } from '../../src/mail/cid.ts';
import { parseMailboxKeyFile } from '../../src/mail/seal/index.ts';
import { formatSol } from '../../src/mail/trustless/send.ts';
import { type TestChain, waitForChainTime } from '../support/devnet.ts';
import { type MailChain, prepareMailChain } from '../support/mail-chain.ts';
import { keyFile } from '../support/program-cli.ts';

const BIN = resolve(import.meta.dirname, '..', '..', 'bin', 'sealpost.js');
const TOKEN = 'pin-token-for-tests';
const DOMAIN = 'mail.test';
/** Solana's base fee for one signature. */
const FEE = 5000n;
/** The priority fee each transaction pays on a devnet without recent fees: the auto floor, 1 µlamport/CU × under 1M CU. */
const PRIORITY = 1n;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

let devnet: Devnet;
let pind: Pind;
let conn: Connection;
let programId: string;
let dir: string;
let mail: MailChain;
let chain: TestChain;
/** Seconds the devnet's clock runs ahead of the wall clock (a test moves it to close a window). */
let skew = 0;

function run(args: string[], stdin?: Uint8Array | string, rpc?: string): Promise<Run> {
  return new Promise((done) => {
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', SEALPOST_PIN_TOKEN: TOKEN };
    delete env.SEALPOST_CONFIG;
    const child = execFile(
      process.execPath,
      [BIN, 'mailbox', ...args, '--rpc', rpc ?? devnet.rpcUrl, '--program-id', programId],
      { cwd: dir, env, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) =>
        done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(stdin ?? '');
  });
}

/**
 * A JSON-RPC relay in front of the devnet that runs `beforeSend` (and waits
 * for it) before it passes on the first sendTransaction: what changes on
 * chain between a command's quote and its transaction reaching the node.
 */
async function raceRelay(beforeSend: () => Promise<unknown>) {
  let sends = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const calls = [JSON.parse(body)].flat() as { method: string }[];
      if (calls.some((c) => c.method === 'sendTransaction') && sends++ === 0) await beforeSend();
      const answer = await fetch(devnet.rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(await answer.text());
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    sends: () => sends,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A mailbox command that needs no chain (sign-tx, sign-text): no --rpc. */
function runOffline(args: string[], stdin?: string): Promise<Run> {
  return new Promise((done) => {
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
    delete env.SEALPOST_CONFIG;
    const child = execFile(
      process.execPath,
      [BIN, 'mailbox', ...args],
      { cwd: dir, env },
      (err, stdout, stderr) =>
        done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(stdin ?? '');
  });
}

/** The one error line a refusal prints (the CLI may print progress lines before it). */
function errorLine(r: Run): string {
  const lines = r.stderr.trim().split('\n');
  return lines[lines.length - 1] as string;
}

const balance = (kp: Keypair) => conn.getBalance(kp.publicKey, 'confirmed');

/** Funds a keypair and writes its key file. */
async function wallet(name: string, sol = 5): Promise<{ kp: Keypair; path: string }> {
  const { kp, path } = keyFile(dir, `${name}.json`);
  await chain.airdrop(kp.publicKey, sol * LAMPORTS_PER_SOL);
  return { kp, path };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sealpost-holder-'));
  // 100 ms slots: a blockhash lasts 15 s, enough for the external-signer round trip.
  devnet = await startDevnet({
    dataDir: join(dir, 'ledger'),
    host: '127.0.0.1',
    port: 0,
    slotMs: 100,
    logger: pino({ level: 'silent' }),
    clock: () => Date.now() / 1000 + skew,
  });
  programId = devnet.programId;
  conn = new Connection(devnet.rpcUrl, { commitment: 'confirmed', wsEndpoint: devnet.wsUrl });
  pind = await startPind({
    dataDir: join(dir, 'pind'),
    pin: { host: '127.0.0.1', port: 0 },
    authToken: TOKEN,
    maxPinBytes: 4 * 1024 * 1024,
    logger: pino({ level: 'silent' }),
  });
  const airdrop = async (to: Keypair['publicKey'], lamports: number) => {
    const signature = await conn.requestAirdrop(to, lamports);
    await conn.confirmTransaction(
      { signature, ...(await conn.getLatestBlockhash('confirmed')) },
      'confirmed',
    );
  };
  const send = async (ixs: TransactionInstruction[], signers: Keypair[]) => {
    const latest = await conn.getLatestBlockhash('confirmed');
    const tx = new Transaction({ feePayer: signers[0]?.publicKey, ...latest }).add(...ixs);
    tx.sign(...signers);
    const signature = await conn.sendRawTransaction(tx.serialize());
    await conn.confirmTransaction({ signature, ...latest }, 'confirmed');
    return signature;
  };
  chain = {
    connection: conn,
    programId,
    // The devnet deploys the program with its faucet as the upgrade authority.
    upgradeAuthority: devnet.faucetKeypair,
    airdrop,
    send,
    async funded(sol = 10) {
      const kp = Keypair.generate();
      await airdrop(kp.publicKey, sol * LAMPORTS_PER_SOL);
      return kp;
    },
  } as unknown as TestChain;
  mail = await prepareMailChain(chain, DOMAIN);
}, 60_000);

afterAll(async () => {
  await pind?.close();
  await devnet?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('mailbox create, flags, alias, key', () => {
  it('dry-runs, creates, sets flags, registers an alias, publishes and removes a key; refusals spend nothing', async () => {
    const bob = await wallet('bob');
    const before = await balance(bob.kp);

    const dry = await run(['create', '--key', bob.path, '--domain', DOMAIN, '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('instruction 1: CreateMailbox');
    expect(dry.stdout).toContain(`fee payer: ${bob.kp.publicKey.toBase58()}`);
    const rent = rentExemptLamports(MAILBOX_SIZE);
    expect(dry.stdout).toContain(
      `cost: ${formatSol(rent + FEE + PRIORITY)} SOL (fee ${formatSol(FEE)} + priority fee ${formatSol(PRIORITY)} + rent ${formatSol(rent)} + transfers 0)`,
    );
    expect(dry.stdout).toContain('simulation: ok');
    expect(await getMailbox(conn, programId, bob.kp.publicKey)).toBeNull();
    expect(await balance(bob.kp)).toBe(before);

    const created = await run(['create', '--key', bob.path, '--domain', DOMAIN, '--json']);
    expect(created.code, created.stderr).toBe(0);
    const receipt = JSON.parse(created.stdout);
    expect(receipt.status).toBe('confirmed');
    const mailbox = await getMailbox(conn, programId, bob.kp.publicKey);
    expect(mailbox?.owner.toBase58()).toBe(bob.kp.publicKey.toBase58());
    expect(receipt.mailbox).toBeTruthy();
    expect(await balance(bob.kp)).toBe(before - Number(rent + FEE + PRIORITY));

    const again = await run(['create', '--key', bob.path]);
    expect(again.code).toBe(1);
    expect(errorLine(again)).toBe(
      `error: wallet ${bob.kp.publicKey.toBase58()} already has a mailbox; nothing was sent`,
    );

    const flags = await run(['flags', '--key', bob.path, '--no-ipfs', 'on', '--postage', '5000']);
    expect(flags.code, flags.stderr).toBe(0);
    let mb = await getMailbox(conn, programId, bob.kp.publicKey);
    expect([mb?.noIpfs, mb?.defaultPostage]).toEqual([true, 5000n]);
    expect((await run(['flags', '--key', bob.path, '--no-ipfs', 'off', '--postage', '0'])).code).toBe(0);
    mb = await getMailbox(conn, programId, bob.kp.publicKey);
    expect([mb?.noIpfs, mb?.defaultPostage]).toEqual([false, 0n]);

    expect((await run(['alias', 'create', 'Bobby', '--key', bob.path])).code).toBe(0);
    expect((await getAlias(conn, programId, 'bobby'))?.address.toBase58()).toBe(bob.kp.publicKey.toBase58());
    const shown = await run(['alias', 'show', 'bobby', '--json']);
    expect(JSON.parse(shown.stdout)).toMatchObject({ alias: 'bobby', address: bob.kp.publicKey.toBase58() });

    // Someone else's try at the alias is refused before anything is signed.
    const carol = await mail.mailbox();
    const carolFile = keyFile(dir, 'carol.json', carol).path;
    const carolBefore = await balance(carol);
    const taken = await run(['alias', 'create', 'bobby', '--key', carolFile]);
    expect(taken.code).toBe(1);
    expect(errorLine(taken)).toBe(
      `error: the alias bobby is taken (it points at ${bob.kp.publicKey.toBase58()}); nothing was sent`,
    );
    expect(await balance(carol)).toBe(carolBefore);

    const noKey = await run(['key', 'remove', '--key', bob.path]);
    expect(noKey.code).toBe(1);
    expect(errorLine(noKey)).toBe(
      `error: wallet ${bob.kp.publicKey.toBase58()} has no published mailbox key; nothing was sent`,
    );

    const keyPath = join(dir, 'bob-mailbox-key.json');
    const published = await run(['key', 'publish', '--key', bob.path, '--generate', keyPath]);
    expect(published.code, published.stderr).toBe(0);
    expect(statSync(keyPath).mode & 0o777).toBe(0o600);
    const reader = parseMailboxKeyFile(readFileSync(keyPath, 'utf8'), keyPath);
    const onChain = await getMailboxKey(conn, programId, bob.kp.publicKey);
    expect(onChain?.pubKey.toBytes()).toEqual(reader.publicKey);
    expect((await run(['key', 'remove', '--key', bob.path])).code).toBe(0);
    expect(await getMailboxKey(conn, programId, bob.kp.publicKey)).toBeNull();
  }, 120_000);
});

/** Signs in a separate process that alone reads the key file: the message (base58 signature) and the whole tx. */
function externalSign(keyPath: string, unsignedTx: string): Promise<{ signature: string; signedTx: string }> {
  const script = `
    import { readFileSync } from 'node:fs';
    import { Keypair, Transaction } from '@solana/web3.js';
    import { ed25519 } from '@noble/curves/ed25519.js';
    import bs58 from 'bs58';
    const kp = Keypair.fromSecretKey(Uint8Array.from(JSON.parse(readFileSync(process.argv[1], 'utf8'))));
    const tx = Transaction.from(Buffer.from(process.argv[2], 'base64'));
    const signature = bs58.encode(ed25519.sign(tx.serializeMessage(), kp.secretKey.subarray(0, 32)));
    let signedTx = '';
    if (tx.feePayer.equals(kp.publicKey)) {
      tx.sign(kp);
      signedTx = tx.serialize().toString('base64');
    }
    process.stdout.write(JSON.stringify({ signature, signedTx }));
  `;
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script, keyPath, unsignedTx], {
      cwd: resolve(import.meta.dirname, '..', '..'),
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    child.on('close', (code) =>
      code === 0 ? done(JSON.parse(out)) : fail(new Error(`signer exited ${code}: ${err}`)),
    );
  });
}

describe('external signers', () => {
  it("sign-tx signs offline what --sign-offline printed (JSON or base64), refuses another wallet's transaction", async () => {
    const fiona = await wallet('fiona');
    const stranger = keyFile(dir, 'sign-tx-stranger.json');
    const address = fiona.kp.publicKey.toBase58();
    const offline = await run(['create', '--wallet', address, '--sign-offline', '--json']);
    expect(offline.code, offline.stderr).toBe(0);
    const unsigned = JSON.parse(offline.stdout).unsigned_tx as string;

    // Offline: no --rpc; the whole --json document on stdin.
    const wrongKey = await runOffline(['sign-tx', '--key', stranger.path], offline.stdout);
    expect(wrongKey.code).toBe(1);
    expect(errorLine(wrongKey)).toBe(
      `error: the transaction's fee payer is ${address}, not this key's wallet ${stranger.kp.publicKey.toBase58()}; nothing signed`,
    );
    expect(wrongKey.stdout).toBe('');
    const garbage = await runOffline(['sign-tx', '--key', fiona.path, 'not a transaction!']);
    expect(garbage.code).toBe(2);
    expect(errorLine(garbage)).toBe('error: expected a base64 transaction');

    const signed = await runOffline(['sign-tx', '--key', fiona.path, '--signed-tx'], offline.stdout);
    expect(signed.code, signed.stderr).toBe(0);
    expect(signed.stderr).toContain(`fee payer: ${address}`);
    expect(signed.stderr).toContain('CreateMailbox');
    expect(signed.stderr.trim().split('\n').pop()).toBe(`signer: ${address}`);
    const tx = Transaction.from(Buffer.from(signed.stdout.trim(), 'base64'));
    expect(tx.verifySignatures(true)).toBe(true);
    // The bare signature for --tx … --signature … agrees with it.
    const bare = await runOffline(['sign-tx', '--key', fiona.path, unsigned]);
    expect(bare.code, bare.stderr).toBe(0);
    expect(bare.stdout.trim()).toBe(bs58.encode(tx.signature as Buffer));
    // A signed transaction is not signed again.
    const twice = await runOffline(['sign-tx', '--key', fiona.path, signed.stdout.trim()]);
    expect(twice.code).toBe(1);
    expect(errorLine(twice)).toBe('error: the transaction is signed already; nothing signed');

    const sent = await run(['submit', '--signed-tx', signed.stdout.trim(), '--json']);
    expect(sent.code, sent.stderr).toBe(0);
    expect(JSON.parse(sent.stdout)).toMatchObject({ status: 'confirmed', fee_payer: address });
    expect(await getMailbox(conn, programId, fiona.kp.publicKey)).not.toBeNull();
  });

  it('prints the unsigned transaction, refuses a signature that does not verify, sends one that does', async () => {
    const dave = await wallet('dave');
    const stranger = keyFile(dir, 'stranger.json');
    const address = dave.kp.publicKey.toBase58();
    const before = await balance(dave.kp);

    const offline = await run(['create', '--wallet', address, '--sign-offline', '--json']);
    expect(offline.code, offline.stderr).toBe(0);
    const printed = JSON.parse(offline.stdout);
    expect(printed.fee_payer).toBe(address);
    const tx = Transaction.from(Buffer.from(printed.unsigned_tx, 'base64'));
    expect(tx.feePayer?.toBase58()).toBe(address);
    expect(tx.recentBlockhash).toBe(printed.recent_blockhash);
    expect(tx.serializeMessage().toString('base64')).toBe(printed.message);

    const wrong = await externalSign(stranger.path, printed.unsigned_tx);
    const refused = await run(['submit', '--tx', printed.unsigned_tx, '--signature', wrong.signature]);
    expect(refused.code).toBe(1);
    expect(errorLine(refused)).toBe(
      `error: the signature does not verify against the transaction's message for fee payer ${address}; nothing was sent`,
    );
    expect(await getMailbox(conn, programId, dave.kp.publicKey)).toBeNull();
    expect(await balance(dave.kp)).toBe(before);

    const right = await externalSign(dave.path, printed.unsigned_tx);
    const sent = await run(['submit', '--tx', printed.unsigned_tx, '--signature', right.signature, '--json']);
    expect(sent.code, sent.stderr).toBe(0);
    expect(JSON.parse(sent.stdout)).toMatchObject({
      status: 'confirmed',
      fee_payer: address,
      instructions: 'SetComputeUnitLimit, SetComputeUnitPrice, CreateMailbox',
    });
    expect(await getMailbox(conn, programId, dave.kp.publicKey)).not.toBeNull();

    // The whole signed transaction works too.
    const flags = await run(['flags', '--wallet', address, '--no-ipfs', 'on', '--sign-offline', '--json']);
    expect(flags.code, flags.stderr).toBe(0);
    const signed = await externalSign(dave.path, JSON.parse(flags.stdout).unsigned_tx);
    const submitted = await run(['submit', '--signed-tx', signed.signedTx]);
    expect(submitted.code, submitted.stderr).toBe(0);
    expect((await getMailbox(conn, programId, dave.kp.publicKey))?.noIpfs).toBe(true);

    // A wallet with no key file and no --sign-offline is a usage error.
    const usage = await run(['flags', '--wallet', address, '--no-ipfs', 'off']);
    expect(usage.code).toBe(2);
    expect(errorLine(usage)).toContain(`no key for ${address}`);
  }, 120_000);
});

describe('send, read, claim, delete, stamps', () => {
  const MESSAGE = 'From: me@example\r\nTo: you@example\r\nSubject: hello\r\n\r\nGrüße from the terminal\r\n';

  it('sends with a bounty through the pin service, reads it back, claims the bounty, deletes it', async () => {
    const alice = await wallet('alice');
    const bob = await mail.mailbox({ alias: 'roberta' });
    const bobFile = keyFile(dir, 'roberta.json', bob).path;
    const sent = await run(
      [
        'send',
        '--key',
        alice.path,
        '--to',
        `roberta@${DOMAIN}`,
        '--bounty',
        '0.01',
        '--claim-days',
        '2',
        '--pin-url',
        pind.pinUrl,
        '--json',
      ],
      MESSAGE,
    );
    expect(sent.code, sent.stderr).toBe(0);
    const receipt = JSON.parse(sent.stdout);
    expect(receipt).toMatchObject({
      status: 'confirmed',
      recipient: bob.publicKey.toBase58(),
      bounty_lamports: '10000000',
    });
    expect(receipt.email_address).toBe(emailAddress(programId, bob.publicKey, 0n)[0].toBase58());
    const email = await getEmailAt(conn, programId, receipt.email_address);
    expect(email?.cid).toBe(receipt.cid);
    expect(email?.sender.toBase58()).toBe(alice.kp.publicKey.toBase58());
    expect(email?.bountyLamports).toBe(10_000_000n);

    const read = await run(['read', receipt.email_address, '--key', bobFile, '--gateway', pind.gatewayUrl]);
    expect(read.code, read.stderr).toBe(0);
    expect(read.stdout).toBe(MESSAGE);
    expect(read.stderr).toContain(`envelope from: ${alice.kp.publicKey.toBase58()}@${DOMAIN}`);

    const bobBefore = await balance(bob);
    const claimed = await run(['bounty', 'claim', receipt.email_address, '--key', bobFile]);
    expect(claimed.code, claimed.stderr).toBe(0);
    expect(await balance(bob)).toBe(bobBefore + 10_000_000 - 5000 - Number(PRIORITY));
    expect((await getEmailAt(conn, programId, receipt.email_address))?.bountyLamports).toBe(0n);

    const again = await run(['bounty', 'claim', receipt.email_address, '--key', bobFile]);
    expect(again.code).toBe(1);
    expect(errorLine(again)).toBe(
      `error: message ${receipt.email_address} carries no bounty to claim; nothing was sent`,
    );

    const aliceBefore = await balance(alice.kp);
    const deleted = await run(['delete', receipt.email_address, '--key', bobFile]);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(await getEmailAt(conn, programId, receipt.email_address)).toBeNull();
    // The rent goes back to the sender, who paid it.
    expect(await balance(alice.kp)).toBeGreaterThan(aliceBefore);
  }, 120_000);

  it('refuses outside domains, unknown aliases, no_ipfs, held postage and a thin wallet with one line and nothing spent', async () => {
    const alice = await wallet('alice2');
    const closed = await mail.mailbox();
    await chain.send(
      [setMailboxFlagsInstruction({ programId, owner: closed.publicKey, noIpfs: true })],
      [closed],
    );
    const priced = await mail.mailbox({ postage: 1_000_000n });
    const before = await balance(alice.kp);
    const cases: [string, string][] = [
      [
        'roberta@example.org',
        'error: example.org is not a mail domain on chain, so roberta@example.org is an ordinary email address, not an on-chain mailbox. Trustless send reaches only on-chain mailboxes: send it through a mail server instead. Nothing was sealed, pinned or paid.',
      ],
      [
        `nosuch@${DOMAIN}`,
        `error: nosuch@${DOMAIN} does not exist: no alias "nosuch" is registered on chain. Check the spelling.`,
      ],
      [
        closed.publicKey.toBase58(),
        `error: ${closed.publicKey.toBase58()} keeps its mail off IPFS (no_ipfs), so a trustless send is not possible. Nothing was pinned. Send through a mail server instead.`,
      ],
      [
        priced.publicKey.toBase58(),
        `error: ${priced.publicKey.toBase58()} asks 0.001 SOL postage per message from this wallet and it holds no stamp toward them: buy one first with "sealpost mailbox stamps buy --to ${priced.publicKey.toBase58()} --count 1 --max-price 1000000" (${formatSol(1_000_000n + rentExemptLamports(FROMBOX_SIZE))} SOL with the postoffice fees and the frombox rent, plus the network fee); nothing was sealed, pinned or sent`,
      ],
    ];
    for (const [to, line] of cases) {
      const r = await run(['send', '--key', alice.path, '--to', to, '--pin-url', pind.pinUrl], MESSAGE);
      expect(r.code, to).toBe(1);
      expect(errorLine(r)).toBe(line);
    }
    expect(await balance(alice.kp)).toBe(before);
    expect((await getMailbox(conn, programId, priced.publicKey))?.mailCount).toBe(0n);

    const thin = await wallet('thin', 0.001);
    const open = await mail.mailbox();
    const poor = await run(
      ['send', '--key', thin.path, '--to', open.publicKey.toBase58(), '--pin-url', pind.pinUrl],
      MESSAGE,
    );
    expect(poor.code).toBe(1);
    expect(errorLine(poor)).toBe(
      `error: Not enough SOL: this send needs ${formatSol(rentExemptLamports(emailSize('b'.repeat(59))) + FEE + PRIORITY)} SOL (account rent, fee and priority fee) and the wallet holds 0.001 SOL. Nothing was pinned or sent.`,
    );
    expect(await balance(thin.kp)).toBe(0.001 * LAMPORTS_PER_SOL);

    const poorKey = await run(['alias', 'create', 'thinny', '--key', thin.path]);
    expect(poorKey.code).toBe(1);
    expect(errorLine(poorKey)).toContain('has no mailbox on chain');
  }, 120_000);

  it('refuses a claim once the bounty window closed', async () => {
    const sender = await chain.funded();
    const rcpt = await mail.mailbox();
    const rcptFile = keyFile(dir, 'rcpt.json', rcpt).path;
    const now = (await conn.getBlockTime(await conn.getSlot('confirmed'))) as number;
    const cid = await computeCid(new TextEncoder().encode('sealed stand-in'));
    await chain.send(
      [
        sendMailInstruction({
          programId,
          sender: sender.publicKey,
          recipient: rcpt.publicKey,
          index: 0n,
          fromHash: fromHash(sender.publicKey),
          cid,
          bountyLamports: 1_000_000n,
          // Long enough that a loaded machine never sends it already expired.
          expiresAt: BigInt(now + 300),
        }),
      ],
      [sender],
    );
    const address = emailAddress(programId, rcpt.publicKey, 0n)[0].toBase58();
    // The chain's clock moves past the window; the claim runs once a slot shows it.
    skew += 301;
    await waitForChainTime(conn, now + 301);
    const before = await balance(rcpt);
    const r = await run(['bounty', 'claim', address, '--key', rcptFile]);
    expect(r.code).toBe(1);
    expect(errorLine(r)).toMatch(
      new RegExp(
        `^error: the bounty window of message ${address} closed at .+; the sender gets it back on delete; nothing was sent$`,
      ),
    );
    expect(await balance(rcpt)).toBe(before);
    expect((await getEmailAt(conn, programId, address))?.bountyLamports).toBe(1_000_000n);
  }, 60_000);

  it('prices a sender, buys stamps under a ceiling, sends with one, reclaims the rest', async () => {
    const alice = await wallet('alice3');
    const erin = await mail.mailbox({ postage: 1_000_000n });
    const erinFile = keyFile(dir, 'erin.json', erin).path;
    const to = erin.publicKey.toBase58();
    const before = await balance(alice.kp);

    const high = await run(['stamps', 'buy', '--key', alice.path, '--to', to, '--max-price', '500000']);
    expect(high.code).toBe(1);
    expect(errorLine(high)).toBe(
      `error: one stamp toward ${to} costs 0.001 SOL (0.001 postage + 0 surcharge + 0 fee), above --max-price 0.0005 SOL; nothing was bought`,
    );
    expect(await balance(alice.kp)).toBe(before);
    expect(await getFrombox(conn, programId, fromHash(alice.kp.publicKey), erin.publicKey)).toBeNull();

    const bought = await run([
      'stamps',
      'buy',
      '--key',
      alice.path,
      '--to',
      to,
      '--count',
      '2',
      '--max-price',
      '1000000',
    ]);
    expect(bought.code, bought.stderr).toBe(0);
    let frombox = await getFrombox(conn, programId, fromHash(alice.kp.publicKey), erin.publicKey);
    expect([frombox?.stamps, frombox?.postageEscrow]).toEqual([2n, 2_000_000n]);

    const sent = await run(
      ['send', '--key', alice.path, '--to', to, '--pin-url', pind.pinUrl, '--json'],
      MESSAGE,
    );
    expect(sent.code, sent.stderr).toBe(0);
    frombox = await getFrombox(conn, programId, fromHash(alice.kp.publicKey), erin.publicKey);
    expect(frombox?.stamps).toBe(1n);

    const reclaimed = await run(['stamps', 'reclaim', '--key', alice.path, '--to', to]);
    expect(reclaimed.code, reclaimed.stderr).toBe(0);
    frombox = await getFrombox(conn, programId, fromHash(alice.kp.publicKey), erin.publicKey);
    expect(frombox?.stamps).toBe(0n);

    const set = await run([
      'frombox',
      'set',
      '--key',
      erinFile,
      '--from',
      'friend@remote.example',
      '--postage',
      '0',
    ]);
    expect(set.code, set.stderr).toBe(0);
    const priced = await getFrombox(conn, programId, fromHash('friend@remote.example'), erin.publicKey);
    expect(priced?.requiredPostage).toBe(0n);
  }, 120_000);

  it('ceils a purchase at the whole per-stamp price it quoted, and refuses when the price changed before it landed', async () => {
    const alice = await wallet('alice5');
    const gus = await mail.mailbox({ postage: 1_000_000n });
    const to = gus.publicKey.toBase58();
    const admin = mail.delegate;
    // A postoffice with a surcharge and a fee: the ceiling covers them, not the postage alone.
    await chain.send(
      [
        updatePostofficeInstruction({
          programId,
          admin: admin.publicKey,
          stampFeeLamports: 2000n,
          settlementSurchargeLamports: 3000n,
        }),
      ],
      [admin],
    );
    const relay = await raceRelay(() =>
      chain.send(
        [setMailboxFlagsInstruction({ programId, owner: gus.publicKey, defaultPostage: 2_000_000n })],
        [gus],
      ),
    );
    try {
      const before = await balance(alice.kp);
      const low = await run(['stamps', 'buy', '--key', alice.path, '--to', to, '--max-price', '1000000']);
      expect(low.code).toBe(1);
      expect(errorLine(low)).toBe(
        `error: one stamp toward ${to} costs 0.001005 SOL (0.001 postage + 0.000003 surcharge + 0.000002 fee), above --max-price 0.001 SOL; nothing was bought`,
      );

      // The recipient reprices after the quote, before the purchase reaches the chain.
      const raced = await run(['stamps', 'buy', '--key', alice.path, '--to', to], undefined, relay.url);
      expect(raced.code).toBe(1);
      expect(raced.stderr).toContain(
        'quote: 0.001005 SOL per stamp (0.001 postage + 0.000003 surcharge + 0.000002 fee) × 1 + 0.00152424 frombox rent = 0.00252924 SOL',
      );
      expect(errorLine(raced)).toBe(
        'error: the price changed to 0.002005 SOL per stamp (0.002 postage + 0.000003 surcharge + 0.000002 fee), ' +
          'above the 0.001005 SOL you agreed to; nothing was bought (the mail program refused: PriceAboveCeiling)',
      );
      expect(relay.sends()).toBe(1);
      expect(await balance(alice.kp)).toBe(before);
      expect(await getFrombox(conn, programId, fromHash(alice.kp.publicKey), gus.publicKey)).toBeNull();

      // Quoted again, the new price is the ceiling and the purchase goes through.
      const bought = await run(['stamps', 'buy', '--key', alice.path, '--to', to, '--json']);
      expect(bought.code, bought.stderr).toBe(0);
      expect(JSON.parse(bought.stdout)).toMatchObject({
        status: 'confirmed',
        postage_lamports: '2000000',
        price_per_stamp_lamports: '2005000',
        max_price_lamports: '2005000',
      });
      const frombox = await getFrombox(conn, programId, fromHash(alice.kp.publicKey), gus.publicKey);
      expect([frombox?.stamps, frombox?.walletStamps]).toEqual([1n, true]);
      expect(await balance(alice.kp)).toBe(
        before - Number(2_005_000n + rentExemptLamports(FROMBOX_SIZE) + FEE + PRIORITY),
      );
    } finally {
      await relay.close();
      await chain.send(
        [
          updatePostofficeInstruction({
            programId,
            admin: admin.publicKey,
            stampFeeLamports: 0n,
            settlementSurchargeLamports: 0n,
          }),
        ],
        [admin],
      );
    }
  }, 120_000);

  it('adds stamps for a sender address the recipient priced (relayed mail), under the quoted ceiling', async () => {
    const sponsor = await wallet('sponsor');
    const kim = await mail.mailbox({ postage: 1_000_000n });
    const kimFile = keyFile(dir, 'kim.json', kim).path;
    const to = kim.publicKey.toBase58();
    const pal = 'pal@remote.example';
    expect((await run(['frombox', 'set', '--key', kimFile, '--from', pal, '--postage', '3000'])).code).toBe(
      0,
    );
    const before = await balance(sponsor.kp);

    const unpriced = await run([
      'stamps',
      'add',
      '--key',
      sponsor.path,
      '--to',
      to,
      '--for',
      'nobody@remote.example',
    ]);
    expect(unpriced.code).toBe(1);
    expect(errorLine(unpriced)).toBe(
      `error: ${to} has not priced mail from nobody@remote.example (no frombox): only the recipient can, with sealpost mailbox frombox set; nothing was bought`,
    );
    const high = await run([
      'stamps',
      'add',
      '--key',
      sponsor.path,
      '--to',
      to,
      '--for',
      pal,
      '--max-price',
      '2999',
    ]);
    expect(high.code).toBe(1);
    expect(errorLine(high)).toBe(
      `error: one stamp toward ${to} costs 0.000003 SOL (0.000003 postage + 0 surcharge + 0 fee), above --max-price 0.000002999 SOL; nothing was bought`,
    );
    expect(await balance(sponsor.kp)).toBe(before);

    const added = await run([
      'stamps',
      'add',
      '--key',
      sponsor.path,
      '--to',
      to,
      '--for',
      pal,
      '--count',
      '2',
      '--json',
    ]);
    expect(added.code, added.stderr).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({
      status: 'confirmed',
      for: pal,
      stamps: 2,
      max_price_lamports: '3000',
    });
    const box = await getFrombox(conn, programId, fromHash(pal), kim.publicKey);
    // Relayed mail from that address may spend these: they are not the sponsor's own.
    expect([box?.stamps, box?.postageEscrow, box?.walletStamps]).toEqual([2n, 6000n, false]);
    expect(await balance(sponsor.kp)).toBe(before - 6000 - Number(FEE + PRIORITY));
  }, 60_000);

  it("refuses the sender's delete while its bounty is the recipient's to claim, and deletes once the window closed", async () => {
    const ivy = await wallet('ivy');
    const rcpt = await mail.mailbox();
    const now = (await conn.getBlockTime(await conn.getSlot('confirmed'))) as number;
    const expiresAt = BigInt(now + 300);
    await chain.send(
      [
        sendMailInstruction({
          programId,
          sender: ivy.kp.publicKey,
          recipient: rcpt.publicKey,
          index: 0n,
          fromHash: fromHash(ivy.kp.publicKey),
          cid: await computeCid(new TextEncoder().encode('bountied stand-in')),
          bountyLamports: 1_000_000n,
          expiresAt,
        }),
      ],
      [ivy.kp],
    );
    const address = emailAddress(programId, rcpt.publicKey, 0n)[0].toBase58();
    const held = await conn.getBalance(emailAddress(programId, rcpt.publicKey, 0n)[0], 'confirmed');
    const before = await balance(ivy.kp);
    const locked = `error: the bounty of 0.001 SOL is the recipient's to claim until ${new Date(Number(expiresAt) * 1000).toISOString()}; you can delete this message after that; nothing was sent`;
    for (const extra of [[], ['--dry-run'], ['--sign-offline']]) {
      const r = await run(['delete', address, '--key', ivy.path, ...extra]);
      expect(r.code, extra.join(' ')).toBe(1);
      expect(errorLine(r)).toBe(locked);
    }
    expect(await balance(ivy.kp)).toBe(before);
    expect((await getEmailAt(conn, programId, address))?.bountyLamports).toBe(1_000_000n);

    // Past the window the bounty is the sender's again: the delete returns it with the rent.
    skew += 301;
    await waitForChainTime(conn, now + 301);
    const deleted = await run(['delete', address, '--key', ivy.path]);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(await getEmailAt(conn, programId, address)).toBeNull();
    expect(await balance(ivy.kp)).toBe(before + held - Number(FEE + PRIORITY));
  }, 60_000);
});

describe('mailbox domain set|leave', () => {
  it('joins a domain, moves to another and leaves it; refusals are checked on chain first and spend nothing', async () => {
    const hana = await wallet('hana');
    const address = hana.kp.publicKey.toBase58();
    expect((await run(['create', '--key', hana.path])).code).toBe(0);
    expect((await getMailbox(conn, programId, hana.kp.publicKey))?.domain.equals(ZERO_KEY)).toBe(true);
    const before = await balance(hana.kp);

    const refusals: [string[], number, string][] = [
      [['leave'], 1, `error: the mailbox of ${address} is in no mail domain; nothing was sent`],
      [['set', 'nosuch.test'], 1, 'error: nosuch.test is not a mail domain on chain; nothing was sent'],
      [['set', 'not a domain'], 2, 'error: "not a domain" is not a valid domain name'],
    ];
    for (const [args, code, line] of refusals) {
      const r = await run(['domain', ...args, '--key', hana.path]);
      expect(r.code, args.join(' ')).toBe(code);
      expect(errorLine(r)).toBe(line);
    }
    const stranger = await wallet('no-mailbox');
    const none = await run(['domain', 'set', DOMAIN, '--key', stranger.path]);
    expect(none.code).toBe(1);
    expect(errorLine(none)).toContain('has no mailbox on chain');

    const dry = await run(['domain', 'set', DOMAIN, '--key', hana.path, '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('instruction 1: SetMailboxDomain');
    expect(dry.stdout).toContain(`${domainAddress(programId, DOMAIN)[0].toBase58()}  readonly`);
    expect(dry.stdout).toContain('simulation: ok');
    expect((await getMailbox(conn, programId, hana.kp.publicKey))?.domain.equals(ZERO_KEY)).toBe(true);
    expect(await balance(hana.kp)).toBe(before);

    const joined = await run(['domain', 'set', DOMAIN, '--key', hana.path, '--json']);
    expect(joined.code, joined.stderr).toBe(0);
    expect(JSON.parse(joined.stdout)).toMatchObject({
      status: 'confirmed',
      domain: DOMAIN,
      domain_account: domainAddress(programId, DOMAIN)[0].toBase58(),
      previous_domain: null,
    });
    expect(joined.stderr).toContain(
      `relayed mail now reaches this mailbox only through ${DOMAIN}'s mail server`,
    );
    let mailbox = await getMailbox(conn, programId, hana.kp.publicKey);
    expect(mailbox?.domain.equals(domainAddress(programId, DOMAIN)[0])).toBe(true);
    const again = await run(['domain', 'set', DOMAIN.toUpperCase(), '--key', hana.path]);
    expect(again.code).toBe(1);
    expect(errorLine(again)).toBe(
      `error: the mailbox of ${address} is already in ${DOMAIN}; nothing was sent`,
    );

    // Another active domain: the mailbox moves, no consent of its authority needed.
    const other = 'other.test';
    await chain.send(
      [
        createDomainInstruction({
          programId,
          delegate: mail.delegate.publicKey,
          domain: other,
          authority: (await chain.funded()).publicKey,
        }),
      ],
      [mail.delegate],
    );
    const moved = await run(['domain', 'set', 'Other.Test.', '--key', hana.path, '--json']);
    expect(moved.code, moved.stderr).toBe(0);
    expect(JSON.parse(moved.stdout)).toMatchObject({ domain: other, previous_domain: DOMAIN });
    mailbox = await getMailbox(conn, programId, hana.kp.publicKey);
    expect(mailbox?.domain.equals(domainAddress(programId, other)[0])).toBe(true);

    // Leaving, signed elsewhere: the unsigned transaction names the domain it leaves.
    const offline = await run(['domain', 'leave', '--wallet', address, '--sign-offline', '--json']);
    expect(offline.code, offline.stderr).toBe(0);
    const printed = JSON.parse(offline.stdout);
    expect(printed).toMatchObject({ fee_payer: address, domain: null, previous_domain: other });
    const signed = await externalSign(hana.path, printed.unsigned_tx);
    const left = await run([
      'submit',
      '--tx',
      printed.unsigned_tx,
      '--signature',
      signed.signature,
      '--json',
    ]);
    expect(left.code, left.stderr).toBe(0);
    expect(JSON.parse(left.stdout)).toMatchObject({
      status: 'confirmed',
      instructions: 'SetComputeUnitLimit, SetComputeUnitPrice, SetMailboxDomain',
    });
    expect((await getMailbox(conn, programId, hana.kp.publicKey))?.domain.equals(ZERO_KEY)).toBe(true);
    // Each change cost its fee (and priority fee) only.
    expect(await balance(hana.kp)).toBe(before - 3 * Number(FEE + PRIORITY));

    // `create --domain` still names the domain at creation.
    const june = await wallet('june');
    expect((await run(['create', '--key', june.path, '--domain', DOMAIN])).code).toBe(0);
    expect(
      (await getMailbox(conn, programId, june.kp.publicKey))?.domain.equals(
        domainAddress(programId, DOMAIN)[0],
      ),
    ).toBe(true);
  }, 120_000);
});
