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

export async function walletTimelocks(
  conn: Connection,
  programId: Key,
  wallet: Key,
  chainTime: number,
): Promise<TimelockRow[]> {
  const program = toPublicKey(programId);
  const owner = toPublicKey(wallet).toBase58();
  const rows: TimelockRow[] = [];
  const ends = (kind: Parameters<typeof timelockEndsAt>[0]['kind'], requestedAt: bigint) =>
    Number(timelockEndsAt({ kind, requestedAt }));
  const closeAt = pendingCloseAddress(programId, wallet)[0];
  const [closeInfo, domains, incoming] = await Promise.all([
    conn.getAccountInfo(closeAt),
    domainsOf(conn, programId, wallet),
    listKind(conn, programId, 18, PENDING_RECLAIM_SIZE, decodePendingReclaim, [
      { offset: pendingReclaimLayout.offsets.authority, bytes: keyBytes(wallet) },
    ]),
  ]);
  if (closeInfo?.owner.equals(program)) {
    const c = decodePendingMailboxClose(new Uint8Array(closeInfo.data));
    rows.push(
      row('mailbox_close', closeAt, owner, null, ends('PendingMailboxClose', c.requestedAt), c.requestedAt),
    );
  }
  const domainName = new Map<string, string>(domains.map((d) => [d.address.toBase58(), d.domain.domain]));
  const pendingAddrs = domains.flatMap((d) => [
    pendingDeactivationAddress(programId, d.address)[0],
    pendingReclaimAddress(programId, d.address)[0],
  ]);
  const infos = pendingAddrs.length > 0 ? await conn.getMultipleAccountsInfo(pendingAddrs) : [];
  infos.forEach((info, i) => {
    const at = pendingAddrs[i] as PublicKey;
    if (!info?.owner.equals(program)) return;
    const data = new Uint8Array(info.data);
    if (data[0] === 17) {
      const d = decodePendingDeactivation(data);
      const subject = d.domain.toBase58();
      rows.push(
        row(
          'domain_deactivation',
          at,
          subject,
          domainName.get(subject) ?? null,
          ends('PendingDeactivation', d.requestedAt),
          d.requestedAt,
        ),
      );
    } else if (data[0] === 18) {
      const r = decodePendingReclaim(data);
      const subject = r.domain.toBase58();
      rows.push({
        ...row(
          'domain_reclaim',
          at,
          subject,
          domainName.get(subject) ?? null,
          ends('PendingReclaim', r.requestedAt),
          r.requestedAt,
        ),
        new_authority: r.authority.toBase58(),
        payer: r.payer.toBase58(),
      });
    }
  });
  for (const { address, account: r } of incoming) {
    const subject = r.domain.toBase58();
    rows.push({
      ...row('domain_reclaim', address, subject, null, ends('PendingReclaim', r.requestedAt), r.requestedAt),
      new_authority: r.authority.toBase58(),
      payer: r.payer.toBase58(),
      role: 'new_authority',
    });
  }
  // Names of domains the wallet is not the authority of (incoming reclaims).
  const missing = rows.filter((r) => r.kind !== 'mailbox_close' && r.domain === null);
  if (missing.length > 0) {
    const infos2 = await conn.getMultipleAccountsInfo(missing.map((r) => toPublicKey(r.subject)));
    infos2.forEach((info, i) => {
      const r = missing[i] as TimelockRow;
      if (info?.owner.equals(program) && info.data[0] === MAIL_DOMAIN_TAG)
        r.domain = decodeMailDomain(new Uint8Array(info.data)).domain;
    });
  }
  for (const r of rows) r.can_complete = chainTime >= r.ends_at;
  return rows.sort((a, b) => a.ends_at - b.ends_at || a.address.localeCompare(b.address));

  function row(
    kind: TimelockRow['kind'],
    address: PublicKey,
    subject: string,
    domain: string | null,
    endsAt: number,
    requestedAt: bigint,
  ): TimelockRow {
    return {
      kind,
      address: address.toBase58(),
      subject,
      domain,
      requested_at: Number(requestedAt),
      ends_at: endsAt,
      can_complete: false,
      role: kind === 'mailbox_close' ? 'owner' : 'authority',
    };
  }
}
