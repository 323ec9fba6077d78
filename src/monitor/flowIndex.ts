// The time slider's index of the live log's task history (rows in time order, every one
// timed): the status counts after each row, kept as the rows arrive, and where each row's run
// began (the first row after the last quiet gap before it). A moment's history is a prefix
// of the rows, so its flow chart is a count read per bucket (a binary search for the
// bucket's end) and its run window a few jumps, instead of a walk of every task event up to
// the moment (80k of them at 100k events: tens of ms per move). Each answer equals
// flowSeries' and runWindow's over the prefix (test/unit/monitor/flowIndex.unit.test.ts).
import type { FlowPoint, TaskStatus } from '../protocol/monitor';
import { TASK_STATUSES } from '../protocol/monitor';
import { firstTrue } from './firstTrue';
import { RUN_GAP_MS, bucketStarts, chooseBucketSec, runWindow } from './series';
import type { RunWindow, TaskEventRow } from './series';

const STATUS_INDEX = new Map<TaskStatus, number>(TASK_STATUSES.map((s, i) => [s, i]));
const K = TASK_STATUSES.length;

export class FlowIndex {
  private ts = new Float64Array(1024);
  /** counts[(k * K) + s]: tasks in status s after the first k rows. */
  private counts = new Int32Array(1025 * K);
  /** runStart[k]: the first row of row k's run through task rows alone. */
  private runStart = new Int32Array(1024);
  private n = 0;
  private readonly statusOf = new Map<string, number>();

  /** Rows indexed so far (the history's first `length` rows). */
  get length(): number {
    return this.n;
  }

  /** Appends rows that follow the indexed ones in time order (each timed; callers check). */
  extend(rows: readonly TaskEventRow[]): void {
    this.reserve(this.n + rows.length);
    for (const r of rows) {
      const k = this.n;
      this.ts[k] = r.tsMs;
      this.runStart[k] = k > 0 && r.tsMs - (this.ts[k - 1] ?? 0) <= RUN_GAP_MS ? (this.runStart[k - 1] ?? 0) : k;
      this.counts.copyWithin((k + 1) * K, k * K, (k + 1) * K);
      if (r.status !== null) {
        const after = STATUS_INDEX.get(r.status);
        const before = this.statusOf.get(r.taskId);
        if (after !== undefined && before !== after) {
          if (before !== undefined) this.counts[(k + 1) * K + before] = (this.counts[(k + 1) * K + before] ?? 0) - 1;
          this.counts[(k + 1) * K + after] = (this.counts[(k + 1) * K + after] ?? 0) + 1;
          this.statusOf.set(r.taskId, after);
        }
      }
      this.n = k + 1;
    }
  }

  /** runWindow(lines, the first `n` rows, nowMs, running). */
  runWindow(lines: readonly { readonly tsMs: number }[], n: number, nowMs: number, running: boolean): RunWindow | null {
    if (!inOrder(lines)) return runWindow(lines, this.rowsTimes(n), nowMs, running);
    // The last line and row at or before now; the latest of them ends the window.
    const li = firstTrue(lines.length, (i) => (lines[i]?.tsMs ?? 0) > nowMs) - 1;
    const tj = firstTrue(n, (i) => (this.ts[i] ?? 0) > nowMs) - 1;
    const lastLine = li >= 0 ? lines[li]?.tsMs : undefined;
    const lastRow = tj >= 0 ? this.ts[tj] : undefined;
    if (lastLine === undefined && lastRow === undefined) return null;
    const last = Math.max(lastLine ?? Number.NEGATIVE_INFINITY, lastRow ?? Number.NEGATIVE_INFINITY);
    // The window starts at the earliest activity reachable from the last by steps of at most
    // the gap: every line or row within the gap of the start so far, then the start of that
    // row's run of rows, until nothing more is reached.
    let from = last;
    for (;;) {
      const bound = from - RUN_GAP_MS;
      let next = from;
      const l = firstTrue(li + 1, (i) => (lines[i]?.tsMs ?? 0) >= bound);
      if (l <= li) next = Math.min(next, lines[l]?.tsMs ?? next);
      const t = firstTrue(tj + 1, (i) => (this.ts[i] ?? 0) >= bound);
      if (t <= tj) next = Math.min(next, this.ts[this.runStart[t] ?? t] ?? next);
      if (next >= from) break;
      from = next;
    }
    return { fromMs: from, toMs: running ? nowMs : last };
  }

  /** flowSeries(the first `n` rows, window, maxBuckets). */
  flow(n: number, window: RunWindow | null, maxBuckets: number): { bucketSec: number; points: FlowPoint[] } {
    if (!window || n === 0) return { bucketSec: 60, points: [] };
    const bucketSec = chooseBucketSec(window.fromMs, window.toMs, maxBuckets);
    const w = bucketSec * 1000;
    const points: FlowPoint[] = [];
    for (const start of bucketStarts(window.fromMs, window.toMs, bucketSec)) {
      // The rows before the bucket's end are counted.
      const k = firstTrue(n, (i) => (this.ts[i] ?? 0) >= start + w);
      const counts = Object.fromEntries(TASK_STATUSES.map((s, i) => [s, this.counts[k * K + i] ?? 0])) as Record<TaskStatus, number>;
      points.push({ t: new Date(start).toISOString(), counts });
    }
    return { bucketSec, points };
  }

  private rowsTimes(n: number): { tsMs: number }[] {
    return Array.from({ length: n }, (_, i) => ({ tsMs: this.ts[i] ?? 0 }));
  }

  private reserve(n: number): void {
    if (n <= this.ts.length) return;
    let cap = this.ts.length;
    while (cap < n) cap *= 2;
    const ts = new Float64Array(cap);
    ts.set(this.ts);
    this.ts = ts;
    const rs = new Int32Array(cap);
    rs.set(this.runStart);
    this.runStart = rs;
    const counts = new Int32Array((cap + 1) * K);
    counts.set(this.counts);
    this.counts = counts;
  }
}

/** Whether the times never decrease (and none is NaN). */
function inOrder(xs: readonly { readonly tsMs: number }[]): boolean {
  for (let k = 0; k < xs.length; k++) {
    const t = xs[k]?.tsMs ?? Number.NaN;
    if (Number.isNaN(t) || (k > 0 && (xs[k - 1]?.tsMs ?? Number.NaN) > t)) return false;
  }
  return true;
}
