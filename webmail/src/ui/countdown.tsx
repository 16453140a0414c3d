// A chain time shown as a date with a live countdown ("in 2 d 4 h", "ended").
// `skew` is chain time minus this browser's clock (seconds), from the
// server's chain_time, so the countdown follows the chain's clock.
import { useEffect, useState } from 'preact/hooks';

export function untilText(seconds: number): string {
  if (seconds <= 0) return 'now';
  const d = Math.floor(seconds / 86_400);
  const h = Math.floor((seconds % 86_400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = Math.floor(seconds % 60);
  if (d > 0) return `in ${d} d ${h} h`;
  if (h > 0) return `in ${h} h ${m} min`;
  if (m > 0) return `in ${m} min ${s} s`;
  return `in ${s} s`;
}

export function Countdown({ at, skew, past }: { at: number; skew: number; past: string }) {
  const [now, setNow] = useState(() => Date.now() / 1000 + skew);
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now() / 1000 + skew), 1000);
    return () => clearInterval(t);
  }, [skew]);
  const left = at - now;
  return (
    <span title={new Date(at * 1000).toISOString()}>
      {new Date(at * 1000).toLocaleString()} ({left > 0 ? untilText(left) : past})
    </span>
  );
}
