// Server mode account settings: timezone, do-not-disturb schedule and
// whether to expose it, the mail password (a step-up write), and the export.
// Each form answers beside its own button: its status or its error.
import { useEffect, useState } from 'preact/hooks';
import { Refusal } from '../refusal.ts';
import type { AccountView, DndWindow } from '../server/api.ts';
import { MAIL_PASSWORD_MAX, MAIL_PASSWORD_MIN, mailPasswordProblem } from '../server/mail-password.ts';
import { useApp } from '../session.ts';
import { stepUpProof } from './login.tsx';
import { ErrorText, Field } from './widgets.tsx';

const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

interface ScheduleShape {
  windows?: DndWindow[];
  exclusions?: string[];
}

export function AccountSettingsView() {
  const app = useApp();
  const s = app.session;
  const api = s.api;
  const [view, setView] = useState<AccountView | null>(null);
  const [timezone, setTimezone] = useState('');
  const [dndOn, setDndOn] = useState(false);
  const [popCloses, setPopCloses] = useState(false);
  const [days, setDays] = useState<string[]>(['mon', 'tue', 'wed', 'thu', 'fri']);
  const [start, setStart] = useState('22:00');
  const [end, setEnd] = useState('07:00');
  const [exclusions, setExclusions] = useState('');
  const [expose, setExpose] = useState(false);
  const [password, setPassword] = useState('');
  // Loading the account; each form has its own status below.
  const [error, setError] = useState('');
  const [status, setStatus] = useState<Record<FormName, Status>>({
    settings: NONE,
    password: NONE,
    export: NONE,
  });
  const [exportUrl, setExportUrl] = useState<string | null>(null);

  const apply = (v: AccountView) => {
    setView(v);
    setTimezone(v.account.timezone ?? '');
    setExpose(Boolean(v.account.expose_dnd_schedule));
    setPopCloses(v.account.pop3_dele_closes_on_chain === true);
    const sched = (v.away_schedule ?? null) as ScheduleShape | null;
    const w = sched?.windows?.[0];
    setDndOn(Boolean(w));
    if (w) {
      setDays(w.days);
      setStart(w.start);
      setEnd(w.end);
    }
    setExclusions((sched?.exclusions ?? []).join(', '));
  };

  useEffect(() => {
    api?.account().then(apply, (err) => setError(app.errorText(err)));
    return () => {
      if (exportUrl) URL.revokeObjectURL(exportUrl);
    };
  }, []);

  const run = async (form: FormName, fn: () => Promise<string>) => {
    const put = (st: Status) => setStatus((all) => ({ ...all, [form]: st }));
    put({ busy: true, notice: '', error: '' });
    try {
      put({ busy: false, notice: await fn(), error: '' });
    } catch (err) {
      put({ busy: false, notice: '', error: app.errorText(err) });
    }
  };

  const saveSettings = () =>
    run('settings', async () => {
      if (!api) throw new Error('No account API.');
      const exclusionList = exclusions.split(/[\s,]+/).filter(Boolean);
      const v = await api.patchSettings({
        timezone: timezone.trim() === '' ? null : timezone.trim(),
        dnd_schedule: dndOn ? { windows: [{ days, start, end }], exclusions: exclusionList } : null,
        expose_dnd_schedule: expose,
        pop3_dele_closes_on_chain: popCloses,
      });
      apply(v);
      return 'Settings saved.';
    });

  const savePassword = () =>
    run('password', async () => {
      if (!api) throw new Error('No account API.');
      // Checked before the wallet signs: a refused password must not cost a step-up.
      const problem = mailPasswordProblem(password);
      if (problem) throw new Refusal(problem);
      const proof = await stepUpProof(api, s.wallet);
      await api.setMailPassword(password, proof);
      setPassword('');
      return 'Mail password set. Use it for IMAP, POP and SMTP submission.';
    });

  const doExport = () =>
    run('export', async () => {
      if (!api) throw new Error('No account API.');
      const blob = await api.exportDocument();
      if (exportUrl) URL.revokeObjectURL(exportUrl);
      setExportUrl(URL.createObjectURL(blob));
      return 'Export ready.';
    });

  return (
    <section aria-labelledby="account-title">
      <h1 id="account-title" tabIndex={-1}>
        Account
      </h1>
      <ErrorText text={error} />
      {!view && !error && <p aria-busy="true">Loading…</p>}
      {view && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void saveSettings();
          }}
        >
          <Field label="Time zone" hint="An IANA name such as Europe/Berlin; blank means UTC">
            <input
              type="text"
              name="timezone"
              value={timezone}
              onInput={(e) => setTimezone(e.currentTarget.value)}
            />
          </Field>
          <fieldset>
            <legend>Do not disturb</legend>
            <label>
              <input type="checkbox" checked={dndOn} onChange={(e) => setDndOn(e.currentTarget.checked)} />{' '}
              Away on a schedule
            </label>
            {dndOn && (
              <>
                <div class="inline">
                  {DAYS.map((d) => (
                    <label key={d}>
                      <input
                        type="checkbox"
                        checked={days.includes(d)}
                        onChange={(e) =>
                          setDays(e.currentTarget.checked ? [...days, d] : days.filter((x) => x !== d))
                        }
                      />{' '}
                      {d}
                    </label>
                  ))}
                </div>
                <div class="inline">
                  <Field label="From">
                    <input type="time" value={start} onInput={(e) => setStart(e.currentTarget.value)} />
                  </Field>
                  <Field label="Until">
                    <input type="time" value={end} onInput={(e) => setEnd(e.currentTarget.value)} />
                  </Field>
                </div>
                <Field label="Exceptions (dates, YYYY-MM-DD)">
                  <input
                    type="text"
                    value={exclusions}
                    onInput={(e) => setExclusions(e.currentTarget.value)}
                  />
                </Field>
              </>
            )}
            <label>
              <input
                type="checkbox"
                checked={expose}
                aria-describedby="dnd-expose-hint"
                onChange={(e) => setExpose(e.currentTarget.checked)}
              />{' '}
              Show my schedule to anyone who asks
            </label>
            <p class="hint" id="dnd-expose-hint">
              expose_dnd_schedule; otherwise they only learn whether I am away
            </p>
          </fieldset>
          <label class="check">
            <input
              type="checkbox"
              name="pop3-closes"
              checked={popCloses}
              aria-describedby="pop3-closes-hint"
              onChange={(e) => setPopCloses(e.currentTarget.checked)}
            />{' '}
            A POP3 delete also closes the message on chain
          </label>
          <p class="hint" id="pop3-closes-hint">
            It closes its Email account and the operator's pin. Off: POP3 deletes only the server's copy, and
            the message stays in the chain inbox.
          </p>
          <button type="submit" disabled={status.settings.busy}>
            Save settings
          </button>
          <FormStatus status={status.settings} testId="settings-status" />
        </form>
      )}
      <h2>Mail password</h2>
      <p>For IMAP, POP and SMTP clients. Setting it asks your wallet for a fresh signature (step-up).</p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void savePassword();
        }}
      >
        <Field label="New mail password" hint={`${MAIL_PASSWORD_MIN} to ${MAIL_PASSWORD_MAX} characters`}>
          <input
            type="password"
            autoComplete="new-password"
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </Field>
        <button type="submit" disabled={status.password.busy}>
          Set mail password
        </button>
        <FormStatus status={status.password} testId="password-status" />
      </form>
      <h2>Export</h2>
      <p>Everything this server stores for your wallet, as JSON (message bodies and secrets excluded).</p>
      <button type="button" onClick={doExport} disabled={status.export.busy}>
        Prepare export
      </button>{' '}
      {exportUrl && (
        <a href={exportUrl} download={`sealpost-export-${s.wallet.address}.json`} data-testid="export-link">
          Download export
        </a>
      )}
      <FormStatus status={status.export} testId="export-status" />
    </section>
  );
}

type FormName = 'settings' | 'password' | 'export';

interface Status {
  busy: boolean;
  notice: string;
  error: string;
}

const NONE: Status = { busy: false, notice: '', error: '' };

/** A form's own answer, right under its button: working, done, or what went wrong. */
function FormStatus({ status, testId }: { status: Status; testId: string }) {
  return (
    <div class="form-status" data-testid={testId} aria-live="polite">
      {status.busy && <p aria-busy="true">Working…</p>}
      {status.notice && <p role="status">{status.notice}</p>}
      <ErrorText text={status.error} />
    </div>
  );
}
