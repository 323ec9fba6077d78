// Over 400 lines because the monitor's snapshot is one query per panel over the same store and files, sharing their row types.
// Builds the monitor's snapshot from the database (events, task_view, patch_view, queried
// by the reference schema), the `.ralph/` files (STATE.json, logs/par-metrics-*.jsonl,
// commits/pending/) and what only the host knows (running agents, recent log lines).
// Plain Node: the extension host and the CLI both call it.
import { readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { z } from 'zod';
import type { SqlReader } from '../store/types';
import type {
  AgentCost,
  DeferredItem,
  EventRow,
  EventSummary,
  FlowPoint,
  LogLine,
  LoopRun,
  LoopState,
  MonitorSnapshot,
  RunningAgent,
} from '../protocol/monitor';
import { PATCH_STATUSES, TASK_STATUSES, emptySnapshot } from '../protocol/monitor';
import { perDayBudgetOf, readForecast } from '../control/forecast';
import { renderForecast } from '../domain/forecast';
import { safetyFacts, unconfinedRoles } from '../control/safetyStatus';
import { isFailure, readMetrics } from './metrics';
import { readPause } from './pause';
import { createReqEventsCache, readReqSection } from './reqSection';
import type { ReqEventsCache } from './reqSection';
import type { MetricsFileCache, MetricsLine } from './metrics';
import { costSeries, flowSeries, phaseDurations, runWindow, statusAfterEvent } from './series';
import type { RunWindow, TaskEventRow } from './series';
import { FlowIndex } from './flowIndex';

export interface SnapshotInput {
  /** Whether a loop runs (this window's or another process's); default stopped. */
  readonly run?: LoopRun;
  /** The loop runs in another process and this window follows it. */
  readonly observing?: boolean;
  /** The workspace folder's name and the number of spec files found (the empty state names them). */
  readonly project?: { readonly name: string; readonly specs: number };
  /** Agents the host is running now (the database does not know about processes). */
  readonly agents?: readonly RunningAgent[];
  /** The newest log lines, oldest first; the snapshot keeps the last `maxLogLines`. */
  readonly logLines?: readonly LogLine[];
  /** Defaults to `<logsDir>/../STATE.json`. */
  readonly statePath?: string;
  /** Days of metrics files the cost series and phase durations cover (default 7). */
  readonly metricsDays?: number;
  /** Most points per series (default 48). */
  readonly maxBuckets?: number;
  /** Default 200. */
  readonly maxLogLines?: number;
  /**
   * Keeps the task history between builds so each build reads only the new task events
   * (the first build of a 100k-event log reads them all; see scripts/bench/monitor.ts).
   */
  readonly cache?: SnapshotCache;
  /**
   * `now` is a past moment and `db` holds the log up to it (the time slider): STATE.json (the
   * loop's position today) is not read, metrics lines after `now` do not count, and the
   * timeline (where the moment lies in the live log) is the caller's to fill.
   */
  readonly past?: boolean;
  /**
   * The project whose specification.yaml the REQ section folds the req.* events over;
   * default: the folder holding `.ralph/`. Null: no REQ section.
   */
  readonly projectDir?: string | null;
  /**
   * The task history up to `now` in time order, rows with a time only, when the caller has
   * it (the time slider: its prefix of the log's); the cache's is then not read.
   */
  readonly history?: readonly TaskEventRow[];
  /** Answers for the event counts and the last ten events without a scan (the time slider's). */
  readonly eventIndex?: EventIndex;
  /** The charts' run window and task flow without a walk of the history (the time slider's). */
  readonly taskFlow?: TaskFlow;
}

/** What runWindow and flowSeries answer over the task history up to `now`, known another way. */
export interface TaskFlow {
  runWindow(lines: readonly { readonly tsMs: number }[], nowMs: number, running: boolean): RunWindow | null;
  flow(window: RunWindow | null, maxBuckets: number): { bucketSec: number; points: FlowPoint[] };
}

/** An event table's row as the events panel reads it. */
export interface RecentEventDbRow {
  event_id: string;
  ts: string;
  entity_type: string;
  entity_id: string;
  event_type: string;
  actor: string;
  payload: string;
}

/**
 * What readEvents would count and list, known another way; each answer is exactly the
 * query's or undefined (then the query runs).
 */
export interface EventIndex {
  /** `COUNT(*) WHERE ts >= lo AND julianday(ts) >= julianday(at)`. */
  countSince(lo: string, at: string): number | undefined;
  /** `COUNT(*)`. */
  total(): number | undefined;
  /** `ORDER BY ts DESC, event_id DESC LIMIT n`. */
  recent(n: number): readonly RecentEventDbRow[] | undefined;
}

/** The task events already read, in time order; opaque to callers. */
export interface SnapshotCache {
  rows: TaskEventRow[];
  lastEventId: string | null;
  /**
   * The rows' flow index while they are plain (every one timed, times never decreasing):
   * the charts then read it instead of walking every task event at each build.
   */
  flow: FlowIndex | null;
  readonly metricsFiles: MetricsFileCache;
  /** The REQ section's req.* events read so far. */
  readonly req?: ReqEventsCache;
}

export function createSnapshotCache(): SnapshotCache {
  return { rows: [], lastEventId: null, flow: new FlowIndex(), metricsFiles: new Map(), req: createReqEventsCache() };
}

interface TaskRowDbRow {
  ts: string;
  entity_id: string;
  event_type: string;
  payload: string | null;
}

interface TaskEventDbRow extends TaskRowDbRow {
  event_id: string;
}

// Transition events name their status; only other task events need their payload parsed.
// The full read uses the entity index. The incremental read must walk the primary key from
// `event_id > ?`: the unary `+`s keep SQLite (which has no statistics here) from choosing
// the entity or ts index and scanning the whole log.
const TASK_EVENTS_SQL = `SELECT event_id, ts, entity_id, event_type,
  CASE WHEN substr(event_type, 6) IN ('pending','claimed','proposed','done','deferred','blocked','dropped','completed')
       THEN NULL ELSE payload END AS payload
  FROM events`;
const FULL_SQL = `${TASK_EVENTS_SQL} WHERE entity_type = 'task' ORDER BY ts, event_id`;
// Without the event id: a fifth of the full read's time, which only a delta needs.
const ROWS_SQL = FULL_SQL.replace('SELECT event_id, ', 'SELECT ');
const DELTA_SQL = `${TASK_EVENTS_SQL} WHERE +entity_type = 'task' AND event_id > ? ORDER BY +ts, event_id`;

function toTaskRow(r: TaskRowDbRow): TaskEventRow {
  return { tsMs: Date.parse(r.ts), taskId: r.entity_id, status: statusAfterEvent(r.event_type, () => parsePayload(r.payload)) };
}

/** Task events after `afterEventId` (all when null) in time order, each with its event id. */
export function readTaskEvents(db: SqlReader, afterEventId: string | null): { readonly id: string; readonly row: TaskEventRow }[] {
  const rows = afterEventId === null ? db.all<TaskEventDbRow>(FULL_SQL) : db.all<TaskEventDbRow>(DELTA_SQL, [afterEventId]);
  return rows.map((r) => ({ id: r.event_id, row: toTaskRow(r) }));
}

/** Every task event in time order, with a time. */
function taskHistory(db: SqlReader): TaskEventRow[] {
  return db
    .all<TaskRowDbRow>(ROWS_SQL)
    .map(toTaskRow)
    .filter((r) => !Number.isNaN(r.tsMs));
}

/** Whether rows[from..] are timed and in time order, following rows[from - 1]. */
function plainFrom(rows: readonly TaskEventRow[], from: number): boolean {
  for (let k = from; k < rows.length; k++) {
    const t = rows[k]?.tsMs ?? Number.NaN;
    if (Number.isNaN(t) || (k > 0 && (rows[k - 1]?.tsMs ?? Number.NaN) > t)) return false;
  }
  return true;
}

/**
 * Reads the task events not in `cache` yet: the charts' answers from its flow index when the
 * history is plain, else the history with a time to walk.
 */
function cachedTaskFlow(db: SqlReader, cache: SnapshotCache): { taskFlow: TaskFlow } | { history: TaskEventRow[] } {
  let fresh: TaskRowDbRow[];
  if (cache.lastEventId === null) {
    // The first read: every task event, and as the cursor the log's last id (by the primary
    // key), which no task event read later can be at or below.
    fresh = db.all<TaskRowDbRow>(ROWS_SQL);
    cache.lastEventId = db.get<{ m: string | null }>('SELECT MAX(event_id) AS m FROM events')?.m ?? null;
  } else {
    const delta = db.all<TaskEventDbRow>(DELTA_SQL, [cache.lastEventId]);
    const count = db.get<{ n: number }>("SELECT COUNT(*) AS n FROM events WHERE entity_type = 'task'")?.n ?? 0;
    if (cache.rows.length + delta.length !== count) {
      // The log was rebuilt or replaced under us: start over.
      cache.rows = [];
      cache.lastEventId = null;
      cache.flow = new FlowIndex();
      return cachedTaskFlow(db, cache);
    }
    for (const r of delta) if (cache.lastEventId === null || r.event_id > cache.lastEventId) cache.lastEventId = r.event_id;
    fresh = delta;
  }
  const rows = fresh.map(toTaskRow);
  const from = cache.rows.length;
  const lastTs = cache.rows[from - 1]?.tsMs ?? Number.NEGATIVE_INFINITY;
  cache.rows.push(...rows);
  if (cache.flow !== null && !plainFrom(cache.rows, from)) cache.flow = null;
  // Append order and time order agree unless a writer stamped an older time: re-sort then.
  if ((rows[0]?.tsMs ?? lastTs) < lastTs) cache.rows.sort((a, b) => a.tsMs - b.tsMs);
  const index = cache.flow;
  // Counted rows include unparseable times; keep them in the cache, skip them in the flow.
  if (index === null) return { history: cache.rows.filter((r) => !Number.isNaN(r.tsMs)) };
  index.extend(rows);
  const n = index.length;
  return {
    taskFlow: {
      runWindow: (lines, nowMs, running) => index.runWindow(lines, n, nowMs, running),
      flow: (window, maxBuckets) => index.flow(n, window, maxBuckets),
    },
  };
}

const MAX_WARNINGS = 20;

const stateFileSchema = z.object({
  phase: z.string().catch('unknown'),
  iteration: z.coerce.number().int().nonnegative().catch(0),
  current_wave: z.coerce.number().int().nonnegative().catch(0),
  commits_total: z.coerce.number().int().nonnegative().catch(0),
  current_item: z.string().nullable().catch(null),
});

/** The tables, and the views standing for one (the time slider's `events`), in either schema. */
function tableNames(db: SqlReader): Set<string> {
  return new Set(
    db
      .all<{ name: string }>(
        "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') UNION ALL SELECT name FROM sqlite_temp_master WHERE type IN ('table', 'view')",
      )
      .map((r) => r.name),
  );
}

function parsePayload(text: unknown): Record<string, unknown> {
  if (typeof text !== 'string' || text === '') return {};
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : '';
}

/** One short line from a payload: a status change, then the reason or rationale. */
export function summarizePayload(payload: Record<string, unknown>): string {
  const parts: string[] = [];
  const from = str(payload['old_status']);
  const to = str(payload['new_status']);
  // A transition to the same status (a re-based patch stays proposed) is no change to show.
  if (from && to && from === to) parts.push(`still ${to}`);
  else if (from || to) parts.push(from ? `${from} → ${to || '∅'}` : `new, ${to}`);
  for (const k of ['reason', 'rationale', 'decision', 'verdict', 'commit_hash', 'title', 'task_id']) {
    const v = str(payload[k]);
    if (v) {
      parts.push(k === 'commit_hash' ? v.slice(0, 8) : v);
      break;
    }
  }
  const s = parts.join(' · ');
  return s.length > 140 ? `${s.slice(0, 139)}…` : s;
}

function zeroCounts<K extends string>(keys: readonly K[]): Record<K, number> {
  return Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;
}

function readState(path: string, warnings: string[]): z.infer<typeof stateFileSchema> | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return null; // no STATE.json yet: the numbers are derived instead
  }
  try {
    return stateFileSchema.parse(JSON.parse(text));
  } catch (e) {
    warnings.push(`${path}: unreadable STATE.json (${(e as Error).message.split('\n')[0]})`);
    return null;
  }
}

