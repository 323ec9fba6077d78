// Task lifecycle: given events / when a command / then the whole events it decides, or its error.
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
import type { Task } from '../../../src/domain/model';
import { ctxOf, fold, world } from './given';
import type { World } from './given';

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

const claimed = (id: string, owner: string) =>
  domainEvent('task.claimed', id, owner, { old_status: 'pending', new_status: 'claimed', claimed_by: owner });
const queued = (task: string, patch: string, path = `${patch}.patch`) => [
  domainEvent('patch.queued', patch, 'worker', { task_id: task, patch_path: path, created_by: 'worker' }),
  domainEvent('task.proposed', task, 'worker', { old_status: 'pending', new_status: 'proposed', patch_id: patch }),
];

describe('domain/task lifecycle', () => {
  it('given a migrated task, when claimed, then task.claimed with the owner, and the row at version 2', () => {
    const after = world
      .given([migrated('W0-001')])
      .when((w) => decideClaim(ctxOf(w, 'W0-001'), 'W0-001', 'worker-b'))
      .then([claimed('W0-001', 'worker-b')]);
    const t = after.tasks.get('W0-001');
    assert.deepEqual([t?.status, t?.claimed_by, t?.version], ['claimed', 'worker-b', 2]);
  });

  it('given a task claimed by A, when B claims it, then TaskAlreadyClaimedError, through either command', () => {
    const given = world.given([migrated('W0-001'), claimed('W0-001', 'A')]);
    given.when((w) => decideClaim(ctxOf(w, 'W0-001'), 'W0-001', 'B')).thenThrows({ name: 'TaskAlreadyClaimedError' });
    given
      .when((w) => decideTransition(ctxOf(w, 'W0-001'), { taskId: 'W0-001', to: 'claimed', actor: 'B' }))
      .thenThrows({ name: 'TaskAlreadyClaimedError' });
  });

  it('given a task claimed by A, when A claims it again through transition-task, then the claim is restated', () => {
    world
      .given([migrated('W0-001'), claimed('W0-001', 'A')])
      .when((w) => decideTransition(ctxOf(w, 'W0-001'), { taskId: 'W0-001', to: 'claimed', actor: 'A' }))
      .then([domainEvent('task.claimed', 'W0-001', 'A', { old_status: 'claimed', new_status: 'claimed', claimed_by: 'A' })]);
  });

  it('given no promoted patch, when transitioned to done, then DoneWithoutPromotedPatchError', () => {
    world
      .given([migrated('W0-001'), ...queued('W0-001', 'p1')])
      .when((w) => decideTransition(ctxOf(w, 'W0-001'), { taskId: 'W0-001', to: 'done', actor: 'primary' }))
      .thenThrows({ name: 'DoneWithoutPromotedPatchError' });
  });

  it('given a promoted patch, when transitioned to done, then task.done from the current status', () => {
    world
      .given([
        migrated('W0-001'),
        ...queued('W0-001', 'p1'),
        domainEvent('patch.promoted', 'p1', 'cp', { task_id: 'W0-001', commit_hash: 'abc' }),
        domainEvent('task.pending', 'W0-001', 'human', { old_status: 'done', new_status: 'pending' }),
      ])
      .when((w) => decideTransition(ctxOf(w, 'W0-001'), { taskId: 'W0-001', to: 'done', actor: 'primary' }))
      .then([domainEvent('task.done', 'W0-001', 'primary', { old_status: 'pending', new_status: 'done' })]);
  });

  it('when an unknown task is transitioned, then the event carries the payload fields and creates the task from them', () => {
    const after = world
      .given([])
      .when((w) =>
        decideTransition(ctxOf(w, 'X-1'), {
          taskId: 'X-1',
          to: 'blocked',
          actor: 'h',
          payload: { title: 'T', effort: 'M', wave: 3, deps: 'A,B' },
        }),
      )
      .then([
        domainEvent('task.blocked', 'X-1', 'h', { title: 'T', effort: 'M', wave: 3, deps: 'A,B', old_status: null, new_status: 'blocked' }),
      ]);
    const t = after.tasks.get('X-1');
    assert.deepEqual([t?.status, t?.title, t?.effort, t?.wave, t?.deps, t?.version], ['blocked', 'T', 'M', 3, 'A,B', 1]);
  });

  it('when an unknown task is transitioned to done or proposed, then TaskNotFoundError', () => {
    world
      .given([])
      .when((w) => decideTransition(ctxOf(w, 'X-1'), { taskId: 'X-1', to: 'proposed', actor: 'h' }))
      .thenThrows({ name: 'TaskNotFoundError' });
  });

  it('transition payload keys claimed_by, patch_id, risk_tier update columns; deferred sets reason/at; pending clears them', () => {
    const deferred = domainEvent('task.deferred', 'W0-001', 'cp', {
      reason: 'tier 2',
      risk_tier: 2,
      patch_id: 'p9',
      old_status: 'pending',
      new_status: 'deferred',
    });
    let t = world
      .given([migrated('W0-001')])
      .when((w) =>
        decideTransition(ctxOf(w, 'W0-001'), {
          taskId: 'W0-001',
          to: 'deferred',
          actor: 'cp',
          payload: { reason: 'tier 2', risk_tier: 2, patch_id: 'p9' },
        }),
      )
      .then([deferred])
      .tasks.get('W0-001');
    assert.deepEqual(
      [t?.status, t?.deferred_reason, t?.deferred_at, t?.risk_tier, t?.patch_id],
      ['deferred', 'tier 2', '2026-11-29T10:00:00.000Z', 2, 'p9'],
    );
    t = world
      .given([migrated('W0-001'), deferred])
      .when((w) => decideTransition(ctxOf(w, 'W0-001'), { taskId: 'W0-001', to: 'pending', actor: 'cp' }))
      .then([domainEvent('task.pending', 'W0-001', 'cp', { old_status: 'deferred', new_status: 'pending' })])
      .tasks.get('W0-001');
    assert.deepEqual([t?.deferred_reason, t?.deferred_at, t?.version], [null, null, 3]);
  });

  it('rejects an unknown status', () => {
    world
      .given([migrated('A')])
      .when((w) => decideTransition(ctxOf(w, 'A'), { taskId: 'A', to: 'finished', actor: 'x' }))
      .thenThrows({ name: 'InvalidArgumentError' });
  });
});

