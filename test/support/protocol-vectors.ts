// The test vectors of docs/protocol.md ("Test vectors"), computed with the
// project's own code: chain/ (hashes, PDAs, instruction builders, account
// codecs), src/mail/cid.ts (CIDs and their blocks) and src/mail/seal/ (the sealed
// object). test/program/protocol-vectors.test.ts compares the result with the
// committed docs/vectors/protocol-vectors.json.
//
// Regenerate after a deliberate protocol change (the sealed object is kept
// unless --new-seal is given, since sealing is randomized):
//   node --import tsx test/support/protocol-vectors.ts --write [--new-seal]
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type AccountMeta, Keypair, PublicKey, type TransactionInstruction } from '@solana/web3.js';
import {
  BEACON_DETAIL_CID_CAPACITY,
  encodeAccount,
  type MailAccount,
} from '../../chain/client/accounts/index.ts';
import { aliasNameHash, domainNameHash, fromHash, replyToHash } from '../../chain/client/hash.ts';
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
  deleteMailInstruction,
  initPostofficeInstruction,
  listAliasInstruction,
  listDomainInstruction,
  offerAliasInstruction,
  pinLeaseCidHash,
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
} from '../../chain/client/instructions.ts';
import { LOADER_ID, programDataAddress } from '../../chain/client/loader.ts';
import {
  aliasAddress,
  aliasBidAddress,
  aliasEscrowAddress,
  aliasListingAddress,
  attestationAddress,
  beaconAddress,
  domainAddress,
  domainListingAddress,
  emailAddress,
  fromboxAddress,
  mailboxAddress,
  mailboxKeyAddress,
  type Pda,
  pendingCloseAddress,
  pendingDeactivationAddress,
  pendingReclaimAddress,
  pinLeaseAddress,
  postofficeAddress,
  recipientRuleAddress,
  reputationAddress,
} from '../../chain/client/pda.ts';
import { DEFAULT_PROGRAM_ID } from '../../chain/client/program-id.ts';
import { b3Marker, CHUNK_SIZE, computeCid, importUnixfs } from '../../src/mail/cid.ts';
import { sealMessage, walletEncryptionKeypair } from '../../src/mail/seal/index.ts';

export const VECTORS_PATH = join(
  dirname(fileURLToPath(import.meta.url)),
  '../../docs/vectors/protocol-vectors.json',
);

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const fill = (byte: number): Uint8Array => new Uint8Array(32).fill(byte);

/**
 * The fixed wallets: ed25519 keypairs from 32-byte seeds of one repeated byte.
 * `deployer` is the program's upgrade authority (co-signs InitPostoffice, and
 * receives WithdrawFees); `successor` is the key the admin hands its role to.
 */
const WALLET_SEEDS = {
  admin: 0x01,
  delegate: 0x02,
  authority: 0x03,
  recipient: 0x04,
  sender: 0x05,
  deployer: 0x06,
  successor: 0x07,
} as const;
type WalletName = keyof typeof WALLET_SEEDS;
const wallet = (name: WalletName): Keypair => Keypair.fromSeed(fill(WALLET_SEEDS[name]));

const PROGRAM_ID = DEFAULT_PROGRAM_ID;
const DOMAIN = 'mail.example';
const RELAYED_FROM = 'alice@example.org';
const ALIAS_TYPED = 'Bob.Smith@mail.example';
const ALIAS = 'bob.smith';
const ALIAS_KEY = (): PublicKey => aliasAddress(PROGRAM_ID, ALIAS)[0];
const CID_HELLO = 'bafkreicysg23kiwv34eg2d7qweipxwosdo2py4ldv42nbauguluen5v6am';
const B3_CID = `b3:${'ab'.repeat(32)}`;
const EPOCH = 1_767_225_600n; // 2026-01-01T00:00:00Z
const EXPIRES_AT = EPOCH + 7n * 86_400n;
/** Tags 1 and 3. */
const BEACON_TAGS = 0b1010n;

/** The envelope sender forms of the from_hash table, each with the text docs/protocol.md says is hashed. */
export const FROM_HASH_INPUTS: readonly (readonly [input: string, hashedText: string])[] = [
  ['alice@example.org', 'alice@example.org'],
  ['Alice@Example.ORG', 'Alice@example.org'],
  ['alice@EXAMPLE.org', 'alice@example.org'],
  ['Alice@bücher.example', 'Alice@bücher.example'],
  ['Alice@BÜCHER.example', 'Alice@bücher.example'],
  ['Alice@xn--bcher-kva.example', 'Alice@bücher.example'],
  ['"a b"+tag@Example.org', '"a b"+tag@example.org'],
  ['', ''],
];

function pattern(length: number): Uint8Array {
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++) out[i] = i % 251;
  return out;
}

function pdaVector(name: string, seeds: string, pda: Pda) {
  return { account: name, seeds, address: pda[0].toBase58(), bump: pda[1] };
}

