// The loop's notifications and totals as a function of the store's appended events: each
// batch in, whole notifications out (compared entire, not by type), the totals counted.
import assert from 'node:assert/strict';
import { domainEvent, toNewEvent } from '../../../src/domain/events';
import type { DomainEvent } from '../../../src/domain/events';
import { emptyTally, notificationsOf, tallyOf } from '../../../src/loop/storeFeed';
import type { StoredEvent } from '../../../src/store/types';

let seq = 0;
const stored = (e: DomainEvent): StoredEvent => ({
  ...toNewEvent(e),
  event_id: String(++seq).padStart(4, '0'),
  ts: '2026-12-01T10:00:00.000Z',
  run_id: 'r',
});
const batch = (...events: DomainEvent[]): StoredEvent[] => events.map(stored);
const pending = (id: string, from: 'claimed' | 'proposed' | 'deferred', reason: string): DomainEvent =>
  domainEvent('task.pending', id, 'worker-1', { old_status: from, new_status: 'pending', reason });

describe('loop/storeFeed: notifications and totals from what the store appended', () => {
  it('given a patch queued with its gates, deferred, then judged, then patch.queued, patch.deferred and the judge verdict, whole', () => {
    const events = batch(
      domainEvent('patch.queued', 'P1', 'worker-1', { task_id: 'T-1', patch_path: '/p/P1.patch', created_by: 'worker-1' }),
      domainEvent('patch.gates', 'P1', 'worker-1', {
        task_id: 'T-1',
        gates: [{ gate: 'test', status: 'passed' }],
        base_commit: 'a'.repeat(40),
        files: ['src/auth/a.ts'],
        risk_tier: 2,
      }),
      domainEvent('task.deferred', 'T-1', 'worker-1', {
        old_status: 'proposed',
        new_status: 'deferred',
        reason: 'risk tier 2',
        patch_id: 'P1',
      }),
      domainEvent('task.deferral_resolved', 'T-1', 'judge', {
        decision: 'approve',
        rationale: 'tested',
        old_status: 'deferred',
        new_status: 'proposed',
        patch_id: 'P1',
        confidence: 0.9,
      }),
    );
    assert.deepEqual(notificationsOf(events), [
      { type: 'patch.queued', taskId: 'T-1', patchId: 'P1', files: ['src/auth/a.ts'], tier: 2 },
      { type: 'patch.deferred', taskId: 'T-1', patchId: 'P1', reason: 'risk tier 2' },
      { type: 'verdict', taskId: 'T-1', verdict: 'approve', rationale: 'tested', confidence: 0.9, by: 'judge' },
    ]);
  });

  it('given returns to pending, then only those from work in progress are releases (a review or an expiry is not)', () => {
    const events = batch(
      pending('T-1', 'claimed', 'no change'),
      pending('T-2', 'proposed', 'conflict'),
      pending('T-3', 'deferred', 'expired'),
    );
    assert.deepEqual(notificationsOf(events), [
      { type: 'task.released', taskId: 'T-1', reason: 'no change' },
      { type: 'task.released', taskId: 'T-2', reason: 'conflict' },
    ]);
    const t = emptyTally();
    tallyOf(t, events);
    assert.deepEqual(t, { ...emptyTally(), released: 2 });
  });

  it('given a decomposition accepted in one command, then task.decomposed counts the sub-tasks created with the drop', () => {
    const sub = (id: string): DomainEvent =>
      domainEvent('task.created', id, 'control', {
        title: id,
        source: 'harness',
        effort: 'S',
        deps: '-',
        wave: 0,
        provenance: 'auto',
        parent_task: 'T-5',
      });
    const events = batch(
      sub('T-5a'),
      sub('T-5b'),
      domainEvent('task.dropped', 'T-5', 'control', { old_status: 'blocked', new_status: 'dropped', reason: 'decomposed into T-5a, T-5b' }),
    );
    assert.deepEqual(notificationsOf(events), [{ type: 'task.decomposed', taskId: 'T-5', accepted: 2 }]);
    // A drop alone (a human's) is not a decomposition.
    assert.deepEqual(
      notificationsOf(batch(domainEvent('task.dropped', 'T-6', 'human', { old_status: 'pending', new_status: 'dropped' }))),
      [],
    );
  });

  it('given agent runs, a promotion and a block, then agent notifications and the totals: invocations, cost, model time, promoted, blocked', () => {
    const run = { role: 'worker' as const, phase: 'worker', task_id: 'T-1', backend: 'scripted' };
    const events = batch(
      domainEvent('agent.started', 'worker-1', 'worker-1', { ...run, prompt_bytes: 120, budget_usd: 0.5 }),
      domainEvent('agent.finished', 'worker-1', 'worker-1', { ...run, status: 'success', turns: 3, cost_usd: 0.125, duration_ms: 1500 }),
      domainEvent('agent.finished', 'judge', 'judge', {
        ...run,
        role: 'judge',
        status: 'crashed',
        turns: 0,
        cost_usd: 0,
        duration_ms: 20,
        exit_code: 127,
        errors: [],
        stderr_tail: 'spawn claude ENOENT',
      }),
      domainEvent('patch.promoted', 'P1', 'worker-1', { task_id: 'T-1', commit_hash: 'b'.repeat(40) }),
      domainEvent('task.blocked', 'T-2', 'primary', { old_status: 'claimed', new_status: 'blocked', reason: 'retries exhausted' }),
    );
    assert.deepEqual(notificationsOf(events), [
      { type: 'agent.started', agent: 'worker-1', phase: 'worker', taskId: 'T-1', promptBytes: 120, budgetUsd: 0.5 },
      {
        type: 'agent.finished',
        agent: 'worker-1',
        phase: 'worker',
        taskId: 'T-1',
        status: 'success',
        costUsd: 0.125,
        durationMs: 1500,
        turns: 3,
      },
      { type: 'agent.finished', agent: 'judge', phase: 'worker', taskId: 'T-1', status: 'crashed', costUsd: 0, durationMs: 20, turns: 0 },
      { type: 'patch.promoted', taskId: 'T-1', patchId: 'P1', commit: 'b'.repeat(40) },
      { type: 'task.blocked', taskId: 'T-2', reason: 'retries exhausted' },
    ]);
    const t = emptyTally();
    tallyOf(t, events);
    assert.deepEqual(t, { invocations: 2, costUsd: 0.125, modelMs: 1520, promoted: 1, deferred: 0, blocked: 1, released: 0 });
  });
});
