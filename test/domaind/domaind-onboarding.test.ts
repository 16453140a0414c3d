// Domain onboarding end to end over real HTTP, with the DNS double as the
// public resolver and devnet as the chain: publish the authority TXT, check
// it with GET /domain, authorize with POST /domain, find the MailDomain on
// chain. Plus every refusal: no delegate (503), missing, conflicting and
// malformed records, a domain held by another authority or listed for sale,
// bad names, resolver failures, and a delegate the postoffice does not know.
import { ComputeBudgetProgram, Keypair } from '@solana/web3.js';
import bs58 from 'bs58';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import {
  cancelDomainListingInstruction,
  createDomainInstruction,
  domainAddress,
  domainListingOf,
  getDomain,
  initPostofficeInstruction,
  listDomainInstruction,
} from '../../chain/client/index.ts';
import { parseConfig } from '../../src/core/config/index.ts';
import { createDnsResolver } from '../../src/core/dns/resolver.ts';
import { type RunningDomaind, startDomaind } from '../../src/edge/domaind/server.ts';
import { startTestChain, type TestChain } from '../support/devnet.ts';
import { type DnsDouble, startDnsDouble } from '../support/doubles/dns-server.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

interface Rig {
  chain: TestChain;
  dns: DnsDouble;
  domaind: RunningDomaind;
  delegate: Keypair;
  authority: Keypair;
  post(body: string, contentType?: string): Promise<{ status: number; body: Record<string, unknown> }>;
  get(name: string): Promise<{ status: number; body: Record<string, unknown> }>;
}

async function rig(opts: { delegate?: 'postoffice' | 'none' | 'stranger' } = {}): Promise<Rig> {
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
  const authority = Keypair.generate();
  const config = parseConfig(
    `[smtp]\nhostname = "mail.example.org"\nlocal_domains = ["example.org", "example.net"]\n` +
      `[chain]\nrpc_url = "${chain.devnet.rpcUrl}"\nprogram_id = "${chain.programId}"\n` +
      `[domaind]\nresolver = "${dns.address}"\n`,
  );
  const stranger = opts.delegate === 'stranger' ? await chain.funded() : null;
  const domaind = await startDomaind({
    config,
    host: '127.0.0.1',
    port: 0,
    connection: chain.connection,
    resolver: createDnsResolver({ servers: [dns.address], timeoutMs: 300, tries: 1 }),
    delegate: opts.delegate === 'none' ? null : (stranger ?? delegate),
    authority: authority.publicKey,
    logger: pino({ level: 'silent' }),
  });
  cleanups.push(() => domaind.close());
  const json = async (res: Response) => ({
    status: res.status,
    body: (await res.json()) as Record<string, unknown>,
  });
  return {
    chain,
    dns,
    domaind,
    delegate,
    authority,
    post: async (body, contentType = 'text/plain') =>
      json(
        await fetch(`${domaind.url}/domain`, {
          method: 'POST',
          headers: { 'content-type': contentType },
          body,
        }),
      ),
    get: async (name) => json(await fetch(`${domaind.url}/domain?name=${encodeURIComponent(name)}`)),
  };
}

const publish = (r: Rig, domain: string, ...values: string[]) =>
  r.dns.set(`_solana.authority.${domain}`, 'TXT', values);