/**
 * The patch files of patches still waiting for promotion. The store decides what waits, not
 * the directory: a promoted or discarded patch's file is not pending, wherever it lies.
 */
function pendingPatchFiles(db: SqlReader): string[] {
  return db
    .all<{ patch_id: string; patch_path: string | null }>(
      "SELECT patch_id, patch_path FROM patch_view WHERE status IN ('queued', 'applied', 'verified') ORDER BY created_at, patch_id",
    )
    .map((r) => (r.patch_path ? basename(r.patch_path) : r.patch_id));
}

function agentCosts(lines: readonly MetricsLine[]): AgentCost[] {
  const by = new Map<string, AgentCost>();
  for (const l of lines) {
    const a = by.get(l.agent) ?? {
      agent: l.agent,
      invocations: 0,
      failures: 0,
      cost: 0,
      inputTokens: 0,
      outputTokens: 0,
      cacheRead: 0,
      cacheCreate: 0,
      durationSec: 0,
    };
    a.invocations += 1;
    if (isFailure(l)) a.failures += 1;
    a.cost += l.cost;
    a.inputTokens += l.input_tokens;
    a.outputTokens += l.output_tokens;
    a.cacheRead += l.cache_read;
    a.cacheCreate += l.cache_create;
    a.durationSec += l.duration;
    by.set(l.agent, a);
  }
  return [...by.values()]
    .map((a) => ({ ...a, cost: Math.round(a.cost * 10_000) / 10_000, durationSec: Math.round(a.durationSec * 10) / 10 }))
    .sort((a, b) => b.cost - a.cost || a.agent.localeCompare(b.agent));
}

