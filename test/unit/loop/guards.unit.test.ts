// Budgets summed from metrics, run limits, identical-failure detection.
import assert from 'node:assert/strict';
import {
  checkBudget,
  checkRunLimits,
  countIteration,
  failureSignature,
  IdenticalFailureTracker,
  invocationBudget,
  normalizeFailureOutput,
  summarizeSpend,
  ZERO_COUNTERS,
} from '../../../src/loop/guards';

const limits = { perInvocationPrimary: 2.5, perInvocationWorker: 5, perTask: 10, perDay: 20 };

describe('loop/guards', () => {
  describe('budgets', () => {
    const lines = [
      { ts: '2026-11-28T23:59:59.000Z', cost: 50, task: 'A' },
      { ts: '2026-11-29T01:00:00.000Z', cost: 4, task: 'A' },
      { ts: '2026-11-29T02:00:00.000Z', cost: 6, task: 'B' },
      { ts: '2026-11-29T03:00:00.000Z', cost: 1 },
    ];

    it('given metrics over two days, then today sums only the UTC day and tasks sum over all days', () => {
      const s = summarizeSpend(lines, '2026-11-29');
      assert.equal(s.today, 11);
      assert.equal(s.byTask.get('A'), 54);
    });

    it('given the day cap reached, then a day verdict with a clear message (loop pauses)', () => {
      const v = checkBudget(summarizeSpend([...lines, { ts: '2026-11-29T04:00:00.000Z', cost: 9 }], '2026-11-29'), limits, null);
      assert.equal(v.ok, false);
      assert.ok(!v.ok && v.scope === 'day');
      assert.ok(!v.ok && /daily budget reached: \$20\.00 of \$20\.00/.test(v.message));
    });

    it('given a task over its cap, then a task verdict; other tasks are fine', () => {
      const s = summarizeSpend(lines, '2026-11-29');
      const v = checkBudget(s, limits, 'A');
      assert.ok(!v.ok && v.scope === 'task');
      assert.deepEqual(checkBudget(s, limits, 'B'), { ok: true });
    });

    it('given little left today, then the next invocation gets at most what is left', () => {
      const s = summarizeSpend([{ ts: '2026-11-29T01:00:00.000Z', cost: 19, task: 'X' }], '2026-11-29');
      assert.equal(invocationBudget(s, limits, 'worker', 'Y'), 1);
      assert.equal(invocationBudget(summarizeSpend([], '2026-11-29'), limits, 'primary', 'Y'), 2.5);
    });
  });

  describe('run limits', () => {
    it('given consecutive failures up to the limit, then stop; a success resets', () => {
      let c = ZERO_COUNTERS;
      c = countIteration(c, true);
      c = countIteration(c, true);
      assert.equal(checkRunLimits(c, { maxIterations: 0, maxConsecutiveFailures: 3 }).stop, false);
      c = countIteration(c, true);
      assert.equal(checkRunLimits(c, { maxIterations: 0, maxConsecutiveFailures: 3 }).stop, true);
      assert.equal(countIteration(c, false).consecutiveFailures, 0);
    });

    it('given max iterations, then stop with the reason', () => {
      const v = checkRunLimits({ iterations: 10, consecutiveFailures: 0 }, { maxIterations: 10, maxConsecutiveFailures: 0 });
      assert.deepEqual(v, { stop: true, reason: 'max iterations reached (10)' });
    });
  });

  describe('identical failures', () => {
    it('given two outputs differing only in times, durations, temp paths and hashes, then the same signature', () => {
      const a = 'FAIL src/x.test.ts (12 ms)\n  at /tmp/ralph-abc/wt/x.ts:3:4\n2026-11-29T10:00:00.123Z commit 1a2b3c4d';
      const b = 'FAIL src/x.test.ts (340 ms)\n  at /tmp/ralph-zzz/wt/x.ts:3:4\n2026-11-30T11:11:11.999Z commit 9f8e7d6c';
      assert.equal(normalizeFailureOutput(a), normalizeFailureOutput(b));
      assert.equal(failureSignature('test', a), failureSignature('test', b));
      assert.notEqual(failureSignature('lint', a), failureSignature('test', a));
    });

    it('given the same gate failing the same way twice for a task, then the second is reported identical', () => {
      const t = new IdenticalFailureTracker();
      assert.equal(t.record('T', 'test', 'expected 2 got 3'), false);
      assert.equal(t.record('T', 'test', 'expected 2 got 4'), false);
      assert.equal(t.record('T', 'test', 'expected 2 got 3'), true);
      assert.equal(t.record('U', 'test', 'expected 2 got 3'), false);
      t.forget('T');
      assert.equal(t.record('T', 'test', 'expected 2 got 3'), false);
    });
  });
});
