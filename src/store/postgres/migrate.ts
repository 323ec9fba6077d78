// `ralph store migrate --to postgres://…`: copies an embedded project's event log into a
// shared PostgreSQL store, then reads every event back and compares it field by field with
// the original (payload text byte for byte). The embedded store is held as the writer for
// the whole copy, so no event can slip in between. Re-running after an interruption
// continues: a PostgreSQL log that already holds a verified prefix gets only the rest.
import { Client } from 'pg';
import { pgClientConfig } from './pgConfig';
import { EVENT_COLUMNS, type EventRow } from '../eventRows';
import { openStore } from '../sqlJsStore';
import { redactStoreUrl, storeUrlProblem } from '../storeUrl';
import { EVENTS_CHANNEL, ensurePgSchema } from './pgSchema';

export interface MigrateResult {
  /** Events in the embedded log. */
  readonly total: number;
  /** Events this run copied (total minus those already there). */
  readonly copied: number;
  /** Events read back from PostgreSQL and found identical. */
  readonly verified: number;
  readonly url: string;
}

const FIELDS = ['event_id', 'ts', 'run_id', 'entity_type', 'entity_id', 'event_type', 'actor', 'payload'] as const;
const BATCH = 1000;

function firstDifference(a: EventRow, b: EventRow): string | undefined {
  return FIELDS.find((f) => a[f] !== b[f]);
}

export async function migrateToPostgres(
  ralphDir: string,
  url: string,
  log: (line: string) => void = () => undefined,
): Promise<MigrateResult> {
  const problem = storeUrlProblem(url);
  const where = redactStoreUrl(url);
  if (problem !== null) throw new Error(`--to: the store URL ${where} ${problem}`);
  const source = await openStore({ ralphDir, mode: 'writer', projections: [] });
  const client = new Client(pgClientConfig(url, 'ralph store migrate'));
  client.on('error', () => undefined); // surfaced by the failing query instead
  try {
    const rows = source.all<EventRow>(`SELECT ${EVENT_COLUMNS} FROM events ORDER BY event_id`);
    await client.connect();
    await ensurePgSchema(client, where, true);
    const there = await client.query<EventRow & { seq: string }>(`SELECT seq, ${EVENT_COLUMNS} FROM events ORDER BY seq`);
    if (there.rows.length > rows.length) {
      throw new Error(
        `${where} already holds ${there.rows.length} events, more than this project's ${rows.length}: not this project's history`,
      );
    }
    there.rows.forEach((r, i) => {
      const mine = rows[i] as EventRow;
      const diff = firstDifference(r, mine);
      if (diff !== undefined || Number(r.seq) !== i + 1) {
        throw new Error(
          `${where} already holds a different history: event ${i + 1} (${mine.event_id}) differs in ${diff ?? 'seq'}; migrate into an empty database`,
        );
      }
    });
    let copied = 0;
    for (let start = there.rows.length; start < rows.length; start += BATCH) {
      const chunk = rows.slice(start, start + BATCH);
      await client.query('BEGIN');
      try {
        const cas = await client.query('UPDATE ralph_head SET seq = seq + $1 WHERE id = 1 AND seq = $2', [chunk.length, start]);
        if (cas.rowCount !== 1) throw new Error(`${where}: another process appended during the migration; stop it and run migrate again`);
        await client.query(
          `INSERT INTO events(seq, ${EVENT_COLUMNS})
           SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])`,
          [chunk.map((_, i) => start + 1 + i), ...FIELDS.map((f) => chunk.map((r) => r[f]))],
        );
        await client.query('SELECT pg_notify($1, $2)', [EVENTS_CHANNEL, String(start + chunk.length)]);
        await client.query('COMMIT');
      } catch (e) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw e;
      }
      copied += chunk.length;
      log(`copied ${start + chunk.length}/${rows.length} events`);
    }
    // Verify: every event read back from PostgreSQL, compared with the original.
    const back = await client.query<EventRow & { seq: string }>(`SELECT seq, ${EVENT_COLUMNS} FROM events ORDER BY seq`);
    if (back.rows.length !== rows.length) throw new Error(`${where}: read back ${back.rows.length} events, expected ${rows.length}`);
    let verified = 0;
    back.rows.forEach((r, i) => {
      const mine = rows[i] as EventRow;
      const diff = firstDifference(r, mine);
      if (diff !== undefined) throw new Error(`${where}: event ${i + 1} (${mine.event_id}) reads back different in ${diff}`);
      verified += 1;
    });
    return { total: rows.length, copied, verified, url: where };
  } finally {
    await client.end().catch(() => undefined);
    await source.close();
  }
}