/** Counts rows of `table` by status, naming statuses outside `known` in a warning. */
function countByStatus<K extends string>(
  db: SqlReader,
  table: 'task_view' | 'patch_view',
  known: readonly K[],
  warnings: string[],
): Record<K, number> {
  const counts = zeroCounts<K>(known);
  for (const r of db.all<{ status: string; n: number }>(`SELECT status, COUNT(*) AS n FROM ${table} GROUP BY status`)) {
    if (r.status in counts) counts[r.status as K] = r.n;
    else warnings.push(`${table}: ${r.n} row(s) with unknown status '${r.status}'`);
  }
  return counts;
}

/** Totals, the two time windows and the last ten events. */
function readEvents(db: SqlReader, nowMs: number, index: EventIndex | undefined): EventSummary {
  // The ts index narrows to a bound one second early; julianday() then decides exactly, so
  // a stamp without milliseconds ('…:07Z', sorting after '…:07.500Z') is not miscounted,
  // and nothing is compared with SQLite's space-separated datetime() (see store/schema.ts).
  const countSince = (ms: number): number => {
    const lo = new Date(ms - 1000).toISOString();
    const at = new Date(ms).toISOString();
    return (
      index?.countSince(lo, at) ??
      db.get<{ n: number }>('SELECT COUNT(*) AS n FROM events WHERE ts >= ? AND julianday(ts) >= julianday(?)', [lo, at])?.n ??
      0
    );
  };
  const rows =
    index?.recent(10) ??
    db.all<RecentEventDbRow>(
      'SELECT event_id, ts, entity_type, entity_id, event_type, actor, payload FROM events ORDER BY ts DESC, event_id DESC LIMIT 10',
    );
  const recent: EventRow[] = rows.map((r) => ({
    eventId: r.event_id,
    ts: r.ts,
    entityType: r.entity_type,
    entityId: r.entity_id,
    eventType: r.event_type,
    actor: r.actor,
    summary: summarizePayload(parsePayload(r.payload)),
  }));
  return {
    total: index?.total() ?? db.get<{ n: number }>('SELECT COUNT(*) AS n FROM events')?.n ?? 0,
    lastHour: countSince(nowMs - 3_600_000),
    last10Min: countSince(nowMs - 600_000),
    recent,
  };
}

