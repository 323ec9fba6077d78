// Failed attempts and a reviewer's modify, given facts / when classified or folded / then the
// class, the decision, the lesson line, and the follow-up the next attempt starts from.
import assert from 'node:assert/strict';
import { domainEvent } from '../../../src/domain/events';
import { attemptDecision, classifyAttemptFailure, decideResolveDeferred, lessonLine, reviewFollowUp } from '../../../src/domain/task';
import type { HistoryEvent } from '../../../src/domain/task';
import { decideQueuePatch } from '../../../src/domain/patch';
import { ctxOf, fold, record } from './given';

describe('domain/task failed attempts', () => {
  it('given an agent that crashed, errored or timed out, then transient', () => {
    assert.equal(classifyAttemptFailure({ kind: 'agent', status: 'crashed' }), 'transient');
    assert.equal(classifyAttemptFailure({ kind: 'agent', status: 'error' }), 'transient');
    assert.equal(classifyAttemptFailure({ kind: 'agent', status: 'cancelled', stopReason: 'timeout' }), 'transient');
  });

  it('given an agent stopped by its turn or budget limit, then recoverable', () => {
    assert.equal(classifyAttemptFailure({ kind: 'agent', status: 'max_turns' }), 'recoverable');
    assert.equal(classifyAttemptFailure({ kind: 'agent', status: 'budget' }), 'recoverable');
  });

  it('given a gate that failed or timed out on the change, then recoverable; one that could not start, environment; one cancelled, transient', () => {
    assert.equal(classifyAttemptFailure({ kind: 'gate', gate: 'test', status: 'failed' }), 'recoverable');
    assert.equal(classifyAttemptFailure({ kind: 'gate', gate: 'test', status: 'timeout' }), 'recoverable');
    assert.equal(classifyAttemptFailure({ kind: 'gate', gate: 'forbidden_patterns', status: 'failed' }), 'recoverable');
    assert.equal(classifyAttemptFailure({ kind: 'gate', gate: 'build', status: 'error' }), 'environment');
    assert.equal(classifyAttemptFailure({ kind: 'gate', gate: 'lint', status: 'cancelled' }), 'transient');
  });

  it('given a gate whose shell could not find or run its command (exit 127 / 126), then environment, and the task is released rather than retried', () => {
    assert.equal(classifyAttemptFailure({ kind: 'gate', gate: 'build', status: 'failed', exitCode: 127 }), 'environment');
    assert.equal(classifyAttemptFailure({ kind: 'gate', gate: 'build', status: 'failed', exitCode: 126 }), 'environment');
    assert.equal(classifyAttemptFailure({ kind: 'gate', gate: 'test', status: 'failed', exitCode: 1 }), 'recoverable');
    assert.equal(attemptDecision(1, 3, false, 'environment'), 'release');
    assert.equal(attemptDecision(1, 3, false, 'recoverable'), 'retry');
  });

  it('given attempts against 3 retries, then retry until the 4th fails; an identical failure blocks at once', () => {
    assert.deepEqual(
      [1, 2, 3, 4].map((a) => attemptDecision(a, 3, false)),
      ['retry', 'retry', 'retry', 'block'],
    );
    assert.equal(attemptDecision(2, 3, true), 'block');
    assert.equal(attemptDecision(1, 0, false), 'block');
  });

  it("given node's assertion output, then the lesson quotes the assertion, not the stack or the runtime banner", () => {
    const out = [
      'node:assert:90',
      '  throw new AssertionError(obj);',
      '  ^',
      '',
      'AssertionError [ERR_ASSERTION]: 8 == 2',
      '    at Object.<anonymous> (/tmp/x/test/sub.test.js:1:19)',
      '    at node:internal/main/run_main_module:28:49 {',
      '  generatedMessage: true,',
      "  code: 'ERR_ASSERTION',",
      '  actual: 8,',
      '  expected: 2,',
      "  operator: '=='",
      '}',
      '',
      'Node.js v20.20.2',
    ].join('\n');
    assert.equal(lessonLine('test', out), 'test: AssertionError [ERR_ASSERTION]: 8 == 2');
  });

  it('given output with no error-like line, then its last line; given none, then "no output"; a long line is cut', () => {
    assert.equal(lessonLine('lint', 'checked 3 files\n2 warnings\n'), 'lint: 2 warnings');
    assert.equal(lessonLine('build', '   \n'), 'build: no output');
    const long = lessonLine('build', `error: ${'x'.repeat(500)}`);
    assert.ok(long.length <= 'build: '.length + 200, `${long.length}`);
    assert.ok(long.endsWith('…'));
  });
});

