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

/**
 * Axis ticks: as many decimals as the tick step needs (at least two), so neighbouring ticks
 * never read the same ("$0.01 $0.01 $0.00" on a cent-sized axis).
 */
export function usdTick(n: number, step: number): string {
  const decimals = step > 0 ? Math.min(6, Math.max(2, Math.ceil(-Math.log10(step) - 1e-9))) : 2;
  return `$${n.toFixed(decimals)}`;
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

export { formatAgo as ago, formatElapsed } from '../src/protocol/time.js';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** An axis label for a bucket start: time of day (with seconds for sub-minute buckets), or the date for day-wide buckets. */
export function bucketLabel(iso: string, bucketSec: number, spansDays: boolean): string {
  const d = new Date(iso);
  const day = `${MONTHS[d.getMonth()] ?? ''} ${d.getDate()}`;
  if (bucketSec >= 86_400) return day;
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}${bucketSec < 60 ? `:${pad(d.getSeconds())}` : ''}`;
  return spansDays ? `${day} ${time}` : time;
}
