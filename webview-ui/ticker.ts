// Relative times that tick: elements rendered with `data-ts` (an ISO time) and `data-kind`
// (`ago` or `elapsed`) are rewritten every second from the host's clock, so "12s ago" and an
// agent's elapsed time move between snapshots. The host's clock, not the browser's: in a
// remote window the two machines can disagree, and each snapshot says when it was made.
import { ago, formatElapsed } from './format.js';

let skewMs = 0;

/** Call with each snapshot's `generatedAt`. */
export function syncHostClock(generatedAt: string): void {
  const t = Date.parse(generatedAt);
  if (!Number.isNaN(t)) skewMs = t - Date.now();
}

export function hostNow(): number {
  return Date.now() + skewMs;
}

export type TimeKind = 'ago' | 'elapsed';

export function timeText(iso: string | null, kind: TimeKind, nowMs = hostNow()): string {
  if (!iso) return '—';
  return kind === 'ago' ? ago(iso, nowMs) : formatElapsed(nowMs - Date.parse(iso));
}

/** Rewrites every ticking time under `root`. */
export function tickTimes(root: ParentNode): void {
  const now = hostNow();
  for (const el of root.querySelectorAll<HTMLElement>('[data-ts]')) {
    const text = timeText(el.dataset['ts'] ?? null, el.dataset['kind'] === 'elapsed' ? 'elapsed' : 'ago', now);
    if (el.textContent !== text) el.textContent = text;
  }
}
