// The keyboard shortcuts' help (press ?): a dialog listing them; Escape, ?
// or Close shuts it and focus goes back where it was.
import { useEffect, useRef } from 'preact/hooks';
import { useApp } from '../session.ts';
import { SHORTCUTS, useShortcuts } from './shortcuts.ts';

function HelpOverlay({ onClose }: { onClose: () => void }) {
  const closeRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    closeRef.current?.focus();
    return () => before?.focus?.();
  }, []);
  return (
    <div class="help-backdrop">
      <section
        class="card sheet help-overlay"
        role="dialog"
        aria-modal="true"
        aria-labelledby="shortcut-help-title"
        data-testid="shortcut-help"
      >
        <h2 id="shortcut-help-title">Keyboard shortcuts</h2>
        <p class="muted">They work when no field has focus.</p>
        <table class="math">
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
