// Compute units of every mail-program instruction, measured on the committed
// binary in the real runtime (litesvm): one scenario that runs each
// instruction and each variant worth telling apart (a PDA created at an
// address that already holds lamports, long names, every kind of send).
// Shared by test/program/program-cu.test.ts (asserts the targets) and
// bench/program.ts (prints the table). Deterministic keys, so deterministic
// costs. Node only (litesvm is a native module).
import { fileURLToPath } from 'node:url';
import type { PublicKey, TransactionInstruction } from '@solana/web3.js';
import { fromHash, replyToHash } from '../../client/hash.ts';
import {
  acceptAdminInstruction,
  acceptAliasInstruction,
  addStampsInstruction,
  attestSenderInstruction,
  bidAliasInstruction,
  buyAliasInstruction,
  buyDomainInstruction,
  buyStampsInstruction,
  cancelDeactivationInstruction,
  cancelDomainListingInstruction,
  cancelListingInstruction,
  cancelMailboxCloseInstruction,
  cancelReclaimInstruction,
  claimBountyInstruction,
  closeBeaconInstruction,
  closeMailboxInstruction,
  closePinLeaseInstruction,
  closeRecipientRuleInstruction,
  createAliasInstruction,
  createDomainInstruction,
  createFromboxInstruction,
  createMailboxInstruction,
  createPinLeaseInstruction,
  DEACTIVATION_WINDOW_SECS,
  deleteMailInstruction,
  initPostofficeInstruction,
  listAliasInstruction,
  listDomainInstruction,
  offerAliasInstruction,
  proposeAdminInstruction,
  publishBeaconInstruction,
  publishKeyInstruction,
  reclaimAliasInstruction,
  reclaimFromboxStampsInstruction,
  removeKeyInstruction,
  requestDeactivationInstruction,
  requestMailboxCloseInstruction,
  requestReclaimInstruction,
  revokeAttestationInstruction,
  type SendMailParams,
  sendMailInstruction,
  setMailboxDomainInstruction,
  setMailboxFlagsInstruction,
  setRecipientRuleInstruction,
  settleAuctionInstruction,
  settleDomainTimelockInstruction,
  topUpStampsInstruction,
  updateFromboxInstruction,
  updatePostofficeInstruction,
  withdrawFeesInstruction,
  withReputation,
} from '../../client/instructions.ts';
import { mailboxAddress } from '../../client/pda.ts';
import { DOMAIN, expectOk, World } from './world.ts';

/** SendMail's budget, in compute units. */
export const SEND_MAIL_TARGET = 20_000;
/** Every other instruction's budget, in compute units. */
export const INSTRUCTION_TARGET = 50_000;
/** The program binary's budget, in bytes. */
export const PROGRAM_SIZE_TARGET = 100 * 1024;

export interface ComputeUnitsRow {
  /** Instruction and variant, e.g. `SendMail (relayed, stamp spent)`. */
  name: string;
  /** The instruction's name alone (e.g. `SendMail`). */
  instruction: string;
  /** One figure per run (runs differ by address, so by the PDA bump searches). */
  computeUnits: number[];
  target: number;
}

const CID = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy';
/** A DNS name of the maximum 253 bytes (four labels). */
export const DOMAIN_253 = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;

/**
 * Runs every instruction on a fresh world and returns the compute units of
 * each variant, in the order run. `runs` is how many times the variants that
 * derive a new address per run are repeated (each address its own bump search).
 */
/** The committed table of compute units the test keeps every row within 5 % of. */
export const CU_BASELINE = fileURLToPath(new URL('../compute-units.json', import.meta.url));

