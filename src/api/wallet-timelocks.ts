// A wallet's pending timelocks (docs/protocol.md "Timelocks"), read from
// chain state when asked: its mailbox close, the deactivations and reclaims
// of the domains it is the authority of, and the reclaims that would make it
// a domain's authority. Each with the chain time its window ends.

import type { Connection, PublicKey } from '@solana/web3.js';
import bs58 from 'bs58';
import {
  decodeMailDomain,
  decodePendingDeactivation,
  decodePendingMailboxClose,
  decodePendingReclaim,
  mailDomainLayout,
  PENDING_RECLAIM_SIZE,
  type PendingDeactivation,
  type PendingMailboxClose,
  type PendingReclaim,
  pendingReclaimLayout,
} from '../../chain/accounts/index.ts';
import { type Key, keyBytes, toPublicKey } from '../../chain/bytes.ts';
import { listKind } from '../../chain/client.ts';
import { pendingCloseAddress, pendingDeactivationAddress, pendingReclaimAddress } from '../../chain/pda.ts';
import { timelockEndsAt } from '../../chain/timelock-instructions.ts';

export interface TimelockRow {
  kind: 'mailbox_close' | 'domain_deactivation' | 'domain_reclaim';
  /** The pending record's account. */
  address: string;
  /** mailbox_close: the wallet; otherwise the MailDomain account. */
  subject: string;
  /** The domain's name (domain kinds), else null. */
  domain: string | null;
  requested_at: number;
  /** Chain seconds from which it can be completed. */
  ends_at: number;
  /** The window is over at `chain_time`: it can be completed now. */
  can_complete: boolean;
  /** domain_reclaim: the authority it installs and the delegate that paid for it. */
  new_authority?: string;
  payer?: string;
  /** How this wallet is involved: the mailbox owner, the domain's authority, or the reclaim's new authority. */
  role: 'owner' | 'authority' | 'new_authority';
}

const MAIL_DOMAIN_TAG = 6;

/** The MailDomains whose authority is `wallet` (memcmp on the tag and the authority field). */
async function domainsOf(conn: Connection, programId: Key, wallet: Key) {
  const found = await conn.getProgramAccounts(toPublicKey(programId), {
    filters: [
      { memcmp: { offset: 0, bytes: bs58.encode(Uint8Array.of(MAIL_DOMAIN_TAG)) } },
      { memcmp: { offset: mailDomainLayout.offsets.authority, bytes: bs58.encode(keyBytes(wallet)) } },
    ],
  });
  return found.map(({ pubkey, account }) => ({
    address: pubkey,
    domain: decodeMailDomain(new Uint8Array(account.data)),
  }));
}

type Pending = PendingMailboxClose | PendingDeactivation | PendingReclaim;

const KIND: Record<Pending['kind'], TimelockRow['kind']> = {
  PendingMailboxClose: 'mailbox_close',
  PendingDeactivation: 'domain_deactivation',
  PendingReclaim: 'domain_reclaim',
};

function toRow(
  address: PublicKey,
  p: Pending,
  role: TimelockRow['role'],
  domain: string | null,
): TimelockRow {
  const row: TimelockRow = {
    kind: KIND[p.kind],
    address: address.toBase58(),
    subject: (p.kind === 'PendingMailboxClose' ? p.wallet : p.domain).toBase58(),
    domain,
    requested_at: Number(p.requestedAt),
    ends_at: Number(timelockEndsAt(p)),
    can_complete: false,
    role,
  };
  if (p.kind === 'PendingReclaim') {
    row.new_authority = p.authority.toBase58();
    row.payer = p.payer.toBase58();
  }
  return row;
}

export async function walletTimelocks(
  conn: Connection,
  programId: Key,
  wallet: Key,
  chainTime: number,
): Promise<TimelockRow[]> {
  const program = toPublicKey(programId);
  const closeAt = pendingCloseAddress(programId, wallet)[0];
  const [closeInfo, domains, incoming] = await Promise.all([
    conn.getAccountInfo(closeAt),
    domainsOf(conn, programId, wallet),
    listKind(conn, programId, 18, PENDING_RECLAIM_SIZE, decodePendingReclaim, [
      { offset: pendingReclaimLayout.offsets.authority, bytes: keyBytes(wallet) },
    ]),
  ]);
  const rows: TimelockRow[] = [];
  if (closeInfo?.owner.equals(program))
    rows.push(toRow(closeAt, decodePendingMailboxClose(new Uint8Array(closeInfo.data)), 'owner', null));
  // The deactivation and reclaim records of each domain the wallet is the authority of.
  const pendingAddrs = domains.flatMap((d) => [
    { at: pendingDeactivationAddress(programId, d.address)[0], domain: d.domain.domain },
    { at: pendingReclaimAddress(programId, d.address)[0], domain: d.domain.domain },
  ]);
  const infos =
    pendingAddrs.length > 0 ? await conn.getMultipleAccountsInfo(pendingAddrs.map((p) => p.at)) : [];
  infos.forEach((info, i) => {
    const { at, domain } = pendingAddrs[i] as { at: PublicKey; domain: string };
    if (!info?.owner.equals(program)) return;
    const data = new Uint8Array(info.data);
    const record =
      data[0] === 17 ? decodePendingDeactivation(data) : data[0] === 18 ? decodePendingReclaim(data) : null;
    if (record) rows.push(toRow(at, record, 'authority', domain));
  });
  // Reclaims that would make the wallet a domain's authority, with the domain's name.
  const names =
    incoming.length > 0 ? await conn.getMultipleAccountsInfo(incoming.map((r) => r.account.domain)) : [];
  incoming.forEach(({ address, account }, i) => {
    const info = names[i];
    const name =
      info?.owner.equals(program) && info.data[0] === MAIL_DOMAIN_TAG
        ? decodeMailDomain(new Uint8Array(info.data)).domain
        : null;
    rows.push(toRow(address, account, 'new_authority', name));
  });
  for (const r of rows) r.can_complete = chainTime >= r.ends_at;
  return rows.sort((a, b) => a.ends_at - b.ends_at || a.address.localeCompare(b.address));
}
