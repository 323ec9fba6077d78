// A real sql.js database with the reference schema (events, task_view, patch_view), and a
// SqlReader over it, for the monitor's tests and benchmark.
import initSqlJs from 'sql.js';
import type { Database, SqlValue as SqlJsValue } from 'sql.js';
import type { SqlParams, SqlReader } from '../../../src/store/types';

export const REFERENCE_DDL = `
CREATE TABLE events (
  event_id TEXT PRIMARY KEY, ts TEXT NOT NULL, run_id TEXT NOT NULL, entity_type TEXT NOT NULL,
  entity_id TEXT NOT NULL, event_type TEXT NOT NULL, actor TEXT NOT NULL, payload TEXT NOT NULL DEFAULT '{}');
CREATE TABLE task_view (
  task_id TEXT PRIMARY KEY, status TEXT NOT NULL DEFAULT 'pending', title TEXT, source TEXT, effort TEXT,
  deps TEXT DEFAULT '-', wave INTEGER NOT NULL DEFAULT 0, risk_tier INTEGER NOT NULL DEFAULT 1, claimed_by TEXT,
  patch_id TEXT, version INTEGER NOT NULL DEFAULT 1, deferred_reason TEXT, deferred_at TEXT,
  provenance TEXT NOT NULL DEFAULT 'spec');
CREATE TABLE patch_view (
  patch_id TEXT PRIMARY KEY, task_id TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'queued', patch_path TEXT,
  created_by TEXT, created_at TEXT, applied_at TEXT, commit_hash TEXT);
CREATE INDEX idx_events_entity ON events(entity_type, entity_id);
CREATE INDEX idx_events_type ON events(event_type);
CREATE INDEX idx_events_ts ON events(ts);
CREATE INDEX idx_task_status ON task_view(status);
CREATE INDEX idx_task_wave ON task_view(wave);
CREATE INDEX idx_patch_task ON patch_view(task_id);
CREATE INDEX idx_patch_status ON patch_view(status);
`;

export async function openSqlJs(): Promise<Database> {
  const SQL = await initSqlJs({ locateFile: (f: string) => require.resolve('sql.js/dist/' + f) });
  return new SQL.Database();
}

/** SqlReader over a sql.js database (what the store's adapter offers). */
export function readerOf(db: Database): SqlReader {
  const all = <R extends object>(sql: string, params?: SqlParams): R[] => {
    const stmt = db.prepare(sql);
    try {
      if (params) stmt.bind(params as unknown as SqlJsValue[]);
      const out: R[] = [];
      while (stmt.step()) out.push(stmt.getAsObject() as R);
      return out;
    } finally {
      stmt.free();
    }
  };
  return { all, get: <R extends object>(sql: string, params?: SqlParams): R | undefined => all<R>(sql, params)[0] };
}

export interface EventSeed {
  ts: string;
  entity_type?: string;
  entity_id: string;
  event_type: string;
  actor?: string;
  payload?: Record<string, unknown>;
}

let seq = 0;
export function insertEvents(db: Database, events: readonly EventSeed[]): void {
  const stmt = db.prepare('INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
  db.run('BEGIN');
  for (const e of events) {
    seq++;
    stmt.run([
      // Sortable in append order, as the store's ids are (the monitor's cache relies on it).
      `evt_${String(seq).padStart(10, '0')}_${e.ts}`,
      e.ts,
      'run_test',
      e.entity_type ?? 'task',
      e.entity_id,
      e.event_type,
      e.actor ?? 'control_plane',
      JSON.stringify(e.payload ?? {}),
    ]);
  }
  db.run('COMMIT');
  stmt.free();
}