/** Deferred tasks, oldest first, each with the judge's latest verdict on it or its patch. */
function readDeferred(db: SqlReader, hasEvents: boolean): DeferredItem[] {
  const rows = db.all<{
    task_id: string;
    title: string | null;
    risk_tier: number | null;
    deferred_reason: string | null;
    deferred_at: string | null;
    source: string | null;
    patch_id: string | null;
  }>(
    "SELECT task_id, title, risk_tier, deferred_reason, deferred_at, source, patch_id FROM task_view WHERE status = 'deferred' ORDER BY deferred_at, task_id",
  );
  const verdicts = new Map<string, DeferredItem['verdict']>();
  if (hasEvents && rows.length > 0) {
    // Verdicts are events on the task or its patch; the (entity_type, entity_id) index finds them.
    const ids = [...new Set(rows.flatMap((r) => [r.task_id, r.patch_id ?? '']).filter(Boolean))];
    const judged = db.all<{ ts: string; entity_id: string; event_type: string; payload: string }>(
      `SELECT ts, entity_id, event_type, payload FROM events
        WHERE entity_type IN ('task', 'patch') AND entity_id IN (${ids.map(() => '?').join(', ')}) AND actor = 'judge'
        ORDER BY ts DESC, event_id DESC`,
      ids,
    );
    for (const j of judged) {
      const p = parsePayload(j.payload);
      const key = rows.find((r) => r.task_id === j.entity_id || r.patch_id === j.entity_id)?.task_id;
      if (!key || verdicts.has(key)) continue;
      verdicts.set(key, {
        decision: str(p['verdict']) || str(p['decision']) || j.event_type.split('.').pop() || j.event_type,
        rationale: str(p['rationale']) || str(p['reason']),
        ts: j.ts,
      });
    }
  }
  return rows.map((r) => ({
    taskId: r.task_id,
    title: r.title ?? '',
    riskTier: Math.min(3, Math.max(0, Number(r.risk_tier ?? 1))),
    reason: r.deferred_reason ?? '',
    deferredAt: r.deferred_at,
    source: r.source ?? '',
    patchId: r.patch_id,
    verdict: verdicts.get(r.task_id) ?? null,
  }));
}

