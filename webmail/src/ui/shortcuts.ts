// Keyboard shortcuts of the whole page (docs/webmail.md "Keyboard
// shortcuts"). A key acts only when no field has focus (input, textarea,
// select, contenteditable) and no modifier is held (Shift only for ? and #).
// Global keys: c compose, / the search field, ? this help. The reader's
// keys press the view's own buttons, found by their `data-shortcut`
// attribute (r reply, f forward, e or # delete, u mark unread, Escape
// back), so a shortcut does exactly what its button does, confirmation
// included. While a sheet (a dialog) is up, only the sheet hears keys.
// j/k and the arrows move through lists (keyboard.ts).
import { useEffect, useRef, useState } from 'preact/hooks';
import type { View } from '../session.ts';

export const SHORTCUTS: readonly { keys: string[]; what: string }[] = [
  { keys: ['c'], what: 'Compose a new message' },
  { keys: ['r'], what: 'Reply (in a message)' },
  { keys: ['f'], what: 'Forward (in a message)' },
  { keys: ['e', '#'], what: 'Delete, after its confirmation (in a message)' },
  { keys: ['u'], what: 'Mark unread and go back to the list (in a message)' },
  { keys: ['/'], what: 'Search (server mail)' },
  { keys: ['j', 'k'], what: 'Next / previous message in a list' },
  { keys: ['Escape'], what: 'Close a sheet or this help; back to the list from a message' },
  { keys: ['?'], what: 'Show this help' },
];

/** Whether a key press belongs to a field being typed in. */
export function typingIn(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  if (!el || typeof el.closest !== 'function') return false;
  return (
    el.isContentEditable ||
    el.closest('input, textarea, select, [contenteditable=""], [contenteditable="true"]') !== null
  );
}

/** The page's shortcut listener; `help` is whether the help overlay is open. */
export function useShortcuts(navigate: (v: View) => void): {
  help: boolean;
  setHelp: (open: boolean) => void;
} {
  const [help, setHelp] = useState(false);
  const nav = useRef(navigate);
  nav.current = navigate;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || e.isComposing) return;
      const helpOpen = document.querySelector('[data-testid="shortcut-help"]') !== null;
      if (helpOpen) {
        if (e.key === 'Escape' || e.key === '?') {
          e.preventDefault();
          setHelp(false);
        }
        return;
      }
      if (typingIn(e.target)) return;
      // A sheet is up: it answers its own keys (Escape cancels it).
      if (document.querySelector('#view [role="dialog"]')) return;
      if (e.shiftKey && e.key !== '?' && e.key !== '#') return;
      const key = e.key;
      if (key === '?') {
        e.preventDefault();
        setHelp(true);
        return;
      }
      if (key === 'c') {
        e.preventDefault();
        nav.current({ name: 'compose' });
        return;
      }
      if (key === '/') {
        const search = document.querySelector<HTMLInputElement>('#view input[type="search"]');
        if (search) {
          e.preventDefault();
          search.focus();
        }
        return;
      }
      if (!/^([rfeu#]|Escape)$/.test(key)) return;
      const button = Array.from(document.querySelectorAll<HTMLButtonElement>('#view [data-shortcut]')).find(
        (b) => (b.dataset.shortcut ?? '').split(' ').includes(key) && !b.disabled,
      );
      if (button) {
        e.preventDefault();
        button.click();
      }
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);
  return { help, setHelp };
}
