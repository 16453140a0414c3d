// Domain reclaim from a DNSSEC proof, end to end over real HTTP: devnet as
// the chain (its Postoffice's root_ksk is the test root's KSK digest), a
// signed root/org/example.org hierarchy from the test helper, the new
// authority signing RequestReclaim, domaind verifying and co-signing. A
// valid chain puts a PendingReclaim on chain; every broken link, a TXT
// naming another wallet and every bad transaction is refused with a named
// error and nothing on chain. The CLI's `reclaim proof` collects a chain from
// the DNS double serving the signed zones, and `reclaim submit` drives the route.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ComputeBudgetProgram,
  Keypair,
  type PublicKey,
  SystemProgram,
  type Transaction,
} from '@solana/web3.js';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createDomainInstruction,
  getDomain,
  getPendingReclaim,
  initPostofficeInstruction,
  requestDeactivationInstruction,
} from '../../chain/client/index.ts';
import { parseConfig } from '../../src/core/config/index.ts';
import { createDnsResolver } from '../../src/core/dns/resolver.ts';
import { reclaimTransaction } from '../../src/edge/domaind/reclaim.ts';
import { type RunningDomaind, startDomaind } from '../../src/edge/domaind/server.ts';
import { startTestChain, type TestChain } from '../support/devnet.ts';
import {
  buildReclaimChain,
  type HierarchyKeys,
  makeHierarchyKeys,
  type ReclaimChainOptions,
  serveChain,
} from '../support/dnssec-zones.ts';
import { startDnsDouble } from '../support/doubles/dns-server.ts';
import { keyFile, sealpost } from '../support/program-cli.ts';
import { tempDir } from '../support/temp-dir.ts';

const DOMAIN = 'example.org';
const TEST_MS = 120_000;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');

interface Rig {
  chain: TestChain;
  domaind: RunningDomaind;
  delegate: Keypair;
  holder: Keypair;
  keys: HierarchyKeys;
  /** A proof for `txt` (default: the given wallet) under the rig's root. */
  proof(txt: string[], opts?: Partial<ReclaimChainOptions>): Buffer;
  /** RequestReclaim for `signer`, signed by it, with a fresh blockhash. */
  signed(signer: Keypair, build?: (tx: Transaction) => Transaction): Promise<Buffer>;
  post(body: unknown): Promise<{ status: number; body: Record<string, unknown> }>;
  /** POSTs a valid proof naming `signer` with its signed transaction. */
  claim(signer: Keypair): Promise<{ status: number; body: Record<string, unknown> }>;
}