function ixVector(name: string, ix: TransactionInstruction, roles: string[]) {
  if (roles.length !== ix.keys.length)
    throw new Error(`${name}: ${ix.keys.length} accounts, ${roles.length} roles`);
  return {
    instruction: name,
    tag: ix.data[0],
    data_hex: hex(ix.data),
    accounts: ix.keys.map((k: AccountMeta, i) => ({
      role: roles[i],
      pubkey: k.pubkey.toBase58(),
      signer: k.isSigner,
      writable: k.isWritable,
    })),
  };
}

/** Every block of one import, in the order the importer writes them, plus root and leaves. */
async function dagOf(bytes: Uint8Array) {
  const blocks = new Map<string, Uint8Array>();
  const storage = {
    put: async (cid: { toString(): string }, block: Uint8Array) => {
      blocks.set(cid.toString(), block);
      return cid;
    },
  };
  // biome-ignore lint/suspicious/noExplicitAny: the importer's storage type wants a full CID; this one only records.
  const imported = await importUnixfs(bytes, storage as any);
  return { imported, blocks };
}

async function cidVectors() {
  const three = pattern(2 * CHUNK_SIZE + 1);
  const a = await dagOf(three);
  const root = a.blocks.get(a.imported.cid.toString());
  if (!root) throw new Error('no root block');
  const threeChunks = {
    input: '2 × 262144 + 1 bytes, byte i = i mod 251',
    length: three.length,
    cid: a.imported.cid.toString(),
    leaves: a.imported.leaves.map((cid, i) => ({
      cid: cid.toString(),
      offset: i * CHUNK_SIZE,
      length: Math.min(CHUNK_SIZE, three.length - i * CHUNK_SIZE),
    })),
    root_block_hex: hex(root),
    root_block_length: root.length,
    root_tsize: root.length + three.length,
  };

  // 175 leaves: one full node of 174 links and a node with the one leaf left over, under a root.
  const two = pattern(174 * CHUNK_SIZE + 1);
  const b = await dagOf(two);
  const top = b.blocks.get(b.imported.cid.toString());
  if (!top) throw new Error('no root block');
  const nodes = [...b.blocks.entries()].filter(
    ([cid]) => cid.startsWith('bafybei') && cid !== b.imported.cid.toString(),
  );
  const full = nodes.find(([, block]) => block.length > 1000);
  const single = nodes.find(([, block]) => block.length < 1000);
  if (!full || !single || nodes.length !== 2) throw new Error('unexpected two-level shape');
  const twoLevels = {
    input: '174 × 262144 + 1 bytes, byte i = i mod 251',
    length: two.length,
    cid: b.imported.cid.toString(),
    root_block_hex: hex(top),
    full_node: { cid: full[0], block_length: full[1].length, tsize: full[1].length + 174 * CHUNK_SIZE },
    last_node: { cid: single[0], block_hex: hex(single[1]), tsize: single[1].length + 1 },
    last_leaf: { cid: b.imported.leaves[174]?.toString(), offset: 174 * CHUNK_SIZE, length: 1 },
  };

  const single1 = {
    input: 'hello\\n',
    cid: await computeCid(new TextEncoder().encode('hello\n')),
  };
  return { single_block: single1, three_chunks: threeChunks, two_levels: twoLevels };
}

function fromHashVectors(sender: PublicKey) {
  const rows = FROM_HASH_INPUTS.map(([input, hashedText]) => ({
    input,
    hashed_text: hashedText,
    hash_hex: hex(fromHash(input)),
  }));
  const direct = sender.toBase58();
  return [{ input: direct, hashed_text: direct, hash_hex: hex(fromHash(sender)) }, ...rows];
}

