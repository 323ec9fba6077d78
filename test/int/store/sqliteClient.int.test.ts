import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openStore } from '../../../src/store/sqlJsStore';
import type { NewEvent } from '../../../src/store/types';
import { pythonSqlite } from './childProcess';

function ev(entity_id: string, event_type: string): NewEvent {
  return { entity_type: 'task', entity_id, event_type, actor: 'sql-test', payload: { note: 'naïve ✓' } };
}

describe('ralph.db read by a real SQLite client (python3 sqlite3)', function () {
  this.timeout(60_000);
  const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-sql-')), '.ralph');
  const db = path.join(dir, 'ralph.db');
  // Fixed instants so date boundaries cannot make the test flaky.
  const NOW = Date.UTC(2026, 10, 29, 13, 30, 0, 0);
  const at = (minutesAgo: number): number => NOW - minutesAgo * 60_000;

  before(async () => {
    let t = at(0);
    const store = await openStore({ ralphDir: dir, mode: 'writer', projections: [], clock: () => t });
    t = at(90);
    await store.append([ev('T1', 'task.created'), ev('T2', 'task.created')]); // older than an hour
    t = at(61);
    await store.append([ev('T1', 'task.claimed')]); // just older than an hour
    t = at(59);
    await store.append([ev('T1', 'task.proposed')]);
    t = at(10);
    await store.append([ev('T1', 'task.done'), ev('T2', 'task.claimed')]);
    t = Date.now();
    await store.append([ev('T3', 'task.created')]); // really now, for the 'now' query
    await store.close();
  });

  it('opens cleanly, passes integrity_check and has the public tables, columns and indexes', () => {
    const r = pythonSqlite<{ ok: string; tables: string[]; cols: string[]; idx: string[][] }>(
      db,
      `print(json.dumps({
  "ok": con.execute("PRAGMA integrity_check").fetchone()[0],
  "tables": [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")],
  "cols": [r[1] for r in con.execute("PRAGMA table_info(events)")],
  "idx": [[r[0], r[1]] for r in con.execute("SELECT il.name, ii.name FROM pragma_index_list('events') il JOIN pragma_index_info(il.name) ii WHERE il.origin = 'c' ORDER BY il.name, ii.seqno")],
}))`,
    );
    assert.equal(r.ok, 'ok');
    assert.ok(r.tables.includes('events'));
    assert.deepEqual(r.cols, ['event_id', 'ts', 'run_id', 'entity_type', 'entity_id', 'event_type', 'actor', 'payload']);
    assert.deepEqual(r.idx, [
      ['idx_events_entity', 'entity_type'],
      ['idx_events_entity', 'entity_id'],
      ['idx_events_ts', 'ts'],
      ['idx_events_type', 'event_type'],
    ]);
  });

  it('stores payload as JSON text that json_extract reads', () => {
    const notes = pythonSqlite<string[]>(
      db,
      `print(json.dumps([r[0] for r in con.execute("SELECT json_extract(payload, '$.note') FROM events")]))`,
    );
    assert.ok(notes.length === 7 && notes.every((n) => n === 'naïve ✓'));
  });

  it('counts "last hour" correctly with ISO-aware comparisons; the naive string comparison overcounts', () => {
    const ref = "'2026-11-29 13:30:00'"; // NOW in SQLite's own format
    const r = pythonSqlite<Record<string, number>>(
      db,
      `q = lambda sql: con.execute(sql).fetchone()[0]
print(json.dumps({
  "iso_strftime": q("SELECT COUNT(*) FROM events WHERE ts > strftime('%Y-%m-%dT%H:%M:%fZ', ${ref}, '-1 hour')"),
  "julianday": q("SELECT COUNT(*) FROM events WHERE julianday(ts) > julianday(${ref}, '-1 hour') AND julianday(ts) <= julianday(${ref})"),
  "datetime_both": q("SELECT COUNT(*) FROM events WHERE datetime(ts) > datetime(${ref}, '-1 hour') AND datetime(ts) <= datetime(${ref})"),
  "naive": q("SELECT COUNT(*) FROM events WHERE ts > datetime(${ref}, '-1 hour')"),
  "now_iso": q("SELECT COUNT(*) FROM events WHERE ts > strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-1 hour')"),
}))`,
    );
    // 3 events in the hour before NOW (59 and 10 minutes ago); plus the one at real "now" for the open-ended query
    assert.equal(r['iso_strftime'], 3 + 1);
    assert.equal(r['julianday'], 3);
    assert.equal(r['datetime_both'], 3);
    // the reference's query compares 'T' against ' ': every event of that day counts as recent
    assert.equal(r['naive'], 7);
    assert.ok((r['now_iso'] ?? 0) >= 1);
  });
});
