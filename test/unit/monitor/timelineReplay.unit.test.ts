// The time slider's view at a moment is the whole monitor snapshot a full replay to that
// moment shows: the log's first M events folded into a fresh database through the control
// projections and the snapshot built over it with no cache and no index. Compared as whole
// objects, for moments reached by moves back, forward, from snapshots and by undo; on a log
// in time order (the slider's index answers) and on one with a clock stepped back (its
// queries answer past that point).
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { CONTROL_PROJECTIONS } from '../../../src/control/views';
import { buildMonitorSnapshot } from '../../../src/monitor/snapshot';
import { MonitorTimeline } from '../../../src/monitor/timeline';
import type { MonitorSnapshot } from '../../../src/protocol/monitor';
import { migrate } from '../../../src/store/schema';
import { EVENT_COLUMNS, rowToEvent, type EventRow } from '../../../src/store/eventRows';
import { loadSqlJs, SqlDb } from '../../../src/store/sqlDb';
import type { NewEvent, SqlReader } from '../../../src/store/types';
import { harness, type Harness } from '../control/harness';

function lifeOf(i: number): NewEvent[] {
  const id = `W${i % 3}-${String(i).padStart(3, '0')}`;
  const tr = (from: string, to: string, actor = 'primary', extra: Record<string, unknown> = {}): NewEvent => ({
    entity_type: 'task',
    entity_id: id,
    event_type: `task.${to}`,
    actor,
    payload: { old_status: from, new_status: to, ...extra },
  });
  return [
    {
      entity_type: 'task',
      entity_id: id,
      event_type: 'task.created',
      actor: 'control_plane',
      payload: { title: `task ${i}`, source: '-', effort: 'S', deps: '-', wave: i % 3, provenance: 'spec' },
    },
    tr('pending', 'claimed', 'primary', { claimed_by: 'primary' }),
    tr('claimed', 'proposed'),
    i % 3 === 0
      ? tr('proposed', 'deferred', 'judge', { reason: 'tier 2', rationale: `touches config ${i}`, risk_tier: 2 })
      : tr('proposed', 'done'),
  ];
}

const loop = (type: string): NewEvent => ({
  entity_type: 'run',
  entity_id: 'run',
  event_type: type,
  actor: 'harness',
  payload: { iterations: 1 },
});
const LIFECYCLE = ['loop.started', 'loop.resumed', 'loop.paused', 'loop.stopped'];

/** The monitor at the log's first `m` events, by a fold from event 0 into a fresh database. */
async function fullReplay(source: SqlReader, logsDir: string, m: number): Promise<MonitorSnapshot> {
  const SQL = await loadSqlJs();
  const db = new SqlDb(new SQL.Database());
  try {
    migrate(db, ':memory:');
    for (const p of CONTROL_PROJECTIONS) for (const s of p.ddl) db.exec(s);
    const rows = source.all<EventRow>(`SELECT ${EVENT_COLUMNS} FROM events ORDER BY event_id LIMIT ?`, [m]);
    for (const e of rows.map(rowToEvent)) {
      db.run(
        'INSERT INTO events (event_id, ts, run_id, entity_type, entity_id, event_type, actor, payload) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        [e.event_id, e.ts, e.run_id, e.entity_type, e.entity_id, e.event_type, e.actor, JSON.stringify(e.payload)],
      );
      for (const p of CONTROL_PROJECTIONS) p.apply(db, e);
    }
    const last = rows.at(-1);
    const lifecycle = rows.filter((r) => LIFECYCLE.includes(r.event_type)).at(-1)?.event_type;
    const run =
      lifecycle === 'loop.started' || lifecycle === 'loop.resumed' ? 'running' : lifecycle === 'loop.paused' ? 'paused' : 'stopped';
    const snap = buildMonitorSnapshot(db, logsDir, new Date(last?.ts ?? 0), { past: true, run });
    const span = source.get<{ n: number; first: string | null; last: string | null }>(
      'SELECT COUNT(*) AS n, MIN(ts) AS first, MAX(ts) AS last FROM events',
    );
    snap.timeline = {
      total: span?.n ?? 0,
      firstTs: span?.first ?? null,
      lastTs: span?.last ?? null,
      at: last ? { index: rows.length, eventId: last.event_id, ts: last.ts } : null,
    };
    return snap;
  } finally {
    db.close();
  }
}

/** 40 task lives over about three hours, some minutes apart, some seconds; `backAt`: the clock steps back an hour there. */
async function fill(h: Harness, backAt?: number): Promise<number> {
  const batches: NewEvent[][] = [[loop('loop.started')]];
  for (let i = 0; i < 40; i++) batches.push(lifeOf(i).slice(0, 2), lifeOf(i).slice(2));
  batches.push([loop('loop.paused')], [loop('loop.resumed')], [loop('loop.stopped')]);
  let n = 0;
  for (const [k, b] of batches.entries()) {
    h.advance(k === backAt ? -3_600_000 : k % 5 === 0 ? 7 * 60_000 : k % 3 === 0 ? 999 : 1500);
    await h.store.append(b);
    n += b.length;
  }
  return n;
}

for (const order of ['in time order', 'with the clock stepped back an hour'] as const) {
  describe(`monitor: the time slider's view is a full replay's (a log ${order})`, () => {
    let h: Harness;
    let total = 0;
    before(async () => {
      h = await harness();
      total = await fill(h, order === 'in time order' ? undefined : 60);
    });
    after(() => h.close());

    it('given moves back, forward, far and near, then each snapshot equals the full replay to that moment as a whole object', async () => {
      const logsDir = path.join(h.ralphDir, 'logs');
      const timeline = new MonitorTimeline({ source: h.store, logsDir, snapshotEvery: 16 });
      try {
        await timeline.prefold();
        const moments = [Math.floor(total * 0.4), 7, 6, total, total - 1, 33, 34, 120, 1, 95, 96, 60, 150, total - 3, 2, 121];
        for (const m of moments.filter((x) => x >= 1 && x <= total)) {
          const past = await timeline.snapshotAt(m);
          const want = await fullReplay(h.store, logsDir, m);
          assert.deepEqual(past, want, `the view after ${m} of ${total} events`);
        }
        assert.ok((await timeline.restores()) >= 3, 'some moves started from a snapshot');
      } finally {
        timeline.dispose();
      }
    });
  });
}