async function rig(opts: { rootKsk?: Uint8Array; delegate?: 'postoffice' | 'none' } = {}): Promise<Rig> {
  const chain = await startTestChain();
  const delegate = await chain.funded();
  const keys = makeHierarchyKeys(DOMAIN);
  const now = () => Math.floor(Date.now() / 1000);
  const anchor = buildReclaimChain({ domain: DOMAIN, txt: ['x'], now: now(), keys }).anchor;
  const holder = Keypair.generate();
  await chain.send(
    [
      initPostofficeInstruction({
        programId: chain.programId,
        admin: delegate.publicKey,
        upgradeAuthority: chain.upgradeAuthority.publicKey,
        delegateAddress: delegate.publicKey,
        rootKsk: opts.rootKsk ?? anchor,
        stampFeeLamports: 0n,
        settlementSurchargeLamports: 0n,
      }),
      createDomainInstruction({
        programId: chain.programId,
        delegate: delegate.publicKey,
        domain: DOMAIN,
        authority: holder.publicKey,
      }),
    ],
    [delegate, chain.upgradeAuthority],
  );
  const config = parseConfig(
    `[smtp]\nhostname = "mail.example.org"\nlocal_domains = ["example.org"]\n` +
      `[chain]\nrpc_url = "${chain.devnet.rpcUrl}"\nprogram_id = "${chain.programId}"\n` +
      `[domaind]\nresolver = "127.0.0.1:9"\n`,
  );
  const domaind = await startDomaind({
    config,
    host: '127.0.0.1',
    port: 0,
    connection: chain.connection,
    resolver: createDnsResolver({ servers: ['127.0.0.1:9'], timeoutMs: 100, tries: 1 }),
    delegate: opts.delegate === 'none' ? null : delegate,
    authority: null,
    logger: pino({ level: 'silent' }),
  });
  cleanups.push(() => domaind.close());
  const self: Rig = {
    chain,
    domaind,
    delegate,
    holder,
    keys,
    proof: (txt, more = {}) => buildReclaimChain({ domain: DOMAIN, txt, now: now(), keys, ...more }).proof(),
    async signed(signer, build = (tx) => tx) {
      const { blockhash } = await chain.connection.getLatestBlockhash('confirmed');
      const tx = build(
        reclaimTransaction({
          programId: chain.programId,
          delegate: delegate.publicKey,
          newAuthority: signer.publicKey,
          domain: DOMAIN,
          recentBlockhash: blockhash,
        }),
      );
      tx.partialSign(signer);
      return tx.serialize({ requireAllSignatures: false });
    },
    async post(body) {
      const res = await fetch(`${domaind.url}/domain/reclaim`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    },
    async claim(signer) {
      const proof = self.proof([signer.publicKey.toBase58()]);
      return self.post({ domain: DOMAIN, proof: b64(proof), transaction: b64(await self.signed(signer)) });
    },
  };
  return self;
}

const wallet = (k: { publicKey: PublicKey }) => k.publicKey.toBase58();

async function nothingOnChain(r: Rig): Promise<void> {
  expect(await getPendingReclaim(r.chain.connection, r.chain.programId, DOMAIN)).toBeNull();
  expect((await getDomain(r.chain.connection, r.chain.programId, DOMAIN))?.authority.toBase58()).toBe(
    wallet(r.holder),
  );
}

describe('POST /domain/reclaim', () => {
  it(
    'a valid chain starts the reclaim on chain; a second request is refused as pending',
    async () => {
      const r = await rig();
      const next = Keypair.generate();
      const res = await r.claim(next);
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        status: 'requested',
        domain: DOMAIN,
        authority: wallet(r.holder),
        new_authority: wallet(next),
        payer: wallet(r.delegate),
        proof: { zones: ['.', 'org.', 'example.org.'], root_key_tag: r.keys.rootKsk.tag },
        signature: expect.stringMatching(/^[1-9A-HJ-NP-Za-km-z]{80,90}$/),
      });
      const pending = await getPendingReclaim(r.chain.connection, r.chain.programId, DOMAIN);
      expect(pending?.authority.toBase58()).toBe(wallet(next));
      expect(pending?.payer.toBase58()).toBe(wallet(r.delegate));
      expect(
        Date.parse(res.body.window_ends_at as string) - Date.parse(res.body.requested_at as string),
      ).toBe(14 * 86_400_000);

      const again = await r.claim(next);
      expect(again.status).toBe(409);
      expect(again.body).toMatchObject({ error: 'reclaim_pending', new_authority: wallet(next) });

      // The proven key already holding the domain: nothing to do.
      const same = await r.claim(r.holder);
      expect(same.status).toBe(200);
      expect(same.body).toMatchObject({ status: 'already_authorized', authority: wallet(r.holder) });
    },
    TEST_MS,
  );

  it(
    'takes RequestReclaim behind a compute budget sized for it, up to the priority fee the delegate pays',
    async () => {
      const r = await rig();
      const next = Keypair.generate();
      const proof = b64(r.proof([wallet(next)]));
      const priced = async (
        microLamportsPerCu: bigint,
        build: (tx: Transaction) => Transaction = (t) => t,
      ) => {
        const { blockhash } = await r.chain.connection.getLatestBlockhash('confirmed');
        const tx = build(
          reclaimTransaction({
            programId: r.chain.programId,
            delegate: r.delegate.publicKey,
            newAuthority: next.publicKey,
            domain: DOMAIN,
            recentBlockhash: blockhash,
            microLamportsPerCu,
          }),
        );
        tx.partialSign(next);
        return r.post({
          domain: DOMAIN,
          proof,
          transaction: b64(tx.serialize({ requireAllSignatures: false })),
        });
      };
      // 10^9 µlamports/CU: a priority fee far past the default 100,000-lamport cap.
      const dear = await priced(1_000_000_000n);
      expect(dear.status).toBe(422);
      expect(dear.body).toMatchObject({
        error: 'priority_fee_too_high',
        max_priority_fee_lamports: '100000',
      });
      // Another unit limit than the one sized for RequestReclaim is not that transaction.
      const padded = await priced(1000n, (tx) => {
        tx.instructions[0] = ComputeBudgetProgram.setComputeUnitLimit({ units: 1_400_000 });
        return tx;
      });
      expect(padded.body).toMatchObject({ error: 'transaction_mismatch' });
      await nothingOnChain(r);

      const ok = await priced(1000n);
      expect(ok.status).toBe(201);
      const landed = await r.chain.connection.getTransaction(String(ok.body.signature), {
        commitment: 'confirmed',
        maxSupportedTransactionVersion: 0,
      });
      const message = landed?.transaction.message;
      const budget = (message?.compiledInstructions ?? []).filter((ix) =>
        message?.staticAccountKeys[ix.programIdIndex]?.equals(ComputeBudgetProgram.programId),
      );
      expect(budget.map((ix) => Buffer.from(ix.data)[0])).toEqual([2, 3]);
      expect(Buffer.from(budget[0]?.data ?? []).readUInt32LE(1)).toBeLessThan(50_000);
    },
    TEST_MS,
  );

  it(
    'wrong root key, expired RRSIG, broken DS link, another wallet, tampered RDATA: named errors, nothing on chain',
    async () => {
      const r = await rig();
      const next = Keypair.generate();
      const tx = async () => b64(await r.signed(next));
      const now = Math.floor(Date.now() / 1000);

      const otherRoot = buildReclaimChain({ domain: DOMAIN, txt: [wallet(next)], now }).proof();
      const expired = r.proof([wallet(next)], { windows: { txt: [now - 7200, now - 3600] } });
      const brokenDs = r.proof([wallet(next)], { strayDomainDs: true });
      const anotherWallet = r.proof([wallet(Keypair.generate())]);
      const tampered = Buffer.from(r.proof([wallet(next)]));
      // The TXT RDATA is the key's text just before the last record (its RRSIG); flip one character.
      const at = tampered.lastIndexOf(Buffer.from(wallet(next)));
      tampered[at + 3] = tampered[at + 3] === 0x41 ? 0x42 : 0x41;

      const cases: [string, Buffer, number, Record<string, unknown>][] = [
        ['wrong root key', otherRoot, 422, { error: 'dnssec_root_key_mismatch', link: '. DNSKEY' }],
        [
          'expired RRSIG',
          expired,
          422,
          {
            error: 'dnssec_signature_expired',
            link: `_solana.authority.${DOMAIN}. TXT`,
            zone: 'example.org.',
          },
        ],
        [
          'broken DS link',
          brokenDs,
          422,
          { error: 'dnssec_ds_mismatch', link: 'example.org. DS', zone: 'org.' },
        ],
        [
          'another wallet',
          anotherWallet,
          422,
          { error: 'authority_mismatch', transaction_signers: [wallet(next)] },
        ],
        [
          'tampered RDATA',
          tampered,
          422,
          { error: 'dnssec_bad_signature', link: `_solana.authority.${DOMAIN}. TXT` },
        ],
      ];
      for (const [what, proof, status, body] of cases) {
        const res = await r.post({ domain: DOMAIN, proof: b64(proof), transaction: await tx() });
        expect({ what, status: res.status, body: res.body }).toMatchObject({ what, status, body });
        expect(res.body.message, what).toEqual(expect.any(String));
        await nothingOnChain(r);
      }
    },
    TEST_MS,
  );

  it(
    'refuses transactions that are not exactly the signed RequestReclaim, and bad request bodies',
    async () => {
      const r = await rig();
      const next = Keypair.generate();
      const proof = b64(r.proof([wallet(next)]));
      const post = async (transaction: Uint8Array | string, more: Record<string, unknown> = {}) =>
        r.post({
          domain: DOMAIN,
          proof,
          transaction: typeof transaction === 'string' ? transaction : b64(transaction),
          ...more,
        });

      // An extra instruction riding along (a transfer from the delegate).
      const extra = await r.signed(next, (tx) =>
        tx.add(
          SystemProgram.transfer({
            fromPubkey: r.delegate.publicKey,
            toPubkey: next.publicKey,
            lamports: 1_000_000,
          }),
        ),
      );
      expect((await post(extra)).body).toMatchObject({ error: 'transaction_mismatch' });
      // Another instruction in its place.
      const other = await r.signed(next, (tx) => {
        tx.instructions = [
          requestDeactivationInstruction({
            programId: r.chain.programId,
            authority: next.publicKey,
            domain: DOMAIN,
          }),
        ];
        return tx;
      });
      expect((await post(other)).body).toMatchObject({ error: 'transaction_mismatch' });
      // Not signed by the new authority (its signature slot left empty).
      const { blockhash } = await r.chain.connection.getLatestBlockhash('confirmed');
      const unsigned = reclaimTransaction({
        programId: r.chain.programId,
        delegate: r.delegate.publicKey,
        newAuthority: next.publicKey,
        domain: DOMAIN,
        recentBlockhash: blockhash,
      }).serialize({ requireAllSignatures: false, verifySignatures: false });
      const res = await post(unsigned);
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({ error: 'authority_signature_invalid' });
      // The new authority's signature (the second of the two, after the count octet) damaged.
      const forged = Buffer.from(await r.signed(next));
      forged[1 + 64 + 10] = (forged[1 + 64 + 10] as number) ^ 0xff;
      expect((await post(forged)).body).toMatchObject({ error: 'authority_signature_invalid' });

      expect(await post('not base64!')).toMatchObject({
        status: 400,
        body: { error: 'invalid_reclaim_request' },
      });
      expect(await post(b64(Buffer.from('garbage')))).toMatchObject({
        status: 400,
        body: { error: 'invalid_reclaim_request' },
      });
      expect(await r.post({ domain: DOMAIN, proof })).toMatchObject({
        status: 400,
        body: { error: 'invalid_reclaim_request' },
      });
      expect(await post(await r.signed(next), { proof: b64(Buffer.from([1, 2, 3])) })).toMatchObject({
        status: 400,
        body: { error: 'dnssec_malformed' },
      });
      expect(await post(await r.signed(next), { domain: 'not a domain' })).toMatchObject({
        status: 400,
        body: { error: 'invalid_domain' },
      });
      await nothingOnChain(r);
    },
    TEST_MS,
  );

  it(
    'answers 503 without a trust anchor or without a delegate key',
    async () => {
      const unset = await rig({ rootKsk: new Uint8Array(32) });
      const next = Keypair.generate();
      const res = await unset.claim(next);
      expect(res).toMatchObject({ status: 503, body: { error: 'root_ksk_not_set' } });

      const none = await rig({ delegate: 'none' });
      const noDelegate = await none.claim(next);
      expect(noDelegate).toMatchObject({
        status: 503,
        body: { error: 'delegate_not_configured', new_authority: wallet(next) },
      });
      await nothingOnChain(none);
    },
    TEST_MS,
  );

  it(
    'sealpost timelock domain reclaim proof collects the chain from a resolver; submit sends it and prints the pending reclaim',
    async () => {
      const r = await rig();
      const cwd = tempDir('sealpost-reclaim-');
      const next = keyFile(cwd, 'next.json', Keypair.generate());
      const proofFile = join(cwd, 'proof.bin');
      const at = [
        '--rpc',
        r.chain.devnet.rpcUrl,
        '--program-id',
        r.chain.programId,
        '--domaind',
        r.domaind.url,
      ];
      const args = ['timelock', 'domain', 'reclaim', 'submit', '--domain', DOMAIN, '--proof', proofFile];

      writeFileSync(proofFile, r.proof([wallet(Keypair.generate())]));
      const refused = await sealpost([...args, '--new-authority-key', next.path, ...at], cwd);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/refused the reclaim \(422 authority_mismatch\)/);
      await nothingOnChain(r);

      // The proof collected from a resolver serving the signed zones (RRSIGs with the DO bit).
      const dns = await startDnsDouble();
      cleanups.push(() => dns.close());
      const proofArgs = [
        'timelock',
        'domain',
        'reclaim',
        'proof',
        '--domain',
        DOMAIN,
        '--resolver',
        dns.address,
        '--out',
        proofFile,
      ];
      const absent = await sealpost(proofArgs, cwd);
      expect(absent.code).toBe(1);
      expect(absent.stderr).toMatch(/no TXT record at _solana\.authority\.example\.org \(NXDOMAIN\)/);
      dns.set(`_solana.authority.${DOMAIN}`, 'TXT', [wallet(next.kp)]);
      const unsigned = await sealpost(proofArgs, cwd);
      expect(unsigned.code).toBe(1);
      expect(unsigned.stderr).toMatch(/came without an RRSIG: the zone is not signed/);
      const before = dns.queries.length;
      serveChain(
        dns,
        buildReclaimChain({
          domain: DOMAIN,
          txt: [wallet(next.kp)],
          now: Math.floor(Date.now() / 1000),
          keys: r.keys,
        }).records,
      );
      const collected = await sealpost(
        [
          'timelock',
          'domain',
          'reclaim',
          'proof',
          '--domain',
          DOMAIN,
          '--resolver',
          dns.address,
          '--out',
          proofFile,
        ],
        cwd,
      );
      expect(collected.code, collected.stderr).toBe(0);
      expect(collected.stdout).toMatch(
        /^wrote the DNSSEC chain of _solana\.authority\.example\.org \(\d+ bytes\)/,
      );
      expect(dns.queries.slice(before).map((q) => `${q.name} ${q.type}`)).toEqual([
        '_solana.authority.example.org TXT',
        ' DNSKEY',
        'org DS',
        'org DNSKEY',
        'example.org DS',
        'example.org DNSKEY',
      ]);
      const ok = await sealpost([...args, '--new-authority-key', next.path, '--json', ...at], cwd);
      expect({ code: ok.code, stderr: ok.stderr.replace(/^sealpost: dist\/.*\n/m, '') }).toEqual({
        code: 0,
        stderr: '',
      });
      expect(JSON.parse(ok.stdout)).toMatchObject({ status: 'requested', new_authority: wallet(next.kp) });
      const pending = await getPendingReclaim(r.chain.connection, r.chain.programId, DOMAIN);
      expect(pending?.authority.toBase58()).toBe(wallet(next.kp));
    },
    TEST_MS,
  );
});
