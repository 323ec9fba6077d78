// The derived files and summaries: init/import and sync of BACKLOG.md, render-backlog,
// render-state (STATE.json), status and rebuild. Derived files are written atomically.
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  BacklogParseError,
  MAX_BACKLOG_BYTES,
  importStatus,
  parseBacklog,
  renderBacklog,
  skeletonBacklog,
  type BacklogRow,
} from '../domain/backlog';
import { domainEvent, type DomainEvent } from '../domain/events';
import { hasPromotedPatch, currentWave } from '../domain/task';
import { perDayBudgetOf } from './forecast';
import { loopPositionFrom, renderStateJson, renderStatus, type LoopPosition, type StatusFacts } from '../domain/views';
import { statusFactsFrom } from '../domain/statusFacts';
import { sqlStatusSource } from './statusImage';
import { readStateJson } from './stateJson';
import type { Task } from '../domain/model';
import type { SqlReader } from '../store/types';
import { onFile, writeFileAtomicSync } from '../shared/fs';
import { CONTROL_ACTOR, ralphPaths, type ControlContext } from './context';
import { decideAndAppend } from './tasks';
import { allTasks, getTask, patchesOf, promotedSince } from './views';

function readBacklogRows(ctx: ControlContext): BacklogRow[] {
  const file = ralphPaths(ctx.ralphDir).backlog;
  const shown = path.relative(ctx.projectDir, file) || file;
  const size = onFile('stat', file, () => fs.statSync(file)).size;
  if (size > MAX_BACKLOG_BYTES)
    throw new BacklogParseError([{ file: shown, line: 1, message: `${size} bytes; BACKLOG.md is at most ${MAX_BACKLOG_BYTES} bytes` }]);
  const parsed = parseBacklog(
    onFile('read', file, () => fs.readFileSync(file, 'utf8')),
    shown,
  );
  if (parsed.problems.length > 0) throw new BacklogParseError(parsed.problems);
  return parsed.rows;
}

function migratedEvent(row: BacklogRow, actor: string): { event: DomainEvent; note?: string } {
  const { status, note } = importStatus(row.rawStatus);
  return {
    event: domainEvent('task.migrated', row.id, actor, {
      title: row.title,
      source: row.source,
      effort: row.effort,
      deps: row.deps,
      wave: row.wave,
      status,
      backlog_status: row.rawStatus,
    }),
    ...(note ? { note: `${row.id}: ${note}` } : {}),
  };
}

export interface ImportResult {
  readonly migrated: number;
  readonly createdBacklog: boolean;
  /** Rows whose status changed on import, and why. */
  readonly notes: readonly string[];
}

/**
 * init (the reference behaviour): writes a skeleton BACKLOG.md (waves 0-2) if there is
 * none, imports every row not yet in the log as `task.migrated` (all or nothing: a
 * malformed row fails the import with file and line), then renders the views.
 */
export async function importBacklog(ctx: ControlContext, actor = CONTROL_ACTOR): Promise<ImportResult> {
  const file = ralphPaths(ctx.ralphDir).backlog;
  let createdBacklog = false;
  if (!fs.existsSync(file)) {
    writeFileAtomicSync(file, skeletonBacklog(), { mkdir: true });
    createdBacklog = true;
  }
  const rows = readBacklogRows(ctx);
  const { result } = await decideAndAppend(ctx, (db) => {
    const events: DomainEvent[] = [];
    const notes: string[] = [];
    for (const row of rows) {
      if (getTask(db, row.id) !== undefined) continue;
      const m = migratedEvent(row, actor);
      events.push(m.event);
      if (m.note) notes.push(m.note);
    }
    return { events, result: { migrated: events.length, notes } };
  });
  renderBacklogFile(ctx);
  renderState(ctx);
  return { ...result, createdBacklog };
}

export function formatMigrated(n: number): string {
  return `Migrated ${n} items from BACKLOG.md into SQLite`;
}

/** The wave titles someone wrote into the current BACKLOG.md (kept when it is rendered again). */
function currentWaveTitles(file: string): ReadonlyMap<number, string> {
  try {
    return parseBacklog(fs.readFileSync(file, 'utf8')).waveTitles;
  } catch {
    return new Map();
  }
}

