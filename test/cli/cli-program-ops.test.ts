// Program operations as child processes against devnet: `program show` (the
// upgrade authority, ProgramData, last deploy slot, the postoffice),
// `program buffers` finding exactly the buffer an interrupted
// `program deploy` left (and not another authority's, made with the
// loader's InitializeBuffer), `program close-buffer` (--dry-run sends
// nothing, another authority is refused, the rent comes back), `-u` for
// `--rpc`, and the dev chain helpers `dev airdrop|balance` over the chain a
// dev stack's dev.json names (refused on an external chain).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Keypair, LAMPORTS_PER_SOL, PublicKey } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { initPostofficeInstruction, postofficeAddress } from '../../chain/client/index.ts';
import {
  BUFFER_METADATA_SIZE,
  createBuffer,
  programDataAddress,
  rentExemptLamports,
} from '../../chain/client/loader.ts';
import { deriveBufferKeypair } from '../../chain/program/deploy/deploy.ts';
import { startTestChain } from '../support/devnet.ts';
import { keyFile, MAIL_SO_BYTES, type Run, sealpost, sealpostKilled } from '../support/program-cli.ts';
import { tempDir } from '../support/temp-dir.ts';

const SLOW = 180_000;

function json<T = Record<string, unknown>>(run: Run): T {
  try {
    return JSON.parse(run.stdout) as T;
  } catch {
    throw new Error(`not JSON (exit ${run.code}):\n${run.stdout}\n${run.stderr}`);
  }
}

interface Buffers {
  rpc_url: string;
  authority: string;
  buffers: { address: string; lamports: number }[];
  total_lamports: number;
}

