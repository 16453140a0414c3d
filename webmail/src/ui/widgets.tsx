// Small shared pieces of markup.
import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';

export function short(address: string): string {
  return address.length > 12 ? `${address.slice(0, 4)}…${address.slice(-4)}` : address;
}

/** A labelled control: the label wraps the input so clicking it focuses the field. */
export function Field({
  label,
  hint,
  children,
}: {
  label: string;
  hint?: string;
  children: ComponentChildren;
}) {
  const id = useId();
  return (
    // biome-ignore lint/a11y/noLabelWithoutControl: the control comes in as children, inside the label.
    <label class="field" id={id}>
      <span class="field-label">{label}</span>
      {children}
      {hint && <span class="hint">{hint}</span>}
    </label>
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
