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

export { bucketLabel, formatAgo as ago, formatElapsed, usdTick } from '../src/protocol/format.js';
