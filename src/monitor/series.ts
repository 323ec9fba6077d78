// Time series no peer's monitor shows: cost and tokens over time, the cumulative flow of
// task states, and per-phase durations. Pure functions over already-read rows.
import type { CostPoint, FlowPoint, PhaseDuration, TaskStatus } from '../protocol/monitor';
import { TASK_STATUSES } from '../protocol/monitor';
import type { MetricsLine } from './metrics';

/** Bucket widths we allow, so the axes read as round times. */
const BUCKET_LADDER_SEC = [
  1,
  2,
  5,
  10,
  15,
  30,
  60,
  120,
  300,
  600,
  900,
  1800,
  3600,
  2 * 3600,
  3 * 3600,
  6 * 3600,
  12 * 3600,
  86_400,
  7 * 86_400,
  30 * 86_400,
];

/** The smallest round bucket width that covers [fromMs, toMs] in at most `maxBuckets`. */
export function chooseBucketSec(fromMs: number, toMs: number, maxBuckets: number): number {
  const span = Math.max(0, toMs - fromMs) / 1000;
  for (const b of BUCKET_LADDER_SEC) {
    if (Math.floor(span / b) + 1 <= maxBuckets) return b;
  }
  return BUCKET_LADDER_SEC[BUCKET_LADDER_SEC.length - 1] ?? 86_400;
}

/** Bucket starts (ms, aligned to multiples of the width since the epoch) covering the span. */
export function bucketStarts(fromMs: number, toMs: number, bucketSec: number): number[] {
  const w = bucketSec * 1000;
  const first = Math.floor(fromMs / w) * w;
  const out: number[] = [];
  for (let t = first; t <= toMs; t += w) out.push(t);
  return out;
}

/** The time span the charts show; null when there is nothing to show. */
export interface RunWindow {
  readonly fromMs: number;
  readonly toMs: number;
}

/** A pause in activity longer than this starts a new run (the charts show the latest). */
export const RUN_GAP_MS = 30 * 60_000;

/**
 * The latest run's span: from the first activity after the last quiet gap longer than
 * RUN_GAP_MS to now while the loop runs, or to the last activity once it stopped. Activity
 * is invocations (metrics lines) and task events; both must be in time order.
 */
export function runWindow(
  lines: readonly { readonly tsMs: number }[],
  taskRows: readonly { readonly tsMs: number }[],
  nowMs: number,
  running: boolean,
): RunWindow | null {
  // Newest first, merged from the two lists' ends: the walk back stops at the gap, so a long
  // history costs what the latest run holds, not a sort of everything.
  const a = inOrder(lines) ? lines : [...lines].filter((l) => !Number.isNaN(l.tsMs)).sort((x, y) => x.tsMs - y.tsMs);
  const b = inOrder(taskRows) ? taskRows : [...taskRows].filter((r) => !Number.isNaN(r.tsMs)).sort((x, y) => x.tsMs - y.tsMs);
  let i = a.length - 1;
  let j = b.length - 1;
  while (i >= 0 && (a[i]?.tsMs ?? 0) > nowMs) i--;
  while (j >= 0 && (b[j]?.tsMs ?? 0) > nowMs) j--;
  const next = (): number | undefined => {
    const x = i >= 0 ? a[i]?.tsMs : undefined;
    const y = j >= 0 ? b[j]?.tsMs : undefined;
    if (x === undefined && y === undefined) return undefined;
    if (y === undefined || (x !== undefined && x >= y)) {
      i--;
      return x;
    }
    j--;
    return y;
  };
  const last = next();
  if (last === undefined) return null;
  let from = last;
  for (let t = next(); t !== undefined; t = next()) {
    if (from - t > RUN_GAP_MS) break;
    from = t;
  }
  // A loop still running but quiet for longer than the gap: its run began at that activity.
  return { fromMs: from, toMs: running ? nowMs : last };
}

/** Whether the times never decrease (and none is NaN). */
function inOrder(xs: readonly { readonly tsMs: number }[]): boolean {
  for (let k = 0; k < xs.length; k++) {
    const t = xs[k]?.tsMs ?? Number.NaN;
    if (Number.isNaN(t) || (k > 0 && (xs[k - 1]?.tsMs ?? Number.NaN) > t)) return false;
  }
  return true;
}

