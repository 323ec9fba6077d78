// The forecast read from a real store: costs from agent.finished events per task, done and
// blocked tasks from task_view, today's spend; `status` prints it only once agents have spent,
// so a project without agents prints the reference's lines alone.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { perDayBudgetOf, readForecast } from '../../../src/control/forecast';
import { statusFacts, statusFactsOf, statusText } from '../../../src/control/derived';
import type { NewEvent } from '../../../src/store/types';
import { harness, type Harness } from './harness';

const created = (id: string, effort: string): NewEvent => ({
  entity_type: 'task',
  entity_id: id,
  event_type: 'task.created',
  actor: 'control_plane',
  payload: { title: id, source: '-', effort, deps: '-', wave: 0, provenance: 'spec' },
});
const moved = (id: string, from: string, to: string): NewEvent => ({
  entity_type: 'task',
  entity_id: id,
  event_type: `task.${to}`,
  actor: 'primary',
  payload: { old_status: from, new_status: to, ...(to === 'claimed' ? { claimed_by: 'primary' } : {}) },
});
const finished = (taskId: string, costUsd: number): NewEvent => ({
  entity_type: 'agent',
  entity_id: 'primary',
  event_type: 'agent.finished',
  actor: 'primary',
  payload: {
    role: 'primary',
    phase: 'implement',
    task_id: taskId,
    backend: 'claude',
    status: 'success',
    turns: 3,
    cost_usd: costUsd,
    duration_ms: 1000,
  },
});

/** Runs a task to done: claimed, `costs` spent over its invocations, 30 minutes later done. */
async function runTask(h: Harness, id: string, costs: number[]): Promise<void> {
  await h.store.append([moved(id, 'pending', 'claimed')]);
  for (const c of costs) await h.store.append([finished(id, c)]);
  h.advance(30 * 60_000);
  await h.store.append([moved(id, 'claimed', 'done')]);
}

describe('control/forecast', () => {
  it('given no agent ever ran, then no forecast and status prints only the reference lines', async () => {
    const h = await harness('2026-12-01T08:00:00.000Z');
    try {
      await h.store.append([created('W0-001', 'S'), created('W0-002', 'M')]);
      assert.deepEqual(readForecast(h.store, { now: new Date(h.nowMs()), perDayBudgetUsd: () => 50 }), { kind: 'none' });
      const text = statusText(h.ctx);
      assert.doesNotMatch(text, /Forecast/);
      assert.equal(text.split('\n').length, 8);
    } finally {
      await h.close();
    }
  });

  it('given three tasks done with their costs (one retried) and one blocked, then status forecasts the rest', async () => {
    const h = await harness('2026-12-01T08:00:00.000Z');
    try {
      await h.store.append(['W0-001', 'W0-002', 'W0-003', 'W0-004', 'W0-005', 'W0-006'].map((id) => created(id, 'S')));
      await runTask(h, 'W0-001', [0.1]);
      assert.deepEqual(statusFacts(h.ctx).forecast, { kind: 'too_early', finished: 1, needed: 3, tasksLeft: 5 });
      assert.match(statusText(h.ctx), /^Forecast: 5 task\(s\) left; a forecast needs 3 finished tasks \(1 so far\)$/m);
      await runTask(h, 'W0-002', [0.05, 0.05]);
      await runTask(h, 'W0-003', [0.1]);
      await h.store.append([moved('W0-004', 'pending', 'claimed'), finished('W0-004', 0.3), moved('W0-004', 'claimed', 'blocked')]);
      let asked = 0;
      const f = readForecast(h.store, { now: new Date(h.nowMs()), perDayBudgetUsd: () => (asked++, 1) });
      assert.equal(f.kind, 'estimate');
      if (f.kind !== 'estimate') return;
      assert.equal(f.tasksLeft, 2);
      assert.equal(f.basedOn, 3);
      assert.equal(f.failureRate, 0.25);
      // Every done task cost $0.10 (the retried one in two halves): 2 × 0.10 / 0.75.
      assert.ok(Math.abs(f.costUsd.expected - 0.2 / 0.75) < 1e-9, `${f.costUsd.expected}`);
      // Three S tasks in 90 minutes: 2 more, inflated by the failure rate.
      assert.ok(Math.abs(f.hours.expected - 1 / 0.75) < 1e-9, `${f.hours.expected}`);
      // $0.60 of $1 spent in 90 minutes since the first invocation: $0.40 more in 60 minutes.
      assert.equal(asked, 1);
      assert.equal(f.budgetLastsUntil, '2026-12-01T10:30:00.000Z');
      // status wants the budget for the forecast and for the spend line: it reads it once.
      let reads = 0;
      const facts = statusFactsOf(
        h.store,
        { phase: 'implement', iteration: 1, current_item: null },
        new Date(h.nowMs()),
        () => (reads++, 1),
      );
      assert.equal(reads, 1);
      assert.deepEqual(facts.spendToday, { spentUsd: 0.6, perDayUsd: 1 });
      assert.equal(facts.forecast?.kind === 'estimate' ? facts.forecast.budgetLastsUntil : undefined, '2026-12-01T10:30:00.000Z');
      assert.match(statusText(h.ctx), /^Forecast: 2 task\(s\) left: about \$0\.27 \(\$0\.27–\$0\.27\) and 1\.3 h at the rate so far;/m);
    } finally {
      await h.close();
    }
  });

  it("given ralph.config.json, then the day's budget is read without the config schema; the default otherwise", async () => {
    const h = await harness();
    try {
      assert.equal(perDayBudgetOf(h.dir), 50);
      fs.writeFileSync(path.join(h.dir, 'ralph.config.json'), JSON.stringify({ budgets: { per_day: '$12.50' } }));
      assert.equal(perDayBudgetOf(h.dir), 12.5);
      fs.writeFileSync(path.join(h.dir, 'ralph.config.json'), JSON.stringify({ budgets: { per_day: 0 } }));
      assert.equal(perDayBudgetOf(h.dir), 0);
      fs.writeFileSync(path.join(h.dir, 'ralph.config.json'), '{ not json');
      assert.equal(perDayBudgetOf(h.dir), 50);
    } finally {
      await h.close();
    }
  });
});