describe('sealpost program show|buffers|close-buffer', () => {
  it(
    'shows the program and its postoffice, lists the buffer a cut deploy left, and closes it for its rent',
    async () => {
      const chain = await startTestChain();
      const dir = tempDir('sealpost-program-ops-');
      const rpc = chain.devnet.rpcUrl;
      const programId = chain.programId;

      // show: the devnet's mail program, the faucet its upgrade authority, no postoffice yet.
      const bare = await sealpost(['program', 'show', '-u', rpc, '--program-id', programId, '--json'], dir);
      expect(bare.code, bare.stderr).toBe(0);
      const shown = json<{
        program_data: string;
        program_data_length: number;
        upgrade_authority: string;
        last_deploy_slot: number;
        elf_size: number;
        postoffice: unknown;
      }>(bare);
      expect(shown.program_data).toBe(programDataAddress(new PublicKey(programId)).toBase58());
      const programData = await chain.connection.getAccountInfo(new PublicKey(shown.program_data));
      expect(shown.program_data_length).toBe(programData?.data.length);
      expect(shown.upgrade_authority).toBe(chain.upgradeAuthority.publicKey.toBase58());
      expect(shown.last_deploy_slot).toBeGreaterThanOrEqual(0);
      expect(shown.elf_size).toBe(MAIL_SO_BYTES.length);
      expect(shown.postoffice).toBeNull();
      const text = await sealpost(['program', 'show', '--rpc', rpc, '--program-id', programId], dir);
      expect(text.stdout).toContain(`upgrade authority  ${chain.upgradeAuthority.publicKey.toBase58()}`);
      expect(text.stdout).toContain(`last deploy slot   ${shown.last_deploy_slot}`);
      expect(text.stdout).toMatch(/postoffice {9}none: `sealpost program deploy`/);

      // With a postoffice: its admin and fees.
      const delegate = Keypair.generate().publicKey;
      await chain.send(
        [
          initPostofficeInstruction({
            programId,
            admin: chain.upgradeAuthority.publicKey,
            delegateAddress: delegate,
            stampFeeLamports: 1234n,
            settlementSurchargeLamports: 5678n,
          }),
        ],
        [chain.upgradeAuthority],
      );
      const withPo = json<{ postoffice: Record<string, string> }>(
        await sealpost(['program', 'show', '-u', rpc, '--program-id', programId, '--json'], dir),
      );
      expect(withPo.postoffice).toMatchObject({
        address: postofficeAddress(programId)[0].toBase58(),
        admin: chain.upgradeAuthority.publicKey.toBase58(),
        delegate: delegate.toBase58(),
        stamp_fee_lamports: '1234',
        settlement_surcharge_lamports: '5678',
      });
      const poText = await sealpost(['program', 'show', '-u', rpc, '--program-id', programId], dir);
      expect(poText.stdout).toContain(`admin                 ${chain.upgradeAuthority.publicKey.toBase58()}`);
      expect(poText.stdout).toContain('stamp fee             1234 lamports');

      // A deploy cut short leaves its buffer (derived from the upgrade authority and the program id).
      const payer = keyFile(dir, 'payer.json', await chain.funded(5));
      const prog = keyFile(dir, 'prog.json');
      const cut = await sealpostKilled(
        [
          'program',
          'deploy',
          '-u',
          rpc,
          '--keypair',
          payer.path,
          '--program-keypair',
          prog.path,
          '--no-init',
          '--yes',
          '--window',
          '2',
        ],
        dir,
        /chunks written [3-9]\//,
      );
      expect(cut.killed, cut.stderr).toBe(true);
      const left = deriveBufferKeypair(payer.kp, prog.kp.publicKey).publicKey;
      const leftAccount = await chain.connection.getAccountInfo(left, 'confirmed');
      expect(leftAccount?.data.length).toBe(BUFFER_METADATA_SIZE + MAIL_SO_BYTES.length);

      // Another authority's buffer, made with InitializeBuffer: not listed for the payer.
      const stranger = await chain.funded(1);
      const strangerBuffer = Keypair.generate();
      await chain.send(
        createBuffer({
          payer: stranger.publicKey,
          buffer: strangerBuffer.publicKey,
          authority: stranger.publicKey,
          programLen: 100,
        }),
        [stranger, strangerBuffer],
      );

      const listed = json<Buffers>(
        await sealpost(['program', 'buffers', '-u', rpc, '-k', payer.path, '--json'], dir),
      );
      expect(listed).toEqual({
        rpc_url: rpc,
        authority: payer.kp.publicKey.toBase58(),
        buffers: [{ address: left.toBase58(), lamports: leftAccount?.lamports }],
        total_lamports: leftAccount?.lamports,
      });
      const theirs = json<Buffers>(
        await sealpost(
          ['program', 'buffers', '--rpc', rpc, '--authority', stranger.publicKey.toBase58(), '--json'],
          dir,
        ),
      );
      expect(theirs.buffers).toEqual([
        {
          address: strangerBuffer.publicKey.toBase58(),
          lamports: rentExemptLamports(BUFFER_METADATA_SIZE + 100),
        },
      ]);
      const listText = await sealpost(['program', 'buffers', '-u', rpc, '-k', payer.path], dir);
      expect(listText.stdout).toContain(left.toBase58());
      expect(listText.stdout).toContain('1 buffer,');
      const neither = await sealpost(['program', 'buffers', '-u', rpc], dir);
      expect(neither.code).toBe(2);
      expect(neither.stderr).toContain('--authority <address> or -k, --keypair <file>');

      // close-buffer: --dry-run sends nothing; another authority is refused; then the rent comes back.
      const recipient = Keypair.generate().publicKey;
      const close = [
        'program',
        'close-buffer',
        left.toBase58(),
        '-u',
        rpc,
        '--recipient',
        recipient.toBase58(),
      ];
      const payerBefore = await chain.balance(payer.kp.publicKey);
      const dry = await sealpost([...close, '-k', payer.path, '--dry-run', '--json'], dir);
      expect(dry.code, dry.stderr).toBe(0);
      expect(json(dry)).toMatchObject({
        dry_run: true,
        buffer: left.toBase58(),
        lamports: leftAccount?.lamports,
        recipient: recipient.toBase58(),
      });
      const strangerFile = keyFile(dir, 'stranger.json', stranger);
      const wrong = await sealpost([...close, '-k', strangerFile.path], dir);
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toContain(
        `buffer ${left.toBase58()} belongs to authority ${payer.kp.publicKey.toBase58()}, not ${stranger.publicKey.toBase58()}`,
      );
      expect(await chain.connection.getAccountInfo(left, 'confirmed')).not.toBeNull();
      expect(await chain.balance(recipient)).toBe(0);
      expect(await chain.balance(payer.kp.publicKey)).toBe(payerBefore);

      const closed = await sealpost([...close, '-k', payer.path, '--json'], dir);
      expect(closed.code, closed.stderr).toBe(0);
      expect(json(closed)).toMatchObject({ buffer: left.toBase58(), lamports: leftAccount?.lamports });
      expect(await chain.connection.getAccountInfo(left, 'confirmed')).toBeNull();
      expect(await chain.balance(recipient)).toBe(leftAccount?.lamports);
      const after = await sealpost(['program', 'buffers', '-u', rpc, '-k', payer.path], dir);
      expect(after.stdout).toBe(`no buffers of authority ${payer.kp.publicKey.toBase58()} at ${rpc}\n`);
      // Closing it again: one line, nothing sent.
      const again = await sealpost([...close, '-k', payer.path], dir);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain(`no account at ${left.toBase58()} on this cluster`);
    },
    SLOW,
  );

  it('takes -u devnet|testnet|mainnet-beta|localhost for --rpc on every command that has it', async () => {
    const dir = tempDir('sealpost-rpc-moniker-');
    const authority = Keypair.generate().publicKey.toBase58();
    // localhost is http://127.0.0.1:8899: named in the answer whether or not a node listens there.
    const local = await sealpost(['program', 'buffers', '-u', 'localhost', '--authority', authority], dir);
    expect(`${local.stdout}${local.stderr}`).toContain('http://127.0.0.1:8899');
    const bad = await sealpost(['program', 'show', '-u', 'devnett', '--program-id', authority], dir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      'expected an http(s) URL or one of devnet, testnet, mainnet-beta, localhost, got "devnett"',
    );
    for (const page of [
      ['program', 'deploy'],
      ['program', 'verify'],
      ['program', 'fees'],
      ['mailbox', 'list'],
      ['beacon', 'publish'],
      ['dev'],
    ]) {
      const help = await sealpost([...page, '--help'], dir);
      const flat = help.stdout.replace(/\s+/g, ' ');
      expect(flat, page.join(' ')).toContain('-u, --rpc <url>');
      expect(flat, page.join(' ')).toContain('(or devnet, testnet, mainnet-beta, localhost)');
    }
  });
});