function instructionVectors() {
  const [admin, delegate, authority, recipient, sender, deployer] = (
    ['admin', 'delegate', 'authority', 'recipient', 'sender', 'deployer'] as const
  ).map((n) => wallet(n).publicKey) as [PublicKey, PublicKey, PublicKey, PublicKey, PublicKey, PublicKey];
  const programId = PROGRAM_ID;
  const relayedHash = fromHash(RELAYED_FROM);
  const readerPub = walletEncryptionKeypair(wallet('recipient').secretKey).publicKey;
  return [
    ixVector(
      'InitPostoffice',
      initPostofficeInstruction({
        programId,
        admin,
        upgradeAuthority: deployer,
        delegateAddress: delegate,
        stampFeeLamports: 5_000n,
        settlementSurchargeLamports: 10_000n,
        rootKsk: fill(0x11),
        commitmentRoot: fill(0x22),
      }),
      ['payer/admin', 'postoffice', 'System', 'program_data', 'upgrade_authority'],
    ),
    ixVector(
      'CreateMailbox',
      createMailboxInstruction({
        programId,
        owner: recipient,
        payer: admin,
        defaultPostage: 1_000_000n,
        domain: DOMAIN,
      }),
      ['payer', 'owner', 'mailbox', 'System', 'mail_domain'],
    ),
    ixVector('CreateMailbox (no domain)', createMailboxInstruction({ programId, owner: sender }), [
      'payer',
      'owner',
      'mailbox',
      'System',
    ]),
    ixVector('SetMailboxFlags', setMailboxFlagsInstruction({ programId, owner: recipient, noIpfs: true }), [
      'owner',
      'mailbox',
    ]),
    ixVector(
      'PublishKey',
      publishKeyInstruction({ programId, owner: recipient, pubKey: hexKey(readerPub) }),
      ['owner', 'mailbox', 'mailbox_key', 'System'],
    ),
    ixVector('RemoveKey', removeKeyInstruction({ programId, owner: recipient }), ['owner', 'mailbox_key']),
    ixVector('CreateDomain', createDomainInstruction({ programId, delegate, domain: DOMAIN, authority }), [
      'delegate',
      'postoffice',
      'mail_domain',
      'System',
    ]),
    ixVector(
      'SendMail (relayed)',
      sendMailInstruction({
        programId,
        sender: authority,
        recipient,
        index: 0n,
        fromHash: relayedHash,
        cid: CID_HELLO,
        domain: DOMAIN,
      }),
      [
        'sender',
        'recipient mailbox',
        'email',
        'frombox',
        'recipient wallet',
        'postoffice',
        'System',
        'mail_domain',
      ],
    ),
    ixVector(
      'SendMail (direct)',
      sendMailInstruction({
        programId,
        sender,
        recipient,
        index: 1n,
        fromHash: fromHash(sender),
        cid: B3_CID,
        bountyLamports: 50_000_000n,
        expiresAt: EXPIRES_AT,
        replyToHash: replyToHash(emailAddress(programId, recipient, 0n)[0]),
      }),
      ['sender', 'recipient mailbox', 'email', 'frombox', 'recipient wallet', 'postoffice', 'System'],
    ),
    ixVector(
      'DeleteMail',
      deleteMailInstruction({ programId, signer: recipient, recipient, index: 0n, rentPayer: authority }),
      ['signer', 'email', 'rent_payer'],
    ),
    ixVector('CreateAlias', createAliasInstruction({ programId, owner: recipient, name: ALIAS_TYPED }), [
      'owner',
      "owner's mailbox",
      'alias',
      'System',
    ]),
    ixVector(
      'CreateFrombox',
      createFromboxInstruction({ programId, owner: recipient, fromHash: relayedHash, requiredPostage: 0n }),
      ['owner', "owner's mailbox", 'frombox', 'System'],
    ),
    ixVector(
      'UpdateFrombox',
      updateFromboxInstruction({
        programId,
        owner: recipient,
        fromHash: relayedHash,
        requiredPostage: 250_000n,
      }),
      ['owner', "owner's mailbox", 'frombox'],
    ),
    ixVector(
      'AddStamps',
      addStampsInstruction({
        programId,
        payer: sender,
        recipient,
        fromHash: relayedHash,
        stamps: 3n,
        maxPriceLamports: 265_000n,
      }),
      ['payer', 'recipient mailbox', 'frombox', 'postoffice', 'System'],
    ),
    ixVector(
      'BuyStamps',
      buyStampsInstruction({ programId, buyer: sender, recipient, stamps: 2n, maxPriceLamports: 1_015_000n }),
      ['buyer', 'recipient mailbox', 'frombox', 'postoffice', 'System'],
    ),
    ixVector('TopUpStamps', topUpStampsInstruction({ programId, buyer: sender, recipient, stamps: 1n }), [
      'buyer',
      'recipient mailbox',
      'frombox',
      'postoffice',
      'System',
    ]),
    ixVector('ReclaimFromboxStamps', reclaimFromboxStampsInstruction({ programId, sender, recipient }), [
      'sender wallet',
      'recipient mailbox',
      'frombox',
    ]),
    ixVector('ClaimBounty', claimBountyInstruction({ programId, recipient, index: 1n }), [
      'recipient',
      'email',
    ]),
    ixVector(
      'CreatePinLease',
      createPinLeaseInstruction({
        programId,
        holder: sender,
        operator: authority,
        cid: CID_HELLO,
        expiresAt: EXPIRES_AT,
        feeLamports: 1_000_000n,
      }),
      ['holder', 'operator', 'pin_lease', 'System'],
    ),
    ixVector('ClosePinLease', closePinLeaseInstruction({ programId, holder: sender, cid: CID_HELLO }), [
      'holder',
      'pin_lease',
    ]),
    ixVector(
      'PublishBeacon',
      publishBeaconInstruction({ programId, owner: recipient, tags: BEACON_TAGS, detailCid: CID_HELLO }),
      ['owner', 'beacon', 'System'],
    ),
    ixVector('CloseBeacon', closeBeaconInstruction({ programId, owner: recipient }), ['owner', 'beacon']),
    // Timelocks: `recipient` closes its mailbox; `authority` deactivates mail.example; the
    // delegate reclaims it for `sender`.
    ixVector('RequestMailboxClose', requestMailboxCloseInstruction({ programId, owner: recipient }), [
      'owner',
      'mailbox',
      'pending_close',
      'System',
    ]),
    ixVector('CancelMailboxClose', cancelMailboxCloseInstruction({ programId, owner: recipient }), [
      'owner',
      'pending_close',
    ]),
    ixVector('CloseMailbox', closeMailboxInstruction({ programId, owner: recipient }), [
      'owner',
      'mailbox',
      'pending_close',
    ]),
    ixVector(
      'RequestDeactivation',
      requestDeactivationInstruction({ programId, authority, domain: DOMAIN }),
      ['authority', 'mail_domain', 'pending_deactivation', 'System'],
    ),
    ixVector('CancelDeactivation', cancelDeactivationInstruction({ programId, authority, domain: DOMAIN }), [
      'authority',
      'mail_domain',
      'pending_deactivation',
    ]),
    ixVector(
      'RequestReclaim',
      requestReclaimInstruction({ programId, delegate, newAuthority: sender, domain: DOMAIN }),
      ['delegate', 'new_authority', 'postoffice', 'mail_domain', 'pending_reclaim', 'System'],
    ),
    ixVector(
      'CancelReclaim',
      cancelReclaimInstruction({ programId, signer: authority, payer: delegate, domain: DOMAIN }),
      ['signer', 'mail_domain', 'pending_reclaim', 'payer'],
    ),
    ixVector(
      'SettleDomainTimelock (deactivation)',
      settleDomainTimelockInstruction({
        programId,
        domain: DOMAIN,
        record: 'deactivation',
        rentTo: authority,
      }),
      ['mail_domain', 'pending_deactivation', 'rent_to'],
    ),
    ixVector(
      'SettleDomainTimelock (reclaim)',
      settleDomainTimelockInstruction({ programId, domain: DOMAIN, record: 'reclaim', rentTo: delegate }),
      ['mail_domain', 'pending_reclaim', 'rent_to'],
    ),
    ixVector(
      'AttestSender',
      attestSenderInstruction({ programId, authority, payer: admin, domain: DOMAIN, wallet: sender }),
      ['authority', 'payer', 'mail_domain', 'attestation', 'System'],
    ),
    ixVector(
      'RevokeAttestation',
      revokeAttestationInstruction({
        programId,
        signer: authority,
        domain: DOMAIN,
        wallet: sender,
        rentPayer: admin,
      }),
      ['signer', 'attestation', 'rent_payer', 'mail_domain'],
    ),
    ixVector(
      'SetRecipientRule',
      setRecipientRuleInstruction({
        programId,
        owner: recipient,
        minReputationLamports: 1_000_000n,
        postageLamports: 0n,
      }),
      ['owner', "owner's mailbox", 'recipient_rule', 'System'],
    ),
    ixVector('CloseRecipientRule', closeRecipientRuleInstruction({ programId, owner: recipient }), [
      'owner',
      'recipient_rule',
    ]),
    ixVector(
      'SetMailboxDomain',
      setMailboxDomainInstruction({ programId, owner: recipient, domain: DOMAIN }),
      ['owner', 'mailbox', 'mail_domain'],
    ),
    ixVector(
      'SetMailboxDomain (leave)',
      setMailboxDomainInstruction({ programId, owner: recipient, domain: null }),
      ['owner', 'mailbox'],
    ),
    ...marketInstructionVectors(recipient, sender, authority),
    ...domainMarketInstructionVectors(authority, sender, recipient),
    ...adminInstructionVectors(admin, deployer, wallet('successor').publicKey),
  ];
}

