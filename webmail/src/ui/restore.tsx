// Restoring a key backup on the unlock screen. Kept apart from backup.tsx:
// the unlock screen is in the first chunk the page loads, and must not pull
// in the session (and with it the chain client).
import { type BackupFile, openBackup, parseBackup } from '../wallet/backup.ts';
import type { VaultContents } from '../wallet/vault.ts';
import { Field, short } from './widgets.tsx';

/** Restoring on the unlock screen: a backup file and its passphrase → the vault contents. */
export function RestoreFields({
  onFile,
  file,
}: {
  onFile: (f: BackupFile | null, error: string) => void;
  file: BackupFile | null;
}) {
  return (
    <>
      <Field label="Backup file" hint="The sealpost-keys-….json file you downloaded under Keys">
        <input
          type="file"
          accept="application/json,.json"
          onChange={async (e) => {
            const picked = e.currentTarget.files?.[0];
            if (!picked) return onFile(null, '');
            try {
              onFile(parseBackup(await picked.text()), '');
            } catch (err) {
              onFile(null, err instanceof Error ? err.message : String(err));
            }
          }}
        />
      </Field>
      {file && (
        <p class="hint" data-testid="backup-summary">
          Backup of {file.kind === 'in-page' ? 'wallet' : 'browser wallet'} <code>{short(file.address)}</code>{' '}
          with {file.mailbox_keys} mailbox key(s), made {file.created.slice(0, 10)}.
        </p>
      )}
    </>
  );
}

export async function restoreContents(file: BackupFile | null, passphrase: string): Promise<VaultContents> {
  if (!file) throw new Error('Choose a backup file first.');
  return openBackup(file, passphrase);
}
