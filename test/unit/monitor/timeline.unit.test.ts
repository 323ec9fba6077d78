// Time travel for the monitor: a replay cursor moved forward and back (across checkpoints)
// holds exactly the projections the live store had after that many events, and the monitor's
// snapshot at a past position shows the backlog, patches, deferred queue and run state the
// live monitor showed at that moment. The session switches between a past moment and live.
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { ReplayCursor } from '../../../src/control/timeTravel';
import { CONTROL_PROJECTIONS } from '../../../src/control/views';
import { buildMonitorSnapshot } from '../../../src/monitor/snapshot';
import { MonitorTimeline } from '../../../src/monitor/timeline';
import type { NewEvent, SqlReader } from '../../../src/store/types';
import { harness, type Harness } from '../control/harness';

/** Task i's life: created, claimed, proposed, then done (even i) or deferred (odd i); a loop around it. */
function lifeOf(i: number): NewEvent[] {
  const id = `W1-${String(i).padStart(3, '0')}`;
  const tr = (from: string, to: string, extra: Record<string, unknown> = {}): NewEvent => ({
    entity_type: 'task',
    entity_id: id,
    event_type: `task.${to}`,
    actor: 'primary',
    payload: { old_status: from, new_status: to, ...extra },
  });
  return [
    {
      entity_type: 'task',
      entity_id: id,
      event_type: 'task.created',
      actor: 'control_plane',
      payload: { title: `task ${i}`, source: '-', effort: 'S', deps: '-', wave: 1, provenance: 'spec' },
    },
    tr('pending', 'claimed', { claimed_by: 'primary' }),
    tr('claimed', 'proposed'),
    i % 2 === 0 ? tr('proposed', 'done') : tr('proposed', 'deferred', { reason: 'tier 2', risk_tier: 2 }),
  ];
}

const loop = (type: string): NewEvent => ({
  entity_type: 'run',
  entity_id: 'run',
  event_type: type,
  actor: 'harness',
  payload: { iterations: 1 },
});
const tasks = (db: SqlReader): string[] =>
  db
    .all<{ task_id: string; status: string }>('SELECT task_id, status FROM task_view ORDER BY task_id')
    .map((r) => `${r.task_id}:${r.status}`);

