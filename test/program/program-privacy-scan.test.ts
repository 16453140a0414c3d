// The privacy scan: a realistic flow through the real mail program
// (mailboxes, aliases, domains, fromboxes with stamps, relayed and direct
// sends with and without bounty or reply, pin leases, beacons, sender
// attestations, reputation, a recipient rule and a domain listing), then every account the
// program owns and every transaction log is searched for the clear text of
// email addresses, domain names, alias names and message contents. Only the
// documented public text may appear (docs/protocol.md, "Fields beyond the
// reference's public list"): a MailDomain's `domain` and a beacon's
// `detail_cid`, each in its own field; an Email's `cid` is a content address,
// not a name. A negative control proves the scanner finds an address stored
// in clear.
import { PublicKey, type TransactionInstruction } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import {
  accountKindOf,
  decodeAccount,
  encodeFrombox,
  type MailAccount,
  mailDomainLayout,
  participantBeaconLayout,
} from '../../chain/client/accounts/index.ts';
import { fromHash, replyToHash } from '../../chain/client/hash.ts';
import {
  addStampsInstruction,
  attestSenderInstruction,
  buyStampsInstruction,
  createAliasInstruction,
  createDomainInstruction,
  createFromboxInstruction,
  createMailboxInstruction,
  createPinLeaseInstruction,
  listDomainInstruction,
  publishBeaconInstruction,
  sendMailInstruction,
  setMailboxFlagsInstruction,
  setRecipientRuleInstruction,
  withReputation,
} from '../../chain/client/instructions.ts';
import { b3Marker, computeCid } from '../../src/mail/cid.ts';
import { sealMessage, walletEncryptionPublicKey } from '../../src/mail/seal/index.ts';
import { DOMAIN, expectOk, World } from '../support/program-world.ts';

const SECOND_DOMAIN = 'post.example';
const ADDRESSES = ['alice@ext.example', 'Carol.Jones+news@Bücher.example', 'dave@post.example'];
const ALIASES = ['bob.smith', 'helpdesk'];
const SUBJECT = 'Quarterly numbers for the harbour project';
const BODY = 'The gate code is 4711 and the meeting moved to Thursday.';
const BEACON_CID = 'bafkreic4tzxutumzav6f6v52z2nebaqyqgx5pnfr6kmrfiyyket2lzusty';
const LEASED_CID = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy';

