// STATE.json keys, the status text shape, the last-hour cutoff, the deferred prompt.
import assert from 'node:assert/strict';
import { lastHourCutoff, renderDeferredPrompt, renderStateObject, renderStatus } from '../../../src/domain/views';

describe('domain/views', () => {
  it('STATE.json has the reference keys in order; loop position kept, counts derived', () => {
    const s = renderStateObject(
      { taskCounts: { done: 2, pending: 3, deferred: 1 }, commitsTotal: 2, currentWave: 1 },
      { phase: 'plan', iteration: 7, items_done_count: 99, extra: 'kept' },
    );
    assert.deepEqual(Object.keys(s), [
      'iteration',
      'phase',
      'current_item',
      'current_plan',
      'current_sub_step',
      'current_wave',
      'retry_count',
      'commits_total',
      'compile_status',
      'test_status',
      'progress_history',
      'last_evolve_at',
      'last_dry_at',
      'last_integ_at',
      'last_ui_at',
      'items_done_count',
      'items_blocked_count',
      'items_deferred_count',
      'items_pending_count',
      'items_total_count',
      'extra',
    ]);
    assert.deepEqual([s['phase'], s['iteration'], s['items_done_count'], s['items_total_count'], s['commits_total']], ['plan', 7, 2, 6, 2]);
  });

  it('status text has the reference shape', () => {
    const text = renderStatus({
      phase: 'implement',
      iteration: 12,
      commits: 5,
      current: 'W1-003',
      wave: 1,
      taskCounts: [
        ['deferred', 3],
        ['done', 5],
        ['pending', 4],
      ],
      patchCounts: [
        ['promoted', 5],
        ['queued', 1],
      ],
      eventsTotal: 120,
      eventsLastHour: 17,
      deferred: 3,
    });
    assert.equal(
      text,
      [
        '=== Ralph Loop v3 Status ===',
        'Phase: implement | Iteration: 12 | Commits: 5',
        'Current: W1-003 | Wave: 1',
        'Tasks (12): deferred=3,done=5,pending=4',
        'Patches: promoted=5,queued=1',
        'Events: 120 total, 17 last hour',
        'Deferred: 3 | Review needed: YES (≥3 items)',
        '',
      ].join('\n'),
    );
    const quiet = renderStatus({
      phase: 'assess',
      iteration: 0,
      commits: 0,
      current: null,
      wave: 0,
      taskCounts: [],
      patchCounts: [],
      eventsTotal: 0,
      eventsLastHour: 0,
      deferred: 2,
    });
    assert.match(quiet, /Current: None \| Wave: 0\nTasks \(0\): \nPatches: none\n/);
    assert.match(quiet, /Deferred: 2 \| Review needed: no\n$/);
  });

  it("once agents have spent, status ends with today's spend and what is left of the day's budget", () => {
    const base = {
      phase: 'implement',
      iteration: 3,
      commits: 1,
      current: null,
      wave: 1,
      taskCounts: [['done', 1]] as const,
      patchCounts: [['promoted', 1]] as const,
      eventsTotal: 9,
      eventsLastHour: 9,
      deferred: 0,
    };
    const last = (t: string): string => t.trimEnd().split('\n').at(-1) ?? '';
    assert.equal(
      last(renderStatus({ ...base, spendToday: { spentUsd: 1.2, perDayUsd: 50 } })),
      'Spend today: $1.20 of $50.00 a day ($48.80 left)',
    );
    assert.equal(
      last(renderStatus({ ...base, spendToday: { spentUsd: 50.004, perDayUsd: 50 } })),
      "Spend today: $50.00 of $50.00 a day (the day's budget is spent: raise budgets.per_day or wait for tomorrow)",
    );
    assert.equal(
      last(renderStatus({ ...base, spendToday: { spentUsd: 3, perDayUsd: 0 } })),
      'Spend today: $3.00 (no daily budget: budgets.per_day is 0)',
    );
    assert.doesNotMatch(renderStatus(base), /Spend today/);
  });

  it('the last-hour cutoff compares correctly with stored ISO timestamps', () => {
    const now = new Date('2026-11-29T17:30:00.000Z');
    const cut = lastHourCutoff(now);
    const stored = ['2026-11-29T16:29:59.999Z', '2026-11-29T16:30:00.001Z', '2026-11-29T17:29:00.000Z', '2026-11-28T23:59:59.000Z'];
    assert.deepEqual(
      stored.filter((ts) => ts > cut),
      ['2026-11-29T16:30:00.001Z', '2026-11-29T17:29:00.000Z'],
    );
    // The reference compared with SQLite's space-separated form: 'T' > ' ' made every event of the day count.
    assert.ok('2026-11-29T10:00:00.000Z' > '2026-11-29 16:30:00');
  });

  it('deferred queue prompt format', () => {
    assert.equal(renderDeferredPrompt([]), 'No deferred items.\n');
    assert.equal(
      renderDeferredPrompt([
        {
          task_id: 'W2-001',
          title: 'Auth',
          risk_tier: 2,
          deferred_reason: 'tier 2',
          deferred_at: '2026-11-29T10:00:00.000Z',
          source: 'ES:30',
        },
      ]),
      '## Deferred Items for Review\n\n### W2-001: Auth\n- Risk Tier: 2\n- Reason: tier 2\n- Deferred At: 2026-11-29T10:00:00.000Z\n- Source: ES:30\n',
    );
  });
});