export function measureComputeUnits(opts: { runs?: number; seed?: number } = {}): ComputeUnitsRow[] {
  const runs = opts.runs ?? 12;
  const rows = new Map<string, ComputeUnitsRow>();
  const w = new World({ seed: opts.seed ?? 42, setup: false });
  const programId = w.programId;
  const measure = (name: string, ...ixs: TransactionInstruction[]): number => {
    const r = w.run(...ixs);
    expectOk(r);
    const instruction = name.replace(/ \(.*\)$/, '');
    const row = rows.get(name) ?? {
      name,
      instruction,
      computeUnits: [],
      target: instruction === 'SendMail' ? SEND_MAIL_TARGET : INSTRUCTION_TARGET,
    };
    row.computeUnits.push(r.computeUnits);
    rows.set(name, row);
    return r.computeUnits;
  };
  const times = (n: number, f: (i: number) => void) => {
    for (let i = 0; i < n; i++) f(i);
  };

  const admin = w.wallet();
  w.delegate = w.wallet();
  w.authority = w.wallet();
  measure(
    'InitPostoffice',
    initPostofficeInstruction({
      programId,
      admin,
      upgradeAuthority: w.upgradeAuthority,
      delegateAddress: w.delegate,
      stampFeeLamports: 1_000n,
      settlementSurchargeLamports: 5_000n,
    }),
  );
  const domain = (name: string) =>
    createDomainInstruction({ programId, delegate: w.delegate, domain: name, authority: w.authority });
  measure(`CreateDomain (${DOMAIN.length} bytes)`, domain(DOMAIN));
  times(runs - 1, (i) => measure(`CreateDomain (${DOMAIN.length} bytes)`, domain(`mail${i}.test`)));
  measure('CreateDomain (253 bytes)', domain(DOMAIN_253));
  times(Math.min(runs, 26) - 1, (i) =>
    measure('CreateDomain (253 bytes)', domain(String.fromCharCode(98 + i) + DOMAIN_253.slice(1))),
  );

  times(runs, () =>
    measure('CreateMailbox (no domain)', createMailboxInstruction({ programId, owner: w.wallet() })),
  );
  times(runs, () =>
    measure(
      'CreateMailbox (in a domain)',
      createMailboxInstruction({ programId, owner: w.wallet(), domain: DOMAIN }),
    ),
  );
  times(runs, () => {
    const owner = w.wallet();
    w.fund(mailboxAddress(programId, owner)[0], 1_000_000n);
    measure('CreateMailbox (address already funded)', createMailboxInstruction({ programId, owner }));
  });

  const owner = w.wallet();
  measure('CreateMailbox (no domain)', createMailboxInstruction({ programId, owner }));
  const recipient = w.wallet();
  measure(
    'CreateMailbox (in a domain)',
    createMailboxInstruction({ programId, owner: recipient, domain: DOMAIN, defaultPostage: 10_000n }),
  );
  measure(
    'SetMailboxFlags',
    setMailboxFlagsInstruction({ programId, owner, noIpfs: false, defaultPostage: 0n }),
  );
  measure('PublishKey (create)', publishKeyInstruction({ programId, owner, pubKey: w.address() }));
  measure('PublishKey (replace)', publishKeyInstruction({ programId, owner, pubKey: w.address() }));
  measure('RemoveKey', removeKeyInstruction({ programId, owner }));
  times(runs, (i) =>
    measure(
      'CreateAlias (3 bytes)',
      createAliasInstruction({ programId, owner, name: `b${i}`.padEnd(3, 'x') }),
    ),
  );
  times(runs, (i) =>
    measure(
      'CreateAlias (64 bytes)',
      createAliasInstruction({ programId, owner, name: `${i}`.padEnd(64, 'b') }),
    ),
  );

  const sender = w.wallet();
  const fh = fromHash(sender);
  measure('CreateFrombox', createFromboxInstruction({ programId, owner, fromHash: fh, requiredPostage: 0n }));
  measure('UpdateFrombox', updateFromboxInstruction({ programId, owner, fromHash: fh, requiredPostage: 0n }));
  measure(
    'BuyStamps (creates the frombox)',
    buyStampsInstruction({ programId, buyer: sender, recipient, stamps: 40n }),
  );
  measure('TopUpStamps', topUpStampsInstruction({ programId, buyer: sender, recipient, stamps: 40n }));
  const relayedHash = fromHash('alice@ext.example');
  measure(
    'CreateFrombox',
    createFromboxInstruction({ programId, owner: recipient, fromHash: relayedHash, requiredPostage: 7_000n }),
  );
  measure(
    'AddStamps',
    addStampsInstruction({ programId, payer: sender, recipient, fromHash: relayedHash, stamps: 40n }),
  );
  measure(
    'AddStamps (with a ceiling)',
    addStampsInstruction({
      programId,
      payer: sender,
      recipient,
      fromHash: relayedHash,
      stamps: 1n,
      maxPriceLamports: 1_000_000n,
    }),
  );
  measure(
    "AddStamps (on the payer's own hash)",
    addStampsInstruction({ programId, payer: sender, recipient, fromHash: fh, stamps: 1n }),
  );
  measure(
    'SetMailboxDomain (into a domain)',
    setMailboxDomainInstruction({ programId, owner, domain: DOMAIN }),
  );
  measure(
    'SetMailboxDomain (out of every domain)',
    setMailboxDomainInstruction({ programId, owner, domain: null }),
  );
  measure(
    'UpdatePostoffice (every field)',
    updatePostofficeInstruction({
      programId,
      admin,
      stampFeeLamports: 1_000n,
      settlementSurchargeLamports: 5_000n,
      delegateAddress: w.delegate,
      rootKsk: new Uint8Array(32),
    }),
  );
  measure('WithdrawFees', withdrawFeesInstruction({ programId, admin, to: admin, amountLamports: 1_000n }));

  const send = (label: string, to: PublicKey, p: Partial<SendMailParams> = {}) => {
    const index = w.mailbox(to).mailCount;
    measure(
      `SendMail (${label})`,
      sendMailInstruction({ programId, sender, recipient: to, index, fromHash: fh, cid: CID, ...p }),
    );
    return index;
  };
  // An open mailbox in the domain: relayed mail reaches only mailboxes that name the relaying domain.
  const open = w.wallet();
  measure(
    'CreateMailbox (in a domain)',
    createMailboxInstruction({ programId, owner: open, domain: DOMAIN }),
  );
  const relayed = { sender: w.authority, fromHash: relayedHash, domain: DOMAIN };
  times(runs, () => send('direct, open mailbox', open));
  times(runs, () => send('direct, allowlisted sender', owner));
  times(runs, () => send('direct, stamp spent', recipient));
  times(runs, () => send('relayed, open mailbox', open, relayed));
  times(runs, () => send('relayed, stamp spent', recipient, relayed));
  const bountied: bigint[] = [];
  times(Math.max(runs, 2), () => {
    bountied.push(send('direct, with bounty', owner, { bountyLamports: 50_000n, expiresAt: w.now + 3600n }));
  });
  times(runs, () =>
    send('direct, bounty and reply', owner, {
      bountyLamports: 50_000n,
      expiresAt: w.now + 3600n,
      replyToHash: replyToHash(w.emailAddress(owner, 0n)),
    }),
  );
  times(runs, () => send('direct, 128-byte cid', owner, { cid: 'x'.repeat(128) }));
  const [claimed = 0n, unclaimed = 0n] = bountied;
  measure('ClaimBounty', claimBountyInstruction({ programId, recipient: owner, index: claimed }));
  measure(
    'DeleteMail',
    deleteMailInstruction({ programId, signer: owner, recipient: owner, index: 0n, rentPayer: sender }),
  );
  measure(
    'DeleteMail (with an unclaimed bounty)',
    deleteMailInstruction({
      programId,
      signer: owner,
      recipient: owner,
      index: unclaimed,
      rentPayer: sender,
    }),
  );
  measure('ReclaimFromboxStamps', reclaimFromboxStampsInstruction({ programId, sender, recipient }));

  const leaseTerm = w.now + 30n * 86_400n;
  times(runs, (i) =>
    measure(
      'CreatePinLease',
      createPinLeaseInstruction({
        programId,
        holder: sender,
        operator: owner,
        cid: `${CID}${i}`,
        expiresAt: leaseTerm,
        feeLamports: 10_000n,
      }),
    ),
  );
  times(runs, (i) =>
    measure('ClosePinLease', closePinLeaseInstruction({ programId, holder: sender, cid: `${CID}${i}` })),
  );
  const publishers = Array.from({ length: runs }, () => w.wallet());
  for (const who of publishers)
    measure(
      'PublishBeacon (create)',
      publishBeaconInstruction({ programId, owner: who, tags: 5n, detailCid: CID }),
    );
  for (const who of publishers)
    measure(
      'PublishBeacon (update, 96-byte cid)',
      publishBeaconInstruction({ programId, owner: who, tags: 1n << 63n, detailCid: 'c'.repeat(96) }),
    );
  for (const who of publishers) measure('CloseBeacon', closeBeaconInstruction({ programId, owner: who }));
  measureMarket(w, measure, runs, owner);
  measureDomainMarket(w, measure, runs);

  // Timelocks: each request, its cancel, a second request, then every completion after the windows.
  const closers = Array.from({ length: runs }, () => w.wallet());
  const closeOf = (owner: PublicKey) => ({ programId, owner });
  for (const who of closers) expectOk(w.run(createMailboxInstruction({ programId, owner: who })));
  for (const who of closers) measure('RequestMailboxClose', requestMailboxCloseInstruction(closeOf(who)));
  for (const who of closers) measure('CancelMailboxClose', cancelMailboxCloseInstruction(closeOf(who)));
  for (const who of closers) expectOk(w.run(requestMailboxCloseInstruction(closeOf(who))));
  const { authority, delegate } = w;
  const claimant = w.wallet();
  const domains = Array.from({ length: runs - 1 }, (_, i) => `mail${i}.test`);
  for (const domain of domains)
    measure('RequestDeactivation', requestDeactivationInstruction({ programId, authority, domain }));
  for (const domain of domains)
    measure('CancelDeactivation', cancelDeactivationInstruction({ programId, authority, domain }));
  for (const domain of domains)
    expectOk(w.run(requestDeactivationInstruction({ programId, authority, domain })));
  const reclaim = (domain: string) =>
    requestReclaimInstruction({ programId, delegate, newAuthority: claimant, domain });
  for (const domain of domains) measure('RequestReclaim', reclaim(domain));
  for (const domain of domains)
    measure(
      'CancelReclaim',
      cancelReclaimInstruction({ programId, signer: authority, payer: delegate, domain }),
    );
  for (const domain of domains) expectOk(w.run(reclaim(domain)));
  w.advance(DEACTIVATION_WINDOW_SECS);
  for (const who of closers) measure('CloseMailbox', closeMailboxInstruction(closeOf(who)));
  for (const domain of domains)
    measure(
      'SettleDomainTimelock (reclaim)',
      settleDomainTimelockInstruction({ programId, domain, record: 'reclaim', rentTo: delegate }),
    );
  for (const domain of domains)
    measure(
      'SettleDomainTimelock (deactivation)',
      settleDomainTimelockInstruction({ programId, domain, record: 'deactivation', rentTo: claimant }),
    );

  // Sender attestations, reputation and recipient rules.
  const attested = Array.from({ length: runs }, () => w.wallet());
  const attest = { programId, authority: w.authority, payer: sender, domain: DOMAIN };
  for (const wallet of attested) measure('AttestSender', attestSenderInstruction({ ...attest, wallet }));
  for (const wallet of attested)
    measure(
      'RevokeAttestation',
      revokeAttestationInstruction({
        programId,
        signer: w.authority,
        domain: DOMAIN,
        wallet,
        rentPayer: sender,
      }),
    );
  const rule = { programId, owner: recipient, minReputationLamports: 10_000n, postageLamports: 0n };
  measure('SetRecipientRule (create)', setRecipientRuleInstruction(rule));
  measure('SetRecipientRule (replace)', setRecipientRuleInstruction({ ...rule, postageLamports: 1_000n }));
  const reputed = Array.from({ length: runs }, () => w.wallet());
  const reputedSend = (label: string, who: PublicKey, applyRule: boolean) => {
    const index = w.mailbox(recipient).mailCount;
    const ix = sendMailInstruction({
      programId,
      sender: who,
      recipient,
      index,
      fromHash: fromHash(who),
      cid: CID,
    });
    measure(`SendMail (${label})`, withReputation(ix, { programId, sender: who, recipient, applyRule }));
  };
  for (const who of reputed) {
    measure(
      'BuyStamps (creates the frombox)',
      buyStampsInstruction({ programId, buyer: who, recipient, stamps: 2n }),
    );
    reputedSend('direct, stamp, new reputation', who, false);
    reputedSend('direct, stamp, reputation', who, false);
    reputedSend('direct, recipient rule', who, true);
  }
  measure('CloseRecipientRule', closeRecipientRuleInstruction({ programId, owner: recipient }));

  // The sender takes an unclaimed bounty back once its window is over.
  const late = send('direct, with bounty', owner, { bountyLamports: 50_000n, expiresAt: w.now + 60n });
  w.advance(61n);
  measure(
    'DeleteMail (by the sender, bounty expired)',
    deleteMailInstruction({ programId, signer: sender, recipient: owner, index: late, rentPayer: sender }),
  );

  // The admin role handed over in two steps.
  const next = w.wallet();
  measure('ProposeAdmin', proposeAdminInstruction({ programId, admin, newAdmin: next }));
  measure('AcceptAdmin', acceptAdminInstruction({ programId, newAdmin: next }));
  return [...rows.values()];
}