/** The postoffice's admin: `admin` changes the fee and the root KSK, withdraws to `deployer`, hands over to `successor`. */
function adminInstructionVectors(admin: PublicKey, deployer: PublicKey, successor: PublicKey) {
  const programId = PROGRAM_ID;
  return [
    ixVector(
      'UpdatePostoffice',
      updatePostofficeInstruction({ programId, admin, stampFeeLamports: 6_000n, rootKsk: fill(0x33) }),
      ['admin', 'postoffice'],
    ),
    ixVector(
      'WithdrawFees',
      withdrawFeesInstruction({ programId, admin, to: deployer, amountLamports: 15_000n }),
      ['admin', 'postoffice', 'to'],
    ),
    ixVector('ProposeAdmin', proposeAdminInstruction({ programId, admin, newAdmin: successor }), [
      'admin',
      'postoffice',
    ]),
    ixVector('AcceptAdmin', acceptAdminInstruction({ programId, newAdmin: successor }), [
      'new admin',
      'postoffice',
    ]),
  ];
}

/** The domain marketplace: `authority` lists DOMAIN, to anyone or to `recipient`; `sender` buys or cancels. */
function domainMarketInstructionVectors(authority: PublicKey, sender: PublicKey, recipient: PublicKey) {
  const programId = PROGRAM_ID;
  const domain = DOMAIN;
  const listed = [
    'holder',
    'mail_domain',
    'domain_listing',
    'pending_deactivation',
    'pending_reclaim',
    'System',
  ];
  return [
    ixVector(
      'ListDomain (anyone)',
      listDomainInstruction({
        programId,
        holder: authority,
        domain,
        priceLamports: 5_000_000_000n,
        expiresAt: EXPIRES_AT,
      }),
      listed,
    ),
    ixVector(
      'ListDomain (named buyer, a gift)',
      listDomainInstruction({
        programId,
        holder: authority,
        domain,
        priceLamports: 0n,
        expiresAt: EXPIRES_AT,
        buyer: recipient,
      }),
      listed,
    ),
    ixVector('BuyDomain', buyDomainInstruction({ programId, buyer: sender, domain, holder: authority }), [
      'buyer',
      'mail_domain',
      'domain_listing',
      'holder',
      'pending_reclaim',
      'System',
    ]),
    ixVector(
      'CancelDomainListing',
      cancelDomainListingInstruction({ programId, signer: sender, domain, holder: authority }),
      ['signer', 'mail_domain', 'domain_listing', 'holder'],
    ),
  ];
}

