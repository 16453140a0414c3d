// The Timelocks view (server mode): the wallet's pending records as the
// server reads them from the chain (GET /v1/timelocks), each window as a
// date and a countdown; start, cancel and complete a mailbox close, and
// start, cancel and finish a domain deactivation. Each action goes through
// the confirmation sheet and is signed by the wallet in the page.
import { useEffect, useState } from 'preact/hooks';
import { prepareDeactivation, prepareMailboxClose } from '../chain/market.ts';
import type { TimelockRow } from '../server/api.ts';
import { useApp } from '../session.ts';
import { useActionSheet } from './action-sheet.tsx';
import { Countdown } from './countdown.tsx';
import { Field, short } from './widgets.tsx';

const KIND_TEXT: Record<TimelockRow['kind'], string> = {
  mailbox_close: 'Mailbox close',
  domain_deactivation: 'Domain deactivation',
  domain_reclaim: 'Domain reclaim',
};

export function TimelocksView() {
  const app = useApp();
  const s = app.session;
  const [rows, setRows] = useState<TimelockRow[] | null>(null);
  const [skew, setSkew] = useState(0);
  const [domain, setDomain] = useState('');
  const ctx = { conn: s.conn, programId: s.programId, wallet: s.wallet.publicKey };

  const { prepare, preparing, setError, status, sheet } = useActionSheet(() => load(), 'timelocks-notice');
  const load = async () => {
    if (!s.api) return;
    try {
      const r = await s.api.timelocks();
      setRows(r.timelocks);
      setSkew(r.chain_time - Date.now() / 1000);
    } catch (err) {
      setError(app.errorText(err));
    }
  };
  useEffect(() => {
    void load();
  }, []);
  if (!s.api) return <p>Timelocks are read through the server: switch to server mode in Settings.</p>;

  const close = rows?.find((r) => r.kind === 'mailbox_close');

  return (
    <section aria-labelledby="timelocks-title">
      <h1 id="timelocks-title" tabIndex={-1}>
        Timelocks
      </h1>
      {status}
      <h2>Pending</h2>
      {rows === null ? (
        <p>Loading…</p>
      ) : rows.length === 0 ? (
        <p data-testid="no-timelocks">Nothing is pending.</p>
      ) : (
        <ul class="listings">
          {rows.map((r) => (
            <li key={r.address} class="card" data-testid={`timelock-${r.kind}`}>
              <h3>
                {KIND_TEXT[r.kind]}
                {r.domain ? ` of ${r.domain}` : ''}
              </h3>
              <dl class="headers">
                <dt>Requested</dt>
                <dd>{new Date(r.requested_at * 1000).toLocaleString()}</dd>
                <dt>Window ends</dt>
                <dd data-testid="timelock-ends">
                  <Countdown at={r.ends_at} skew={skew} past="over: it can be completed" />
                </dd>
                {r.new_authority && (
                  <>
                    <dt>New authority</dt>
                    <dd title={r.new_authority}>{short(r.new_authority)}</dd>
                  </>
                )}
              </dl>
              {r.kind === 'domain_deactivation' && r.domain && (
                <p class="actions">
                  <button
                    type="button"
                    disabled={preparing}
                    onClick={() =>
                      prepare(() => prepareDeactivation(ctx, { domain: r.domain ?? '', step: 'cancel' }))
                    }
                  >
                    Cancel deactivation
                  </button>
                  <button
                    type="button"
                    disabled={preparing || !r.can_complete}
                    onClick={() =>
                      prepare(() => prepareDeactivation(ctx, { domain: r.domain ?? '', step: 'finish' }))
                    }
                  >
                    Finish deactivation
                  </button>
                </p>
              )}
            </li>
          ))}
        </ul>
      )}

      <h2>Your mailbox</h2>
      {close ? (
        <p class="actions">
          <button
            type="button"
            disabled={preparing}
            onClick={() => prepare(() => prepareMailboxClose(ctx, 'cancel'))}
          >
            Cancel the close
          </button>
          <button
            type="button"
            disabled={preparing || !close.can_complete}
            onClick={() => prepare(() => prepareMailboxClose(ctx, 'close'))}
          >
            Close the mailbox
          </button>
          {!close.can_complete && <span class="hint">Closing is possible once the window ends.</span>}
        </p>
      ) : (
        <>
          <p class="hint">
            Closing a mailbox takes 7 days: senders holding stamps toward it can reclaim them meanwhile.
          </p>
          <button
            type="button"
            disabled={preparing}
            onClick={() => prepare(() => prepareMailboxClose(ctx, 'request'))}
          >
            Start closing my mailbox
          </button>
        </>
      )}

      <h2>Deactivate a domain</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void prepare(() => prepareDeactivation(ctx, { domain, step: 'request' }));
        }}
      >
        <Field
          label="Domain (you are its authority)"
          hint="The notice window is 30 days; you can cancel until it is finished."
        >
          <input
            type="text"
            value={domain}
            spellcheck={false}
            onInput={(e) => setDomain(e.currentTarget.value)}
          />
        </Field>
        <button type="submit" disabled={preparing}>
          Review deactivation
        </button>
      </form>

      {sheet}
    </section>
  );
}
