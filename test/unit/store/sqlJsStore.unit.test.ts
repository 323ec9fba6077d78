import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ReadOnlyStoreError } from '../../../src/store/errors';
import { JOURNAL_FILE, readJournalSync } from '../../../src/store/journal';
import { loadSqlJs } from '../../../src/store/sqlDb';
import { openStore } from '../../../src/store/sqlJsStore';
import type { EventStore, NewEvent } from '../../../src/store/types';
import { counterProjection, counterRows } from './counterProjection';

function tmpRalph(): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-store-')), '.ralph');
}

function ev(entity_id: string, event_type = 'task.touched', payload: Record<string, unknown> = {}): NewEvent {
  return { entity_type: 'task', entity_id, event_type, actor: 'test', payload };
}

describe('store/sqlJsStore', () => {
  let dir: string;
  let store: EventStore | undefined;

  beforeEach(() => {
    dir = tmpRalph();
  });
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  it('given a fresh .ralph, when opened as writer, then ralph.db exists with the events schema', async () => {
    store = await openStore({ ralphDir: dir, mode: 'writer', projections: [counterProjection()] });
    assert.ok(fs.existsSync(path.join(dir, 'ralph.db')));
    const cols = store.all<{ name: string; type: string; notnull: number }>('PRAGMA table_info(events)');
    assert.deepEqual(
      cols.map((c) => [c.name, c.type, c.notnull]),
      ['event_id', 'ts', 'run_id', 'entity_type', 'entity_id', 'event_type', 'actor', 'payload'].map((n) => [n, 'TEXT', 1]),
    );
    const idx = store.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type='index' AND tbl_name='events' AND sql IS NOT NULL");
    assert.equal(idx.length, 3);
    assert.match(store.runId, /^run_\d{8}_\d+$/);
  });

  it('when execute decides events, then they are stored, projected and returned with id, ts and run', async () => {
    store = await openStore({ ralphDir: dir, mode: 'writer', projections: [counterProjection()] });
    const out = await store.execute((db) => {
      const n = db.get<{ n: number }>('SELECT count(*) AS n FROM events')?.n ?? -1;
      return { events: [ev('T1', 'task.created', { title: 'x' })], result: n };
    });
    assert.equal(out.result, 0);
    assert.equal(out.events.length, 1);
    const e = out.events[0];
    assert.ok(e);
    assert.match(e.ts, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(e.run_id, store.runId);
    assert.deepEqual(store.events(), out.events);
    assert.deepEqual(store.get('SELECT n FROM test_counter'), { n: 1 });
    assert.equal(store.get<{ payload: string }>('SELECT payload FROM events')?.payload, '{"title":"x"}');
  });

  it('given decide or a projection throws, then nothing is stored and nothing journaled', async () => {
    store = await openStore({ ralphDir: dir, mode: 'writer', projections: [counterProjection()] });
    await store.append([ev('T0')]);
    const journal = fs.statSync(path.join(dir, JOURNAL_FILE)).size;
    await assert.rejects(
      store.execute(() => {
        throw new Error('no');
      }),
      /no/,
    );
    await assert.rejects(store.append([ev('T1'), ev('T2', 'x', { explode: true })]), /projection refused/);
    assert.equal(store.events().length, 1);
    assert.deepEqual(store.all('SELECT entity_id FROM test_last'), [{ entity_id: 'T0' }]);
    assert.equal(fs.statSync(path.join(dir, JOURNAL_FILE)).size, journal);
    // and the store still works
    await store.append([ev('T3')]);
    assert.equal(store.events().length, 2);
  });

  it('given 10k identical events appended in a tight loop, then all get unique ids in order', async () => {
    store = await openStore({ ralphDir: dir, mode: 'writer', projections: [] });
    const s = store;
    const acks = Array.from({ length: 10_000 }, () => s.append([ev('T1', 'task.same')]));
    const ids = (await Promise.all(acks)).map((x) => x[0]?.event_id ?? '');
    assert.equal(new Set(ids).size, 10_000);
    assert.deepEqual(
      s.events().map((e) => e.event_id),
      ids,
    );
    assert.ok(s.stats().fsyncs < 10, `burst shares fsyncs, got ${s.stats().fsyncs}`);
  });

  it('given a burst of executes in one tick, then they share one fsync; sequential commands get one each', async () => {
    store = await openStore({ ralphDir: dir, mode: 'writer', projections: [] });
    const s = store;
    const before = s.stats().fsyncs;
    await Promise.all(Array.from({ length: 50 }, (_, i) => s.append([ev(`T${i}`)])));
    assert.equal(s.stats().fsyncs - before, 1);
    for (let i = 0; i < 3; i++) await s.append([ev('S')]);
    assert.equal(s.stats().fsyncs - before, 4);
  });

  it('given events, when rebuild runs, then projection rows equal the incrementally built ones', async () => {
    store = await openStore({ ralphDir: dir, mode: 'writer', projections: [counterProjection()] });
    for (let i = 0; i < 200; i++) await store.append([ev(`T${i % 17}`, `t.${i % 5}`, { i })]);
    const incremental = counterRows(store);
    await store.rebuild();
    assert.deepEqual(counterRows(store), incremental);
    assert.equal(incremental.length, 5 + 17);
  });

  it('given a projection version bump, when reopened, then its tables are rebuilt from the events', async () => {
    store = await openStore({ ralphDir: dir, mode: 'writer', projections: [counterProjection(1)] });
    for (let i = 0; i < 20; i++) await store.append([ev(`T${i % 3}`)]);
    const rows = counterRows(store);
    store.all('SELECT 1'); // no-op read
    await store.close();
    store = await openStore({ ralphDir: dir, mode: 'writer', projections: [counterProjection(2)] });
    assert.deepEqual(counterRows(store), rows);
    assert.deepEqual(store.get('SELECT version FROM ralph_projections WHERE name = ?', ['test_counter']), { version: 2 });
  });

  it('given a projection at its version whose DDL gained an index, when reopened, then the index is created and the rows kept', async () => {
    store = await openStore({ ralphDir: dir, mode: 'writer', projections: [counterProjection(1)] });
    for (let i = 0; i < 5; i++) await store.append([ev(`T${i}`)]);
    const rows = counterRows(store);
    await store.close();
    const base = counterProjection(1);
    const grown = { ...base, ddl: [...base.ddl, 'CREATE INDEX IF NOT EXISTS idx_test_last_event ON test_last(last_event)'] };
    store = await openStore({ ralphDir: dir, mode: 'writer', projections: [grown] });
    assert.deepEqual(store.all("SELECT name FROM sqlite_master WHERE name = 'idx_test_last_event'"), [{ name: 'idx_test_last_event' }]);
    assert.deepEqual(counterRows(store), rows);
  });

  it('given an observer, then execute throws ReadOnlyStoreError and reads work', async () => {
    const w = await openStore({ ralphDir: dir, mode: 'writer', projections: [] });
    await w.append([ev('T1')]);
    store = await openStore({ ralphDir: dir, mode: 'observer', projections: [] });
    await assert.rejects(store.append([ev('T2')]), ReadOnlyStoreError);
    assert.equal(store.events().length, 1);
    await w.close();
  });

  it('when execute is called inside decide, then it fails instead of nesting', async () => {
    store = await openStore({ ralphDir: dir, mode: 'writer', projections: [] });
    const s = store;
    let inner: Promise<unknown> | undefined;
    await s.execute(() => {
      inner = s.append([ev('inner')]).then(
        () => 'accepted',
        (e: Error) => e.message,
      );
      return { events: [ev('outer')], result: 1 };
    });
    assert.match(String(await inner), /do not nest/);
    assert.deepEqual(
      s.events().map((e) => e.entity_id),
      ['outer'],
    );
  });

  it('when closed and reopened, then every event and the next ids continue in order', async () => {
    store = await openStore({ ralphDir: dir, mode: 'writer', projections: [] });
    const first = await store.append([ev('A'), ev('B')]);
    await store.close();
    const left = readJournalSync(path.join(dir, JOURNAL_FILE)).records;
    assert.deepEqual(
      left.map((r) => [r.events.length, r.upTo]),
      [
        [0, first[1]?.event_id],
        [2, undefined],
      ],
      'close checkpoints: a header naming the last event in ralph.db, then the records ralph.db.prev lacks',
    );
    store = await openStore({ ralphDir: dir, mode: 'writer', projections: [], clock: () => 0 });
    const next = await store.append([ev('C')]);
    assert.equal(store.events().length, 3);
    assert.ok((next[0]?.event_id ?? '') > (first[1]?.event_id ?? ''));
  });

  it('onDidAppend fires with the acknowledged events', async () => {
    store = await openStore({ ralphDir: dir, mode: 'writer', projections: [] });
    const seen: string[] = [];
    const sub = store.onDidAppend((es) => seen.push(...es.map((e) => e.entity_id)));
    await store.append([ev('A'), ev('B')]);
    sub.dispose();
    await store.append([ev('C')]);
    assert.deepEqual(seen, ['A', 'B']);
  });

  it('events() filters by entity and afterId and limits', async () => {
    store = await openStore({ ralphDir: dir, mode: 'writer', projections: [] });
    const all = await store.append([ev('A'), ev('B'), ev('A'), { ...ev('X'), entity_type: 'patch' }]);
    assert.equal(store.events({ entityType: 'task', entityId: 'A' }).length, 2);
    assert.deepEqual(store.events({ afterId: all[1]?.event_id, limit: 1 }), [all[2]]);
  });
});

describe('store/sqlJsStore clock, run id and schema versions', () => {
  it('given the clock steps back between commands, then ids still increase while ts tells the wall clock', async () => {
    const dir = tmpRalph();
    let now = Date.UTC(2026, 10, 29, 12, 0, 0, 0);
    const store = await openStore({ ralphDir: dir, mode: 'writer', projections: [], clock: () => now, runId: 'run_given' });
    try {
      const [a] = await store.append([ev('A')]);
      now -= 3_600_000;
      const [b] = await store.append([ev('A')]);
      assert.ok(a && b && a.event_id < b.event_id);
      assert.equal(b.ts, '2026-11-29T11:00:00.000Z');
      assert.equal(b.run_id, 'run_given');
    } finally {
      await store.close();
    }
  });

  it('given a database from a newer Ralph, then open fails with StoreVersionError and releases the lock', async () => {
    const dir = tmpRalph();
    await (await openStore({ ralphDir: dir, mode: 'writer', projections: [] })).close();
    const SQL = await loadSqlJs();
    const raw = new SQL.Database(fs.readFileSync(path.join(dir, 'ralph.db')));
    raw.run("UPDATE ralph_meta SET value = '999' WHERE key = 'schema_version'");
    fs.writeFileSync(path.join(dir, 'ralph.db'), raw.export());
    raw.close();
    // A ralph.db from elsewhere (its own journal would name this very file in its header).
    fs.rmSync(path.join(dir, JOURNAL_FILE));
    await assert.rejects(openStore({ ralphDir: dir, mode: 'writer', projections: [] }), (e: Error) => {
      assert.equal(e.name, 'StoreVersionError');
      assert.match(e.message, /schema version 999 is newer/);
      return true;
    });
    assert.ok(!fs.existsSync(path.join(dir, 'locks', 'writer.lock')));
  });
});
