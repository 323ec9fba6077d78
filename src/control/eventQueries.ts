// Read queries over the event log and the task view that a host's views need (the event
// log, tooltips, a judge's verdict, the agents of the run another process writes), so no
// host writes SQL against Ralph's tables itself.
import type { SqlReader, StoredEvent } from '../store/types';
import { EVENT_COLUMNS, rowToEvent } from '../store/eventRows';
import type { EventRow } from '../store/eventRows';
import type { Task } from '../domain/model';

/** Deferred tasks, oldest deferral first (what waits for a decision). */
export function deferredTasksIn(db: SqlReader): Task[] {
  return db.all<Task>("SELECT * FROM task_view WHERE status = 'deferred' ORDER BY deferred_at, task_id");
}

/** The newest events first, optionally those whose type, entity or actor contains `filter`. */
export function recentEvents(db: SqlReader, limit = 200, filter?: string): StoredEvent[] {
  const rows = filter
    ? db.all<EventRow>(
        `SELECT ${EVENT_COLUMNS} FROM events WHERE event_type LIKE ?1 OR entity_id LIKE ?1 OR actor LIKE ?1 ORDER BY event_id DESC LIMIT ?2`,
        [`%${filter}%`, limit],
      )
    : db.all<EventRow>(`SELECT ${EVENT_COLUMNS} FROM events ORDER BY event_id DESC LIMIT ?`, [limit]);
  return rows.map(rowToEvent);
}

export interface TaskEventSummary {
  readonly event_type: string;
  readonly ts: string;
  readonly actor: string;
}

/** The latest event about a task. */
export function lastTaskEvent(db: SqlReader, taskId: string): TaskEventSummary | undefined {
  return db.get<TaskEventSummary>(
    "SELECT event_type, ts, actor FROM events WHERE entity_type = 'task' AND entity_id = ? ORDER BY event_id DESC LIMIT 1",
    [taskId],
  );
}

export interface DeferralVerdict {
  readonly decision: string;
  readonly rationale: string;
  readonly actor: string;
  readonly ts: string;
}

/** The latest judge (or human) verdict on a task's deferral. */
export function lastDeferralVerdict(db: SqlReader, taskId: string): DeferralVerdict | undefined {
  const row = db.get<{ payload: string; actor: string; ts: string }>(
    "SELECT payload, actor, ts FROM events WHERE entity_type = 'task' AND entity_id = ? AND event_type = 'task.deferral_resolved' ORDER BY event_id DESC LIMIT 1",
    [taskId],
  );
  if (!row) return undefined;
  try {
    const p = JSON.parse(row.payload) as { decision?: string; rationale?: string };
    return { decision: p.decision ?? '?', rationale: p.rationale ?? '', actor: row.actor, ts: row.ts };
  } catch {
    return undefined;
  }
}

/**
 * The events of the given types since the latest `loop.started`, oldest first; undefined
 * when no loop ever started (what an observer replays to see the writer's running agents).
 */
export function eventsOfLatestRun(db: SqlReader, types: readonly string[]): StoredEvent[] | undefined {
  const start = db.get<{ event_id: string }>(
    "SELECT event_id FROM events WHERE event_type = 'loop.started' ORDER BY event_id DESC LIMIT 1",
  );
  if (start === undefined) return undefined;
  const rows = db.all<EventRow>(
    `SELECT ${EVENT_COLUMNS} FROM events WHERE event_id > ? AND event_type IN (${types.map(() => '?').join(', ')}) ORDER BY event_id`,
    [start.event_id, ...types],
  );
  return rows.map(rowToEvent);
}

/** The events of the given types at or after `sinceTs` (ISO), oldest first (the team's agents of today). */
export function eventsSince(db: SqlReader, types: readonly string[], sinceTs: string): StoredEvent[] {
  const rows = db.all<EventRow>(
    `SELECT ${EVENT_COLUMNS} FROM events WHERE ts >= ? AND event_type IN (${types.map(() => '?').join(', ')}) ORDER BY event_id`,
    [sinceTs, ...types],
  );
  return rows.map(rowToEvent);
}
