// Connection settings. The mode (same-origin API, another API, or trustless)
// is read at page load, so a change applies on the next load.
import { useState } from 'preact/hooks';
import { type ConnectionSettings, saveSettings, urlProblem } from '../settings.ts';
import { ErrorText, Field } from './widgets.tsx';

type ApiChoice = 'same' | 'trustless' | 'other';

export function SettingsView({
  current,
  storage,
  onLock,
}: {
  current: ConnectionSettings;
  storage: Storage;
  onLock?: () => void;
}) {
  const [s, setS] = useState<ConnectionSettings>(current);
  const [choice, setChoice] = useState<ApiChoice>(
    current.apiUrl === undefined ? 'same' : current.apiUrl.trim() === '' ? 'trustless' : 'other',
  );
  const [other, setOther] = useState(current.apiUrl && current.apiUrl.trim() !== '' ? current.apiUrl : '');
  const [error, setError] = useState('');
  const [saved, setSaved] = useState(false);
  const set = (patch: Partial<ConnectionSettings>) => setS((v) => ({ ...v, ...patch }));

  const save = () => {
    setError('');
    setSaved(false);
    const problems = [
      urlProblem('The chain RPC URL', s.rpcUrl),
      urlProblem('The gateway URL', s.gatewayUrl),
      urlProblem('The pin service URL', s.pinUrl),
      choice === 'other' ? urlProblem('The API URL', other) : null,
    ].filter(Boolean);
    if (problems.length > 0) {
      setError(problems.join('. '));
      return;
    }
    const next: ConnectionSettings = { ...s };
    delete next.apiUrl;
    if (choice === 'trustless') next.apiUrl = '';
    if (choice === 'other') next.apiUrl = other.trim();
    saveSettings(storage, next);
    setSaved(true);
  };

  return (
    <section aria-labelledby="settings-title">
      <h1 id="settings-title" tabIndex={-1}>
        Connection settings
      </h1>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          save();
        }}
      >
        <fieldset>
          <legend>Account API</legend>
          <label>
            <input type="radio" name="api" checked={choice === 'same'} onChange={() => setChoice('same')} />{' '}
            This server (same origin)
          </label>
          <label>
            <input
              type="radio"
              name="api"
              checked={choice === 'trustless'}
              onChange={() => setChoice('trustless')}
              data-testid="api-trustless"
            />{' '}
            None — trustless mode (chain RPC, gateway and pin service only)
          </label>
          <label>
            <input type="radio" name="api" checked={choice === 'other'} onChange={() => setChoice('other')} />{' '}
            Another server:
          </label>
          {choice === 'other' && (
            <Field label="API URL">
              <input type="url" value={other} onInput={(e) => setOther(e.currentTarget.value)} />
            </Field>
          )}
          <p class="hint">The API choice takes effect on the next load.</p>
        </fieldset>
        <Field label="Chain RPC URL">
          <input
            type="url"
            name="rpc"
            value={s.rpcUrl}
            onInput={(e) => set({ rpcUrl: e.currentTarget.value })}
          />
        </Field>
        <Field label="IPFS gateway URL">
          <input
            type="url"
            name="gateway"
            value={s.gatewayUrl}
            onInput={(e) => set({ gatewayUrl: e.currentTarget.value })}
          />
        </Field>
        <Field label="IPFS pin service URL" hint="Only sending needs it">
          <input
            type="url"
            name="pin"
            value={s.pinUrl}
            onInput={(e) => set({ pinUrl: e.currentTarget.value })}
          />
        </Field>
        <Field label="Pin service bearer token (optional)">
          <input
            type="password"
            name="pin-token"
            value={s.pinToken}
            onInput={(e) => set({ pinToken: e.currentTarget.value })}
            autoComplete="off"
          />
        </Field>
        <Field label="Mail program id">
          <input
            type="text"
            name="program"
            value={s.programId}
            onInput={(e) => set({ programId: e.currentTarget.value })}
            spellcheck={false}
          />
        </Field>
        <button type="submit">Save</button>
      </form>
      <ErrorText text={error} />
      {saved && (
        <p role="status">
          Saved.{' '}
          <button type="button" onClick={() => location.reload()}>
            Reload now
          </button>{' '}
          to apply.
        </p>
      )}
      {onLock && (
        <p>
          <button type="button" onClick={onLock}>
            Lock (forget the unlocked keys in this tab)
          </button>
        </p>
      )}
    </section>
  );
}
