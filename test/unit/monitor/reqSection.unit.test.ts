// The monitor snapshot's REQ section, built from a real sql.js events table and a real
// specification.yaml: progress by level, the current REQ with its round and the layer
// running, recent learnings, blocked REQs (and blocked(auto) ones) with why.
import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Database } from 'sql.js';
import { buildMonitorSnapshot, createSnapshotCache } from '../../../src/monitor/snapshot';
import { MonitorTimeline } from '../../../src/monitor/timeline';
import { harness } from '../control/harness';
import type { Harness } from '../control/harness';
import { monitorSnapshotSchema } from '../../../src/protocol/monitor';
import type { MonitorSnapshot } from '../../../src/protocol/monitor';
import { REFERENCE_DDL, insertEvents, openSqlJs, readerOf } from './sqlFixture';
import { REQ_NOW as NOW, REQ_SPEC as SPEC, agent, layer, req, reqRunEvents, started } from './reqFixture';

describe('monitor snapshot: the REQ section', () => {
  let db: Database;
  let dir: string;
  let logs: string;
  const snapshot = (): MonitorSnapshot => monitorSnapshotSchema.parse(buildMonitorSnapshot(readerOf(db), logs, NOW));

  beforeEach(async () => {
    db = await openSqlJs();
    db.run(REFERENCE_DDL);
    dir = mkdtempSync(join(tmpdir(), 'ralph-mon-req-'));
    logs = join(dir, '.ralph', 'logs');
    mkdirSync(logs, { recursive: true });
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('given no specification.yaml, then there is no REQ section', () => {
    insertEvents(db, [{ ts: NOW.toISOString(), entity_id: 'T-1', event_type: 'task.pending' }]);
    assert.equal(snapshot().req, null);
  });

  it('given a run, then progress by level, the current REQ in its round with the agent at work, learnings newest first, and blocked REQs with why', () => {
    writeFileSync(join(dir, 'specification.yaml'), SPEC);
    insertEvents(db, [...reqRunEvents(), agent('agent.started', 'REQ-002')]);
    const r = snapshot().req;
    assert.ok(r);
    assert.equal(r.problem, null);
    assert.equal(r.state, 'running');
    assert.deepEqual([r.total, r.done, r.pending, r.blocked, r.skipped], [5, 1, 2, 2, 0]);
    assert.deepEqual([r.iteration, r.maxIterations], [3, 15]);
    assert.deepEqual(r.levels, [
      { done: 1, total: 2 },
      { done: 0, total: 2 },
      { done: 0, total: 1 },
    ]);
    assert.deepEqual(r.current, {
      id: 'REQ-002',
      title: 'Add sub()',
      round: 2,
      rounds: 3,
      lastFailure: 'L1b failed: 10% test lines',
      step: 'agent',
      layers: ['L1', 'L1b', 'L2', 'L3'].map((layer) => ({ layer, state: 'waiting' })),
    });
    assert.deepEqual(
      r.learnings.map((l) => [l.kind, l.text, l.source]),
      [
        ['contextual', 'sub() takes two numbers', 'REQ-002'],
        ['contextual', 'assert.equal is enough here', 'REQ-001'],
        ['permanent', 'One module per function under src/', 'REQ-001'],
      ],
    );
    assert.equal(r.permanentLearnings, 1);
    assert.deepEqual(r.blockedReqs, [
      {
        id: 'REQ-003',
        title: 'Add mul()',
        auto: false,
        why: 'failed 3 rounds: L3 (coverage): lines 50% below the threshold 80%',
        options: ['skip', 'manual', 'stop', 'rollback'],
      },
      { id: 'REQ-005', title: 'Add sq()', auto: true, why: 'waits on REQ-003, which is blocked', options: [] },
    ]);
  });

  it('follows the round: the agent finished → L1 runs; L1 and L1b passed → L2 runs; L2 failed → the step is L2', () => {
    writeFileSync(join(dir, 'specification.yaml'), SPEC);
    insertEvents(db, [...reqRunEvents(), agent('agent.started', 'REQ-002'), agent('agent.finished', 'REQ-002')]);
    const states = (): string[] => snapshot().req?.current?.layers.map((l) => l.state) ?? [];
    assert.equal(snapshot().req?.current?.step, 'L1');
    assert.deepEqual(states(), ['running', 'waiting', 'waiting', 'waiting']);
    insertEvents(db, [layer('REQ-002', 2, 'L1', true), layer('REQ-002', 2, 'L1b', true)]);
    assert.equal(snapshot().req?.current?.step, 'L2');
    assert.deepEqual(states(), ['passed', 'passed', 'running', 'waiting']);
    insertEvents(db, [layer('REQ-002', 2, 'L2', false)]);
    assert.equal(snapshot().req?.current?.step, 'L2');
    assert.deepEqual(states(), ['passed', 'passed', 'failed', 'waiting']);
    insertEvents(db, [
      req('req.round_failed', 'REQ-002', { round: 2, layer: 'L2', summary: 'L2 failed', timed_out: false }),
      started('REQ-002', 3, 3),
    ]);
    const next = snapshot().req?.current;
    assert.deepEqual([next?.round, next?.step, next?.lastFailure], [3, 'agent', 'L2 failed']);
  });

  it('given a REQ done and the run finished, then nothing is current and the state is the terminal one', () => {
    writeFileSync(join(dir, 'specification.yaml'), SPEC);
    insertEvents(db, [
      ...reqRunEvents(),
      req('req.done', 'REQ-002', { commit: 'bcdef12345', patch_id: 'P-2', title: 'Add sub()', round: 2 }),
      req('req.run_finished', 'req-run', { state: 'WAIT_USER', iteration: 3, summary: '2/5 done, 2 blocked' }),
    ]);
    const r = snapshot().req;
    assert.equal(r?.state, 'WAIT_USER');
    assert.equal(r?.current, null);
    assert.deepEqual(r?.levels[1], { done: 1, total: 2 });
  });

  it('given a dependency cycle, then the section is WAIT_USER with the chain', () => {
    writeFileSync(
      join(dir, 'specification.yaml'),
      SPEC.replace(
        '      priority: 1\n      status: pending\n    - id: REQ-002',
        '      priority: 1\n      depends_on: [REQ-004]\n      status: pending\n    - id: REQ-002',
      ),
    );
    insertEvents(db, [{ ts: NOW.toISOString(), entity_id: 'T-1', event_type: 'task.pending' }]);
    const r = snapshot().req;
    assert.equal(r?.state, 'WAIT_USER');
    assert.deepEqual(r?.cycle, ['REQ-001', 'REQ-004', 'REQ-002', 'REQ-001']);
    assert.equal(r?.total, 5);
  });

  it('given a specification that does not load, then the section carries its message naming the file', () => {
    writeFileSync(join(dir, 'specification.yaml'), 'specification:\n  requirements:\n    - id: REQ-001\n');
    insertEvents(db, [{ ts: NOW.toISOString(), entity_id: 'T-1', event_type: 'task.pending' }]);
    const r = snapshot().req;
    assert.match(r?.problem ?? '', /specification\.yaml/);
    assert.equal(r?.total, 0);
  });

  it('given the live cache, then each build reads only new req events and equals a build without it; a replaced log is read again', async () => {
    writeFileSync(join(dir, 'specification.yaml'), SPEC);
    const events = reqRunEvents();
    const cache = createSnapshotCache();
    const build = (d: Database, c?: ReturnType<typeof createSnapshotCache>): MonitorSnapshot['req'] =>
      buildMonitorSnapshot(readerOf(d), logs, NOW, c ? { cache: c } : {}).req;
    insertEvents(db, events.slice(0, 8));
    assert.deepEqual(build(db, cache), build(db));
    insertEvents(db, [...events.slice(8), req('req.done', 'REQ-009', { commit: 7 })]);
    const cached = build(db, cache);
    assert.deepEqual(cached, build(db));
    assert.equal(cached?.current?.id, 'REQ-002');
    assert.equal(cache.req?.rows, events.length + 1, 'every row read once');
    // The same cache over another, shorter log (rebuilt or replaced): read from the start.
    const other = await openSqlJs();
    try {
      other.run(REFERENCE_DDL);
      insertEvents(other, events.slice(0, 3));
      const again = build(other, cache);
      assert.deepEqual(again, build(other));
      assert.equal(again?.current?.id, 'REQ-001');
    } finally {
      other.close();
    }
  });

  it('given a req event whose payload does not validate, then it is left out and named in the warnings', () => {
    writeFileSync(join(dir, 'specification.yaml'), SPEC);
    insertEvents(db, [...reqRunEvents(), req('req.done', 'REQ-002', { commit: 42 })]);
    const s = snapshot();
    assert.equal(s.req?.done, 1);
    assert.ok(
      s.warnings.some((w) => /req event .*req\.done.* left out/.test(w)),
      s.warnings.join('\n'),
    );
  });
});

describe('monitor snapshot: the REQ section through the store and the time slider', () => {
  let h: Harness;
  after(() => h?.close());

  it('given req.* events appended to a real store, then the live section follows each step and a past moment shows the section of that moment', async () => {
    h = await harness();
    writeFileSync(join(dirname(h.ralphDir), 'specification.yaml'), SPEC);
    const logs = join(h.ralphDir, 'logs');
    const seen: { n: number; req: MonitorSnapshot['req'] }[] = [];
    let n = 0;
    const events = reqRunEvents();
    for (let i = 0; i < events.length; i += 4) {
      const batch = events.slice(i, i + 4).map((e) => ({
        entity_type: e.entity_type ?? 'req',
        entity_id: e.entity_id,
        event_type: e.event_type,
        actor: e.actor ?? 'req',
        payload: e.payload ?? {},
      }));
      h.advance(1000);
      await h.store.append(batch);
      n += batch.length;
      seen.push({ n, req: buildMonitorSnapshot(h.store, logs, new Date(h.nowMs())).req });
    }
    assert.deepEqual(
      seen.map(
        (s) => `${s.req?.done}/${s.req?.total} ${s.req?.current?.id ?? '-'} r${s.req?.current?.round ?? 0} ${s.req?.blockedReqs.length}`,
      ),
      ['0/5 REQ-001 r1 0', '1/5 - r0 0', '1/5 REQ-003 r2 0', '1/5 - r0 2', '1/5 REQ-002 r2 2'],
    );
    const timeline = new MonitorTimeline({ source: h.store, logsDir: logs });
    try {
      for (const k of [3, 0, 4, 1, 2]) {
        const want = seen[k]!;
        assert.deepEqual((await timeline.snapshotAt(want.n)).req, want.req, `after ${want.n} events`);
      }
    } finally {
      timeline.dispose();
    }
  });
});
