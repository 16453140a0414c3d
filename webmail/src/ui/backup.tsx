// Key backup in the Keys view: download an encrypted backup of the vault.
// Restoring is on the unlock screen (restore.tsx). The file format lives in
// wallet/backup.ts and docs/webmail.md.
import { useState } from 'preact/hooks';
import { Refusal } from '../refusal.ts';
import { useApp } from '../session.ts';
import { backupFileName, createBackup } from '../wallet/backup.ts';
import { ErrorText, Field } from './widgets.tsx';

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
      if (pass !== again) throw new Refusal('The two passphrases differ.');
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