/** The alias marketplace's instructions; `owner` has a mailbox, so it can create the aliases traded here. */
function measureMarket(
  w: World,
  measure: (name: string, ...ixs: TransactionInstruction[]) => number,
  runs: number,
  owner: PublicKey,
): void {
  const programId = w.programId;
  const [buyer, first, second, recipient] = [w.wallet(), w.wallet(), w.wallet(), w.wallet()];
  const ends = w.now + 3_600n;
  const auction = { reserveLamports: 1_000_000n, endsAt: ends, antisnipeSecs: 300n };
  for (let i = 0; i < runs; i++) {
    const [fixed, auctioned, cancelled, offered, reclaimed] = ['f', 'a', 'c', 'o', 'r'].map(
      (k) => `m${k}${i}`,
    );
    for (const name of [fixed, auctioned, cancelled, offered, reclaimed] as string[])
      expectOk(w.run(createAliasInstruction({ programId, owner, name })));
    const ref = (alias: string | undefined) => ({ programId, alias: alias as string });
    measure(
      'ListAlias (fixed price)',
      listAliasInstruction({ ...ref(fixed), holder: owner, priceLamports: 5_000_000n }),
    );
    measure('BuyAlias', buyAliasInstruction({ ...ref(fixed), buyer, holder: owner }));
    measure('ListAlias (auction)', listAliasInstruction({ ...ref(auctioned), holder: owner, auction }));
    const bid = (bidder: PublicKey, amountLamports: bigint, highBidder: PublicKey | null) =>
      bidAliasInstruction({ ...ref(auctioned), bidder, amountLamports, highBidder });
    measure('BidAlias (first bid)', bid(first, 1_000_000n, null));
    measure('BidAlias (outbid, refund)', bid(second, 2_000_000n, first));
    measure('BidAlias (raise own bid)', bid(second, 3_000_000n, second));
    measure(
      'ListAlias (fixed price)',
      listAliasInstruction({ ...ref(cancelled), holder: owner, priceLamports: 1n }),
    );
    measure('CancelListing', cancelListingInstruction({ ...ref(cancelled), holder: owner }));
    const offer = (alias: string | undefined) =>
      offerAliasInstruction({
        ...ref(alias),
        holder: owner,
        recipient,
        feeLamports: 1_000n,
        expiresAt: ends,
      });
    measure('OfferAlias', offer(offered));
    measure('AcceptAlias', acceptAliasInstruction({ ...ref(offered), recipient, holder: owner }));
    measure('OfferAlias', offer(reclaimed));
    measure('ReclaimAlias', reclaimAliasInstruction({ ...ref(reclaimed), signer: owner, holder: owner }));
  }
  w.advance(3_600n);
  for (let i = 0; i < runs; i++)
    measure(
      'SettleAuction',
      settleAuctionInstruction({ programId, alias: `ma${i}`, holder: owner, highBidder: second }),
    );
}