describe('monitor: time travel', () => {
  let h: Harness;
  /** After each batch: how many events the log had, and what the live store and monitor showed. */
  const seen: { n: number; tasks: string[]; snap: ReturnType<typeof buildMonitorSnapshot> }[] = [];

  before(async () => {
    h = await harness();
    const batches: NewEvent[][] = [[loop('loop.started')]];
    for (let i = 0; i < 8; i++) batches.push(lifeOf(i).slice(0, 2), lifeOf(i).slice(2));
    batches.push([loop('loop.stopped')]);
    let n = 0;
    for (const b of batches) {
      h.advance(1000);
      await h.store.append(b);
      n += b.length;
      seen.push({ n, tasks: tasks(h.store), snap: buildMonitorSnapshot(h.store, path.join(h.ralphDir, 'logs'), new Date(h.nowMs()), {}) });
    }
  });
  after(() => h.close());

  it('given a cursor moved forward, back (undoing) and forward again, then it holds what the store held after that many events', async () => {
    const cursor = await ReplayCursor.open(h.store);
    try {
      const order = [...seen.keys()].sort((a, b) => ((a * 7) % seen.length) - ((b * 7) % seen.length));
      for (const k of [seen.length - 1, ...order, 0, seen.length - 1]) {
        const want = seen[k]!;
        cursor.moveTo(want.n);
        assert.equal(cursor.at, want.n);
        assert.deepEqual(tasks(cursor.reader), want.tasks, `after ${want.n} events`);
      }
      // Undone all the way, the projections are empty; forward again, the same as live.
      cursor.moveTo(0);
      assert.deepEqual(tasks(cursor.reader), []);
      assert.equal(cursor.reader.get<{ n: number }>('SELECT COUNT(*) AS n FROM events')?.n, 0);
      cursor.moveTo(seen[4]!.n);
      assert.deepEqual(tasks(cursor.reader), seen[4]!.tasks);
      assert.deepEqual(
        cursor.reader.all('SELECT * FROM task_view ORDER BY task_id'),
        await (async () => {
          const fresh = await ReplayCursor.open(h.store);
          fresh.moveTo(seen[4]!.n);
          const rows = fresh.reader.all('SELECT * FROM task_view ORDER BY task_id');
          fresh.close();
          return rows;
        })(),
        'every column of every row, not only the status',
      );
      cursor.moveTo(10_000);
      assert.equal(cursor.at, seen.at(-1)!.n, 'a position past the end stops at the end');
    } finally {
      cursor.close();
    }
  });

  it('given moves taken from snapshots, then every projection table and the events are exactly those of a fold from 0', async () => {
    const all = (db: SqlReader): unknown[] =>
      [...CONTROL_PROJECTIONS.flatMap((p) => p.tables), 'events'].map((t) => db.all(`SELECT rowid AS r, * FROM ${t} ORDER BY rowid`));
    const total = seen.at(-1)!.n;
    const cursor = await ReplayCursor.open(h.store, { snapshotEvery: 4 });
    try {
      cursor.moveTo(total);
      // Long moves back start from a snapshot; short ones undo; then forward, back again.
      for (const n of [5, 30, 2, 17, 16, 9, 33, 1, 12, 34, 13, 29, 6]) {
        if (n > total) continue;
        cursor.moveTo(n);
        const fresh = await ReplayCursor.open(h.store, { snapshotEvery: 1_000_000 });
        fresh.moveTo(n);
        assert.deepEqual(all(cursor.reader), all(fresh.reader), `after a move to ${n} events`);
        assert.equal(cursor.lastEventId, fresh.lastEventId);
        fresh.close();
      }
      assert.ok(cursor.restores >= 4, `moves taken from a snapshot: ${cursor.restores}`);
    } finally {
      cursor.close();
    }
  });

  it('given the background prefold ran to the live end, then every move, the first included, starts from a snapshot and shows that moment', async () => {
    const timeline = new MonitorTimeline({ source: h.store, logsDir: path.join(h.ralphDir, 'logs'), snapshotEvery: 4 });
    try {
      await timeline.prefold();
      assert.equal(await timeline.restores(), 0, 'the prefold only folds forward');
      for (const k of [2, seen.length - 2, 1, 9, 4, seen.length - 1, 3]) {
        const want = seen[k]!;
        const before = await timeline.restores();
        const past = await timeline.snapshotAt(want.n);
        assert.deepEqual(past.tasks, want.snap.tasks, `tasks after ${want.n} events`);
        assert.deepEqual(past.patches, want.snap.patches);
        assert.equal(past.events.total, want.n);
        assert.deepEqual(past.series.flow.at(-1)?.counts, want.snap.tasks.byStatus, `flow after ${want.n} events`);
        if (k === 2) assert.equal(await timeline.restores(), before + 1, 'the first move starts from a snapshot, not from event 0');
      }
    } finally {
      timeline.dispose();
    }
  });

  it('given a past position, then the monitor shows the backlog, patches, deferred queue and run state of that moment', async () => {
    const timeline = new MonitorTimeline({ source: h.store, logsDir: path.join(h.ralphDir, 'logs') });
    try {
      const total = seen.at(-1)!.n;
      for (const k of [5, 2, 9, 1, seen.length - 1, 3]) {
        const want = seen[k]!;
        const past = await timeline.snapshotAt(want.n);
        assert.deepEqual(past.tasks, want.snap.tasks, `tasks after ${want.n} events`);
        assert.deepEqual(past.patches, want.snap.patches);
        assert.deepEqual(
          past.deferred.map((d) => d.taskId),
          want.snap.deferred.map((d) => d.taskId),
        );
        assert.equal(past.events.total, want.n);
        // The flow chart's history is the live history's prefix: its last point counts the tasks then.
        assert.deepEqual(past.series.flow.at(-1)?.counts, want.snap.tasks.byStatus, `flow after ${want.n} events`);
        assert.equal(past.timeline.total, total);
        assert.equal(past.timeline.at?.index, want.n);
        assert.equal(past.state.run, k === seen.length - 1 ? 'stopped' : 'running', 'the loop ran between its start and stop events');
      }
    } finally {
      timeline.dispose();
    }
  });
});
