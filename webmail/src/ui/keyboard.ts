// Arrow keys (and j/k) move between the rows of a list of buttons.
export function listKeys(e: KeyboardEvent): void {
  const key = e.key;
  if (!['ArrowDown', 'ArrowUp', 'j', 'k', 'Home', 'End'].includes(key)) return;
  const target = e.target as HTMLElement | null;
  const list = target?.closest('[data-rows]');
  if (!list) return;
  const rows = Array.from(list.querySelectorAll<HTMLElement>('[data-row]'));
  const at = rows.indexOf(target as HTMLElement);
  let next = at;
  if (key === 'ArrowDown' || key === 'j') next = Math.min(rows.length - 1, at + 1);
  if (key === 'ArrowUp' || key === 'k') next = Math.max(0, at - 1);
  if (key === 'Home') next = 0;
  if (key === 'End') next = rows.length - 1;
  const row = rows[next];
  if (next !== at && row) {
    e.preventDefault();
    row.focus();
  }
}