describe('domain/task reviewFollowUp (modify -> follow-up)', () => {
  const asHistory = (evs: ReturnType<typeof record>): HistoryEvent[] =>
    evs.map((e) => ({
      event_id: e.event_id,
      event_type: e.type,
      entity_id: e.entity_id,
      actor: e.actor,
      payload: e.data as Record<string, unknown>,
    }));

  function deferredWithPatch() {
    const setup = [
      domainEvent('task.migrated', 'T-4', 'cp', { title: 'Token', source: 'ES:1', effort: 'M', deps: '-', wave: 0, status: 'pending' }),
    ];
    const w = fold(setup);
    const queued = decideQueuePatch(w.tasks.get('T-4'), { taskId: 'T-4', patchId: 'p1', path: '/x/p1.patch', createdBy: 'primary' });
    fold(queued, w);
    const deferred = [
      domainEvent('task.deferred', 'T-4', 'primary', {
        old_status: 'proposed',
        new_status: 'deferred',
        reason: 'tier 2',
        risk_tier: 2,
        patch_id: 'p1',
      }),
    ];
    fold(deferred, w);
    return { w, deferred };
  }

  it('given a modify that discarded the reviewed patch, then the follow-up names that patch and the modification', () => {
    const { w, deferred } = deferredWithPatch();
    const resolved = decideResolveDeferred(ctxOf(w, 'T-4'), {
      taskId: 'T-4',
      decision: 'modify',
      actor: 'human:ann',
      rationale: 'also export MIN_LENGTH',
    });
    assert.equal((resolved[0]?.data as Record<string, unknown>)['discarded_patch_id'], 'p1');
    const h = asHistory(record([...deferred, ...resolved]));
    const f = reviewFollowUp(h);
    assert.deepEqual(f && { patchId: f.patchId, modification: f.modification, actor: f.actor }, {
      patchId: 'p1',
      modification: 'also export MIN_LENGTH',
      actor: 'human:ann',
    });
    assert.equal(f?.resolutionId, h[1]?.event_id);
  });

  it('given a modify recorded before discarded_patch_id existed, then the discard right after names the patch', () => {
    const h = asHistory(
      record([
        domainEvent('task.deferred', 'T-4', 'primary', { old_status: 'proposed', new_status: 'deferred', reason: 'tier 2' }),
        domainEvent('task.deferral_resolved', 'T-4', 'judge', {
          decision: 'modify',
          rationale: 'r',
          modification: 'split it',
          old_status: 'deferred',
          new_status: 'pending',
        }),
        domainEvent('patch.discarded', 'p1', 'judge', { task_id: 'T-4', reason: 'judge modify: r' }),
      ]),
    );
    assert.equal(reviewFollowUp(h)?.patchId, 'p1');
    assert.equal(reviewFollowUp(h)?.modification, 'split it');
  });

  it('given a reject, an expiry or a new deferral after the modify, then no follow-up is open', () => {
    const modify = domainEvent('task.deferral_resolved', 'T-4', 'judge', {
      decision: 'modify',
      rationale: 'r',
      modification: 'm',
      old_status: 'deferred',
      new_status: 'pending',
      discarded_patch_id: 'p1',
    });
    const later = [
      domainEvent('task.deferred', 'T-4', 'worker-1', { old_status: 'proposed', new_status: 'deferred', reason: 'tier 2' }),
      domainEvent('task.deferral_resolved', 'T-4', 'judge', {
        decision: 'reject',
        rationale: 'no',
        old_status: 'deferred',
        new_status: 'pending',
        discarded_patch_id: 'p2',
      }),
      domainEvent('task.deferral_expired', 'T-4', 'cp', {
        old_status: 'deferred',
        new_status: 'pending',
        old_tier: 2,
        new_tier: 1,
        commits_since: 20,
      }),
    ];
    assert.ok(reviewFollowUp(asHistory(record([modify]))));
    for (const e of later) assert.equal(reviewFollowUp(asHistory(record([modify, e]))), null, e.type);
  });

  it('given a second modify on the follow-up patch, then the follow-up starts from the newer patch', () => {
    const mod = (patch: string, text: string) =>
      domainEvent('task.deferral_resolved', 'T-4', 'judge', {
        decision: 'modify',
        rationale: text,
        modification: text,
        old_status: 'deferred',
        new_status: 'pending',
        discarded_patch_id: patch,
      });
    const h = asHistory(
      record([
        mod('p1', 'first'),
        domainEvent('task.deferred', 'T-4', 'w', { old_status: 'proposed', new_status: 'deferred' }),
        mod('p2', 'second'),
      ]),
    );
    assert.deepEqual([reviewFollowUp(h)?.patchId, reviewFollowUp(h)?.modification], ['p2', 'second']);
  });

  it('given a modify of a task with no patch, then no follow-up (nothing to start from)', () => {
    const h = asHistory(
      record([
        domainEvent('task.deferral_resolved', 'T-4', 'judge', {
          decision: 'modify',
          rationale: 'r',
          modification: 'm',
          old_status: 'deferred',
          new_status: 'pending',
        }),
      ]),
    );
    assert.equal(reviewFollowUp(h), null);
  });
});