/** render-backlog: BACKLOG.md from task_view. */
export function renderBacklogFile(ctx: ControlContext): string {
  const tasks = allTasks(ctx.store);
  const file = ralphPaths(ctx.ralphDir).backlog;
  const text = renderBacklog(tasks, tasks.length === 0 ? [0, 1, 2] : [], currentWaveTitles(file));
  writeFileAtomicSync(file, text, { mkdir: true });
  return text;
}

export interface SyncResult {
  /** Rows new to the log, imported as `task.migrated`. */
  readonly imported: readonly string[];
  /** Done marks backed by a promoted patch, now done in the log. */
  readonly completed: readonly string[];
  /** Done marks refused: no promoted patch (the task keeps its status). */
  readonly refused: readonly { taskId: string; status: string }[];
}

/**
 * sync-backlog: brings BACKLOG.md's additions into the log. A `done` mark makes a task
 * done only when it has a promoted patch; otherwise it is reported, never applied.
 */
export async function syncBacklog(ctx: ControlContext, actor = CONTROL_ACTOR): Promise<SyncResult> {
  const rows = readBacklogRows(ctx);
  const { result } = await decideAndAppend(ctx, (db) => {
    const events: DomainEvent[] = [];
    const imported: string[] = [];
    const completed: string[] = [];
    const refused: { taskId: string; status: string }[] = [];
    for (const row of rows) {
      const task = getTask(db, row.id);
      if (task === undefined) {
        events.push(migratedEvent(row, actor).event);
        imported.push(row.id);
        if (row.rawStatus.trim().toLowerCase() === 'done') refused.push({ taskId: row.id, status: 'pending' });
        continue;
      }
      if (row.rawStatus.trim().toLowerCase() !== 'done' || task.status === 'done') continue;
      if (hasPromotedPatch(patchesOf(db, row.id))) {
        events.push(domainEvent('task.done', row.id, actor, { old_status: task.status, new_status: 'done', reason: 'sync-backlog' }));
        completed.push(row.id);
      } else refused.push({ taskId: row.id, status: task.status });
    }
    return { events, result: { imported, completed, refused } };
  });
  return result;
}

export function formatSync(r: SyncResult): { out: string; err: string } {
  const out = `Synced ${r.completed.length} completions and ${r.imported.length} new items from BACKLOG.md into SQLite\n`;
  const err = r.refused
    .map(
      (x) =>
        `${x.taskId}: marked done in BACKLOG.md but has no promoted patch; left ${x.status} (a task is done only through promote-patch)\n`,
    )
    .join('');
  return { out, err };
}

function taskCounts(tasks: readonly Task[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const t of tasks) counts[t.status] = (counts[t.status] ?? 0) + 1;
  return counts;
}

/** render-state: STATE.json from the log; the loop's position (phase, iteration…) is kept. */
export function renderState(ctx: ControlContext, loop?: Partial<LoopPosition>): string {
  const tasks = allTasks(ctx.store);
  const text = renderStateJson(
    { taskCounts: taskCounts(tasks), commitsTotal: promotedSince(ctx.store, undefined), currentWave: currentWave(tasks) },
    readStateJson(ctx.ralphDir),
    loop,
  );
  writeFileAtomicSync(ralphPaths(ctx.ralphDir).state, text, { mkdir: true });
  return text;
}

/** The facts `status` prints (also `status --json`). */
export function statusFacts(ctx: ControlContext): StatusFacts {
  return statusFactsOf(ctx.store, loopPositionFrom(readStateJson(ctx.ralphDir)), ctx.now(), () => perDayBudgetOf(ctx.projectDir));
}

/**
 * The status facts of the views in `db` (the live store, or one replayed up to a moment for
 * `status --at`), with the loop's position and the clock of that moment.
 */
export function statusFactsOf(
  db: SqlReader,
  pos: Pick<LoopPosition, 'phase' | 'iteration' | 'current_item'>,
  now: Date,
  readPerDayBudgetUsd: () => number,
): StatusFacts {
  return statusFactsFrom(sqlStatusSource(db), pos, now, readPerDayBudgetUsd);
}

/** status: the reference's summary. */
export function statusText(ctx: ControlContext): string {
  return renderStatus(statusFacts(ctx));
}

/** rebuild: replays every event into fresh views; returns the event count. */
export async function rebuildViews(ctx: ControlContext): Promise<number> {
  await ctx.store.rebuild();
  return ctx.store.get<{ n: number }>('SELECT COUNT(*) AS n FROM events')?.n ?? 0;
}