/** Cost and tokens summed per bucket of the window; empty buckets are kept so the bars read as time. */
export function costSeries(
  lines: readonly MetricsLine[],
  window: RunWindow | null,
  maxBuckets: number,
): { bucketSec: number; points: CostPoint[] } {
  const inWindow = window ? lines.filter((l) => l.tsMs >= window.fromMs && l.tsMs <= window.toMs) : [];
  if (!window || inWindow.length === 0) return { bucketSec: 60, points: [] };
  const bucketSec = chooseBucketSec(window.fromMs, window.toMs, maxBuckets);
  const starts = bucketStarts(window.fromMs, window.toMs, bucketSec);
  const w = bucketSec * 1000;
  const first = starts[0] ?? window.fromMs;
  const points: CostPoint[] = starts.map((t) => ({
    t: new Date(t).toISOString(),
    cost: 0,
    inputTokens: 0,
    outputTokens: 0,
    cacheTokens: 0,
    invocations: 0,
  }));
  for (const l of inWindow) {
    const p = points[Math.floor((l.tsMs - first) / w)];
    if (!p) continue;
    p.cost += l.cost;
    p.inputTokens += l.input_tokens;
    p.outputTokens += l.output_tokens;
    p.cacheTokens += l.cache_read + l.cache_create;
    p.invocations += 1;
  }
  for (const p of points) p.cost = Math.round(p.cost * 1_000_000) / 1_000_000;
  return { bucketSec, points };
}

/** One task event reduced to what the flow needs. */
export interface TaskEventRow {
  readonly tsMs: number;
  readonly taskId: string;
  /** The status the task has after this event, or null when the event changes no status. */
  readonly status: TaskStatus | null;
}

const STATUS_SET: ReadonlySet<string> = new Set(TASK_STATUSES);

/**
 * The status a task event leaves its task in. Transition events carry `new_status` (and are
 * named `task.<new_status>`); creation and import events start a task as pending unless
 * their payload says otherwise; `payload` is parsed only when the type does not decide.
 */
export function statusAfterEvent(eventType: string, payload: () => Record<string, unknown>): TaskStatus | null {
  const suffix = eventType.startsWith('task.') ? eventType.slice(5) : eventType;
  if (STATUS_SET.has(suffix)) return suffix as TaskStatus;
  if (suffix === 'completed') return 'done';
  const p = payload();
  const ns = p['new_status'] ?? (suffix === 'created' || suffix === 'migrated' ? (p['status'] ?? 'pending') : undefined);
  if (typeof ns === 'string' && STATUS_SET.has(ns)) return ns as TaskStatus;
  if (suffix === 'created' || suffix === 'migrated') return 'pending';
  return null;
}

/**
 * Cumulative flow: for each bucket, how many tasks were in each status at the bucket's
 * end. `rows` must be in time order.
 */
export function flowSeries(
  rows: readonly TaskEventRow[],
  window: RunWindow | null,
  maxBuckets: number,
): { bucketSec: number; points: FlowPoint[] } {
  if (!window || rows.length === 0) return { bucketSec: 60, points: [] };
  const bucketSec = chooseBucketSec(window.fromMs, window.toMs, maxBuckets);
  const starts = bucketStarts(window.fromMs, window.toMs, bucketSec);
  const w = bucketSec * 1000;
  const statusOf = new Map<string, TaskStatus>();
  const counts = Object.fromEntries(TASK_STATUSES.map((s) => [s, 0])) as Record<TaskStatus, number>;
  const points: FlowPoint[] = [];
  let i = 0;
  for (const start of starts) {
    const end = start + w;
    for (; i < rows.length; i++) {
      const r = rows[i];
      if (!r || r.tsMs >= end) break;
      if (r.status === null) continue;
      const before = statusOf.get(r.taskId);
      if (before === r.status) continue;
      if (before) counts[before] -= 1;
      counts[r.status] += 1;
      statusOf.set(r.taskId, r.status);
    }
    points.push({ t: new Date(start).toISOString(), counts: { ...counts } });
  }
  return { bucketSec, points };
}

/** Per executed phase (`phase_from`): invocations, total, mean and longest duration. */
export function phaseDurations(lines: readonly MetricsLine[]): PhaseDuration[] {
  const by = new Map<string, { n: number; total: number; max: number }>();
  for (const l of lines) {
    const phase = l.phase_from || '(unknown)';
    const e = by.get(phase) ?? { n: 0, total: 0, max: 0 };
    e.n += 1;
    e.total += l.duration;
    e.max = Math.max(e.max, l.duration);
    by.set(phase, e);
  }
  return [...by.entries()]
    .map(([phase, e]) => ({
      phase,
      invocations: e.n,
      totalSec: Math.round(e.total * 10) / 10,
      avgSec: Math.round((e.total / e.n) * 10) / 10,
      maxSec: e.max,
    }))
    .sort((a, b) => b.totalSec - a.totalSec || a.phase.localeCompare(b.phase));
}
