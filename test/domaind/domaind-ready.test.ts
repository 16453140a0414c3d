// GET /ready of domaind follows the chain: a local domain reported `missing`
// at start-up is `ok` right after domaind authorized it itself (POST /domain,
// `sealpost domaind` as a child process), and after another party
// authorized it (the periodic re-read while a domain is not ok).
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Keypair } from '@solana/web3.js';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createDomainInstruction, initPostofficeInstruction } from '../../chain/client/index.ts';
import { parseConfig } from '../../src/core/config/index.ts';
import { createDnsResolver } from '../../src/core/dns/resolver.ts';
import { writeKeypairFile } from '../../src/core/keys/keypair-file.ts';
import { startDomaind } from '../../src/edge/domaind/server.ts';
import { startTestChain, type TestChain } from '../support/devnet.ts';
import { type DnsDouble, startDnsDouble } from '../support/doubles/dns-server.ts';
import { tempDir } from '../support/temp-dir.ts';

const BIN = resolve(import.meta.dirname, '..', '..', 'bin', 'sealpost.js');
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

interface Ready {
  status: string;
  local_domains: { status: string; domains: { domain: string; status: string }[]; warnings: string[] };
}

async function ready(url: string): Promise<Ready> {
  return (await (await fetch(`${url}/ready`)).json()) as Ready;
}

async function until(what: string, fn: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function chainWithPostoffice(): Promise<{ chain: TestChain; delegate: Keypair; dns: DnsDouble }> {
  const chain = await startTestChain();
  const delegate = await chain.funded();
  await chain.send(
    [
      initPostofficeInstruction({
        programId: chain.programId,
        admin: delegate.publicKey,
        upgradeAuthority: chain.upgradeAuthority.publicKey,
        delegateAddress: delegate.publicKey,
        stampFeeLamports: 0n,
        settlementSurchargeLamports: 0n,
      }),
    ],
    [delegate, chain.upgradeAuthority],
  );
  const dns = await startDnsDouble();
  cleanups.push(() => dns.close());
  return { chain, delegate, dns };
}

function keyFile(dir: string, name: string, kp: Keypair): string {
  const path = join(dir, name);
  writeKeypairFile(path, {
    secretKey: kp.secretKey,
    publicKey: kp.publicKey.toBytes(),
    address: kp.publicKey.toBase58(),
  });
  return path;
}

describe('domaind GET /ready', () => {
  it('reports a local domain ok once its own POST /domain authorized it (sealpost domaind)', async () => {
    const { chain, delegate, dns } = await chainWithPostoffice();
    const dir = tempDir('sealpost-domaind-ready-');
    const authority = Keypair.generate();
    const config = join(dir, 'sealpost.toml');
    writeFileSync(
      config,
      `[smtp]\nhostname = "mail.example.org"\nlocal_domains = ["example.org", "example.net"]\n` +
        `[chain]\nrpc_url = "${chain.devnet.rpcUrl}"\nprogram_id = "${chain.programId}"\n` +
        `authority_key_file = "${keyFile(dir, 'authority.json', authority)}"\n` +
        `delegate_key_file = "${keyFile(dir, 'delegate.json', delegate)}"\n` +
        `[domaind]\nresolver = "${dns.address}"\n[log]\nlevel = "warn"\n`,
    );
    const child: ChildProcess = spawn(
      process.execPath,
      [BIN, 'domaind', '--config', config, '--listen', '127.0.0.1:0'],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } },
    );
    cleanups.push(() => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    let out = '';
    child.stdout?.on('data', (d) => {
      out += d;
    });
    await until('domaind to listen', async () => /URL +http:\/\/\S+\n/.test(out), 30_000);
    const url = (/URL +(http:\/\/\S+)\n/.exec(out) as RegExpExecArray)[1] as string;

    await until('the start-up check', async () => (await ready(url)).local_domains.status === 'warn');
    const before = await ready(url);
    expect(before.local_domains.domains).toEqual([
      { domain: 'example.org', status: 'missing' },
      { domain: 'example.net', status: 'missing' },
    ]);

    dns.set('_solana.authority.example.org', 'TXT', [authority.publicKey.toBase58()]);
    const posted = await fetch(`${url}/domain`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'example.org',
    });
    expect(posted.status).toBe(201);
    // No wait: the answer to POST comes after /ready's state was read again.
    const after = await ready(url);
    expect(after.local_domains.domains).toEqual([
      { domain: 'example.org', status: 'ok', onChain: expect.objectContaining({ isActive: true }) },
      { domain: 'example.net', status: 'missing' },
    ]);
    expect(after.local_domains.status).toBe('warn');
    expect(after.local_domains.warnings).toEqual([
      expect.stringContaining('example.net has no MailDomain on chain'),
    ]);

    dns.set('_solana.authority.example.net', 'TXT', [authority.publicKey.toBase58()]);
    const second = await fetch(`${url}/domain`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ domain: 'example.net' }),
    });
    expect(second.status).toBe(201);
    const done = await ready(url);
    expect(done.local_domains.status).toBe('ok');
    expect(done.local_domains.warnings).toEqual([]);
    expect(done.local_domains.domains.map((d) => d.status)).toEqual(['ok', 'ok']);
  }, 90_000);

  it('reads the chain again while a domain is not ok, so one authorized elsewhere turns ok', async () => {
    const { chain, delegate, dns } = await chainWithPostoffice();
    const authority = Keypair.generate();
    const config = parseConfig(
      `[smtp]\nhostname = "mail.example.org"\nlocal_domains = ["example.org"]\n` +
        `[chain]\nrpc_url = "${chain.devnet.rpcUrl}"\nprogram_id = "${chain.programId}"\n` +
        `[domaind]\nresolver = "${dns.address}"\n`,
    );
    const domaind = await startDomaind({
      config,
      host: '127.0.0.1',
      port: 0,
      connection: chain.connection,
      resolver: createDnsResolver({ servers: [dns.address], timeoutMs: 300, tries: 1 }),
      delegate: null,
      authority: authority.publicKey,
      logger: pino({ level: 'silent' }),
      recheckMs: 200,
    });
    cleanups.push(() => domaind.close());
    await until('the start-up check', async () => (await ready(domaind.url)).local_domains.status === 'warn');
    expect((await ready(domaind.url)).local_domains.domains).toEqual([
      { domain: 'example.org', status: 'missing' },
    ]);
    // CreateDomain sent by someone else (the delegate, directly): domaind did not see it happen.
    await chain.send(
      [
        createDomainInstruction({
          programId: chain.programId,
          delegate: delegate.publicKey,
          domain: 'example.org',
          authority: authority.publicKey,
        }),
      ],
      [delegate],
    );
    await until('the periodic re-read', async () => (await ready(domaind.url)).local_domains.status === 'ok');
    expect((await ready(domaind.url)).local_domains.domains).toMatchObject([
      { domain: 'example.org', status: 'ok' },
    ]);
  }, 60_000);
});
