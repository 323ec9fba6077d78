// How times and amounts read, in the monitor page and in the VS Code trees alike (pure; both
// sides compile it), so the judge's elapsed "1m 5s" is the same string in both places.

/** "0s", "45s", "3m 5s", "2h 14m". */
export function formatElapsed(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

/** "12s ago", "5m ago", "3h ago", "2d ago"; "—" without a time, the text itself when unparseable. */
export function formatAgo(iso: string | null, nowMs: number): string {
  if (!iso) return '—';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const s = Math.max(0, Math.round((nowMs - t) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86_400)}d ago`;
}

/**
 * Axis ticks: as many decimals as the tick step needs (at least two), so neighbouring ticks
 * never read the same ("$0.01 $0.01 $0.00" on a cent-sized axis).
 */
export function usdTick(n: number, step: number): string {
  const decimals = step > 0 ? Math.min(6, Math.max(2, Math.ceil(-Math.log10(step) - 1e-9))) : 2;
  return `$${n.toFixed(decimals)}`;
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** An axis label for a bucket start: time of day (with seconds for sub-minute buckets), or the date for day-wide buckets. */
export function bucketLabel(iso: string, bucketSec: number, spansDays: boolean): string {
  const d = new Date(iso);
  const day = `${MONTHS[d.getMonth()] ?? ''} ${d.getDate()}`;
  if (bucketSec >= 86_400) return day;
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}${bucketSec < 60 ? `:${pad(d.getSeconds())}` : ''}`;
  return spansDays ? `${day} ${time}` : time;
}
