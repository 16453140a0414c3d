// `sealpost account rewrap`: gives mail delivered before the mail password
// existed (or before a reset) a wrap for the account's IMAP/POP3 reader key,
// so it shows over IMAP and POP3. Only the holder can do this: the operator's
// store has such a message's content key sealed to the wallet (or its
// published mailbox key) alone. So the command runs with the holder's key,
// where the store is (it opens the config's store and blob store): it opens
// each message's own wrap with the key, wraps the content key again for the
// reader key's public half, and stores that wrap. The key is used in this
// process's memory only and written nowhere.
//
// IMAP clients have seen the folder's UIDNEXT, so a message must not appear
// under an old UID: each rewrapped message first gets a new UID in its own
// folder (the store's move, which also takes a new mod-sequence), then its
// wrap. A crash in between leaves messages renumbered but still hidden, and
// running the command again finishes them.
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { openBlobStore } from '../../../core/blobs/open-blob-store.ts';
import { KeypairFileError, readKeypairFile } from '../../../core/keys/keypair-file.ts';
import { FoldersRepo, MessagesRepo, openStore, type StoredMessage } from '../../../core/store/index.ts';
import { getReaderKey } from '../../../mail/reader-keys/index.ts';
import {
  openContentKey,
  parseMailboxKeyFile,
  type ReaderKeypair,
  walletEncryptionKeypair,
  wrapContentKey,
} from '../../../mail/seal/index.ts';
import { addServerOptions, CliError, loadCliConfig } from '../../common.ts';

interface RewrapOptions {
  key: string;
  mailboxKey?: string;
  config?: string;
  dataDir?: string;
  dryRun?: boolean;
}

export interface RewrapResult {
  /** Messages that had no wrap for the reader key. */
  missing: number;
  rewrapped: number;
  /** Sealed to a key not given (a mailbox key), or a damaged or absent blob. */
  unopened: { id: string; reason: string }[];
}

const HELP = `
Mail delivered before the account had a mail password (or before a
--reset of it) has no wrap for the IMAP/POP3 reader key and does not show
over IMAP and POP3. This command adds those wraps with the wallet key:
the key opens each such message's own wrap, here, and the content key is
wrapped again for the reader key. The messages then appear in their folders
as new messages (new UIDs), and IMAP clients fetch them.

It works on the store directly, so run it where the deployment's config and
data are (the server, a \`docker compose run\` of the image, or next to
\`sealpost dev\` with --config .data/sealpost.toml). The wallet key is used
in memory only. Mail sealed to a published mailbox key (a delegated
encryption key) needs that key too: --mailbox-key FILE.

Exit status: 0 done (also when nothing was missing); 1 the key file is
unusable, the account has no mail password yet (set one first with
\`sealpost account password\`), or some messages could not be opened (listed;
the others are done); 2 usage or config errors.

Examples:
  $ sealpost account rewrap --key wallet.json --config /etc/sealpost/sealpost.toml
  $ npx sealpost account rewrap --key .data/keys/wallet-open.json --config .data/sealpost.toml`;

function readKeys(opts: RewrapOptions): { address: string; readers: ReaderKeypair[] } {
  try {
    const wallet = readKeypairFile(opts.key);
    const readers = [walletEncryptionKeypair(wallet.secretKey)];
    if (opts.mailboxKey !== undefined) {
      readers.push(parseMailboxKeyFile(readFileSync(opts.mailboxKey, 'utf8'), opts.mailboxKey));
    }
    return { address: wallet.address, readers };
  } catch (err) {
    if (err instanceof KeypairFileError) throw new CliError(`${err.message}; nothing was changed`);
    throw new CliError(`${(err as Error).message}; nothing was changed`);
  }
}

async function contentKey(sealed: Uint8Array, readers: ReaderKeypair[]): Promise<Uint8Array> {
  let last: Error | null = null;
  for (const reader of readers) {
    try {
      return await openContentKey(sealed, reader);
    } catch (err) {
      last = err as Error;
    }
  }
  throw last ?? new Error('no key to open it with');
}

export async function rewrapAccount(opts: RewrapOptions): Promise<RewrapResult> {
  const { address, readers } = readKeys(opts);
  const { config } = loadCliConfig(opts);
  const store = await openStore({ url: config.store.url, dataDir: config.store.data_dir });
  try {
    const reader = await getReaderKey(store.db, address);
    if (!reader) {
      throw new CliError(
        `wallet ${address} has no IMAP/POP3 reader key on this server: set the mail password first ` +
          '(`sealpost account password`); nothing was changed',
      );
    }
    const blobs = openBlobStore(config, store);
    const messages = new MessagesRepo(store.db);
    const pending: { message: StoredMessage; wrap: string }[] = [];
    const result: RewrapResult = { missing: 0, rewrapped: 0, unopened: [] };
    let after: string | undefined;
    for (;;) {
      const page = await messages.listForWallet(address, { after, limit: 500 });
      if (page.length === 0) break;
      after = page.at(-1)?.id;
      for (const message of page) {
        if (message.deletedAt !== null) continue;
        if (await messages.getReaderWrap(message.id, reader.readerId)) continue;
        result.missing++;
        try {
          const sealed = new Uint8Array(await blobs.read(message.blobKey));
          const key = await contentKey(sealed, readers);
          const wrap = Buffer.from(await wrapContentKey(key, reader.publicKey)).toString('base64');
          key.fill(0);
          pending.push({ message, wrap });
        } catch (err) {
          result.unopened.push({ id: message.id, reason: (err as Error).message });
        }
      }
    }
    if (opts.dryRun) return result;
    // New UIDs first (per folder, in the order they were delivered), then the wraps.
    const folders = new FoldersRepo(store.db);
    const byFolder = new Map<string, StoredMessage[]>();
    for (const { message } of pending)
      byFolder.set(message.mailboxId, [...(byFolder.get(message.mailboxId) ?? []), message]);
    for (const [mailboxId, list] of byFolder) {
      list.sort((a, b) => a.uid - b.uid);
      await folders.moveMessages(
        address,
        list.map((m) => m.id),
        mailboxId,
      );
    }
    for (const { message, wrap } of pending) {
      await messages.addReaderWrap(message.id, address, reader.readerId, wrap);
      result.rewrapped++;
    }
    return result;
  } finally {
    await store.close();
  }
}

export function registerRewrap(account: Command): void {
  const cmd = account
    .command('rewrap')
    .description(
      'make mail delivered before the mail password readable over IMAP/POP3 (with the wallet key, on the server)',
    )
    .requiredOption('-k, --key <file>', 'wallet keypair file (Solana CLI format: JSON array of 64 numbers)')
    .option('--mailbox-key <file>', 'the published mailbox (encryption) key file, for mail sealed to it')
    .option('--dry-run', 'count what would be rewrapped; change nothing');
  addServerOptions(cmd, { listen: false })
    .addHelpText('after', HELP)
    .action(async (opts: RewrapOptions) => {
      const r = await rewrapAccount(opts);
      const verb = opts.dryRun ? 'would rewrap' : 'rewrapped';
      const n = opts.dryRun ? r.missing - r.unopened.length : r.rewrapped;
      process.stdout.write(`${verb} ${n} of ${r.missing} message(s) without a reader wrap\n`);
      for (const u of r.unopened) process.stderr.write(`not opened: ${u.id}: ${u.reason}\n`);
      if (r.unopened.length > 0) {
        throw new CliError(
          `${r.unopened.length} message(s) could not be opened with the given key(s)` +
            (opts.mailboxKey === undefined ? ' (sealed to a mailbox key? add --mailbox-key FILE)' : ''),
        );
      }
    });
}
