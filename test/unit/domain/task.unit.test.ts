// Task lifecycle, given events / when command / then events or error.
import assert from 'node:assert/strict';
import { domainEvent } from '../../../src/domain/events';
import {
  currentWave,
  decideClaim,
  decideExpireDeferrals,
  decideResolveDeferred,
  decideTransition,
  pickReady,
} from '../../../src/domain/task';
import { decidePromotePatch, decideQueuePatch } from '../../../src/domain/patch';
import { ctxOf, fold, types } from './given';

const migrated = (
  id: string,
  extra: Partial<{ effort: string; wave: number; deps: string; status: 'pending' | 'done' | 'blocked' }> = {},
) =>
  domainEvent('task.migrated', id, 'control_plane', {
    title: `Task ${id}`,
    source: 'ES:1',
    effort: extra.effort ?? 'S',
    deps: extra.deps ?? '-',
    wave: extra.wave ?? 0,
    status: extra.status ?? 'pending',
  });

describe('domain/task lifecycle', () => {
  it('given a migrated task, when claimed, then task.claimed with the owner and version 2', () => {
    const w = fold([migrated('W0-001')]);
    const evs = decideClaim(ctxOf(w, 'W0-001'), 'W0-001', 'worker-b');
    assert.deepEqual(types(evs), ['task.claimed W0-001']);
    const t = fold(evs, w).tasks.get('W0-001');
    assert.equal(t?.status, 'claimed');
    assert.equal(t?.claimed_by, 'worker-b');
    assert.equal(t?.version, 2);
  });

  it('given a task claimed by A, when B claims it, then TaskAlreadyClaimedError (defect 4)', () => {
    const w = fold([migrated('W0-001')]);
    fold(decideClaim(ctxOf(w, 'W0-001'), 'W0-001', 'A'), w);
    assert.throws(() => decideClaim(ctxOf(w, 'W0-001'), 'W0-001', 'B'), { name: 'TaskAlreadyClaimedError' });
    assert.throws(() => decideTransition(ctxOf(w, 'W0-001'), { taskId: 'W0-001', to: 'claimed', actor: 'B' }), {
      name: 'TaskAlreadyClaimedError',
    });
  });

  it('given no promoted patch, when transitioned to done, then DoneWithoutPromotedPatchError (defect 3)', () => {
    const w = fold([migrated('W0-001')]);
    assert.throws(() => decideTransition(ctxOf(w, 'W0-001'), { taskId: 'W0-001', to: 'done', actor: 'primary' }), {
      name: 'DoneWithoutPromotedPatchError',
    });
  });

  it('given a promoted patch, when transitioned to done, then task.done', () => {
    const w = fold([migrated('W0-001')]);
    fold(decideQueuePatch(w.tasks.get('W0-001'), { taskId: 'W0-001', patchId: 'p1', path: 'x.patch', createdBy: 'worker' }), w);
    fold(decidePromotePatch(w.patches.get('p1'), w.tasks.get('W0-001'), { patchId: 'p1', commitHash: 'abc', actor: 'cp' }), w);
    fold([domainEvent('task.pending', 'W0-001', 'human', { old_status: 'done', new_status: 'pending' })], w);
    const evs = decideTransition(ctxOf(w, 'W0-001'), { taskId: 'W0-001', to: 'done', actor: 'primary' });
    assert.deepEqual(types(evs), ['task.done W0-001']);
  });

  it('when an unknown task is transitioned, then it is created from the payload fields', () => {
    const w = fold([]);
    const evs = decideTransition(ctxOf(w, 'X-1'), {
      taskId: 'X-1',
      to: 'blocked',
      actor: 'h',
      payload: { title: 'T', effort: 'M', wave: 3, deps: 'A,B' },
    });
    const t = fold(evs, w).tasks.get('X-1');
    assert.deepEqual([t?.status, t?.title, t?.effort, t?.wave, t?.deps, t?.version], ['blocked', 'T', 'M', 3, 'A,B', 1]);
  });

  it('transition payload keys claimed_by, patch_id, risk_tier update columns; deferred sets reason/at; pending clears them', () => {
    const w = fold([migrated('W0-001')]);
    fold(
      decideTransition(ctxOf(w, 'W0-001'), {
        taskId: 'W0-001',
        to: 'deferred',
        actor: 'cp',
        payload: { reason: 'tier 2', risk_tier: 2, patch_id: 'p9' },
      }),
      w,
    );
    let t = w.tasks.get('W0-001');
    assert.deepEqual(
      [t?.status, t?.deferred_reason, t?.deferred_at, t?.risk_tier, t?.patch_id],
      ['deferred', 'tier 2', '2026-11-29T10:00:00.000Z', 2, 'p9'],
    );
    fold(decideTransition(ctxOf(w, 'W0-001'), { taskId: 'W0-001', to: 'pending', actor: 'cp' }), w);
    t = w.tasks.get('W0-001');
    assert.deepEqual([t?.deferred_reason, t?.deferred_at, t?.version], [null, null, 3]);
  });

  it('rejects an unknown status', () => {
    assert.throws(() => decideTransition(ctxOf(fold([migrated('A')]), 'A'), { taskId: 'A', to: 'finished', actor: 'x' }), {
      name: 'InvalidArgumentError',
    });
  });
});

