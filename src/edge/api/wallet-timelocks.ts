// A wallet's pending timelocks (docs/protocol.md "Timelocks"), read from
// chain state when asked: its mailbox close, the deactivations and reclaims
// of the domains it is the authority of, and the reclaims that would make it
// a domain's authority. Each with the chain time its window ends. The domains
// and the incoming reclaims come from the API's program index (synced by the
// caller; src/core/store/program-index.ts), the rest from getAccountInfo and
// getMultipleAccounts: no getProgramAccounts.

import type { Connection, PublicKey } from '@solana/web3.js';
import {
  decodeMailDomain,
  decodePendingDeactivation,
  decodePendingMailboxClose,
  decodePendingReclaim,
  type PendingDeactivation,
  type PendingMailboxClose,
  type PendingReclaim,
} from '../../../chain/client/accounts/index.ts';
import { type Key, toPublicKey } from '../../../chain/client/bytes.ts';
import {
  pendingCloseAddress,
  pendingDeactivationAddress,
  pendingReclaimAddress,
} from '../../../chain/client/pda.ts';
import { timelockEndsAt } from '../../../chain/client/timelock-instructions.ts';
import type { TimelockRow } from '../../contracts/api-responses.ts';
import type { ProgramIndex } from '../../core/store/program-index.ts';

export type { TimelockRow };

const MAIL_DOMAIN_TAG = 6;

const PENDING_RECLAIM_TAG = 18;

/** The indexed MailDomains whose authority is `wallet`. */
function domainsOf(index: ProgramIndex, wallet: PublicKey) {
  const out: { address: PublicKey; domain: ReturnType<typeof decodeMailDomain> }[] = [];
  for (const [address, data] of index.ofTag(MAIL_DOMAIN_TAG)) {
    const domain = decodeMailDomain(data);
    if (domain.authority.equals(wallet)) out.push({ address: toPublicKey(address), domain });
  }
  return out;
}

/** The indexed PendingReclaims that would install `wallet` as a domain's authority. */
function incomingReclaims(index: ProgramIndex, wallet: PublicKey) {
  const out: { address: PublicKey; account: PendingReclaim }[] = [];
  for (const [address, data] of index.ofTag(PENDING_RECLAIM_TAG)) {
    const account = decodePendingReclaim(data);
    if (account.authority.equals(wallet)) out.push({ address: toPublicKey(address), account });
  }
  return out;
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

/** The wallet's timelocks; `index` is the API's program index, synced by the caller. */
export async function walletTimelocks(
  conn: Connection,
  programId: Key,
  wallet: Key,
  chainTime: number,
  index: ProgramIndex,
): Promise<TimelockRow[]> {
  const program = toPublicKey(programId);
  const owner = toPublicKey(wallet);
  const closeAt = pendingCloseAddress(programId, wallet)[0];
  const domains = domainsOf(index, owner);
  const incoming = incomingReclaims(index, owner);
  const closeInfo = await conn.getAccountInfo(closeAt, 'confirmed');
  const rows: TimelockRow[] = [];
  if (closeInfo?.owner.equals(program))
    rows.push(toRow(closeAt, decodePendingMailboxClose(new Uint8Array(closeInfo.data)), 'owner', null));
  // The deactivation and reclaim records of each domain the wallet is the authority of.
  const pendingAddrs = domains.flatMap((d) => [
    { at: pendingDeactivationAddress(programId, d.address)[0], domain: d.domain.domain },
    { at: pendingReclaimAddress(programId, d.address)[0], domain: d.domain.domain },
  ]);
  const infos =
    pendingAddrs.length > 0
      ? await conn.getMultipleAccountsInfo(
          pendingAddrs.map((p) => p.at),
          'confirmed',
        )
      : [];
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
    incoming.length > 0
      ? await conn.getMultipleAccountsInfo(
          incoming.map((r) => r.account.domain),
          'confirmed',
        )
      : [];
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