/** Anything that looks like an email address, in ASCII or UTF-8 text. */
const ADDRESS_RE = /[\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+(\.[\p{L}\p{N}-]+)+/u;

interface Finding {
  where: string;
  what: string;
}

/** Clear text allowed in an account: [start, end) byte ranges of its documented text fields. */
function allowedRanges(account: MailAccount, data: Uint8Array): [number, number][] {
  if (account.kind === 'MailDomain') {
    const at = mailDomainLayout.offsets.domain as number;
    return [[at, data.length]];
  }
  if (account.kind === 'ParticipantBeacon') {
    const at = participantBeaconLayout.offsets.detailCid as number;
    return [[at, at + account.detailCidLen]];
  }
  return [];
}

function indexesOf(hay: Uint8Array, needle: Uint8Array): number[] {
  const out: number[] = [];
  const h = Buffer.from(hay);
  for (let i = h.indexOf(needle); i >= 0; i = h.indexOf(needle, i + 1)) out.push(i);
  return out;
}

/**
 * Every secret (case-insensitively, as UTF-8) and every address-shaped text
 * found in `data` outside the allowed ranges.
 */
function scanBytes(
  where: string,
  data: Uint8Array,
  secrets: string[],
  allowed: [number, number][],
): Finding[] {
  const inAllowed = (start: number, len: number) => allowed.some(([a, b]) => start >= a && start + len <= b);
  // ASCII case folding keeps byte positions (A-Z only).
  const folded = data.map((b) => (b >= 0x41 && b <= 0x5a ? b + 0x20 : b));
  const hits = new Set<string>();
  for (const s of secrets) {
    const forms = [new TextEncoder().encode(s), new TextEncoder().encode(s.toLowerCase())];
    for (const needle of forms)
      for (const hay of [data, folded])
        for (const at of indexesOf(hay, needle)) if (!inAllowed(at, needle.length)) hits.add(`${s} at ${at}`);
  }
  const found: Finding[] = [...hits].map((what) => ({ where, what }));
  const text = new TextDecoder('utf-8', { fatal: false }).decode(data);
  const m = ADDRESS_RE.exec(text);
  if (m) found.push({ where, what: `address-shaped text ${JSON.stringify(m[0])}` });
  return found;
}

/** Scans one program account; it must also decode as a known kind with no bytes to spare. */
function scanAccount(address: string, data: Uint8Array, secrets: string[]): Finding[] {
  const kind = accountKindOf(data);
  if (!kind) return [{ where: address, what: `unknown account kind ${data[0]}` }];
  let account: MailAccount;
  try {
    account = decodeAccount(data);
  } catch (err) {
    return [{ where: address, what: `${kind} does not decode exactly: ${(err as Error).message}` }];
  }
  return scanBytes(`${kind} ${address}`, data, secrets, allowedRanges(account, data));
}

describe('privacy scan of the program’s accounts and logs', () => {
  it('finds no address, domain, alias or message text beyond the documented public fields', async () => {
    const w = new World({ seed: 77 });
    const programId = w.programId;
    const touched = new Set<string>();
    const logs: string[] = [];
    const run = (...ixs: TransactionInstruction[]) => {
      for (const ix of ixs) for (const k of ix.keys) touched.add(k.pubkey.toBase58());
      const r = w.run(...ixs);
      logs.push(...r.logs);
      expectOk(r);
    };

    // Domains, mailboxes (open, gated, no_ipfs), aliases.
    run(
      createDomainInstruction({
        programId,
        delegate: w.delegate,
        domain: SECOND_DOMAIN,
        authority: w.authority,
      }),
    );
    const alice = w.wallet();
    const bob = w.wallet();
    const carol = w.wallet();
    const direct = w.wallet();
    run(createMailboxInstruction({ programId, owner: alice, domain: DOMAIN }));
    run(createMailboxInstruction({ programId, owner: bob, domain: SECOND_DOMAIN, defaultPostage: 30_000n }));
    run(createMailboxInstruction({ programId, owner: carol, domain: DOMAIN, defaultPostage: 5_000n }));
    run(setMailboxFlagsInstruction({ programId, owner: carol, noIpfs: true }));
    run(createAliasInstruction({ programId, owner: alice, name: `${ALIASES[0]}@${DOMAIN}` }));
    run(createAliasInstruction({ programId, owner: bob, name: ALIASES[1] as string }));

    // Fromboxes and stamps for relayed senders (hashes of their addresses) and a direct one.
    for (const addr of ADDRESSES) {
      run(
        createFromboxInstruction({
          programId,
          owner: bob,
          fromHash: fromHash(addr),
          requiredPostage: 10_000n,
        }),
      );
      run(
        addStampsInstruction({
          programId,
          payer: direct,
          recipient: bob,
          fromHash: fromHash(addr),
          stamps: 2n,
        }),
      );
    }
    run(buyStampsInstruction({ programId, buyer: direct, recipient: bob, stamps: 3n }));
    run(buyStampsInstruction({ programId, buyer: direct, recipient: carol, stamps: 1n }));

    // Real sealed messages: their CIDs (or b3: markers) are what reaches the chain.
    const sealed = async (to: PublicKey, from: string) => {
      const raw = new TextEncoder().encode(
        `From: ${from}\r\nTo: <${ALIASES[1]}@${SECOND_DOMAIN}>\r\nSubject: ${SUBJECT}\r\n\r\n${BODY}\r\n`,
      );
      const { sealed: bytes } = await sealMessage({
        envelope: { version: 1, from, to: `${to.toBase58()}@${DOMAIN}`, receivedAt: 1_767_225_600_000 },
        raw,
        recipientPublicKey: walletEncryptionPublicKey(to.toBytes()),
      });
      return bytes;
    };
    const send = (to: PublicKey, p: { from?: string; cid: string; bounty?: bigint; reply?: PublicKey }) => {
      const index = w.mailbox(to).mailCount;
      const relayed = p.from !== undefined;
      const ix = sendMailInstruction({
        programId,
        sender: relayed ? w.authority : direct,
        recipient: to,
        index,
        fromHash: fromHash(relayed ? (p.from as string) : direct),
        cid: p.cid,
        ...(p.bounty ? { bountyLamports: p.bounty, expiresAt: w.now + 3_600n } : {}),
        ...(p.reply ? { replyToHash: replyToHash(p.reply) } : {}),
        // A relayed send goes through the domain the recipient's mailbox names.
        ...(relayed ? { domain: to.equals(bob) ? SECOND_DOMAIN : DOMAIN } : {}),
      });
      run(relayed ? ix : withReputation(ix, { programId, sender: direct, recipient: to, applyRule: true }));
      return w.emailAddress(to, index);
    };
    for (const addr of ADDRESSES) send(bob, { from: addr, cid: await computeCid(await sealed(bob, addr)) });
    const first = send(alice, { cid: await computeCid(await sealed(alice, 'x@y.example')), bounty: 40_000n });
    send(alice, { cid: await computeCid(await sealed(alice, 'x@y.example')), reply: first });
    send(bob, { cid: await computeCid(await sealed(bob, ADDRESSES[0] as string)) });
    send(carol, { cid: b3Marker(await sealed(carol, ADDRESSES[1] as string)) });

    // Pin lease, beacon, attestations, a recipient rule (the next send uses it).
    run(
      createPinLeaseInstruction({
        programId,
        holder: alice,
        operator: bob,
        cid: LEASED_CID,
        expiresAt: w.now + 86_400n,
        feeLamports: 10_000n,
      }),
    );
    run(publishBeaconInstruction({ programId, owner: alice, tags: 5n, detailCid: BEACON_CID }));
    for (const wallet of [direct, alice])
      run(attestSenderInstruction({ programId, authority: w.authority, domain: DOMAIN, wallet }));
    run(
      setRecipientRuleInstruction({ programId, owner: bob, minReputationLamports: 1n, postageLamports: 0n }),
    );
    send(bob, { cid: await computeCid(await sealed(bob, ADDRESSES[2] as string)) });
    // The second domain offered to bob: its DomainListing names accounts and wallets, never the name.
    run(
      listDomainInstruction({
        programId,
        holder: w.authority,
        domain: SECOND_DOMAIN,
        priceLamports: 1_000_000n,
        expiresAt: w.now + 86_400n,
        buyer: bob,
      }),
    );

    // Scan every program-owned account the flow touched.
    const secrets = [
      ...ADDRESSES,
      ...ALIASES,
      DOMAIN,
      SECOND_DOMAIN,
      'Bücher.example',
      'ext.example',
      SUBJECT,
      BODY,
    ];
    const program = new PublicKey(programId);
    const kinds = new Map<string, number>();
    const findings: Finding[] = [];
    for (const key of touched) {
      const a = w.rt.account(new PublicKey(key));
      if (!a?.owner.equals(program) || a.data.length === 0) continue;
      const kind = accountKindOf(a.data) ?? 'unknown';
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      findings.push(...scanAccount(key, a.data, secrets));
    }
    // Every kind the flow writes was scanned (so an empty result means something).
    expect(Object.fromEntries(kinds)).toMatchObject({
      Mailbox: 3,
      Email: 8,
      Frombox: 5,
      Alias: 2,
      MailDomain: 2,
      Postoffice: 1,
      PinLease: 1,
      ParticipantBeacon: 1,
      SenderAttestation: 2,
      SenderReputation: 1,
      RecipientRule: 1,
      DomainListing: 1,
    });
    // The logs: the runtime's lines and the program's instruction names only.
    findings.push(...scanBytes('transaction logs', new TextEncoder().encode(logs.join('\n')), secrets, []));
    expect(logs.some((l) => l === 'Program log: Instruction: AttestSender')).toBe(true);
    expect(findings).toEqual([]);

    // The documented clear text is there, in its own field, and nowhere else.
    const domainData = w.data(w.domainAddress(SECOND_DOMAIN)) as Uint8Array;
    expect(Buffer.from(domainData).includes(Buffer.from(SECOND_DOMAIN))).toBe(true);
  });

  it('negative control: the scanner finds an address, an alias and a message line stored in clear', () => {
    const secrets = [...ADDRESSES, ...ALIASES, DOMAIN, SUBJECT];
    // A Frombox whose bytes were followed by the sender's address (as a careless layout would store it).
    const frombox = encodeFrombox({
      fromHash: fromHash(ADDRESSES[0] as string),
      recipient: PublicKey.default,
      requiredPostage: 1n,
      stamps: 0n,
      postageEscrow: 0n,
      walletStamps: false,
      bump: 255,
    });
    const leaky = Buffer.concat([Buffer.from(frombox), Buffer.from(ADDRESSES[0] as string)]);
    const found = scanAccount('leaky', leaky, secrets);
    expect(found).toHaveLength(1);
    expect(found[0]?.what).toMatch(/^Frombox does not decode exactly: .*17 trailing bytes/);
    // The same bytes in a kind that allows no text: the raw scan names each leak.
    const raw = scanBytes('raw', leaky, secrets, []);
    expect(raw.some((f) => f.what.startsWith(`${ADDRESSES[0]} at 91`))).toBe(true);
    expect(raw.some((f) => f.what.startsWith('address-shaped text "alice@ext.example"'))).toBe(true);
    // Case folding, an unlisted address, and text in a log line.
    expect(scanBytes('upper', Buffer.from('xx BOB.Smith yy'), secrets, []).map((f) => f.what)).toEqual([
      'bob.smith at 3',
    ]);
    expect(scanBytes('other', Buffer.from('\0\0zed@elsewhere.example\0'), secrets, [])).toEqual([
      { where: 'other', what: 'address-shaped text "zed@elsewhere.example"' },
    ]);
    expect(scanBytes('log', Buffer.from(`Program log: ${SUBJECT}`), secrets, []).map((f) => f.what)).toEqual([
      `${SUBJECT} at 13`,
    ]);
    // The allowed field of a MailDomain does not excuse the same text elsewhere in it.
    expect(
      scanBytes('domain', Buffer.from(`${DOMAIN}..${DOMAIN}`), secrets, [[0, DOMAIN.length]]),
    ).toHaveLength(1);
  });
});