describe('domain/task resolve-deferred', () => {
  function deferredWithPatch() {
    const w = fold([migrated('W2-001')]);
    fold(decideQueuePatch(w.tasks.get('W2-001'), { taskId: 'W2-001', patchId: 'p1', path: 'p1.patch', createdBy: 'worker' }), w);
    fold(
      [
        domainEvent('task.deferred', 'W2-001', 'cp', {
          old_status: 'proposed',
          new_status: 'deferred',
          reason: 'tier 2',
          risk_tier: 2,
          patch_id: 'p1',
        }),
      ],
      w,
    );
    return w;
  }

  it('given a deferred task with a queued patch, when approved, then proposed (not done) with the patch approved (defect 3)', () => {
    const w = deferredWithPatch();
    const evs = decideResolveDeferred(ctxOf(w, 'W2-001'), { taskId: 'W2-001', decision: 'approve', actor: 'judge', rationale: 'ok' });
    assert.deepEqual(types(evs), ['task.deferral_resolved W2-001']);
    assert.equal(fold(evs, w).tasks.get('W2-001')?.status, 'proposed');
  });

  it('given a deferred task without a patch, when approved, then an error, never done', () => {
    const w = fold([
      migrated('W2-001'),
      domainEvent('task.deferred', 'W2-001', 'cp', { old_status: 'pending', new_status: 'deferred', reason: 'r' }),
    ]);
    assert.throws(
      () => decideResolveDeferred(ctxOf(w, 'W2-001'), { taskId: 'W2-001', decision: 'approve', actor: 'judge', rationale: 'ok' }),
      { name: 'DoneWithoutPromotedPatchError' },
    );
  });

  it('when rejected or modified, then pending and the patch discarded; modify keeps the modification', () => {
    for (const decision of ['reject', 'modify'] as const) {
      const w = deferredWithPatch();
      const evs = decideResolveDeferred(ctxOf(w, 'W2-001'), {
        taskId: 'W2-001',
        decision,
        actor: 'judge',
        rationale: 'split the migration',
      });
      assert.deepEqual(types(evs), ['task.deferral_resolved W2-001', 'patch.discarded p1']);
      if (decision === 'modify') assert.equal((evs[0]?.data as { modification?: string }).modification, 'split the migration');
      fold(evs, w);
      assert.equal(w.tasks.get('W2-001')?.status, 'pending');
      assert.equal(w.patches.get('p1')?.status, 'discarded');
    }
  });

  it('when the task is not deferred, then InvalidStateError', () => {
    const w = fold([migrated('A')]);
    assert.throws(() => decideResolveDeferred(ctxOf(w, 'A'), { taskId: 'A', decision: 'reject', actor: 'j', rationale: 'r' }), {
      name: 'InvalidStateError',
    });
  });
});

