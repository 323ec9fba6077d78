// The task_view and patch_view projections (the reference's public tables, columns,
// defaults and indexes exactly; users query them), built by folding events with the
// domain's evolve functions, and the typed row queries the commands use.
import type { Projection, SqlReader, SqlWriter, StoredEvent } from '../store/types';
import { readEvent } from '../domain/events';
import { evolveTask } from '../domain/task';
import { evolvePatch } from '../domain/patch';
import type { Patch, Task } from '../domain/model';
import { promotionViewProjection } from './promotionView';

const TASK_COLUMNS = [
  'task_id',
  'status',
  'title',
  'source',
  'effort',
  'deps',
  'wave',
  'risk_tier',
  'claimed_by',
  'patch_id',
  'version',
  'deferred_reason',
  'deferred_at',
  'provenance',
] as const;
const PATCH_COLUMNS = ['patch_id', 'task_id', 'status', 'patch_path', 'created_by', 'created_at', 'applied_at', 'commit_hash'] as const;

const UPSERT_TASK = `INSERT OR REPLACE INTO task_view(${TASK_COLUMNS.join(', ')}) VALUES (${TASK_COLUMNS.map(() => '?').join(', ')})`;
const UPSERT_PATCH = `INSERT OR REPLACE INTO patch_view(${PATCH_COLUMNS.join(', ')}) VALUES (${PATCH_COLUMNS.map(() => '?').join(', ')})`;

export const taskViewProjection: Projection = {
  name: 'task_view',
  version: 1,
  tables: ['task_view'],
  ddl: [
    `CREATE TABLE IF NOT EXISTS task_view (
      task_id TEXT PRIMARY KEY,
      status TEXT NOT NULL DEFAULT 'pending',
      title TEXT,
      source TEXT,
      effort TEXT,
      deps TEXT DEFAULT '-',
      wave INTEGER NOT NULL DEFAULT 0,
      risk_tier INTEGER NOT NULL DEFAULT 1,
      claimed_by TEXT,
      patch_id TEXT,
      version INTEGER NOT NULL DEFAULT 1,
      deferred_reason TEXT,
      deferred_at TEXT,
      provenance TEXT NOT NULL DEFAULT 'spec'
    )`,
    'CREATE INDEX IF NOT EXISTS idx_task_view_status ON task_view(status)',
    'CREATE INDEX IF NOT EXISTS idx_task_view_wave ON task_view(wave)',
  ],
  apply(db: SqlWriter, event: StoredEvent): void {
    if (event.entity_type !== 'task') return;
    const e = readEvent(event);
    if (e === null) return;
    const before = getTask(db, e.entity_id);
    const after = evolveTask(before, e);
    if (after === undefined || after === before) return;
    db.run(
      UPSERT_TASK,
      TASK_COLUMNS.map((c) => after[c]),
    );
  },
};

export const patchViewProjection: Projection = {
  name: 'patch_view',
  version: 1,
  tables: ['patch_view'],
  ddl: [
    `CREATE TABLE IF NOT EXISTS patch_view (
      patch_id TEXT PRIMARY KEY,
      task_id TEXT NOT NULL,
      status TEXT NOT NULL DEFAULT 'queued',
      patch_path TEXT,
      created_by TEXT,
      created_at TEXT,
      applied_at TEXT,
      commit_hash TEXT
    )`,
    'CREATE INDEX IF NOT EXISTS idx_patch_view_task ON patch_view(task_id)',
    'CREATE INDEX IF NOT EXISTS idx_patch_view_status ON patch_view(status)',
  ],
  apply(db: SqlWriter, event: StoredEvent): void {
    if (event.entity_type !== 'patch') return;
    const e = readEvent(event);
    if (e === null) return;
    const before = getPatch(db, e.entity_id);
    const after = evolvePatch(before, e);
    if (after === undefined || after === before) return;
    db.run(
      UPSERT_PATCH,
      PATCH_COLUMNS.map((c) => after[c]),
    );
  },
};

/** The projections the control plane needs; pass them to openStore. */
export const CONTROL_PROJECTIONS: readonly Projection[] = [taskViewProjection, patchViewProjection, promotionViewProjection];

export function getTask(db: SqlReader, taskId: string): Task | undefined {
  return db.get<Task>('SELECT * FROM task_view WHERE task_id = ?', [taskId]);
}

export function getPatch(db: SqlReader, patchId: string): Patch | undefined {
  return db.get<Patch>('SELECT * FROM patch_view WHERE patch_id = ?', [patchId]);
}

/** A task's patches, oldest first. */
export function patchesOf(db: SqlReader, taskId: string): Patch[] {
  return db.all<Patch>('SELECT * FROM patch_view WHERE task_id = ? ORDER BY created_at, patch_id', [taskId]);
}

export function allTasks(db: SqlReader): Task[] {
  return db.all<Task>('SELECT * FROM task_view ORDER BY wave, task_id');
}

export function countBy(db: SqlReader, table: 'task_view' | 'patch_view'): [string, number][] {
  return db
    .all<{ status: string; n: number }>(`SELECT status, COUNT(*) AS n FROM ${table} GROUP BY status ORDER BY status`)
    .map((r) => [r.status, r.n]);
}

/** Promoted patches (commits) after the given event id; all of them when undefined. */
export function promotedSince(db: SqlReader, afterEventId: string | undefined): number {
  const row =
    afterEventId === undefined
      ? db.get<{ n: number }>("SELECT COUNT(*) AS n FROM events WHERE event_type = 'patch.promoted'")
      : db.get<{ n: number }>("SELECT COUNT(*) AS n FROM events WHERE event_type = 'patch.promoted' AND event_id > ?", [afterEventId]);
  return row?.n ?? 0;
}

/** The id of the task's latest event of one type. */
export function lastEventId(db: SqlReader, taskId: string, eventType: string): string | undefined {
  return db.get<{ event_id: string }>(
    "SELECT event_id FROM events WHERE entity_type = 'task' AND entity_id = ? AND event_type = ? ORDER BY event_id DESC LIMIT 1",
    [taskId, eventType],
  )?.event_id;
}
