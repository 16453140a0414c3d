// The top bar and the main navigation. On a wide screen the navigation is a
// row of buttons under the top bar; on a narrow one (a phone) it folds
// behind a Menu button in the top bar (aria-expanded, aria-controls), which
// opens it as a panel; choosing a view, or Escape, closes it again.
import { useRef, useState } from 'preact/hooks';
import type { View } from '../session.ts';
import { short } from './widgets.tsx';

interface Props {
  modeLabel: string;
  address: string;
  items: [View['name'], string][];
  current: View['name'];
  onNavigate: (v: View) => void;
  onLock: () => void;
}

export function TopBar({ modeLabel, address, items, current, onNavigate, onLock }: Props) {
  const [open, setOpen] = useState(false);
  const menuRef = useRef<HTMLButtonElement>(null);
  return (
    <>
      <header class="top">
        <span class="brand">Sealpost</span>
        <span class="badge" data-testid="mode">
          {modeLabel}
        </span>
        <span class="who" title={address}>
          {short(address)}
        </span>
        <button type="button" class="link" onClick={onLock}>
          Lock
        </button>
        <button
          type="button"
          class="menu-button"
          ref={menuRef}
          aria-expanded={open}
          aria-controls="main-nav"
          onClick={() => setOpen(!open)}
        >
          Menu
        </button>
      </header>
      <nav
        id="main-nav"
        class={open ? 'main-nav open' : 'main-nav'}
        aria-label="Main"
        onKeyDown={(e) => {
          if (e.key === 'Escape' && open) {
            e.preventDefault();
            e.stopPropagation();
            setOpen(false);
            menuRef.current?.focus();
          }
        }}
      >
        {items.map(([name, label]) => (
          <button
            type="button"
            key={name}
            aria-current={current === name ? 'page' : undefined}
            onClick={() => {
              setOpen(false);
              onNavigate({ name } as View);
            }}
          >
            {label}
          </button>
        ))}
      </nav>
    </>
  );
}