describe('domain/task deferral expiry (defect 10)', () => {
  const w = fold([
    migrated('A'),
    domainEvent('task.deferred', 'A', 'cp', { old_status: 'proposed', new_status: 'deferred', reason: 'r', risk_tier: 2 }),
  ]);
  const task = w.tasks.get('A')!;
  it('given 19 promoted commits since deferral, then nothing expires', () => {
    assert.deepEqual(decideExpireDeferrals([{ task, commitsSinceDeferral: 19, patch: undefined }]), []);
  });
  it('given 20 promoted commits, then pending with the tier lowered by one', () => {
    const evs = decideExpireDeferrals([{ task, commitsSinceDeferral: 20, patch: undefined }]);
    assert.deepEqual(types(evs), ['task.deferral_expired A']);
    const t = fold(evs, w).tasks.get('A');
    assert.deepEqual([t?.status, t?.risk_tier, t?.deferred_at], ['pending', 1, null]);
  });
});

describe('domain/task pickReady', () => {
  const w = fold([
    migrated('W1-002', { wave: 1 }),
    migrated('W1-001', { wave: 1, effort: 'M' }),
    migrated('W0-002', { deps: 'W0-001' }),
    migrated('W0-001', { effort: 'L' }),
    migrated('W2-001', { wave: 2, deps: 'W0-009' }),
  ]);
  const tasks = [...w.tasks.values()];
  it('worker: pending, S, deps met, by wave then id', () => {
    assert.equal(pickReady(tasks, 'worker')?.task_id, 'W1-002');
    assert.equal(pickReady(tasks, 'worker', ['W1-002']), undefined);
  });
  it('primary: any effort, current wave first', () => {
    assert.equal(pickReady(tasks, 'primary')?.task_id, 'W0-001');
    assert.equal(pickReady(tasks, 'primary', ['W0-001'])?.task_id, 'W1-001');
    assert.equal(currentWave(tasks), 0);
  });
  it('given workers allowed S and M, when picking, then an M task of an earlier wave comes first', () => {
    const w2 = fold([migrated('W0-010', { effort: 'M' }), migrated('W1-010', { wave: 1 }), migrated('W0-011', { effort: 'L' })]);
    const ts = [...w2.tasks.values()];
    assert.equal(pickReady(ts, 'worker', [], ['S', 'M'])?.task_id, 'W0-010');
    assert.equal(pickReady(ts, 'worker', ['W0-010'], ['S', 'M'])?.task_id, 'W1-010');
    assert.equal(pickReady(ts, 'worker', [], ['L'])?.task_id, 'W0-011');
    assert.equal(pickReady(ts, 'worker', [], ['XL']), undefined);
  });
  it('given the default efforts, then a worker takes S only, as before', () => {
    const w2 = fold([migrated('W0-010', { effort: 'M' }), migrated('W1-010', { wave: 1 })]);
    assert.equal(pickReady([...w2.tasks.values()], 'worker')?.task_id, 'W1-010');
  });
  it('given tasks with no or an unknown effort, then no worker takes them, whatever it is allowed; the primary does', () => {
    const w2 = fold([
      domainEvent('task.pending', 'W0-020', 'cp', { old_status: null, new_status: 'pending', title: 'no effort' }),
      migrated('W0-021', { effort: 's' }),
    ]);
    const ts = [...w2.tasks.values()];
    assert.equal(ts.find((t) => t.task_id === 'W0-020')?.effort, null);
    assert.equal(pickReady(ts, 'worker', [], ['S', 'M', 'L', 'XL']), undefined);
    assert.equal(pickReady(ts, 'primary')?.task_id, 'W0-020');
  });
  it('given the primary, then the efforts do not limit it', () => {
    assert.equal(pickReady(tasks, 'primary', [], ['S'])?.task_id, 'W0-001');
  });
});