/** The alias marketplace: `recipient` trades ALIAS; `sender` bids over `authority`, then `authority` gets an offer. */
function marketInstructionVectors(recipient: PublicKey, sender: PublicKey, authority: PublicKey) {
  const programId = PROGRAM_ID;
  const alias = ALIAS;
  return [
    ixVector(
      'ListAlias (fixed price)',
      listAliasInstruction({ programId, holder: recipient, alias, priceLamports: 2_000_000_000n }),
      ['holder', 'alias', 'alias_listing', 'System'],
    ),
    ixVector(
      'ListAlias (auction)',
      listAliasInstruction({
        programId,
        holder: recipient,
        alias,
        auction: { reserveLamports: 1_000_000_000n, endsAt: EXPIRES_AT, antisnipeSecs: 600n },
      }),
      ['holder', 'alias', 'alias_listing', 'System'],
    ),
    ixVector(
      'BidAlias',
      bidAliasInstruction({
        programId,
        bidder: sender,
        alias,
        amountLamports: 1_500_000_000n,
        highBidder: authority,
      }),
      ['bidder', 'alias_listing', 'alias_bid', 'System', 'previous alias_bid', 'previous bidder'],
    ),
    ixVector('BuyAlias', buyAliasInstruction({ programId, buyer: sender, alias, holder: recipient }), [
      'buyer',
      'alias_listing',
      'alias',
      'holder',
      'System',
    ]),
    ixVector(
      'SettleAuction',
      settleAuctionInstruction({ programId, alias, holder: recipient, highBidder: sender }),
      ['alias_listing', 'alias', 'holder', 'alias_bid', 'bidder'],
    ),
    ixVector('CancelListing', cancelListingInstruction({ programId, holder: recipient, alias }), [
      'holder',
      'alias_listing',
      'alias',
    ]),
    ixVector(
      'OfferAlias',
      offerAliasInstruction({
        programId,
        holder: recipient,
        alias,
        recipient: authority,
        feeLamports: 100_000_000n,
        expiresAt: EXPIRES_AT,
      }),
      ['holder', 'alias', 'alias_escrow', 'System'],
    ),
    ixVector(
      'AcceptAlias',
      acceptAliasInstruction({ programId, recipient: authority, alias, holder: recipient }),
      ['recipient', 'alias_escrow', 'alias', 'holder', 'System'],
    ),
    ixVector(
      'ReclaimAlias',
      reclaimAliasInstruction({ programId, signer: sender, alias, holder: recipient }),
      ['signer', 'alias_escrow', 'alias', 'holder'],
    ),
  ];
}

function hexKey(bytes: Uint8Array): PublicKey {
  return new PublicKey(bytes);
}

