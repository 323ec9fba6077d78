import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadSqlJs, SqlDb } from '../../../src/store/sqlDb';
import { openStore } from '../../../src/store/sqlJsStore';
import type { EventStore, NewEvent, SqlReader } from '../../../src/store/types';
import { counterProjection, counterRows } from './counterProjection';

function ev(entity_id: string, payload: Record<string, unknown> = {}): NewEvent {
  return { entity_type: 'task', entity_id, event_type: 'task.touched', actor: 'test', payload };
}

/** Everything a checkpoint must carry: the events and the projection's rows. */
function contents(db: SqlReader): unknown[] {
  return [...db.all('SELECT * FROM events ORDER BY event_id'), ...counterRows(db)];
}

async function fileContents(file: string): Promise<unknown[]> {
  const SQL = await loadSqlJs();
  const db = new SqlDb(new SQL.Database(fs.readFileSync(file)));
  try {
    return contents(db);
  } finally {
    db.close();
  }
}

describe('store/checkpointReplica', () => {
  let dir: string;
  let store: EventStore | undefined;

  beforeEach(() => {
    dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-replica-')), '.ralph');
  });
  afterEach(async () => {
    await store?.close();
    store = undefined;
    fs.rmSync(path.dirname(dir), { recursive: true, force: true });
  });

  it('given a writer whose checkpoints export in the worker, then ralph.db holds exactly what the writer holds, refused commands left out', async () => {
    store = await openStore({ ralphDir: dir, mode: 'writer', projections: [counterProjection()], checkpointWorker: 'always' });
    await store.append([ev('T1', { n: 1 }), ev('T2')]);
    // The open's checkpoint (a new ralph.db) ran on this thread and seeded the worker's copy.
    await store.checkpoint();
    assert.equal(store.stats().checkpointsOffThread, 1);
    assert.deepEqual(await fileContents(path.join(dir, 'ralph.db')), contents(store));
    for (let i = 0; i < 20; i++) await store.append([ev(`T${i % 3}`, { i, note: 'x'.repeat(i) })]);
    // A projection that throws rolls the command back on both sides.
    await assert.rejects(store.append([ev('T9'), ev('T1', { explode: true })]), /projection refused/);
    await store.rebuild();
    await store.append([ev('T4', { after: 'rebuild' })]);
    await store.checkpoint();
    assert.equal(store.stats().checkpointsOffThread, 2);
    const want = contents(store);
    assert.deepEqual(await fileContents(path.join(dir, 'ralph.db')), want);
    assert.equal(store.stats().lastError, undefined);
    // Appends while the worker exports land in the next checkpoint (close's), not in this one.
    const during = store.append([ev('T5')]);
    const cp = store.checkpoint();
    await during;
    await cp;
    const later = contents(store);
    await store.close();
    store = undefined;
    assert.deepEqual(await fileContents(path.join(dir, 'ralph.db')), later);
    // The checksum the journal's header records is the worker's: a writer's open verifies it.
    store = await openStore({ ralphDir: dir, mode: 'writer', projections: [counterProjection()], checkpointWorker: 'never' });
    assert.deepEqual(contents(store), later);
    assert.equal(store.stats().replayedEvents, 0);
  });

  it('given a reopened ralph.db the open leaves as it is, then the worker starts from its bytes, no export on this thread', async () => {
    store = await openStore({ ralphDir: dir, mode: 'writer', projections: [counterProjection()], checkpointWorker: 'never' });
    await store.append([ev('T1', { n: 1 }), ev('T2')]);
    await store.close();
    store = await openStore({ ralphDir: dir, mode: 'writer', projections: [counterProjection()], checkpointWorker: 'always' });
    assert.equal(store.stats().checkpoints, 0);
    await store.append([ev('T3'), ev('T1', { n: 2 })]);
    await store.checkpoint();
    assert.deepEqual(store.stats().checkpointsOffThread, 1);
    assert.deepEqual(await fileContents(path.join(dir, 'ralph.db')), contents(store));
  });

  it("given 'auto' and a small database, then no worker starts and checkpoints export on the writer's thread", async () => {
    store = await openStore({ ralphDir: dir, mode: 'writer', projections: [counterProjection()], checkpointWorker: 'auto' });
    await store.append([ev('T1')]);
    await store.checkpoint();
    await store.append([ev('T2')]);
    await store.checkpoint();
    assert.equal(store.stats().checkpointsOffThread, 0);
  });
});