/**
 * The domain marketplace's instructions, on domains made for it: a sale to
 * anyone, a cancel by the holder, and a listing to a named wallet returned
 * by a third wallet after its expiry.
 */
function measureDomainMarket(
  w: World,
  measure: (name: string, ...ixs: TransactionInstruction[]) => number,
  runs: number,
): void {
  const programId = w.programId;
  const { delegate, authority } = w;
  const [buyer, named, crank] = [w.wallet(), w.wallet(), w.wallet()];
  const term = w.now + 3_600n;
  const list = (domain: string, extra: { buyer?: PublicKey } = {}) =>
    listDomainInstruction({
      programId,
      domain,
      holder: authority,
      priceLamports: 1_000_000n,
      expiresAt: term,
      ...extra,
    });
  const expiring: string[] = [];
  for (let i = 0; i < runs; i++) {
    const [sold, kept, lapsed] = ['s', 'k', 'l'].map((k) => `d${k}${i}.test`) as [string, string, string];
    for (const domain of [sold, kept, lapsed])
      expectOk(w.run(createDomainInstruction({ programId, delegate, domain, authority })));
    measure('ListDomain (anyone)', list(sold));
    measure('BuyDomain', buyDomainInstruction({ programId, domain: sold, buyer, holder: authority }));
    measure('ListDomain (anyone)', list(kept));
    measure(
      'CancelDomainListing (by the holder)',
      cancelDomainListingInstruction({ programId, domain: kept, signer: authority, holder: authority }),
    );
    measure('ListDomain (named buyer)', list(lapsed, { buyer: named }));
    expiring.push(lapsed);
  }
  w.advance(3_600n);
  for (const domain of expiring)
    measure(
      'CancelDomainListing (expired, by anyone)',
      cancelDomainListingInstruction({ programId, domain, signer: crank, holder: authority }),
    );
}
