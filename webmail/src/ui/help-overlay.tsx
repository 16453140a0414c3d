// The keyboard shortcuts' help (press ?): a dialog listing them; Escape, ?
// or Close shuts it and focus goes back where it was.
import { useEffect, useRef } from 'preact/hooks';
import { useApp } from '../session.ts';
import { useModal } from './modal.ts';
import { SHORTCUTS, useShortcuts } from './shortcuts.ts';

function HelpOverlay({ onClose }: { onClose: () => void }) {
  const closeRef = useRef<HTMLButtonElement>(null);
  const dialogRef = useRef<HTMLElement>(null);
  // Focus trapped inside, the page behind inert, focus back to where it was on close.
  useModal(dialogRef, { onEscape: onClose });
  useEffect(() => closeRef.current?.focus(), []);
  return (
    <div class="help-backdrop">
      <section
        ref={dialogRef}
        class="card sheet help-overlay"
        role="dialog"
        aria-modal="true"
        aria-labelledby="shortcut-help-title"
        data-testid="shortcut-help"
      >
        <h2 id="shortcut-help-title">Keyboard shortcuts</h2>
        <p class="muted">They work when no field has focus.</p>
        <table class="shortcut-table">
          <tbody>
            {SHORTCUTS.map((s) => (
              <tr key={s.what}>
                <th scope="row">
                  {s.keys.map((k, i) => (
                    <span key={k}>
                      {i > 0 && ' or '}
                      <kbd>{k}</kbd>
                    </span>
                  ))}
                </th>
                <td>{s.what}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <p class="actions">
          <button type="button" ref={closeRef} onClick={onClose}>
            Close
          </button>
        </p>
      </section>
    </div>
  );
}

/** The shortcuts and their help overlay: one element inside the app's context. */
export function Shortcuts() {
  const app = useApp();
  const { help, setHelp } = useShortcuts(app.navigate);
  return help ? <HelpOverlay onClose={() => setHelp(false)} /> : null;
}
