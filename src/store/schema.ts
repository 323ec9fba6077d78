// The store's own schema: the public `events` table exactly as the reference has it, plus
// bookkeeping tables, created and upgraded by numbered migrations.
import { StoreVersionError } from './errors';
import type { SqlDb } from './sqlDb';

export interface Migration {
  readonly version: number;
  readonly statements: readonly string[];
}

/*
 * `events.ts` is ISO 8601 UTC with milliseconds ('2026-11-29T17:26:33.123Z'). SQLite's own
 * datetime('now', ...) yields '2026-11-29 16:26:33', and comparing the two as strings
 * puts 'T' after ' ', so `ts > datetime('now','-1 hour')` counts the whole day. Compare
 * like with like instead:
 *   ts > strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-1 hour')   -- uses idx_events_ts
 *   julianday(ts) > julianday('now', '-1 hour')              -- parses the ISO form
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    statements: [
      `CREATE TABLE IF NOT EXISTS events (
        event_id TEXT NOT NULL PRIMARY KEY,
        ts TEXT NOT NULL,
        run_id TEXT NOT NULL,
        entity_type TEXT NOT NULL,
        entity_id TEXT NOT NULL,
        event_type TEXT NOT NULL,
        actor TEXT NOT NULL,
        payload TEXT NOT NULL DEFAULT '{}'
      )`,
      'CREATE INDEX IF NOT EXISTS idx_events_entity ON events(entity_type, entity_id)',
      'CREATE INDEX IF NOT EXISTS idx_events_type ON events(event_type)',
      'CREATE INDEX IF NOT EXISTS idx_events_ts ON events(ts)',
      `CREATE TABLE IF NOT EXISTS ralph_meta (
        key TEXT NOT NULL PRIMARY KEY,
        value TEXT NOT NULL
      )`,
      `CREATE TABLE IF NOT EXISTS ralph_projections (
        name TEXT NOT NULL PRIMARY KEY,
        version INTEGER NOT NULL,
        rebuilt_at TEXT NOT NULL
      )`,
    ],
  },
];

export const SCHEMA_VERSION = MIGRATIONS.reduce((v, m) => Math.max(v, m.version), 0);

/** Applies the migrations the database lacks; returns the versions applied. */
export function migrate(db: SqlDb, file: string): number[] {
  const hasMeta = db.get("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = 'ralph_meta'") !== undefined;
  const row = hasMeta ? db.get<{ value: string }>("SELECT value FROM ralph_meta WHERE key = 'schema_version'") : undefined;
  const current = row ? Number(row.value) : 0;
  if (current > SCHEMA_VERSION) throw new StoreVersionError(file, current, SCHEMA_VERSION);
  const applied: number[] = [];
  for (const m of MIGRATIONS) {
    if (m.version <= current) continue;
    db.exec('BEGIN');
    try {
      for (const s of m.statements) db.exec(s);
      db.run("INSERT OR REPLACE INTO ralph_meta(key, value) VALUES ('schema_version', ?)", [String(m.version)]);
      db.exec('COMMIT');
    } catch (e) {
      db.rollbackQuietly();
      throw e;
    }
    applied.push(m.version);
  }
  return applied;
}
