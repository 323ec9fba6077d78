// Elapsed-time and wall-clock readings without node:perf_hooks. `performance` is a lazy
// global that loads perf_hooks and a dozen internal modules on first touch; a short-lived
// `ralph` call that only times its checkpoint paid for all of them.

/** Milliseconds on a monotonic clock, for durations (fractional, like performance.now()). */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** process.hrtime's reading at a known wall-clock time, so wallMicros need not read Date each time. */
const origin = { hr: process.hrtime.bigint(), wallUs: BigInt(Date.now()) * 1000n };

/** Microseconds of wall time with sub-millisecond resolution (as performance.timeOrigin + now()). */
export function wallMicros(): number {
  return Number(origin.wallUs + (process.hrtime.bigint() - origin.hr) / 1000n);
}
