// The confirmation shown before any SOL moves: what the send costs, item by
// item, the total and the balance afterwards. Nothing is sealed, pinned or
// signed until the holder confirms; Cancel (or Escape) spends nothing.
import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';
import { formatSol, type Prepared, type SendCost } from '../chain/compose.ts';
import { describeRecipient } from '../chain/recipient.ts';
import { useModal } from './modal.ts';
import { short } from './widgets.tsx';

function Sol({ lamports }: { lamports: bigint }) {
  return <span>{formatSol(lamports)} SOL</span>;
}

/** The rows of a send's cost (used by the confirmation and, for a held draft, by the prepay card). */
export function SendCostRows({ cost, label }: { cost: SendCost; label?: string }) {
  return (
    <>
      <tr>
        <th scope="row">{label ?? 'Message account rent'} (returned when the message is deleted)</th>
        <td data-testid="cost-rent">
          <Sol lamports={cost.rent} />
        </td>
      </tr>
      {cost.bounty > 0n && (
        <tr>
          <th scope="row">Bounty (held for the recipient to claim)</th>
          <td data-testid="cost-bounty">
            <Sol lamports={cost.bounty} />
          </td>
        </tr>
      )}
      <tr>
        <th scope="row">Network fee</th>
        <td data-testid="cost-fee">
          <Sol lamports={cost.fee} />
        </td>
      </tr>
      <tr>
        <th scope="row">Priority fee ({String(cost.feeQuote.unitLimit)} compute units)</th>
        <td data-testid="cost-priority">
          <Sol lamports={cost.priority} />
        </td>
      </tr>
    </>
  );
}

/** A confirmation sheet: a dialog kept in view, titled; Escape cancels unless it is busy. */
export function Sheet({
  title,
  testId,
  busy,
  onCancel,
  children,
}: {
  title: string;
  testId: string;
  busy: boolean;
  onCancel: () => void;
  children: ComponentChildren;
}) {
  const titleId = useId();
  const ref = useRef<HTMLElement>(null);
  // Focus stays inside and the page behind is inert (modal.ts). Escape is
  // heard on the whole document while the sheet is up: focus moves to the
  // confirm button only once its check finishes, and a key pressed before
  // that must still cancel.
  useModal(ref, {
    onEscape: () => {
      if (!busy) onCancel();
    },
  });
  return (
    <section
      ref={ref}
      class="card sheet"
      role="dialog"
      aria-modal="true"
      aria-labelledby={titleId}
      data-testid={testId}
    >
      <h2 id={titleId}>{title}</h2>
      {children}
    </section>
  );
}

interface Props {
  prepared: Extract<Prepared, { kind: 'ready' }>;
  /** Why this is asked (again), e.g. the draft changed under its prepay card. */
  notice?: string;
  busy: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}

export function SendConfirm({ prepared, notice, busy, onConfirm, onCancel }: Props) {
  const confirmRef = useRef<HTMLButtonElement>(null);
  const { cost, recipient } = prepared;
  // The sheet mounts while the check that priced it is finishing (the button still disabled).
  useEffect(() => {
    if (!busy) confirmRef.current?.focus();
  }, [busy]);
  return (
    <Sheet title="Send this message?" testId="send-confirm" busy={busy} onCancel={onCancel}>
      {notice && (
        <p role="alert" class="error" data-testid="requote-notice">
          {notice}
        </p>
      )}
      <p>
        To <strong>{recipient.input}</strong>: {describeRecipient(recipient, short)}.
      </p>
      <table class="math">
        <tbody>
          <SendCostRows cost={cost} />
          <tr class="total">
            <th scope="row">Total</th>
            <td data-testid="cost-total">
              <Sol lamports={cost.total} />
            </td>
          </tr>
          <tr>
            <th scope="row">Balance afterwards</th>
            <td data-testid="cost-after">
              <Sol lamports={cost.after} />
            </td>
          </tr>
        </tbody>
      </table>
      <p class="actions">
        <button type="button" class="primary" ref={confirmRef} onClick={onConfirm} disabled={busy}>
          {busy ? 'Sending…' : 'Confirm and send'}
        </button>
        <button type="button" onClick={onCancel} disabled={busy}>
          Cancel
        </button>
      </p>
    </Sheet>
  );
}