describe('domain onboarding', () => {
  it('publish TXT, GET /domain, POST /domain, MailDomain on chain with that authority', async () => {
    const r = await rig();
    const key = r.authority.publicKey.toBase58();

    // Before publishing: nothing to find.
    expect((await r.get('example.org')).body.error).toBe('no_authority_record');

    publish(r, 'example.org', key);
    const claim = await r.get('example.org');
    expect(claim).toEqual({
      status: 200,
      body: {
        domain: 'example.org',
        domain_unicode: 'example.org',
        record_name: '_solana.authority.example.org',
        records: [key],
        authority: key,
        on_chain: null,
      },
    });

    const created = await r.post('example.org');
    expect(created.status).toBe(201);
    const mailDomain = domainAddress(r.chain.programId, 'example.org')[0].toBase58();
    expect(created.body).toEqual({
      status: 'created',
      domain: 'example.org',
      domain_unicode: 'example.org',
      mail_domain: mailDomain,
      authority: key,
      is_active: true,
      rent_payer: r.delegate.publicKey.toBase58(),
      signature: expect.stringMatching(/^[1-9A-HJ-NP-Za-km-z]{80,90}$/),
    });
    // CreateDomain goes behind a compute budget sized for it, not the 200,000-unit default.
    const landed = await r.chain.connection.getTransaction(String(created.body.signature), {
      commitment: 'confirmed',
      maxSupportedTransactionVersion: 0,
    });
    const message = landed?.transaction.message;
    const budget = (message?.compiledInstructions ?? [])
      .filter((ix) => message?.staticAccountKeys[ix.programIdIndex]?.equals(ComputeBudgetProgram.programId))
      .map((ix) => Buffer.from(ix.data));
    const limit = budget.find((d) => d[0] === 2)?.readUInt32LE(1);
    expect(limit).toBeGreaterThan(0);
    expect(limit).toBeLessThan(50_000);
    expect(budget.some((d) => d[0] === 3)).toBe(true);
    const onChain = await getDomain(r.chain.connection, r.chain.programId, 'example.org');
    expect(onChain?.authority.toBase58()).toBe(key);
    expect(onChain?.isActive).toBe(true);
    expect(onChain?.domain).toBe('example.org');

    // Asking again changes nothing and says so; GET now shows the chain agrees.
    const again = await r.post('example.org');
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({
      status: 'already_authorized',
      authority: key,
      mail_domain: mailDomain,
    });
    expect(again.body.signature).toBeUndefined();
    expect((await r.get('example.org')).body.on_chain).toMatchObject({
      authority: key,
      matches_record: true,
    });

    // The TXT may be removed after authorization; the same authority claims a second domain (JSON body).
    r.dns.remove('_solana.authority.example.org');
    publish(r, 'example.net', key, key); // a duplicated record is still one claim
    const second = await r.post(JSON.stringify({ domain: 'example.net' }), 'application/json');
    expect(second.status).toBe(201);
    expect(
      (await getDomain(r.chain.connection, r.chain.programId, 'example.net'))?.authority.toBase58(),
    ).toBe(key);
    // What `curl --data example.net` sends (a form body): the bare name, or a domain= field, is the name.
    for (const form of ['example.net', 'domain=example.net']) {
      const again = await r.post(form, 'application/x-www-form-urlencoded');
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ status: 'already_authorized', domain: 'example.net' });
    }

    // The start-up check now finds both local domains under the configured authority.
    const health = await r.domaind.runStartupCheck();
    expect(health.status).toBe('ok');
    expect(health.domains.map((d) => [d.domain, d.status])).toEqual([
      ['example.org', 'ok'],
      ['example.net', 'ok'],
    ]);
    const served = await fetch(`${r.domaind.url}/ready`);
    expect(served.status).toBe(200);
    const body = (await served.json()) as { status: string; local_domains: { status: string } };
    expect(body.status).toBe('ok');
    expect(body.local_domains.status).toBe('ok');
  });

  it('answers 503 without a delegate key, after still reading DNS', async () => {
    const r = await rig({ delegate: 'none' });
    const key = r.authority.publicKey.toBase58();
    publish(r, 'example.org', key);
    const res = await r.post('example.org');
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({
      error: 'delegate_not_configured',
      message: expect.stringContaining('delegate_key_file'),
      claim: { domain: 'example.org', authority: key },
    });
    expect((await r.get('example.org')).status).toBe(200);
    expect(await getDomain(r.chain.connection, r.chain.programId, 'example.org')).toBeNull();
  });

  it('refuses missing, conflicting and malformed authority records', async () => {
    const r = await rig();
    const key = r.authority.publicKey.toBase58();

    expect(await r.post('example.org')).toEqual({
      status: 404,
      body: {
        error: 'no_authority_record',
        message: expect.stringContaining('_solana.authority.example.org'),
        domain: 'example.org',
        record_name: '_solana.authority.example.org',
      },
    });
    r.dns.set('_solana.authority.example.org', 'A', ['192.0.2.1']); // name exists, no TXT
    expect((await r.post('example.org')).body.error).toBe('no_authority_record');

    publish(r, 'example.org', key, Keypair.generate().publicKey.toBase58());
    const conflict = await r.post('example.org');
    expect(conflict.status).toBe(409);
    expect(conflict.body).toMatchObject({
      error: 'conflicting_authority_records',
      records: [key, expect.any(String)],
    });

    const offCurve = domainAddress(r.chain.programId, 'example.org')[0].toBase58(); // a PDA is off the curve
    const smallOrder = bs58.encode(Uint8Array.from([1, ...new Array(31).fill(0)])); // the identity point
    const malformed: [string, string][] = [
      ['0OIl-not-base58', 'not base58'],
      [bs58.encode(new Uint8Array(31).fill(7)), 'decodes to 31 bytes'],
      [offCurve, 'not a point on the ed25519 curve'],
      [smallOrder, 'small-order'],
    ];
    for (const [value, reason] of malformed) {
      publish(r, 'example.org', value);
      const res = await r.post('example.org');
      expect(res.status, value).toBe(422);
      expect(res.body.error).toBe('malformed_authority_key');
      expect(res.body.message).toContain(reason);
      expect((await r.get('example.org')).status).toBe(422);
    }
    expect(await getDomain(r.chain.connection, r.chain.programId, 'example.org')).toBeNull();
  });

  it('refuses a domain already authorized to another authority', async () => {
    const r = await rig();
    const holder = Keypair.generate().publicKey;
    await r.chain.send(
      [
        createDomainInstruction({
          programId: r.chain.programId,
          delegate: r.delegate.publicKey,
          domain: 'example.org',
          authority: holder,
        }),
      ],
      [r.delegate],
    );
    publish(r, 'example.org', r.authority.publicKey.toBase58());
    const res = await r.post('example.org');
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({
      error: 'domain_taken',
      claimed_authority: r.authority.publicKey.toBase58(),
      on_chain: { authority: holder.toBase58(), domain: 'example.org' },
    });
    expect((await r.get('example.org')).body.on_chain).toMatchObject({ matches_record: false });
    // The start-up check warns about it.
    const health = await r.domaind.runStartupCheck();
    expect(health.status).toBe('warn');
    expect(health.domains[0]).toMatchObject({ domain: 'example.org', status: 'other_authority' });
    expect(health.domains[1]).toMatchObject({ domain: 'example.net', status: 'missing' });
    expect(health.warnings[0]).toContain(holder.toBase58());
  });

  it('refuses a claim while the domain is listed for sale, naming the listing, and warns at start-up', async () => {
    const r = await rig();
    const key = r.authority.publicKey.toBase58();
    publish(r, 'example.org', key);
    expect((await r.post('example.org')).status).toBe(201);
    await r.chain.airdrop(r.authority.publicKey, 1_000_000_000);
    const programId = r.chain.programId;
    const holder = r.authority.publicKey;
    await r.chain.send(
      [
        listDomainInstruction({
          programId,
          domain: 'example.org',
          holder,
          priceLamports: 1_000_000n,
          expiresAt: BigInt(Math.floor(Date.now() / 1000)) + 3_600n,
        }),
      ],
      [r.authority],
    );
    const listing = domainListingOf(programId, { domain: 'example.org' }).toBase58();
    const res = await r.post('example.org');
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ error: 'domain_taken', listed: true, on_chain: { authority: listing } });
    expect(res.body.message).toContain(
      `listed for sale on chain: its authority is its DomainListing ${listing}`,
    );
    const health = await r.domaind.runStartupCheck();
    expect(health.domains[0]).toMatchObject({ domain: 'example.org', status: 'listed' });
    expect(health.warnings[0]).toContain('relayed mail for it waits until the listing closes');

    // Returned to its holder: the claim is the chain's again.
    await r.chain.send(
      [cancelDomainListingInstruction({ programId, domain: 'example.org', signer: holder, holder })],
      [r.authority],
    );
    expect((await r.post('example.org')).body).toMatchObject({
      status: 'already_authorized',
      authority: key,
    });
  });

  it('normalizes trailing dots, case and IDN; refuses broken names', async () => {
    const r = await rig();
    const key = r.authority.publicKey.toBase58();
    publish(r, 'example.org', key);
    const upper = await r.post('  EXAMPLE.Org.\n');
    expect(upper.status).toBe(201);
    expect(upper.body.domain).toBe('example.org');

    publish(r, 'xn--bcher-kva.example', key);
    const idn = await r.post('Bücher.example');
    expect(idn.status).toBe(201);
    expect(idn.body).toMatchObject({ domain: 'xn--bcher-kva.example', domain_unicode: 'bücher.example' });
    expect((await getDomain(r.chain.connection, r.chain.programId, 'xn--bcher-kva.example'))?.domain).toBe(
      'xn--bcher-kva.example',
    );
    expect((await r.get('xn--bcher-kva.example.')).body).toMatchObject({ domain_unicode: 'bücher.example' });

    const long = await r.post(`${'a'.repeat(64)}.example`);
    expect(long).toEqual({
      status: 400,
      body: { error: 'invalid_domain', problem: 'label_too_long', message: expect.stringContaining('63') },
    });
    expect((await r.post('a..example')).body).toMatchObject({
      error: 'invalid_domain',
      problem: 'empty_label',
    });
    expect((await r.post('')).body.error).toBe('missing_domain');
    expect((await r.post('{"name": "example.org"}', 'application/json')).body.error).toBe('missing_domain');
    // A form body (curl --data) is taken as the name; other types are refused.
    expect((await r.post('exa mple.org', 'application/x-www-form-urlencoded')).body.error).toBe(
      'invalid_domain',
    );
    expect((await r.post('example.org', 'image/png')).status).toBe(415);
    const noName = await fetch(`${r.domaind.url}/domain`);
    expect(noName.status).toBe(400);
  });

  it('maps resolver failures to 502 and 504', async () => {
    const r = await rig();
    r.dns.setFault('example.org', 'servfail');
    expect(await r.post('example.org')).toEqual({
      status: 502,
      body: expect.objectContaining({ error: 'resolver_failed', resolver_error: 'servfail' }),
    });
    r.dns.setFault('example.org', 'timeout');
    expect((await r.get('example.org')).status).toBe(504);
  });

  it('says so when the delegate key is not the postoffice delegate', async () => {
    const r = await rig({ delegate: 'stranger' });
    publish(r, 'example.org', r.authority.publicKey.toBase58());
    const res = await r.post('example.org');
    expect(res.status).toBe(503);
    expect(res.body.error).toBe('delegate_not_authorized');
  });
});
