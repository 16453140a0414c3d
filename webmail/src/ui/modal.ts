// Modal behaviour, built once for every dialog marked aria-modal (the
// confirmation sheets, the shortcuts' help): while it is open the rest of the
// page is `inert`, Tab and Shift+Tab cycle inside it, Escape closes it (when
// the caller gives onEscape), and when it closes focus goes back to the
// control that opened it — or, if that control is gone or disabled, to the
// view's heading; never to the page body.
import type { RefObject } from 'preact';
import { useLayoutEffect, useRef } from 'preact/hooks';

const FOCUSABLE =
  'a[href], button, input:not([type="hidden"]), select, textarea, iframe, [tabindex], [contenteditable=""], [contenteditable="true"]';

// The last element focused outside any modal: the opener, when the click that
// opened the sheet also disabled it (a focused control that turns disabled
// loses focus to the body before the sheet mounts).
let lastFocused: HTMLElement | null = null;
if (typeof document !== 'undefined') {
  document.addEventListener(
    'focusin',
    (e) => {
      const t = e.target;
      if (t instanceof HTMLElement && !t.closest('[aria-modal="true"]')) lastFocused = t;
    },
    true,
  );
}

/** Whether focus can go (back) to `el`: still in the page, enabled, not inert, rendered. */
function usable(el: HTMLElement | null): el is HTMLElement {
  if (!el?.isConnected || el === document.body) return false;
  if ((el as HTMLButtonElement).disabled) return false;
  if (el.closest('[inert]')) return false;
  return el.getClientRects().length > 0;
}

/** The view's heading (each view's h1 takes focus), else the first h1 of the page. */
function heading(): HTMLElement | null {
  const h = document.querySelector<HTMLElement>('#view h1') ?? document.querySelector<HTMLElement>('h1');
  if (h && !h.hasAttribute('tabindex')) h.tabIndex = -1;
  return h;
}

/** The focusable, enabled, rendered elements inside `root`, in document order. */
export function tabbables(root: HTMLElement): HTMLElement[] {
  return Array.from(root.querySelectorAll<HTMLElement>(FOCUSABLE)).filter(
    (el) =>
      !(el as HTMLButtonElement).disabled &&
      el.tabIndex >= 0 &&
      !el.closest('[inert]') &&
      el.getClientRects().length > 0,
  );
}

/** Makes everything outside `el` inert; returns the undo. */
function inertOutside(el: HTMLElement): () => void {
  const made: HTMLElement[] = [];
  for (let node: HTMLElement | null = el; node && node !== document.body; node = node.parentElement) {
    const parent: HTMLElement | null = node.parentElement;
    if (!parent) break;
    for (const sib of Array.from(parent.children)) {
      if (sib === node || !(sib instanceof HTMLElement) || sib.inert) continue;
      if (sib.tagName === 'SCRIPT' || sib.tagName === 'STYLE') continue;
      sib.inert = true;
      made.push(sib);
    }
  }
  return () => {
    for (const sib of made) sib.inert = false;
  };
}

/**
 * Makes the element behind `ref` a modal while the calling component is
 * mounted. `onEscape`, when given, runs on Escape anywhere in the page (a
 * key pressed before focus reaches the dialog must still close it).
 */
export function useModal(ref: RefObject<HTMLElement | null>, opts: { onEscape?: () => void } = {}): void {
  const latest = useRef(opts);
  latest.current = opts;
  useLayoutEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    const active = document.activeElement as HTMLElement | null;
    const opener = active && active !== document.body && !dialog.contains(active) ? active : lastFocused;
    const undoInert = inertOutside(dialog);
    if (!dialog.hasAttribute('tabindex')) dialog.tabIndex = -1;
    if (!dialog.contains(document.activeElement)) {
      (dialog.querySelector<HTMLElement>('[autofocus]') ?? dialog).focus();
    }
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape' && latest.current.onEscape) {
        e.preventDefault();
        latest.current.onEscape();
        return;
      }
      if (e.key !== 'Tab') return;
      const items = tabbables(dialog);
      const focused = document.activeElement as HTMLElement | null;
      e.preventDefault();
      if (items.length === 0) {
        dialog.focus();
        return;
      }
      const first = items[0] as HTMLElement;
      const last = items[items.length - 1] as HTMLElement;
      const at = focused ? items.indexOf(focused) : -1;
      if (at === -1) (e.shiftKey ? last : first).focus();
      else if (e.shiftKey) (at === 0 ? last : (items[at - 1] as HTMLElement)).focus();
      else (at === items.length - 1 ? first : (items[at + 1] as HTMLElement)).focus();
    };
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('keydown', onKey);
      undoInert();
      const back = () => {
        const target = usable(opener) ? opener : heading();
        target?.focus();
      };
      back();
      // The view may re-render (or change) right after the dialog closes:
      // make sure focus did not end up on the body.
      setTimeout(() => {
        const now = document.activeElement;
        if (!now || now === document.body || !now.isConnected) back();
      }, 0);
    };
  }, []);
}
