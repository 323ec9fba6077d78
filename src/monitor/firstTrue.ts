// The bisection the time slider's indexes share: their arrays are sorted by time (or id), so
// "the first entry at or past X" is a binary search, not a scan.

/** The first index in [0, n) at which `holds` is true, given it stays true after; n if none. */
export function firstTrue(n: number, holds: (i: number) => boolean): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (holds(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
