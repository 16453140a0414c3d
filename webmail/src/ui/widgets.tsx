// Small shared pieces of markup.
import type { ComponentChildren } from 'preact';
import { useId, useLayoutEffect, useRef, useState } from 'preact/hooks';

export function short(address: string): string {
  return address.length > 12 ? `${address.slice(0, 4)}…${address.slice(-4)}` : address;
}

/**
 * A labelled control: the label wraps the input so clicking it focuses the
 * field. The hint is no part of the field's name: it sits after the label
 * and the control points at it with aria-describedby.
 */
export function Field({
  label,
  hint,
  children,
}: {
  label: string;
  hint?: string | undefined;
  children: ComponentChildren;
}) {
  const hintId = useId();
  const ref = useRef<HTMLLabelElement>(null);
  // The control comes in as children: link it to the hint once it is in the page (and after each change).
  useLayoutEffect(() => {
    const control = ref.current?.querySelector('input, select, textarea');
    if (!control) return;
    const ids = (control.getAttribute('aria-describedby') ?? '')
      .split(/\s+/)
      .filter((x) => x && x !== hintId);
    if (hint) ids.push(hintId);
    if (ids.length > 0) control.setAttribute('aria-describedby', ids.join(' '));
    else control.removeAttribute('aria-describedby');
  });
  return (
    <div class="field">
      {/* biome-ignore lint/a11y/noLabelWithoutControl: the control comes in as children, inside the label. */}
      <label ref={ref}>
        <span class="field-label">{label}</span>
        {children}
      </label>
      {hint && (
        <span class="hint" id={hintId}>
          {hint}
        </span>
      )}
    </div>
  );
}

export function ErrorText({ text }: { text: string }) {
  return text ? (
    <p role="alert" class="error">
      {text}
    </p>
  ) : null;
}

export function formatTime(unixSeconds: number | bigint): string {
  const ms = Number(unixSeconds) * 1000;
  if (!Number.isFinite(ms) || ms <= 0) return '';
  return new Date(ms).toLocaleString();
}

/**
 * A button for an action that loses something: the first click asks, in
 * place, what will be lost; only "Yes" runs it.
 */
export function ConfirmButton({
  label,
  question,
  yes,
  disabled,
  onConfirm,
}: {
  label: string;
  question: string;
  yes: string;
  disabled?: boolean;
  onConfirm: () => void;
}) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button type="button" disabled={disabled} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  }
  return (
    <fieldset class="confirm-inline">
      <legend class="visually-hidden">{label}</legend>
      <span>{question}</span>{' '}
      <button
        type="button"
        class="danger"
        disabled={disabled}
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        {yes}
      </button>{' '}
      <button type="button" onClick={() => setAsking(false)}>
        Keep it
      </button>
    </fieldset>
  );
}