function pdaVectors() {
  const recipient = wallet('recipient').publicKey;
  const sender = wallet('sender').publicKey;
  return [
    pdaVector('Mailbox', '["mailbox", recipient]', mailboxAddress(PROGRAM_ID, recipient)),
    pdaVector('MailboxKey', '["mailbox_key", recipient]', mailboxKeyAddress(PROGRAM_ID, recipient)),
    pdaVector('Email', '["email", recipient, 0u64 LE]', emailAddress(PROGRAM_ID, recipient, 0n)),
    pdaVector('Email', '["email", recipient, 1u64 LE]', emailAddress(PROGRAM_ID, recipient, 1n)),
    pdaVector(
      'Frombox',
      `["frombox", from_hash("${RELAYED_FROM}"), recipient]`,
      fromboxAddress(PROGRAM_ID, fromHash(RELAYED_FROM), recipient),
    ),
    pdaVector(
      'Frombox',
      '["frombox", from_hash(sender), recipient]',
      fromboxAddress(PROGRAM_ID, fromHash(sender), recipient),
    ),
    pdaVector('Alias', `["alias", blake3("${ALIAS}")]`, aliasAddress(PROGRAM_ID, ALIAS)),
    pdaVector('MailDomain', `["domain", blake3("${DOMAIN}")]`, domainAddress(PROGRAM_ID, DOMAIN)),
    pdaVector('Postoffice', '["postoffice"]', postofficeAddress(PROGRAM_ID)),
    pdaVector(
      'PinLease',
      `["pin_lease", blake3("${CID_HELLO}"), sender]`,
      pinLeaseAddress(PROGRAM_ID, pinLeaseCidHash(CID_HELLO), sender),
    ),
    pdaVector('ParticipantBeacon', '["beacon", recipient]', beaconAddress(PROGRAM_ID, recipient)),
    pdaVector(
      'AliasListing',
      `["alias_listing", alias("${ALIAS}")]`,
      aliasListingAddress(PROGRAM_ID, ALIAS_KEY()),
    ),
    pdaVector(
      'DomainListing',
      `["domain_listing", domain("${DOMAIN}")]`,
      domainListingAddress(PROGRAM_ID, domainAddress(PROGRAM_ID, DOMAIN)[0]),
    ),
    pdaVector(
      'AliasEscrow',
      `["alias_escrow", alias("${ALIAS}")]`,
      aliasEscrowAddress(PROGRAM_ID, ALIAS_KEY()),
    ),
    pdaVector(
      'AliasBid',
      `["alias_bid", alias_listing("${ALIAS}"), sender]`,
      aliasBidAddress(PROGRAM_ID, aliasListingAddress(PROGRAM_ID, ALIAS_KEY())[0], sender),
    ),
    pdaVector(
      'PendingMailboxClose',
      '["pending_close", recipient]',
      pendingCloseAddress(PROGRAM_ID, recipient),
    ),
    pdaVector(
      'PendingDeactivation',
      `["pending_deactivation", domain("${DOMAIN}")]`,
      pendingDeactivationAddress(PROGRAM_ID, domainAddress(PROGRAM_ID, DOMAIN)[0]),
    ),
    pdaVector(
      'PendingReclaim',
      `["pending_reclaim", domain("${DOMAIN}")]`,
      pendingReclaimAddress(PROGRAM_ID, domainAddress(PROGRAM_ID, DOMAIN)[0]),
    ),
    pdaVector(
      'SenderAttestation',
      `["attestation", domain("${DOMAIN}"), sender]`,
      attestationAddress(PROGRAM_ID, domainAddress(PROGRAM_ID, DOMAIN)[0], sender),
    ),
    pdaVector('SenderReputation', '["reputation", sender]', reputationAddress(PROGRAM_ID, sender)),
    pdaVector('RecipientRule', '["recipient_rule", recipient]', recipientRuleAddress(PROGRAM_ID, recipient)),
  ];
}

/** InitPostoffice's fourth account: the upgradeable loader's PDA of the program id, not one of the program's. */
function programDataVector() {
  const programId = new PublicKey(PROGRAM_ID);
  const [address, bump] = PublicKey.findProgramAddressSync([programId.toBytes()], LOADER_ID);
  if (!address.equals(programDataAddress(programId))) throw new Error('programDataAddress disagrees');
  return { loader: LOADER_ID.toBase58(), seeds: '[program_id]', address: address.toBase58(), bump };
}

