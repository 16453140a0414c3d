// Server mode pin-provider pane: status, then set/rotate or remove, each a
// step-up write signed in the page over the exact nonce bytes.
import { useEffect, useState } from 'preact/hooks';
import type { PinProviderBody } from '../server/api.ts';
import { useApp } from '../session.ts';
import { stepUpProof } from './login.tsx';
import { ErrorText, Field } from './widgets.tsx';

type Kind = PinProviderBody['kind'];

export function PinProviderView() {
  const app = useApp();
  const s = app.session;
  const api = s.api;
  const [status, setStatus] = useState<{ configured: boolean; kind: string | null } | null>(null);
  const [kind, setKind] = useState<Kind>('remote');
  const [f, setF] = useState<Record<string, string>>({});
  const [error, setError] = useState('');
  const [notice, setNotice] = useState('');
  const [busy, setBusy] = useState(false);
  const field = (name: string) => f[name] ?? '';
  const setField = (name: string, v: string) => setF((x) => ({ ...x, [name]: v }));

  const refresh = async () => {
    if (api) setStatus(await api.pinProvider());
  };
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

  const run = async (label: string, fn: () => Promise<string>) => {
    setBusy(true);
    setError('');
    setNotice(label);
    try {
      setNotice(await fn());
      await refresh();
    } catch (err) {
      setNotice('');
      setError(app.errorText(err));
    } finally {
      setBusy(false);
    }
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
        {kind === 'remote' && (
          <>
            <Field label="Endpoint" hint="Default http://127.0.0.1:8182">
              <input
                type="url"
                name="endpoint"
                value={field('endpoint')}
                onInput={(e) => setField('endpoint', e.currentTarget.value)}
              />
            </Field>
            <Field label="Auth token (optional)">
              <input
                type="password"
                name="auth_token"
                value={field('auth_token')}
                onInput={(e) => setField('auth_token', e.currentTarget.value)}
              />
            </Field>
          </>
        )}
        {kind === 'hosted_jwt' && (
          <>
            <Field label="API token (JWT)">
              <input
                type="password"
                name="jwt"
                value={field('jwt')}
                onInput={(e) => setField('jwt', e.currentTarget.value)}
              />
            </Field>
            <Field label="Dedicated gateway URL (https)">
              <input
                type="url"
                name="gateway"
                value={field('gateway')}
                onInput={(e) => setField('gateway', e.currentTarget.value)}
              />
            </Field>
          </>
        )}
        {kind === 's3_bucket' && (
          <>
            <Field label="Access key">
              <input
                type="text"
                name="access_key"
                value={field('access_key')}
                onInput={(e) => setField('access_key', e.currentTarget.value)}
              />
            </Field>
            <Field label="Secret key">
              <input
                type="password"
                name="secret_key"
                value={field('secret_key')}
                onInput={(e) => setField('secret_key', e.currentTarget.value)}
              />
            </Field>
            <Field label="Bucket">
              <input
                type="text"
                name="bucket"
                value={field('bucket')}
                onInput={(e) => setField('bucket', e.currentTarget.value)}
              />
            </Field>
            <Field label="Endpoint (optional)">
              <input
                type="url"
                name="endpoint"
                value={field('endpoint')}
                onInput={(e) => setField('endpoint', e.currentTarget.value)}
              />
            </Field>
          </>
        )}
        <button type="submit" disabled={busy}>
          {status?.configured ? 'Replace (rotate credentials)' : 'Save'}
        </button>{' '}
        {status?.configured && (
          <button type="button" disabled={busy} onClick={remove}>
            Remove
          </button>
        )}
      </form>
    </section>
  );
}
