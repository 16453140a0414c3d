// Key backup in the page: download an encrypted backup of the vault (Keys
// view), and restore one in another browser (unlock screen). The file
// format lives in wallet/backup.ts and docs/webmail.md.
import { useState } from 'preact/hooks';
import { useApp } from '../session.ts';
import { type BackupFile, backupFileName, createBackup, openBackup, parseBackup } from '../wallet/backup.ts';
import type { VaultContents } from '../wallet/vault.ts';
import { ErrorText, Field, short } from './widgets.tsx';

/** Offers `text` as a file download. */
export function download(name: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export function BackupPanel({ prompt }: { prompt: boolean }) {
  const app = useApp();
  const s = app.session;
  const [pass, setPass] = useState('');
  const [again, setAgain] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const [done, setDone] = useState('');

  const make = async () => {
    setBusy(true);
    setError('');
    setDone('');
    try {
      if (pass !== again) throw new Error('The two passphrases differ.');
      const file = await createBackup(s.vault, pass);
      const name = backupFileName(file);
      download(name, `${JSON.stringify(file, null, 2)}\n`);
      setPass('');
      setAgain('');
      setDone(
        `Saved ${name}: your ${s.wallet.kind === 'in-page' ? 'wallet key and ' : ''}${file.mailbox_keys} mailbox key(s). Keep it somewhere other than this computer.`,
      );
    } catch (err) {
      setError(app.errorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section
      class={prompt ? 'card attention' : 'card'}
      aria-labelledby="backup-title"
      data-testid={prompt ? 'backup-prompt' : 'backup-panel'}
    >
      <h2 id="backup-title">{prompt ? 'Back up your keys now' : 'Back up your keys'}</h2>
      <p>
        {prompt
          ? 'New mail is sealed to the key you just published. Another browser can read it only with this key: download a backup now.'
          : 'One encrypted file with everything this browser holds to open your mail; restore it on another browser from the unlock screen.'}{' '}
        The file is protected by the passphrase you choose here; without it the file is useless, and nobody
        can recover a forgotten one.
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void make();
        }}
      >
        <Field label="Backup passphrase">
          <input
            type="password"
            autoComplete="new-password"
            value={pass}
            onInput={(e) => setPass(e.currentTarget.value)}
          />
        </Field>
        <Field label="Backup passphrase again">
          <input
            type="password"
            autoComplete="new-password"
            value={again}
            onInput={(e) => setAgain(e.currentTarget.value)}
          />
        </Field>
        <button type="submit" disabled={busy}>
          {busy ? 'Encrypting…' : 'Download backup'}
        </button>
      </form>
      <ErrorText text={error} />
      {done && (
        <p role="status" data-testid="backup-done">
          {done}
        </p>
      )}
    </section>
  );
}

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
