// The confirmation sheet of a marketplace or timelock action, the same
// pattern as the send confirmation: what moves, item by item (amounts that
// come back are shown as returned), the total and the balance afterwards.
// Nothing is signed until "Confirm"; Cancel (or Escape) spends nothing. The
// wallet signs in the page and the program's refusal shows in words here.
// useActionSheet is how a view uses it: prepare (a fresh chain read), show,
// and after a confirmed action the view's refresh.
import { useEffect, useRef, useState } from 'preact/hooks';
import { formatSol } from '../chain/compose.ts';
import type { PreparedAction } from '../chain/market.ts';
import { sendInstructions } from '../chain/tx.ts';
import { useApp } from '../session.ts';
import { Sheet } from './send-summary.tsx';
import { ErrorText } from './widgets.tsx';

function Sol({ lamports }: { lamports: bigint }) {
  return lamports < 0n ? (
    <span>{formatSol(-lamports)} SOL back</span>
  ) : (
    <span>{formatSol(lamports)} SOL</span>
  );
}

interface Props {
  action: PreparedAction;
  onDone: (message: string) => void;
  onCancel: () => void;
}

export function ActionSheet({ action, onDone, onCancel }: Props) {
  const app = useApp();
  const s = app.session;
  const confirmRef = useRef<HTMLButtonElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  useEffect(() => {
    confirmRef.current?.focus();
  }, []);
  const confirm = async () => {
    if (busy) return;
    setBusy(true);
    setError('');
    try {
      const out = await sendInstructions(
        s.conn,
        s.wallet,
        action.instructions,
        action.feeQuote ? { priorityFee: action.feeQuote } : {},
      );
      onDone(
        out.status === 'confirmed'
          ? action.done
          : `Still waiting for the network (transaction ${out.signature}); check again shortly and do not repeat it.`,
      );
    } catch (err) {
      setError(app.errorText(err));
      setBusy(false);
    }
  };
  return (
    <Sheet title={action.title} testId="action-confirm" busy={busy} onCancel={onCancel}>
      <p>{action.summary}</p>
      <table class="math">
        <tbody>
          {action.rows.map((r) => (
            <tr key={r.testId}>
              <th scope="row">{r.label}</th>
              <td data-testid={r.testId}>
                <Sol lamports={r.lamports} />
              </td>
            </tr>
          ))}
          <tr class="total">
            <th scope="row">{action.net < 0n ? 'Total (comes back to you)' : 'Total'}</th>
            <td data-testid="cost-total">
              <Sol lamports={action.net} />
            </td>
          </tr>
          <tr>
            <th scope="row">Balance afterwards</th>
            <td data-testid="cost-after">{formatSol(action.after)} SOL</td>
          </tr>
        </tbody>
      </table>
      <ErrorText text={error} />
      <p class="actions">
        <button
          type="button"
          class="primary"
          ref={confirmRef}
          onClick={confirm}
          disabled={busy || error !== ''}
        >
          {busy ? 'Waiting for the network…' : action.confirmLabel}
        </button>
        <button type="button" onClick={onCancel} disabled={busy}>
          {error ? 'Close' : 'Cancel'}
        </button>
      </p>
    </Sheet>
  );
}

/**
 * A view's actions: `prepare` runs one preparation at a time and opens the
 * sheet (or shows why not); a confirmed action's message shows and
 * `refresh` runs. Render `status` under the view's heading and `sheet` at
 * its end.
 */
export function useActionSheet(refresh: () => Promise<void>, noticeTestId: string) {
  const app = useApp();
  const [action, setAction] = useState<PreparedAction | null>(null);
  const [preparing, setPreparing] = useState(false);
  const [error, setError] = useState('');
  const [notice, setNotice] = useState('');
  const prepare = async (fn: () => Promise<PreparedAction>) => {
    if (preparing) return;
    setPreparing(true);
    setError('');
    setNotice('');
    try {
      setAction(await fn());
    } catch (err) {
      setError(app.errorText(err));
    } finally {
      setPreparing(false);
    }
  };
  const sheet = action && (
    <ActionSheet
      action={action}
      onCancel={() => setAction(null)}
      onDone={async (message) => {
        setAction(null);
        setNotice(message);
        await refresh();
      }}
    />
  );
  /** The view's answer line: the error, or the last confirmed action. */
  const status = (
    <>
      <ErrorText text={error} />
      {notice && (
        <p role="status" data-testid={noticeTestId}>
          {notice}
        </p>
      )}
    </>
  );
  return { prepare, preparing, setError, status, sheet };
}
