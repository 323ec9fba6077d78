// The shared store's tables on PostgreSQL: `events` with the embedded store's columns plus
// `seq` (the append position every process agrees on), `ralph_head` (one row: the last seq,
// the compare-and-swap target of every append) and `ralph_meta` (the schema version).
// `payload` stays the JSON text the embedded store keeps, byte for byte, so a migrated
// history reads back identical; query it as `payload::jsonb`.
import type { ClientBase } from 'pg';
import { StoreVersionError } from '../errors';

export const PG_SCHEMA_VERSION = 1;

/** The NOTIFY channel: the payload is the new head seq. */
export const EVENTS_CHANNEL = 'ralph_events';

// Taken by every process creating or upgrading the schema, so two first opens do not race.
const SCHEMA_LOCK_KEY = 0x52616c70; // 'Ralp'

const DDL: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS events (
    seq bigint PRIMARY KEY,
    event_id text NOT NULL UNIQUE,
    ts text NOT NULL,
    run_id text NOT NULL,
    entity_type text NOT NULL,
    entity_id text NOT NULL,
    event_type text NOT NULL,
    actor text NOT NULL,
    payload text NOT NULL DEFAULT '{}'
  )`,
  'CREATE INDEX IF NOT EXISTS idx_events_entity ON events(entity_type, entity_id)',
  'CREATE INDEX IF NOT EXISTS idx_events_type ON events(event_type)',
  'CREATE INDEX IF NOT EXISTS idx_events_ts ON events(ts)',
  'CREATE TABLE IF NOT EXISTS ralph_head (id int PRIMARY KEY CHECK (id = 1), seq bigint NOT NULL)',
  'INSERT INTO ralph_head(id, seq) VALUES (1, 0) ON CONFLICT (id) DO NOTHING',
  'CREATE TABLE IF NOT EXISTS ralph_meta (key text PRIMARY KEY, value text NOT NULL)',
];

/** Creates the tables when missing (writer) and checks the schema version (both modes). */
export async function ensurePgSchema(client: ClientBase, where: string, create: boolean): Promise<void> {
  const exists = await client.query<{ t: string | null }>("SELECT to_regclass('ralph_meta')::text AS t");
  if (!exists.rows[0]?.t) {
    if (!create) throw new Error(`${where}: no Ralph event store there yet (open it once as a writer, or run \`ralph store migrate\`)`);
    await client.query('BEGIN');
    try {
      await client.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK_KEY]);
      for (const s of DDL) await client.query(s);
      await client.query("INSERT INTO ralph_meta(key, value) VALUES ('schema_version', $1) ON CONFLICT (key) DO NOTHING", [
        String(PG_SCHEMA_VERSION),
      ]);
      await client.query('COMMIT');
    } catch (e) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw e;
    }
  }
  const v = await client.query<{ value: string }>("SELECT value FROM ralph_meta WHERE key = 'schema_version'");
  const found = Number(v.rows[0]?.value ?? 0);
  if (found > PG_SCHEMA_VERSION) throw new StoreVersionError(where, found, PG_SCHEMA_VERSION);
}