describe('domain/task resolve-deferred', () => {
  const deferredWithPatch = [
    migrated('W2-001'),
    ...queued('W2-001', 'p1'),
    domainEvent('task.deferred', 'W2-001', 'cp', {
      old_status: 'proposed',
      new_status: 'deferred',
      reason: 'tier 2',
      risk_tier: 2,
      patch_id: 'p1',
    }),
  ];

  it('given a deferred task with a queued patch, when approved, then proposed (not done) with the patch approved', () => {
    const after = world
      .given(deferredWithPatch)
      .when((w) =>
        decideResolveDeferred(ctxOf(w, 'W2-001'), {
          taskId: 'W2-001',
          decision: 'approve',
          actor: 'judge',
          rationale: 'ok',
          confidence: 0.9,
        }),
      )
      .then([
        domainEvent('task.deferral_resolved', 'W2-001', 'judge', {
          decision: 'approve',
          rationale: 'ok',
          old_status: 'deferred',
          new_status: 'proposed',
          patch_id: 'p1',
          approved: true,
          confidence: 0.9,
        }),
      ]);
    assert.equal(after.tasks.get('W2-001')?.status, 'proposed');
  });

  it('given a deferred task without a patch, when approved, then an error, never done', () => {
    world
      .given([
        migrated('W2-001'),
        domainEvent('task.deferred', 'W2-001', 'cp', { old_status: 'pending', new_status: 'deferred', reason: 'r' }),
      ])
      .when((w) => decideResolveDeferred(ctxOf(w, 'W2-001'), { taskId: 'W2-001', decision: 'approve', actor: 'judge', rationale: 'ok' }))
      .thenThrows({ name: 'DoneWithoutPromotedPatchError' });
  });

  it('when rejected, then pending with the rationale, and the patch discarded and named', () => {
    const after = world
      .given(deferredWithPatch)
      .when((w) =>
        decideResolveDeferred(ctxOf(w, 'W2-001'), { taskId: 'W2-001', decision: 'reject', actor: 'judge', rationale: 'too risky' }),
      )
      .then([
        domainEvent('task.deferral_resolved', 'W2-001', 'judge', {
          decision: 'reject',
          rationale: 'too risky',
          old_status: 'deferred',
          new_status: 'pending',
          discarded_patch_id: 'p1',
        }),
        domainEvent('patch.discarded', 'p1', 'judge', { task_id: 'W2-001', reason: 'judge reject: too risky' }),
      ]);
    assert.deepEqual([after.tasks.get('W2-001')?.status, after.patches.get('p1')?.status], ['pending', 'discarded']);
  });

  it('when modified, then pending with the modification kept for the next attempt, and the patch discarded', () => {
    world
      .given(deferredWithPatch)
      .when((w) =>
        decideResolveDeferred(ctxOf(w, 'W2-001'), {
          taskId: 'W2-001',
          decision: 'modify',
          actor: 'judge',
          rationale: 'split the migration',
        }),
      )
      .then([
        domainEvent('task.deferral_resolved', 'W2-001', 'judge', {
          decision: 'modify',
          rationale: 'split the migration',
          old_status: 'deferred',
          new_status: 'pending',
          modification: 'split the migration',
          discarded_patch_id: 'p1',
        }),
        domainEvent('patch.discarded', 'p1', 'judge', { task_id: 'W2-001', reason: 'judge modify: split the migration' }),
      ]);
  });

  it('when the task is not deferred, then InvalidStateError', () => {
    world
      .given([migrated('A')])
      .when((w) => decideResolveDeferred(ctxOf(w, 'A'), { taskId: 'A', decision: 'reject', actor: 'j', rationale: 'r' }))
      .thenThrows({ name: 'InvalidStateError' });
  });
});

describe('domain/task deferral expiry', () => {
  const given = world.given([
    migrated('A'),
    ...queued('A', 'p1'),
    domainEvent('task.deferred', 'A', 'cp', { old_status: 'proposed', new_status: 'deferred', reason: 'r', risk_tier: 2, patch_id: 'p1' }),
  ]);
  const facts = (w: World, commits: number) => [
    { task: w.tasks.get('A') as Task, commitsSinceDeferral: commits, patch: w.patches.get('p1') },
  ];

  it('given 19 promoted commits since deferral, then nothing expires', () => {
    given.when((w) => decideExpireDeferrals(facts(w, 19))).thenNothing();
  });

  it('given 20 promoted commits, then pending with the tier lowered by one and the stale patch discarded', () => {
    const after = given
      .when((w) => decideExpireDeferrals(facts(w, 20)))
      .then([
        domainEvent('task.deferral_expired', 'A', 'control_plane', {
          old_status: 'deferred',
          new_status: 'pending',
          old_tier: 2,
          new_tier: 1,
          commits_since: 20,
        }),
        domainEvent('patch.discarded', 'p1', 'control_plane', { task_id: 'A', reason: 'deferral expired after 20 commits' }),
      ]);
    const t = after.tasks.get('A');
    assert.deepEqual([t?.status, t?.risk_tier, t?.deferred_at, after.patches.get('p1')?.status], ['pending', 1, null, 'discarded']);
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