function accountVectors() {
  const admin = wallet('admin').publicKey;
  const delegate = wallet('delegate').publicKey;
  const authority = wallet('authority').publicKey;
  const recipient = wallet('recipient').publicKey;
  const sender = wallet('sender').publicKey;
  const readerPub = walletEncryptionKeypair(wallet('recipient').secretKey).publicKey;
  const domain = domainAddress(PROGRAM_ID, DOMAIN);
  const accounts: [string, MailAccount][] = [
    [
      'Mailbox',
      {
        kind: 'Mailbox',
        owner: recipient,
        mailCount: 2n,
        defaultPostage: 1_000_000n,
        domain: domain[0],
        noIpfs: true,
        bump: mailboxAddress(PROGRAM_ID, recipient)[1],
      },
    ],
    [
      'MailboxKey',
      {
        kind: 'MailboxKey',
        owner: recipient,
        pubKey: hexKey(readerPub),
        bump: mailboxKeyAddress(PROGRAM_ID, recipient)[1],
      },
    ],
    [
      'Email',
      {
        kind: 'Email',
        recipient,
        sender,
        fromHash: fromHash(sender),
        index: 1n,
        epoch: EPOCH,
        bountyLamports: 50_000_000n,
        expiresAt: EXPIRES_AT,
        replyToHash: replyToHash(emailAddress(PROGRAM_ID, recipient, 0n)[0]),
        rentPayer: sender,
        bump: emailAddress(PROGRAM_ID, recipient, 1n)[1],
        cid: B3_CID,
      },
    ],
    [
      'Frombox',
      {
        kind: 'Frombox',
        fromHash: fromHash(RELAYED_FROM),
        recipient,
        requiredPostage: 250_000n,
        stamps: 3n,
        postageEscrow: 3_000_000n,
        walletStamps: false,
        bump: fromboxAddress(PROGRAM_ID, fromHash(RELAYED_FROM), recipient)[1],
      },
    ],
    [
      // The sender wallet's own frombox after BuyStamps 2 at the mailbox's default postage.
      'Frombox (wallet stamps)',
      {
        kind: 'Frombox',
        fromHash: fromHash(sender),
        recipient,
        requiredPostage: 1_000_000n,
        stamps: 2n,
        postageEscrow: 2_000_000n,
        walletStamps: true,
        bump: fromboxAddress(PROGRAM_ID, fromHash(sender), recipient)[1],
      },
    ],
    [
      'Alias',
      {
        kind: 'Alias',
        nameHash: aliasNameHash(ALIAS),
        address: recipient,
        owner: recipient,
        bump: aliasAddress(PROGRAM_ID, ALIAS)[1],
      },
    ],
    [
      'MailDomain',
      {
        kind: 'MailDomain',
        isActive: true,
        authority,
        rentPayer: delegate,
        nameHash: domainNameHash(DOMAIN),
        bump: domain[1],
        domain: DOMAIN,
      },
    ],
    [
      'Postoffice',
      {
        kind: 'Postoffice',
        admin,
        rootKsk: fill(0x11),
        delegateAddress: delegate,
        commitmentRoot: fill(0x22),
        stampFeeLamports: 5_000n,
        settlementSurchargeLamports: 10_000n,
        feesCollected: 15_000n,
        pendingAdmin: wallet('successor').publicKey,
        bump: postofficeAddress(PROGRAM_ID)[1],
      },
    ],
    [
      'ParticipantBeacon',
      {
        kind: 'ParticipantBeacon',
        owner: recipient,
        tags: BEACON_TAGS,
        createdAt: EPOCH,
        updatedAt: EPOCH + 3_600n,
        bump: beaconAddress(PROGRAM_ID, recipient)[1],
        detailCidLen: CID_HELLO.length,
        detailCid: (() => {
          const out = new Uint8Array(BEACON_DETAIL_CID_CAPACITY);
          out.set(new TextEncoder().encode(CID_HELLO));
          return out;
        })(),
      },
    ],
    [
      'PinLease',
      {
        kind: 'PinLease',
        cidHash: pinLeaseCidHash(CID_HELLO),
        holder: sender,
        operator: authority,
        createdAt: EPOCH,
        expiresAt: EXPIRES_AT,
        feeLamports: 1_000_000n,
        bump: pinLeaseAddress(PROGRAM_ID, pinLeaseCidHash(CID_HELLO), sender)[1],
      },
    ],
    [
      'PendingMailboxClose',
      {
        kind: 'PendingMailboxClose',
        wallet: recipient,
        requestedAt: EPOCH,
        bump: pendingCloseAddress(PROGRAM_ID, recipient)[1],
      },
    ],
    [
      'PendingDeactivation',
      {
        kind: 'PendingDeactivation',
        domain: domain[0],
        requestedAt: EPOCH,
        bump: pendingDeactivationAddress(PROGRAM_ID, domain[0])[1],
      },
    ],
    [
      'PendingReclaim',
      {
        kind: 'PendingReclaim',
        domain: domain[0],
        requestedAt: EPOCH,
        authority: sender,
        payer: delegate,
        bump: pendingReclaimAddress(PROGRAM_ID, domain[0])[1],
      },
    ],
    [
      'SenderAttestation',
      {
        kind: 'SenderAttestation',
        domain: domain[0],
        wallet: sender,
        authority,
        rentPayer: admin,
        attestedAt: EPOCH,
        bump: attestationAddress(PROGRAM_ID, domain[0], sender)[1],
      },
    ],
    [
      'SenderReputation',
      {
        kind: 'SenderReputation',
        wallet: sender,
        cumulativeSpendLamports: 1_000_000n,
        updatedAt: EPOCH + 3_600n,
        bump: reputationAddress(PROGRAM_ID, sender)[1],
      },
    ],
    [
      'RecipientRule',
      {
        kind: 'RecipientRule',
        owner: recipient,
        minReputationLamports: 1_000_000n,
        postageLamports: 0n,
        bump: recipientRuleAddress(PROGRAM_ID, recipient)[1],
      },
    ],
  ];
  const listing = aliasListingAddress(PROGRAM_ID, ALIAS_KEY());
  accounts.push(
    [
      'AliasListing',
      {
        kind: 'AliasListing',
        alias: ALIAS_KEY(),
        holder: recipient,
        priceLamports: 1_000_000_000n,
        createdAt: EPOCH,
        expiresAt: EXPIRES_AT,
        mode: 1,
        antisnipeWindowSecs: 600n,
        highBidLamports: 1_500_000_000n,
        highBidder: sender,
        bump: listing[1],
      },
    ],
    [
      'AliasBid',
      {
        kind: 'AliasBid',
        listing: listing[0],
        bidder: sender,
        amountLamports: 1_500_000_000n,
        bidAt: EPOCH + 3_600n,
        bump: aliasBidAddress(PROGRAM_ID, listing[0], sender)[1],
      },
    ],
    [
      'DomainListing',
      {
        kind: 'DomainListing',
        domain: domain[0],
        holder: authority,
        buyer: recipient,
        priceLamports: 250_000_000n,
        createdAt: EPOCH,
        expiresAt: EXPIRES_AT,
        bump: domainListingAddress(PROGRAM_ID, domain[0])[1],
      },
    ],
    [
      'AliasEscrow',
      {
        kind: 'AliasEscrow',
        alias: ALIAS_KEY(),
        holder: recipient,
        recipient: authority,
        feeLamports: 100_000_000n,
        offeredAt: EPOCH,
        expiresAt: EXPIRES_AT,
        bump: aliasEscrowAddress(PROGRAM_ID, ALIAS_KEY())[1],
      },
    ],
  );
  return accounts.map(([name, account]) => ({ account: name, data_hex: hex(encodeAccount(account)) }));
}