describe('sealpost dev airdrop|balance', () => {
  /** A dev stack's dev.json naming `rpcUrl` (what `sealpost dev` writes; external: `--rpc`). */
  function devDir(rpcUrl: string, external = false): string {
    const dir = tempDir('sealpost-dev-chain-');
    mkdirSync(join(dir, '.data'));
    const name = external ? 'chain JSON-RPC (external)' : 'devnet (chain JSON-RPC)';
    writeFileSync(
      join(dir, '.data', 'dev.json'),
      JSON.stringify({
        data_dir: join(dir, '.data'),
        chain: { rpc_url: rpcUrl },
        components: [{ name, url: rpcUrl }],
      }),
    );
    return dir;
  }

  it('funds a wallet on the dev chain, reads its balance, and refuses an external chain', async () => {
    const chain = await startTestChain();
    const rpc = chain.devnet.rpcUrl;
    const dir = devDir(rpc);
    const wallet = Keypair.generate();

    const dropped = await sealpost(['dev', 'airdrop', wallet.publicKey.toBase58(), '--sol', '2.5'], dir);
    expect(dropped.code, dropped.stderr).toBe(0);
    expect(dropped.stdout).toMatch(
      new RegExp(`^airdropped 2\\.5 SOL to ${wallet.publicKey.toBase58()}: balance 2\\.5 SOL \\(\\w+\\)\\n$`),
    );
    expect(await chain.balance(wallet.publicKey)).toBe(2.5 * LAMPORTS_PER_SOL);
    // A keypair file names its address; the default is 10 SOL.
    const file = keyFile(dir, 'w.json', wallet);
    const more = await sealpost(['dev', 'airdrop', file.path, '--json'], dir);
    expect(json(more)).toMatchObject({
      address: wallet.publicKey.toBase58(),
      airdropped_lamports: String(10 * LAMPORTS_PER_SOL),
      balance_lamports: 12.5 * LAMPORTS_PER_SOL,
    });
    const bal = await sealpost(['dev', 'balance', wallet.publicKey.toBase58()], dir);
    expect(bal.stdout).toBe(`12.5 SOL (${12.5 * LAMPORTS_PER_SOL} lamports)\n`);
    const other = tempDir('sealpost-dev-chain-elsewhere-');
    const elsewhere = await sealpost(
      ['dev', 'balance', wallet.publicKey.toBase58(), '--data-dir', join(dir, '.data'), '--json'],
      other,
    );
    expect(json(elsewhere)).toMatchObject({ balance_lamports: 12.5 * LAMPORTS_PER_SOL, rpc_url: rpc });

    // A dev stack run with --rpc: no airdrop, nothing sent.
    const ext = devDir(rpc, true);
    const refused = await sealpost(['dev', 'airdrop', wallet.publicKey.toBase58()], ext);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`runs against an external chain (${rpc}, \`sealpost dev --rpc\`)`);
    expect(await chain.balance(wallet.publicKey)).toBe(12.5 * LAMPORTS_PER_SOL);
    // No dev stack here; a bad address.
    const none = await sealpost(['dev', 'balance', wallet.publicKey.toBase58()], other);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('does not exist (start one with `sealpost dev`, or pass --data-dir)');
    const bad = await sealpost(['dev', 'airdrop', 'not-an-address'], dir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('expected a base58 address or a keypair file, got "not-an-address"');
  }, 120_000);
});
