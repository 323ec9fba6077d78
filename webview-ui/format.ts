// Number, money, duration and time formatting for the monitor (the user's locale and zone).

const intFmt = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
const compactFmt = new Intl.NumberFormat(undefined, { notation: 'compact', maximumFractionDigits: 1 });

export function int(n: number): string {
  return intFmt.format(n);
}

export function compact(n: number): string {
  return n < 10_000 ? intFmt.format(n) : compactFmt.format(n);
}

/** Dollars: three decimals below $1 (single invocations cost cents), two above. */
export function usd(n: number): string {
  return `$${n === 0 ? '0.00' : n < 1 ? n.toFixed(3) : n < 10_000 ? n.toFixed(2) : intFmt.format(n)}`;
}

/** Axis ticks: always two decimals. */
export function usdTick(n: number): string {
  return `$${n.toFixed(2)}`;
}

export function percent(share: number): string {
  return `${Math.round(share * 100)}%`;
}

export function duration(sec: number): string {
  if (sec === 0) return '0s';
  if (sec < 60) return `${sec < 10 && !Number.isInteger(sec) ? sec.toFixed(1) : Math.round(sec)}s`;
  const m = Math.floor(sec / 60);
  const s = Math.round(sec % 60);
  if (m < 60) return s === 0 ? `${m}m` : `${m}m ${s}s`;
  return m % 60 === 0 ? `${Math.floor(m / 60)}h` : `${Math.floor(m / 60)}h ${m % 60}m`;
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

/** HH:MM:SS local time. */
export function clock(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** "12s ago", "5m ago", "3h ago", "2d ago". */
export function ago(iso: string | null, nowMs: number): string {
  if (!iso) return '—';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const s = Math.max(0, Math.round((nowMs - t) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86_400)}d ago`;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** An axis label for a bucket start: time of day, or the date for day-wide buckets. */
export function bucketLabel(iso: string, bucketSec: number, spansDays: boolean): string {
  const d = new Date(iso);
  const day = `${MONTHS[d.getMonth()] ?? ''} ${d.getDate()}`;
  if (bucketSec >= 86_400) return day;
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  return spansDays ? `${day} ${time}` : time;
}
