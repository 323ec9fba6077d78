// The monitor over the real event store and the real control-plane projections: the
// snapshot's queries run against the tables the control plane writes, and the data
// source fires when events are appended.
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONTROL_PROJECTIONS, controlContext, emitEvent, transitionTask } from '../../../src/control';
import { createStoreDataSource } from '../../../src/monitor/dataSource';
import { monitorSnapshotSchema } from '../../../src/protocol/monitor';
import { openStore } from '../../../src/store';
import type { EventStore } from '../../../src/store/types';

describe('monitor data source over the real store', () => {
  let dir: string;
  let store: EventStore;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ralph-mon-int-'));
    store = await openStore({ ralphDir: join(dir, '.ralph'), mode: 'writer', projections: CONTROL_PROJECTIONS });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('given control-plane commands, then the snapshot counts their tasks and events and the source fires per append', async () => {
    const ctx = controlContext(store, { ralphDir: join(dir, '.ralph') });
    // A loop runs (the primary claimed W0-001): the host says so.
    const source = createStoreDataSource({
      store,
      logsDir: join(dir, '.ralph', 'logs'),
      pollMs: 0,
      run: () => ({ run: 'running', observing: false }),
    });
    let changes = 0;
    const sub = source.onDidChange(() => changes++);

    const empty = await source.snapshot();
    assert.equal(empty.empty, true);
    assert.deepEqual(empty.warnings, []);

    await transitionTask(ctx, {
      taskId: 'W0-001',
      status: 'pending',
      actor: 'human',
      payload: { title: 'Scaffold', effort: 'S', wave: 0 },
    });
    await transitionTask(ctx, { taskId: 'W0-002', status: 'pending', actor: 'human', payload: { title: 'Config', effort: 'S', wave: 0 } });
    await transitionTask(ctx, { taskId: 'W0-001', status: 'claimed', actor: 'primary', payload: { claimed_by: 'primary' } });
    await transitionTask(ctx, { taskId: 'W0-002', status: 'deferred', actor: 'control_plane', payload: { reason: 'tier 2: auth/' } });
    await emitEvent(ctx, {
      entityType: 'run',
      entityId: store.runId,
      eventType: 'run.note',
      actor: 'human',
      payload: { reason: 'checking the monitor' },
    });
    assert.ok(changes >= 5, `changes: ${changes}`);

    const s = monitorSnapshotSchema.parse(await source.snapshot());
    assert.equal(s.empty, false);
    assert.equal(s.tasks.total, 2);
    assert.equal(s.tasks.byStatus.claimed, 1);
    assert.equal(s.tasks.byStatus.deferred, 1);
    const total = store.get<{ n: number }>('SELECT COUNT(*) AS n FROM events')?.n ?? 0;
    assert.equal(s.events.total, total);
    assert.equal(s.events.lastHour, total, 'the store writes ISO times the window compares correctly');
    assert.equal(s.events.recent[0]?.eventType, 'run.note');
    assert.equal(s.deferred[0]?.taskId, 'W0-002');
    assert.equal(s.deferred[0]?.reason, 'tier 2: auth/');
    assert.equal(s.state.currentTask, 'W0-001');
    const flowNow = s.series.flow[s.series.flow.length - 1]?.counts;
    assert.equal(flowNow?.claimed, 1);
    assert.equal(flowNow?.deferred, 1);
    sub.dispose();
    source.dispose();
  });

  it('given a poll interval, then it fires without appends while someone listens', async () => {
    const source = createStoreDataSource({ store, logsDir: join(dir, '.ralph', 'logs'), pollMs: 20 });
    await new Promise<void>((resolve) => {
      const sub = source.onDidChange(() => {
        sub.dispose();
        resolve();
      });
    });
    source.dispose();
  });
});
