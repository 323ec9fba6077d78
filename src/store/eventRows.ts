// The public `events` table's rows: the insert and column list, and conversion between
// a row (payload as JSON text) and a StoredEvent.
import type { EventFilter, NewEvent, StoredEvent } from './types';

export interface EventRow {
  event_id: string;
  ts: string;
  run_id: string;
  entity_type: string;
  entity_id: string;
  event_type: string;
  actor: string;
  payload: string;
}

export const INSERT_EVENT =
  'INSERT INTO events(event_id, ts, run_id, entity_type, entity_id, event_type, actor, payload) VALUES (?, ?, ?, ?, ?, ?, ?, ?)';
export const EVENT_COLUMNS = 'event_id, ts, run_id, entity_type, entity_id, event_type, actor, payload';

/** A row as a StoredEvent; a payload that is not a JSON object stays visible, wrapped. */
export function rowToEvent(r: EventRow): StoredEvent {
  let payload: Record<string, unknown>;
  try {
    const p: unknown = JSON.parse(r.payload);
    payload = p !== null && typeof p === 'object' && !Array.isArray(p) ? (p as Record<string, unknown>) : { _value: p };
  } catch {
    // Rows written by other tools (e.g. `emit-event` with bad JSON) stay visible, not dropped.
    payload = { _unparsed: r.payload };
  }
  return {
    event_id: r.event_id,
    ts: r.ts,
    run_id: r.run_id,
    entity_type: r.entity_type,
    entity_id: r.entity_id,
    event_type: r.event_type,
    actor: r.actor,
    payload,
  };
}

/** Rejects an event a command produced that the table could not hold faithfully. */
export function checkNewEvent(e: NewEvent, i: number): void {
  for (const k of ['entity_type', 'entity_id', 'event_type', 'actor'] as const) {
    if (typeof e[k] !== 'string' || e[k].length === 0) {
      throw new TypeError(`event ${i} (${String(e.event_type)}): ${k} must be a non-empty string`);
    }
  }
  if (e.payload === null || typeof e.payload !== 'object' || Array.isArray(e.payload)) {
    throw new TypeError(`event ${i} (${e.event_type}): payload must be a JSON object`);
  }
}

/** The SELECT behind `events(filter)`: every adapter reads its events table (or replica) with it. */
export function eventsQuery(filter: EventFilter): { sql: string; params: (string | number)[] } {
  const where: string[] = [];
  const params: (string | number)[] = [];
  if (filter.afterId !== undefined) {
    where.push('event_id > ?');
    params.push(filter.afterId);
  }
  if (filter.entityType !== undefined) {
    where.push('entity_type = ?');
    params.push(filter.entityType);
  }
  if (filter.entityId !== undefined) {
    where.push('entity_id = ?');
    params.push(filter.entityId);
  }
  let sql = `SELECT ${EVENT_COLUMNS} FROM events`;
  if (where.length > 0) sql += ` WHERE ${where.join(' AND ')}`;
  sql += ' ORDER BY event_id';
  if (filter.limit !== undefined) {
    sql += ' LIMIT ?';
    params.push(Math.max(0, Math.floor(filter.limit)));
  }
  return { sql, params };
}