/** Everything but the sealed object, which is randomized and checked by opening it. */
export async function computeDeterministicVectors() {
  const names = Object.keys(WALLET_SEEDS) as WalletName[];
  return {
    program_id: PROGRAM_ID,
    wallets: names.map((name) => ({
      name,
      seed_hex: hex(fill(WALLET_SEEDS[name])),
      pubkey: wallet(name).publicKey.toBase58(),
    })),
    from_hash: fromHashVectors(wallet('sender').publicKey),
    pdas: pdaVectors(),
    program_data: programDataVector(),
    instructions: instructionVectors(),
    accounts: accountVectors(),
    cid: await cidVectors(),
  };
}

/** The inputs of the sealed-object vector (the output bytes are stored, not recomputed). */
export function sealInputs() {
  const recipient = wallet('recipient');
  const reader = walletEncryptionKeypair(recipient.secretKey);
  const raw = new TextEncoder().encode(
    `From: ${RELAYED_FROM}\r\nTo: ${recipient.publicKey.toBase58()}@${DOMAIN}\r\nSubject: vector\r\n\r\nHello.\r\n`,
  );
  return {
    recipientWallet: recipient.publicKey.toBase58(),
    reader,
    contentKey: new Uint8Array(32).fill(0x42),
    chunkSize: 64,
    envelope: {
      version: 1 as const,
      from: RELAYED_FROM,
      to: `${recipient.publicKey.toBase58()}@${DOMAIN}`,
      receivedAt: Number(EPOCH) * 1000,
    },
    raw,
  };
}

async function newSealVector() {
  const s = sealInputs();
  const { sealed } = await sealMessage({
    envelope: s.envelope,
    raw: s.raw,
    recipientPublicKey: s.reader.publicKey,
    chunkSize: s.chunkSize,
    randomBytes: (n) => s.contentKey.slice(0, n),
  });
  return {
    recipient_wallet: s.recipientWallet,
    reader_x25519_public_hex: hex(s.reader.publicKey),
    reader_x25519_secret_hex: hex(s.reader.secretKey),
    content_key_hex: hex(s.contentKey),
    chunk_size: s.chunkSize,
    envelope: { from: s.envelope.from, to: s.envelope.to, received_at_ms: s.envelope.receivedAt },
    raw_text: new TextDecoder().decode(s.raw),
    sealed_hex: hex(sealed),
    cid: await computeCid(sealed),
    b3_marker: b3Marker(sealed),
  };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (!args.includes('--write')) throw new Error('usage: protocol-vectors.ts --write [--new-seal]');
  let seal: unknown;
  if (!args.includes('--new-seal')) {
    try {
      seal = JSON.parse(readFileSync(VECTORS_PATH, 'utf8')).seal;
    } catch {
      seal = undefined;
    }
  }
  const vectors = { ...(await computeDeterministicVectors()), seal: seal ?? (await newSealVector()) };
  writeFileSync(VECTORS_PATH, `${JSON.stringify(vectors, null, 2)}\n`);
  console.log(`wrote ${VECTORS_PATH}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