/** Without STATE.json: phase from the last invocation, wave and current task from task_view. */
function deriveState(
  db: SqlReader | null,
  metrics: readonly MetricsLine[],
  hasEvents: boolean,
  promoted: number,
): Omit<LoopState, 'run' | 'observing'> {
  const last = metrics[metrics.length - 1];
  const wave =
    db?.get<{ w: number | null }>("SELECT MIN(wave) AS w FROM task_view WHERE status IN ('pending', 'claimed', 'proposed', 'deferred')")
      ?.w ?? 0;
  const current =
    db?.get<{ task_id: string }>("SELECT task_id FROM task_view WHERE status = 'claimed' ORDER BY wave, task_id LIMIT 1")?.task_id ?? null;
  return {
    phase: last?.phase_to || (hasEvents ? 'assess' : 'idle'),
    iteration: metrics.reduce((m, l) => Math.max(m, Math.trunc(l.iter)), 0),
    wave,
    commits: promoted,
    currentTask: current,
    source: 'derived',
  };
}

/**
 * Everything the monitor shows, at `now`. Never throws for missing tables or files: what
 * it could not read is named in `warnings`.
 */
export function buildMonitorSnapshot(db: SqlReader, logsDir: string, now: Date, input: SnapshotInput = {}): MonitorSnapshot {
  const nowMs = now.getTime();
  const ralphDir = dirname(logsDir);
  const maxBuckets = input.maxBuckets ?? 48;
  const warnings: string[] = [];
  const snap = emptySnapshot(now);

  const tables = tableNames(db);
  const hasEvents = tables.has('events');
  const hasTasks = tables.has('task_view');
  const hasPatches = tables.has('patch_view');
  if (!hasEvents) warnings.push('ralph.db has no events table yet (run Ralph: Initialize Project)');

  const byTask = hasTasks ? countByStatus(db, 'task_view', TASK_STATUSES, warnings) : zeroCounts(TASK_STATUSES);
  const total = Object.values(byTask).reduce((a, b) => a + b, 0);
  const live = total - byTask.dropped;
  snap.tasks = { total, byStatus: byTask, progress: live > 0 ? byTask.done / live : 0 };

  const byPatch = hasPatches ? countByStatus(db, 'patch_view', PATCH_STATUSES, warnings) : zeroCounts(PATCH_STATUSES);
  snap.patches = {
    total: Object.values(byPatch).reduce((a, b) => a + b, 0),
    byStatus: byPatch,
    pendingFiles: hasPatches ? pendingPatchFiles(db) : [],
  };

  if (hasEvents) snap.events = readEvents(db, nowMs, input.eventIndex);
  if (hasTasks) snap.deferred = readDeferred(db, hasEvents);

  // Metrics: today's cost, the cost series, per-phase durations
  const read = readMetrics(logsDir, now, input.metricsDays ?? 7, input.cache?.metricsFiles);
  const metrics = input.past ? { ...read, lines: read.lines.filter((l) => l.tsMs <= nowMs) } : read;
  warnings.push(...metrics.problems);
  const todayPrefix = now.toISOString().slice(0, 10);
  // "Today" is the UTC day, like the metrics file names; a line's own ts decides, not its file.
  const today = metrics.lines.filter((l) => new Date(l.tsMs).toISOString().startsWith(todayPrefix));
  const byAgent = agentCosts(today);
  snap.cost = {
    day: todayPrefix,
    cost: Math.round(byAgent.reduce((a, b) => a + b.cost, 0) * 10_000) / 10_000,
    invocations: today.length,
    failures: today.filter(isFailure).length,
    byAgent,
  };
  const run = input.run ?? 'stopped';
  const given: { taskFlow?: TaskFlow; history?: readonly TaskEventRow[] } = !hasEvents
    ? { history: [] }
    : input.taskFlow
      ? { taskFlow: input.taskFlow }
      : input.history
        ? { history: input.history }
        : input.cache
          ? cachedTaskFlow(db, input.cache)
          : { history: taskHistory(db) };
  const taskFlow = given.taskFlow;
  const history = given.history ?? [];
  const window = taskFlow
    ? taskFlow.runWindow(metrics.lines, nowMs, run !== 'stopped')
    : runWindow(metrics.lines, history, nowMs, run !== 'stopped');
  const cost = costSeries(metrics.lines, window, maxBuckets);
  const flow = taskFlow ? taskFlow.flow(window, maxBuckets) : flowSeries(history, window, maxBuckets);
  snap.series = {
    costBucketSec: cost.bucketSec,
    flowBucketSec: flow.bucketSec,
    cost: cost.points,
    flow: flow.points,
    phases: phaseDurations(metrics.lines),
  };

  const stateFile = input.past ? null : readState(input.statePath ?? join(ralphDir, 'STATE.json'), warnings);
  const state = stateFile
    ? {
        phase: stateFile.phase,
        iteration: stateFile.iteration,
        wave: stateFile.current_wave,
        commits: stateFile.commits_total,
        currentTask: stateFile.current_item,
        source: 'state' as const,
      }
    : deriveState(hasTasks ? db : null, metrics.lines, snap.events.total > 0, byPatch.promoted);
  // STATE.json keeps the last phase after a stop; with no loop running the truth is "stopped",
  // and no task is current.
  // A paused loop says why; a window following another process's loop learns of the pause
  // from the store alone.
  const pause = hasEvents && run !== 'stopped' ? readPause(db) : null;
  const shownRun: LoopRun = pause !== null && (run === 'paused' || input.observing === true) ? 'paused' : run;
  snap.state =
    run === 'stopped'
      ? { ...state, phase: 'stopped', currentTask: null, run, observing: false }
      : {
          ...state,
          run: shownRun,
          observing: input.observing ?? false,
          ...(shownRun === 'paused' && pause !== null ? { pause: { reason: pause.reason, short: pause.short } } : {}),
        };
  snap.project = { name: input.project?.name ?? '', initialized: hasEvents, specs: input.project?.specs ?? 0 };

  // No loop, no running agents: a stopped run leaves nothing spinning.
  snap.agents = run === 'stopped' ? [] : [...(input.agents ?? [])];
  snap.logLines = (input.logLines ?? []).slice(-(input.maxLogLines ?? 200));
  snap.empty = snap.events.total === 0 && total === 0 && metrics.lines.length === 0;
  if (hasEvents) {
    const safety = safetyFacts(db);
    snap.safety = { unconfined: unconfinedRoles(safety), incidents: safety.incidents.length };
  }
  if (hasEvents && hasTasks) {
    try {
      snap.forecast = renderForecast(readForecast(db, { now, perDayBudgetUsd: () => perDayBudgetOf(dirname(ralphDir)) })) ?? null;
    } catch (e) {
      warnings.push(`forecast: ${(e as Error).message}`);
    }
    // Past moments: the time slider says where the moment lies in the live log.
    if (!input.past) {
      // One min() or max() per query is read from the ts index; both in one scan the log.
      const first = db.get<{ ts: string | null }>('SELECT MIN(ts) AS ts FROM events')?.ts ?? null;
      const last = db.get<{ ts: string | null }>('SELECT MAX(ts) AS ts FROM events')?.ts ?? null;
      snap.timeline = { total: snap.events.total, firstTs: first, lastTs: last, at: null };
    }
  }
  const projectDir = input.projectDir === undefined ? (basename(ralphDir) === '.ralph' ? dirname(ralphDir) : null) : input.projectDir;
  if (hasEvents && projectDir !== null) {
    try {
      snap.req = readReqSection(db, projectDir, warnings, input.cache?.req);
    } catch (e) {
      warnings.push(`REQ section: ${(e as Error).message}`);
    }
  }
  snap.warnings =
    warnings.length > MAX_WARNINGS ? [...warnings.slice(0, MAX_WARNINGS), `… and ${warnings.length - MAX_WARNINGS} more`] : warnings;
  return snap;
}
