// Server mode pin-provider pane: status, then set/rotate or remove, each a
// step-up write signed in the page over the exact nonce bytes.
import { useEffect, useState } from 'preact/hooks';
import type { PinProviderBody } from '../server/api.ts';
import { useApp } from '../session.ts';
import { stepUpProof } from './login.tsx';
import { useAction } from './use-action.ts';
import { ConfirmButton, ErrorText, Field } from './widgets.tsx';

type Kind = PinProviderBody['kind'];

/** The credential fields of each provider kind, in form order (the reference's "Pin provider" table). */
const FIELDS: Record<
  Kind,
  { name: string; label: string; type: 'text' | 'password' | 'url'; hint?: string }[]
> = {
  remote: [
    { name: 'endpoint', label: 'Endpoint', type: 'url', hint: 'Default http://127.0.0.1:8182' },
    { name: 'auth_token', label: 'Auth token (optional)', type: 'password' },
  ],
  hosted_jwt: [
    { name: 'jwt', label: 'API token (JWT)', type: 'password' },
    { name: 'gateway', label: 'Dedicated gateway URL (https)', type: 'url' },
  ],
  s3_bucket: [
    { name: 'access_key', label: 'Access key', type: 'text' },
    { name: 'secret_key', label: 'Secret key', type: 'password' },
    { name: 'bucket', label: 'Bucket', type: 'text' },
    { name: 'endpoint', label: 'Endpoint (optional)', type: 'url' },
  ],
};

export function PinProviderView() {
  const app = useApp();
  const s = app.session;
  const api = s.api;
  const [status, setStatus] = useState<{ configured: boolean; kind: string | null } | null>(null);
  const [kind, setKind] = useState<Kind>('remote');
  const [f, setF] = useState<Record<string, string>>({});
  const field = (name: string) => f[name] ?? '';
  const setField = (name: string, v: string) => setF((x) => ({ ...x, [name]: v }));

  const refresh = async () => {
    if (api) setStatus(await api.pinProvider());
  };
  const { busy, error, notice, run, setError } = useAction(refresh);
  useEffect(() => {
    refresh().catch((err) => setError(app.errorText(err)));
  }, []);

  const body = (): PinProviderBody => {
    if (kind === 'hosted_jwt') return { kind, jwt: field('jwt'), gateway: field('gateway') };
    if (kind === 's3_bucket') {
      const b: PinProviderBody = {
        kind,
        access_key: field('access_key'),
        secret_key: field('secret_key'),
        bucket: field('bucket'),
      };
      if (field('endpoint')) b.endpoint = field('endpoint');
      return b;
    }
    const r: PinProviderBody = { kind: 'remote' };
    if (field('endpoint')) r.endpoint = field('endpoint');
    if (field('auth_token')) r.auth_token = field('auth_token');
    return r;
  };

  const save = () =>
    run('Asking your wallet to confirm…', async () => {
      if (!api) throw new Error('No account API.');
      const proof = await stepUpProof(api, s.wallet);
      await api.setPinProvider(body(), proof);
      setF({});
      return 'Pin provider saved. Mail delivered from now on is also pinned there.';
    });

  const remove = () =>
    run('Asking your wallet to confirm…', async () => {
      if (!api) throw new Error('No account API.');
      const proof = await stepUpProof(api, s.wallet);
      await api.deletePinProvider(proof);
      return 'Pin provider removed. Copies already pinned there stay until you remove them at the provider.';
    });

  return (
    <section aria-labelledby="pin-title">
      <h1 id="pin-title" tabIndex={-1}>
        Personal pin provider
      </h1>
      <p>
        When set, the server also pins every sealed message delivered to you from now on to your own provider.
        The server can read these credentials (it needs them at delivery); they are encrypted at rest.
      </p>
      <p data-testid="pin-status">
        Status: {status === null ? '…' : status.configured ? `configured (${status.kind})` : 'not configured'}
      </p>
      <ErrorText text={error} />
      {notice && <p role="status">{notice}</p>}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <Field label="Kind">
          <select value={kind} onChange={(e) => setKind(e.currentTarget.value as Kind)} name="kind">
            <option value="remote">A pin daemon I run (remote)</option>
            <option value="hosted_jwt">Hosted pinning service (API token)</option>
            <option value="s3_bucket">S3-compatible bucket</option>
          </select>
        </Field>
        {FIELDS[kind].map((f) => (
          <Field key={`${kind}.${f.name}`} label={f.label} hint={f.hint}>
            <input
              // Preact types each input type apart; all three take a text value.
              type={f.type as 'text'}
              name={f.name}
              value={field(f.name)}
              onInput={(e) => setField(f.name, e.currentTarget.value)}
            />
          </Field>
        ))}
        <button type="submit" disabled={busy}>
          {status?.configured ? 'Replace (rotate credentials)' : 'Save'}
        </button>{' '}
        {status?.configured && (
          <ConfirmButton
            label="Remove"
            question="Remove your pin provider? Mail delivered from now on is no longer pinned there."
            yes="Yes, remove it"
            disabled={busy}
            onConfirm={() => void remove()}
          />
        )}
      </form>
    </section>
  );
}
